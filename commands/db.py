"""`flask db ...`: create the indexes, load data files, seed the demo data."""

import os
from collections import Counter
from pathlib import Path
from typing import NoReturn

import click

from commands import demo, load_files, load_writes, loading
from commands.groups import DatabaseGroup
from domain import timestamps
from repositories import change_images
from repositories.indexes import IndexConflict, Outcome, index_outcomes
from repositories.token_admin import TokenAdmin
from runtime.bearer_tokens import hash_token, new_token
from runtime.database import admin_db

group = DatabaseGroup("db", help="Set up and fill the database.")


_SUMMARY = {
    "built": "built",
    "present": "already there",
    "reused": "reused",
    "dropped": "dropped (no query uses them)",
}


def _describe(outcome: Outcome) -> str:
    if outcome.action == "built":
        said = f"built in {outcome.seconds:.1f} s"
    elif outcome.action == "present":
        said = "already there"
    elif outcome.action == "dropped":
        said = "dropped: an earlier db init made it, and no query uses it any more"
    else:
        said = f"reused the existing index {outcome.existing!r}"
    if outcome.differences:
        said += f" ({', '.join(outcome.differences)})"
    return f"{outcome.collection}.{outcome.name}: {said}"


@group.command("init")
def init():
    """Create every index the queries need, printing each as it is done, drop those an
    earlier run made that no query uses any more, and turn on the bot requests' pre-images
    that the live feeds need; safe to run again.

    An index the writer made on the same keys, under any name, is used as it is. A conflict
    (a name of ours taken by an index on other keys, a unique index over duplicates) is
    reported and the other indexes are still made; the exit status is then 1.
    """
    db = admin_db()
    done, conflicts = Counter(), 0
    for outcome in index_outcomes(db):
        if isinstance(outcome, IndexConflict):
            conflicts += 1
            click.echo(f"Error: {outcome}", err=True)
        else:
            done[outcome.action] += 1
            click.echo(_describe(outcome))
    summary = ", ".join(f"{count} {_SUMMARY[action]}" for action, count in done.items())
    click.echo(f"Indexes of {db.name!r}: {summary or 'none'}.")
    turned_on = change_images.keep(db)
    click.echo(
        f"{change_images.COLLECTION}: pre-images for the live feeds "
        + ("turned on." if turned_on else "already on.")
    )
    if conflicts:
        click.echo(f"{conflicts} index(es) could not be made.", err=True)
        raise click.exceptions.Exit(1)


def _echo_counts(counts: dict[str, tuple[int, int]], existing: str) -> None:
    for collection, (new, other) in counts.items():
        click.echo(f"{collection}: {new} new, {other} {existing}")


def _fail(problems: list[load_files.Problem]) -> NoReturn:
    for problem in problems:
        click.echo(str(problem), err=True)
    click.echo(f"Nothing was written: {len(problems)} problem(s) found.", err=True)
    raise click.exceptions.Exit(1)


def _write(db, entries: list[load_files.Entry], *, replace: bool) -> dict[str, tuple]:
    try:
        return load_writes.write(db, entries, replace=replace)
    except load_writes.WriteError as error:
        click.echo(f"Error: the database failed during the load: {error.reason}", err=True)
        for line in error.lines:
            click.echo(line, err=True)
        raise click.exceptions.Exit(1) from None


def _warn_dangling(dangling: Counter) -> None:
    if dangling:
        fields = ", ".join(f"{where} {count}" for where, count in sorted(dangling.items()))
        click.echo(
            f"Warning: {dangling.total()} reference(s) to documents in neither the load nor "
            f"the database (deleted data?), loaded as they are: {fields}.",
            err=True,
        )


@group.command("load")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def load(files):
    """Load FILES shaped {"<collection>": [documents...]}, upserting each document by _id.

    MongoDB Extended JSON is accepted ({"$oid": ...}, {"$date": ...}); plain JSON works with
    ids as 24 hex digits and timestamps as ISO 8601 strings. Every document is checked first
    (types, required fields, unique ids, slugs and token hashes); if any is invalid,
    nothing is written, each problem is listed, and the exit status is 1. A reference to a
    document that exists nowhere is loaded, and counted in a warning.
    """
    db = admin_db()
    try:
        checked = loading.check_files(db, files)
    except loading.LoadError as error:
        _fail(error.problems)
    _warn_dangling(checked.dangling)
    _echo_counts(_write(db, checked.entries, replace=True), "replaced")


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
    db = admin_db()
    now = timestamps.now()
    try:
        entries = demo.entries(db, now)
    except loading.LoadError as error:
        _fail(error.problems)
    _echo_counts(_write(db, entries, replace=False), "already there")

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
