"""The query strings of the live feeds (docs/api.md#live-feed): a request list's `bot` and
`fields` (and `createdBy` on an organization's), and where a resumed feed starts."""

from dataclasses import dataclass

from bson import ObjectId
from marshmallow import post_load, pre_load
from marshmallow.fields import String
from marshmallow.validate import Length

from runtime.bearer_tokens import QUERY_TOKEN
from schemas import feed_ids
from schemas.bot_requests import BotRequestSchema
from schemas.queries import EmptyIsUnset
from schemas.query_fields import ObjectIdString, QueryText
from schemas.selection import FieldSelection, names, stored_paths


@dataclass(frozen=True)
class FeedQuery:
    """`reads`: the stored paths of the selection, as a list's (`BotRequestListQuery`)."""

    bot: str | None
    created_by: ObjectId | None
    selection: frozenset[str] | None
    reads: frozenset[str]
    last_event_id: str | None


class FeedQuerySchema(EmptyIsUnset):
    item = BotRequestSchema
    bot = QueryText(metadata={"description": "A bot's slug: only requests of that bot."})
    fields = FieldSelection(names(item))
    last_event_id = String(
        data_key="lastEventId",
        validate=Length(max=feed_ids.MAX_LENGTH),
        metadata={
            "description": "Resume after this event id, for clients that cannot send the "
            "`Last-Event-ID` header (which wins when both are sent)."
        },
    )

    @pre_load
    def drop_token(self, data, **kwargs):
        """A browser's token (web/authentication.py), already read: not a filter."""
        return {key: value for key, value in data.items() if key != QUERY_TOKEN}

    @post_load
    def query(self, data, **kwargs) -> FeedQuery:
        selection = data.get("fields")
        return FeedQuery(
            bot=data.get("bot"),
            created_by=data.get("created_by"),
            selection=selection,
            reads=stored_paths(self.item, selection),
            last_event_id=data.get("last_event_id"),
        )


class OrganizationFeedQuerySchema(FeedQuerySchema):
    created_by = ObjectIdString(
        data_key="createdBy",
        metadata={"description": "A user's id: only the requests that user made."},
    )
