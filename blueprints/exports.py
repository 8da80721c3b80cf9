"""Exports of bot requests (docs/api.md#exports): a user's (as 4.1) and an organization's (as
4.2)."""

from access import policy
from blueprints.bot_requests import bot_requests
from repositories import exports
from schemas.exports import (
    Export,
    ExportQuery,
    OrganizationRequestExportQuerySchema,
    RequestExportQuerySchema,
)
from web import export_files
from web.authentication import current_caller
from web.blueprint import Blueprint
from web.downloads import streamed
from web.export_files import MEDIA_TYPES

blp = Blueprint(
    "exports",
    __name__,
    url_prefix="/v1",
    description="Every bot request of a period as one file, NDJSON or CSV, streamed: for "
    "accounting and audits. Exports have a rate limit of their own (RATELIMIT_EXPORT).",
)

_DOWNLOAD = (
    "The requests, in the order of `sortBy`, streamed as a file. A response cut short by a "
    "database failure ends without its last chunk: the client sees an incomplete read."
)


def _download(export: Export, visibility, scope: str):
    repository = bot_requests()
    write = export_files.writer(export)
    return streamed(
        exports.batches(repository, visibility, export.query),
        lambda batch: write(repository.summarized(batch, export.query)),
        head=export_files.head(export),
        media_type=MEDIA_TYPES[export.format],
        filename=export.filename(scope),
    )


@blp.route("/requests/export")
@blp.doc(operationId="exportBotRequests")
@blp.login_required
@blp.error_responses(403)
@blp.arguments(RequestExportQuerySchema, location="query", arg_name="asked")
@blp.download(list(MEDIA_TYPES.values()), _DOWNLOAD)
def export_bot_requests(asked: ExportQuery):
    """Export the caller's bot requests and those of its organizations.

    The requests of 4.1, over a period (by default the last 30 days, at most 366), with its
    filters, `sortBy` and `fields`, without paging. For user tokens only.
    """
    export = export_files.negotiated(asked)
    caller = current_caller()
    return _download(export, policy.bot_requests(caller), f"user-{caller.id}")


@blp.route("/organizations/<objectid:organization_id>/requests/export")
@blp.doc(operationId="exportOrganizationBotRequests")
@blp.login_required
@blp.error_responses(403, 404)
@blp.arguments(OrganizationRequestExportQuerySchema, location="query", arg_name="asked")
@blp.download(list(MEDIA_TYPES.values()), _DOWNLOAD)
def export_organization_bot_requests(organization_id, asked: ExportQuery):
    """Export an organization's bot requests.

    The requests of 4.2, over a period (by default the last 30 days, at most 366), with its
    filters, `sortBy` and `fields`, without paging. For the organization's members and its
    own organization token.
    """
    export = export_files.negotiated(asked)
    visibility = policy.organization(current_caller(), organization_id)
    return _download(export, visibility, f"organization-{organization_id}")
