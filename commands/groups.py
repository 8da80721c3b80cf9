"""The command groups' common ground: how a database error ends a command."""

import click
from flask.cli import AppGroup
from pymongo.errors import PyMongoError

from runtime import database


class DatabaseGroup(AppGroup):
    """A database error ends any command with one line saying what went wrong (unreachable,
    an unknown certificate authority, a wrong password, a refused command) and exit status
    1: an operator needs the reason, not the driver's stack."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except PyMongoError as error:
            raise click.ClickException(f"The database failed: {database.describe(error)}") from None
