"""Bots: the catalogue (4.5, 4.7) and each organization's own bots (4.6, 4.8)."""

from flask import current_app

from access import policy
from repositories.catalogue import Catalogue
from runtime.database import admitted_primary_db
from schemas.bots import (
    BotSchema,
    OneBotSchema,
    OrganizationBotSchema,
)
from schemas.queries import (
    BotItemQuerySchema,
    BotListQuerySchema,
    OrganizationBotItemQuerySchema,
    OrganizationBotListQuerySchema,
)
from schemas.selection import check, selected, stored_paths
from web.authentication import current_caller
from web.blueprint import Blueprint
from web.rendered import rendered

blp = Blueprint(
    "bots",
    __name__,
    url_prefix="/v1",
    description="The bot catalogue: public bots, and each organization's own (custom) bots, "
    "with their credit cost and the inputs they take.",
)


@blp.route("/bots/")
@blp.doc(operationId="listBots")
@blp.login_required
@blp.list_response(BotListQuerySchema)
def list_bots(query):
    """List the bots the caller can see: public ones and its organizations' bots.

    Users see the public bots and their organizations' bots, admins every bot; an
    organization token sees the public bots. `custom=true` narrows the list to the bots of
    the caller's organizations. Sorted by name unless `sortBy` says otherwise.
    """
    visibility = policy.bots(current_caller(), query.custom)
    return _catalogue().find_page(visibility, query)


@blp.route("/bots/<slug>/")
@blp.doc(operationId="getBot")
@blp.login_required
@blp.error_responses(404)
@blp.arguments(BotItemQuerySchema, location="query", as_kwargs=True)
@blp.response(
    200,
    OneBotSchema,
    description="Admins get the detailed view (BotDetail); everyone else the public one (Bot).",
)
def get_bot(slug, fields=None):
    """Get one bot by its slug.

    Any bot the caller could list, `custom=true` included; otherwise 404. Admins get the
    detailed view (`BotDetail`), everyone else the public one (`Bot`); `fields` selects from
    the caller's view.
    """
    access = policy.bot_access(current_caller())
    view = OneBotSchema.views[access.detailed]
    check(fields, view)
    bot = _catalogue().get(access, slug, stored_paths(view, fields))
    return rendered(bot, lambda: _ONE_BOT.dump(selected(bot, fields)))


@blp.route("/organizations/<objectid:organization_id>/bots/")
@blp.doc(operationId="listOrganizationBots")
@blp.login_required
@blp.error_responses(403, 404)
@blp.list_response(OrganizationBotListQuerySchema)
def list_organization_bots(query, organization_id):
    """List an organization's bots, public and private.

    For the organization's members and its own organization token; anyone else gets 403.
    Each bot carries its `organizationId`. Sorted by name unless `sortBy` says otherwise.
    """
    visibility = policy.organization(current_caller(), organization_id)
    return _catalogue().find_page(visibility, query)


@blp.route("/organizations/<objectid:organization_id>/bots/<slug>/")
@blp.doc(operationId="getOrganizationBot")
@blp.login_required
@blp.error_responses(403, 404)
@blp.arguments(OrganizationBotItemQuerySchema, location="query", as_kwargs=True)
@blp.response(200, OrganizationBotSchema)
def get_organization_bot(organization_id, slug, fields=None):
    """Get one of an organization's bots, beside the organization.

    For the organization's members and its own organization token; anyone else gets 403.
    A bot that is not the organization's is a 404.
    """
    visibility = policy.organization(current_caller(), organization_id)
    bot = _catalogue().get_with_organization(visibility, slug, stored_paths(BotSchema, fields))
    return rendered(bot, lambda: _ORGANIZATION_BOT.dump(selected(bot, fields)))


_ONE_BOT, _ORGANIZATION_BOT = OneBotSchema(), OrganizationBotSchema()


def _catalogue() -> Catalogue:
    extensions = current_app._get_current_object().extensions  # not through the proxy
    return Catalogue(extensions["catalogue_cache"], admitted_primary_db)
