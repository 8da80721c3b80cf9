"""The command groups' common ground: how a database fault ends a command."""

import click
from flask.cli import AppGroup
from pymongo.errors import PyMongoError

from runtime import database


class DatabaseGroup(AppGroup):
    """A database that cannot serve (down, unreachable, an unknown certificate authority, a
    wrong password) ends the command with one line saying why, and exit status 1, rather
    than a driver traceback. Any other error the database returns is left to show in full."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except PyMongoError as error:
            if not database.unavailable(error):
                raise
            raise click.ClickException(
                f"The database is unavailable: {database.describe(error)}"
            ) from None
