"""The command line, `flask --app app <group> <command>`: one module per group."""

from flask import Flask

from commands import db, tokens


def init_app(app: Flask) -> None:
    app.cli.add_command(db.group)
    app.cli.add_command(tokens.group)
