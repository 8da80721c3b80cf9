"""The command line, `flask <group> <command>` from the project folder: one module per group."""

from flask import Flask

from commands import db, tokens


def init_app(app: Flask) -> None:
    app.cli.add_command(db.group)
    app.cli.add_command(tokens.group)
