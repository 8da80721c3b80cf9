"""Bot requests: a user's (4.1, 4.3) and an organization's (4.2, 4.4)."""

from flask import current_app

from access import policy
from repositories.bot_requests import BotRequestRepository
from repositories.summaries import Summaries
from runtime.database import admitted_db, admitted_primary_db
from schemas.bot_requests import BotRequestSchema
from schemas.queries import (
    BotRequestItemQuerySchema,
    BotRequestListQuerySchema,
    OrganizationBotRequestListQuerySchema,
)
from schemas.selection import selected, stored_paths
from web.authentication import current_caller
from web.blueprint import Blueprint

blp = Blueprint(
    "bot_requests",
    __name__,
    url_prefix="/v1",
    description="Records of bot runs: the bot, who ran it, for which organization, the inputs "
    "and the response. A user sees its own requests and its organizations'; an organization "
    "token sees its organization's.",
)


@blp.route("/requests/")
@blp.doc(operationId="listBotRequests")
@blp.login_required
@blp.error_responses(403)
@blp.list_response(BotRequestListQuerySchema)
def list_bot_requests(query):
    """List the caller's bot requests and those of its organizations.

    For user tokens only: the requests the user made, and those of every organization the
    user belongs to; an organization token gets 403 (it uses the organization's list).
    Newest first unless `sortBy` says otherwise; the query parameters narrow the list.
    """
    visibility = policy.bot_requests(current_caller())
    return bot_requests().find_page(visibility, query)


@blp.route("/requests/<objectid:bot_request_id>/")
@blp.doc(operationId="getBotRequest")
@blp.login_required
@blp.error_responses(403, 404)
@blp.arguments(BotRequestItemQuerySchema, location="query", as_kwargs=True)
@blp.response(200, BotRequestSchema)
def get_bot_request(bot_request_id, fields=None):
    """Get one bot request the caller made or that one of its organizations holds.

    For user tokens only (an organization token gets 403). A request that does not exist or
    that the user may not see is a 404, as is a malformed id.
    """
    visibility = policy.bot_requests(current_caller())
    reads = stored_paths(BotRequestSchema, fields)
    return selected(bot_requests().get(visibility, bot_request_id, reads), fields)


@blp.route("/organizations/<objectid:organization_id>/requests/")
@blp.doc(operationId="listOrganizationBotRequests")
@blp.login_required
@blp.error_responses(403, 404)
@blp.list_response(OrganizationBotRequestListQuerySchema)
def list_organization_bot_requests(query, organization_id):
    """List an organization's bot requests.

    For the organization's members and its own organization token; anyone else gets 403.
    Newest first unless `sortBy` says otherwise; the query parameters narrow the list.
    """
    visibility = policy.organization(current_caller(), organization_id)
    return bot_requests().find_page(visibility, query)


@blp.route("/organizations/<objectid:organization_id>/requests/<objectid:bot_request_id>/")
@blp.doc(operationId="getOrganizationBotRequest")
@blp.login_required
@blp.error_responses(403, 404)
@blp.arguments(BotRequestItemQuerySchema, location="query", as_kwargs=True)
@blp.response(200, BotRequestSchema)
def get_organization_bot_request(organization_id, bot_request_id, fields=None):
    """Get one of an organization's bot requests.

    For the organization's members (or the request's creator) and its own organization
    token; another organization's token gets 403. A request that is not the organization's,
    or a malformed id, is a 404.
    """
    visibility = policy.organization_bot_request(current_caller(), organization_id)
    reads = stored_paths(BotRequestSchema, fields)
    return selected(bot_requests().get(visibility, bot_request_id, reads), fields)


def bot_requests() -> BotRequestRepository:
    """The requests of the request's database, their summaries through the worker's summary
    cache, which reads the primary as every exact cache does (runtime/database.py); with
    the cache off, as the requests are read."""
    cache = current_app.extensions["summary_cache"]
    summaries = Summaries(cache, admitted_primary_db if cache.enabled else admitted_db)
    return BotRequestRepository(admitted_db(), summaries)
