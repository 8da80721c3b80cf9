"""`flask tokens ...`: issue, list and revoke bearer tokens.

A new token is printed once and never again: only its SHA-256 is stored.
"""

import datetime as dt

import click
from bson import ObjectId

from commands.groups import DatabaseGroup
from domain import timestamps
from domain.errors import NotFound
from repositories.token_admin import TokenAdmin
from runtime.bearer_tokens import hash_token, new_token
from runtime.database import admin_db
from schemas.fields import format_timestamp

group = DatabaseGroup("tokens", help="Issue, list and revoke bearer tokens.")


def _one(matches: list[dict], what: str, reference: str) -> dict:
    if not matches:
        raise click.ClickException(f"No {what} matches {reference!r}.")
    if len(matches) > 1:
        ids = ", ".join(str(match["_id"]) for match in matches)
        raise click.ClickException(
            f"{len(matches)} {what}s match {reference!r} ({ids}): use the id."
        )
    return matches[0]


@group.command("issue")
@click.option("--user", "user", metavar="ID|EMAIL", help="The user the token acts as.")
@click.option(
    "--organization", "organization", metavar="ID|NAME", help="The organization it represents."
)
@click.option("--label", help="A note saying what the token is for.")
@click.option(
    "--expires-in", type=click.IntRange(min=1), metavar="DAYS", help="Days until it expires."
)
def issue(user, organization, label, expires_in):
    """Issue a token for a user or an organization and print it, once."""
    if (user is None) == (organization is None):
        raise click.UsageError("Give exactly one of --user and --organization.")
    admin = TokenAdmin(admin_db())
    if user is not None:
        kind, owner = "user", _one(admin.find_users(user), "user", user)
        who = f"user {owner['name']} <{owner.get('email', '')}>"
    else:
        kind = "organization"
        owner = _one(admin.find_organizations(organization), "organization", organization)
        who = f"organization {owner['name']}"
    now = timestamps.now()
    expires_at = now + dt.timedelta(days=expires_in) if expires_in else None
    raw = new_token()
    token_id = admin.issue(
        hash_token(raw), kind=kind, owner=owner["_id"], label=label, now=now, expires_at=expires_at
    )
    click.echo(f"Token {token_id} for {who}", err=True)
    if expires_at:
        click.echo(f"Expires {format_timestamp(expires_at)}", err=True)
    click.echo("Store it now: it is shown only once.", err=True)
    click.echo(raw)


def _owner(token: dict) -> str:
    if user := token.get("userDocument"):
        return f"{user.get('name')} <{user.get('email', '')}>"
    if organization := token.get("organizationDocument"):
        return organization.get("name", "")
    return f"(missing {token.get('user') or token.get('organization')})"


def _when(value: dt.datetime | None) -> str:
    return format_timestamp(value) if value else "-"


@group.command("list")
def list_tokens():
    """List every token: id, kind, owner, label, dates. Never the token nor its hash."""
    tokens = TokenAdmin(admin_db()).list()
    rows = [("ID", "KIND", "OWNER", "LABEL", "CREATED", "EXPIRES", "REVOKED")]
    rows += [
        (
            str(token["_id"]),
            str(token.get("kind")),
            _owner(token),
            token.get("label") or "",
            _when(token.get("createdAt")),
            _when(token.get("expiresAt")),
            _when(token.get("revokedAt")),
        )
        for token in tokens
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        click.echo(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )


@group.command("revoke")
@click.argument("token_id")
def revoke(token_id):
    """Revoke a token by its id (see `tokens list`).

    Every worker refuses it within a second: its token cache is kept exact
    (docs/deployment.md#the-exact-caches).
    """
    if not ObjectId.is_valid(token_id):
        raise click.BadParameter("Not a token id: expected 24 hex digits.", param_hint="TOKEN_ID")
    try:
        earlier = TokenAdmin(admin_db()).revoke(ObjectId(token_id), timestamps.now())
    except NotFound as error:
        raise click.ClickException(error.message) from error
    if earlier is None:
        click.echo(f"Token {token_id} revoked: every worker refuses it within a second.")
    else:
        click.echo(f"Token {token_id} was already revoked at {format_timestamp(earlier)}.")
