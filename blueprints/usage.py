"""Usage summaries (docs/api.md#usage): a user's own, and an organization's."""

from access import policy
from repositories.usage import UsageRepository
from runtime.database import admitted_db
from schemas.usage import OrganizationUsageQuerySchema, UsageQuerySchema, UsageSchema
from web.authentication import current_caller
from web.blueprint import Blueprint

blp = Blueprint(
    "usage",
    __name__,
    url_prefix="/v1",
    description="Requests and credits over a period, grouped by bot, day or user: a user's "
    "own, or an organization's.",
)


@blp.route("/usage/")
@blp.doc(operationId="getUsage")
@blp.login_required
@blp.error_responses(403)
@blp.arguments(UsageQuerySchema, location="query", arg_name="query")
@blp.response(200, UsageSchema)
def get_usage(query):
    """Summarize the requests the caller made over a period.

    For user tokens only (an organization token gets 403): every request the user made,
    whatever its organization. By default the 30 days before now, grouped by bot; `from` is
    inclusive, `to` exclusive, at most 366 days apart.
    """
    visibility = policy.own_usage(current_caller())
    return UsageRepository(admitted_db()).summary(visibility, query)


@blp.route("/organizations/<objectid:organization_id>/usage/")
@blp.doc(operationId="getOrganizationUsage")
@blp.login_required
@blp.error_responses(403, 404)
@blp.arguments(OrganizationUsageQuerySchema, location="query", arg_name="query")
@blp.response(200, UsageSchema)
def get_organization_usage(organization_id, query):
    """Summarize an organization's requests over a period.

    For the organization's members and its own organization token; anyone else gets 403.
    By default the 30 days before now, grouped by bot; `groupBy=user` gives each member's
    share.
    """
    visibility = policy.organization(current_caller(), organization_id)
    return UsageRepository(admitted_db()).summary(visibility, query)
