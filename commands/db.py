"""`flask db ...`: create the indexes, load data files, seed the demo data."""

import datetime as dt
import os
from pathlib import Path
from typing import NoReturn

import click

from access.authentication import hash_token, new_token
from commands import demo, loading
from commands.groups import DatabaseGroup
from repositories.indexes import ensure_indexes
from repositories.token_admin import TokenAdmin
from runtime.database import get_db

group = DatabaseGroup("db", help="Set up and fill the database.")


@group.command("init")
def init():
    """Create every index the queries need; safe to run again."""
    db = get_db()
    created = ensure_indexes(db)
    count = sum(len(names) for names in created.values())
    click.echo(f"{count} indexes on {len(created)} collections are in place in {db.name!r}.")


def _echo_counts(counts: dict[str, tuple[int, int]], existing: str) -> None:
    for collection, (new, other) in counts.items():
        click.echo(f"{collection}: {new} new, {other} {existing}")


def _fail(problems: list[loading.Problem]) -> NoReturn:
    for problem in problems:
        click.echo(str(problem), err=True)
    click.echo(f"Nothing was written: {len(problems)} problem(s) found.", err=True)
    raise click.exceptions.Exit(1)


@group.command("load")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def load(files):
    """Load FILES shaped {"<collection>": [documents...]}, upserting each document by _id.

    MongoDB Extended JSON is accepted ({"$oid": ...}, {"$date": ...}); plain JSON works with
    ids as 24 hex digits and timestamps as ISO 8601 strings. Every document is checked first
    (types, required fields, references, unique slugs and emails); if any is invalid,
    nothing is written, each problem is listed, and the exit status is 1.
    """
    try:
        counts = loading.load_files(get_db(), files)
    except loading.LoadError as error:
        _fail(error.problems)
    _echo_counts(counts, "replaced")


def _write_tokens_file(path: Path, issued: list[tuple[demo.DemoToken, str]]) -> None:
    """Only the owner may read it: it holds live credentials for the local database."""
    lines = [
        "# Demo bearer tokens of the local development database (written by db seed-demo).",
        "# A development convenience only: never keep real tokens in a file.",
    ]
    for token, raw in issued:
        lines += [f"# {token.description}", f"{token.name.upper()}_TOKEN={raw}"]
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write("\n".join(lines) + "\n")


@group.command("seed-demo")
@click.option("--new-tokens", is_flag=True, help="Replace the demo tokens with fresh ones.")
@click.option(
    "--tokens-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write new demo tokens to this file (mode 600) instead of printing them.",
)
def seed_demo(new_tokens, tokens_file):
    """Add the demo data set (documents already there are kept) and issue demo tokens.

    The tokens are shown once, when issued; run again with --new-tokens for fresh ones.
    """
    db = get_db()
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    try:
        entries = demo.entries(db, now)
    except loading.LoadError as error:
        _fail(error.problems)
    _echo_counts(loading.write(db, entries, replace=False), "already there")

    admin = TokenAdmin(db)
    issued = []
    for token in demo.TOKENS:
        if new_tokens or not admin.exists(token.id):
            raw = new_token()
            admin.issue(
                hash_token(raw),
                kind=token.kind,
                owner=token.owner_id(entries),
                label=token.label,
                now=now,
                token_id=token.id,
            )
            issued.append((token, raw))
    if not issued:
        click.echo("The demo tokens exist already; --new-tokens replaces them.")
    elif tokens_file:
        _write_tokens_file(tokens_file, issued)
        click.echo(f"Demo tokens written to {tokens_file} (readable by you only).")
    else:
        click.echo("Demo tokens (shown only now; only their hashes are stored):")
        for token, raw in issued:
            click.echo(f"  {token.name}: {raw}\n    {token.description}")
