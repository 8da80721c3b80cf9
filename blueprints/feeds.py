"""Live feeds of bot requests (docs/api.md#live-feed): a user's (as 4.1) and an
organization's (as 4.2), as Server-Sent Events.

A feed follows the worker's stream of request changes (runtime/request_feeds.py) and judges
each change by the request before and after it, with the caller's visibility and the feed's
filters: a request it may see after the change is `created` (an insert) or `updated`, as the
change left it; one it could see only before is `deleted`. So each event is what happened,
whether the feed reads it at once or replays it later, on whichever worker, and the database
is asked only for the summaries of what is sent.

The caller's rights are followed in the stream's order (runtime/request_feeds.py): a feed
reads its caller from the database once subscribed, and again at each change of a document
its caller is read from (its token, user or organization), before the request changes
written after it. Revoked, expired, or with other rights, the feed ends there, and a client
that reconnects is answered as any new request; a token that expires ends its feed at its
`expiresAt` (a JWT at its `exp`), with no write to tell it.

A resumed feed (`Last-Event-ID`) first reads the changes after that event from the
database's own history, on a stream of its own, until it has caught up with the worker's
stream, whose changes it keeps meanwhile; a change both bring is sent once. It judges them
with its caller's rights as they are when it resumes.
"""

import socket
import time
from collections.abc import Iterator

import pymongo
from flask import current_app, request
from marshmallow import ValidationError
from pymongo.errors import OperationFailure, PyMongoError

from access import policy
from blueprints.bot_requests import bot_requests
from domain import timestamps
from domain.errors import DomainError, Forbidden, Gone, InvalidParameter, Unavailable
from repositories import change_images
from runtime import admission
from runtime.admission import DatabaseBusy
from runtime.changes import DOCUMENT_CHANGES, watch
from runtime.database import admitted_db
from runtime.request_feeds import Change, FeedsFull, NoChangeStream, RequestFeeds, Subscription
from schemas import feed_ids
from schemas.bot_requests import BotRequestSchema
from schemas.feeds import FeedQuery, FeedQuerySchema, OrganizationFeedQuerySchema
from schemas.selection import selected
from web.authentication import Standing, current_caller, standing_now
from web.blueprint import Blueprint
from web.event_streams import KEEP_ALIVE, MEDIA_TYPE, event, streamed_events

blp = Blueprint(
    "feeds",
    __name__,
    url_prefix="/v1",
    description="Bot requests as they are created, updated and deleted, as Server-Sent "
    "Events: for dashboards that would otherwise poll the lists. Feeds have a rate limit of "
    "their own (RATELIMIT_FEED) and a number per worker (FEED_CONNECTIONS).",
)

CHECK_SECONDS = 1.0  # how often a feed looks whether its client left
KEEP_ALIVE_SECONDS = 15.0
REPLAYED_AT_ONCE = 500  # changes of a resumed feed's history read again in one query
_HISTORY_LOST = 286  # ChangeStreamHistoryLost: the resume token is older than the history
_NO_PRE_IMAGES = (
    "Live feeds need the bot requests' pre-images, which this database does not keep: an "
    "operator turns them on with `flask db init` (docs/deployment.md#live-feeds)."
)
_HISTORY_GONE = "The events after this id are no longer held: read the list, then start a new feed."
_ITEM = BotRequestSchema()
_LAST_EVENT_ID = {
    "in": "header",
    "name": "Last-Event-ID",
    "schema": {"type": "string", "maxLength": feed_ids.MAX_LENGTH},
    "description": "Resume after this event id (an `EventSource` sends it when it reconnects); "
    "wins over `lastEventId`.",
}
_FEED = (
    "A `text/event-stream`: `created`, `updated` and `deleted` events, each with an `id` to "
    "resume after and the request as the list shows it (a deletion: its `id` alone), and a "
    "`: keep-alive` comment at least every 15 s."
)


@blp.route("/requests/feed", parameters=[_LAST_EVENT_ID])
@blp.doc(operationId="followBotRequests")
@blp.token_in_query
@blp.login_required
@blp.error_responses(403, 410)
@blp.arguments(FeedQuerySchema, location="query", arg_name="query")
@blp.download([MEDIA_TYPE], _FEED, attachment=False)
def follow_bot_requests(query: FeedQuery):
    """Follow the caller's bot requests and those of its organizations as they change.

    The requests of 4.1, for user tokens only. Reconnect with `Last-Event-ID` (an
    `EventSource` does) to receive every event after that one.
    """
    return _feed(query, lambda caller: policy.bot_requests(caller))


@blp.route("/organizations/<objectid:organization_id>/requests/feed", parameters=[_LAST_EVENT_ID])
@blp.doc(operationId="followOrganizationBotRequests")
@blp.token_in_query
@blp.login_required
@blp.error_responses(403, 404, 410)
@blp.arguments(OrganizationFeedQuerySchema, location="query", arg_name="query")
@blp.download([MEDIA_TYPE], _FEED, attachment=False)
def follow_organization_bot_requests(organization_id, query: FeedQuery):
    """Follow an organization's bot requests as they change.

    The requests of 4.2, for the organization's members and its own organization token.
    Reconnect with `Last-Event-ID` to receive every event after that one.
    """
    return _feed(query, lambda caller: policy.organization(caller, organization_id))


def _feed(query: FeedQuery, visibility_of):
    caller = current_caller()
    visibility = visibility_of(caller)
    scope = f"{request.endpoint}|{request.view_args}|{caller.kind.value}:{caller.id}"
    last_id = request.headers.get("Last-Event-ID") or query.last_event_id
    try:
        token = feed_ids.decode(last_id, scope) if last_id else None
    except ValidationError as error:
        raise InvalidParameter("lastEventId", error.messages[0]) from None
    try:
        subscription = current_app.extensions["request_feeds"].subscribe()
    except FeedsFull as error:
        raise Unavailable(str(error).capitalize() + ": try again shortly.") from None
    except NoChangeStream as error:
        raise Unavailable(str(error)) from None
    try:
        if not change_images.kept(admitted_db()):  # under the request's permit, as its token
            raise Unavailable(_NO_PRE_IMAGES)
        missed = _missed_since(token) if token is not None else None
        first = next(missed, None) if missed is not None else None
    except BaseException:
        subscription.close()
        raise
    feed = _Feed(query, visibility, visibility_of, scope, subscription, missed,
                 client=request.environ.get("gunicorn.socket"))  # fmt: skip
    response = streamed_events(feed.events(first))
    # Whether or not its events ever start: a HEAD's body, or a client gone before the first
    # write, is closed without them, and the slot must come back all the same.
    response.call_on_close(feed.close)
    return response


def _missed_since(token: dict) -> Iterator[Change | None]:
    """The changes after `token`, from the database's history, then None once caught up
    (an empty answer); a 410 where that history is gone, a 400 where the token is not one
    this database made."""
    database = current_app.extensions["mongo_stream"][current_app.config["MONGODB_DB"]]
    try:
        stream = watch(database, RequestFeeds.collections, images=True,
                       resume_after=token, max_await_time_ms=250)  # fmt: skip
    except OperationFailure as error:
        if error.code == _HISTORY_LOST:
            raise Gone(_HISTORY_GONE) from None
        raise InvalidParameter("lastEventId", feed_ids.INVALID) from None
    return _drained(stream)


def _drained(stream) -> Iterator[Change | None]:
    with stream:
        while stream.alive:
            change = stream.try_next()
            if change is None:
                yield None
                return
            if change["operationType"] not in DOCUMENT_CHANGES:  # dropped, or renamed over
                raise Gone(_HISTORY_GONE)
            change = Change.of(change)
            if not change.whole:  # its pre-image no longer held
                raise Gone(_HISTORY_GONE)
            yield change


class _Ended(Exception):
    """The feed ends here: its caller lost it, or a change came without its pre-image."""


class _Feed:
    """One open feed: its caller's standing, and the events it sends."""

    def __init__(self, query: FeedQuery, visibility, visibility_of, scope: str,
                 subscription: Subscription, missed: Iterator | None,
                 client: socket.socket | None):  # fmt: skip
        self._query = query
        self._missed = missed
        self._visibility = visibility
        self._visibility_of = visibility_of
        self._scope = scope
        self._subscription = subscription
        self._standing: Standing | None = None
        self._seconds = current_app.config["MONGODB_TIMEOUT_MS"] / 1000
        self._client = client  # the connection, where the server gives it

    def events(self, first: Change | None) -> Iterator[str]:
        try:
            yield from self._follow(first)
        except (PyMongoError, DatabaseBusy, DomainError, _Ended):
            return  # the client reconnects, and is answered as a new request
        finally:
            self.close()

    def close(self) -> None:
        """The slot and the history's stream given back; once is enough, twice is harmless."""
        if self._missed is not None:
            self._missed.close()
        self._subscription.close()

    def _follow(self, first: Change | None) -> Iterator[str]:
        # Read once subscribed: a change to the caller's rights is either in the database by
        # now, or still to come through the stream, before any later request change.
        self._read_standing()
        missed = self._missed
        replayed = set()  # tokens of changes sent from the history, to send none twice
        if first is not None:
            changes = [first]
            for change in missed:
                if change is None:
                    break
                changes.append(change)
                if len(changes) == REPLAYED_AT_ONCE:
                    replayed.update(repr(change.token) for change in changes)
                    yield from self._tell(changes)
                    changes = []
            replayed.update(repr(change.token) for change in changes)
            yield from self._tell(changes)
        if missed is not None:
            missed.close()  # the history's own stream, caught up
        checked = quiet_since = time.monotonic()
        while not self._subscription.ended:
            changes = self._subscription.take(self._wait())
            if replayed:
                changes = [change for change in changes if repr(change.token) not in replayed]
            if changes:
                yield from self._tell(changes)
                quiet_since = time.monotonic()
            self._check_expiry()
            now = time.monotonic()
            if now - checked >= CHECK_SECONDS:
                if self._client_left():
                    return
                checked = now
            if now - quiet_since >= KEEP_ALIVE_SECONDS:
                yield KEEP_ALIVE
                quiet_since = now

    def _wait(self) -> float:
        """How long to wait for changes: until the next look at the client, or the token's
        expiry if that comes first."""
        expires_at = self._standing.expires_at
        if expires_at is None:
            return CHECK_SECONDS
        left = (expires_at - timestamps.now()).total_seconds()
        return min(CHECK_SECONDS, max(left, 0.0))

    def _check_expiry(self) -> None:
        expires_at = self._standing.expires_at
        if expires_at is not None and expires_at <= timestamps.now():
            raise _Ended

    def _client_left(self) -> bool:
        """Whether the client closed the connection: peeked at without waiting, a closed one
        is at its end. So a client that leaves frees its slot within a second, not at the
        feed's next write. gunicorn gives the app its socket (`gunicorn.socket`); under
        another server, or over TLS, the next write tells."""
        if self._client is None:
            return False
        try:
            return self._client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:  # nothing to read: still there
            return False
        except ValueError:  # a TLS socket, which cannot peek
            return False
        except OSError:  # reset by the peer
            return True

    def _read_standing(self) -> None:
        """The caller read again from the database; ends the feed (`_Ended`) once it is
        gone, expired, or sees other requests than when the feed opened."""
        with admission.permitted(self._seconds), pymongo.timeout(self._seconds):
            standing = standing_now()
        if standing.caller is None:
            raise _Ended
        try:
            same = self._visibility_of(standing.caller) == self._visibility
        except Forbidden:
            same = False
        if not same:
            raise _Ended
        self._standing = standing
        self._check_expiry()

    def _tell(self, changes: list[Change]) -> Iterator[str]:
        """The events of `changes`, in their order: at a change of what the caller is read
        from, the requests' changes before it are told, and the caller read again before
        any after it."""
        requests = []
        for change in changes:
            if change.collection != "botrequests":
                if (change.collection, change.document_id) in self._standing.sources:
                    yield from self._announce(requests)
                    requests = []
                    self._read_standing()
            elif not change.whole:  # no pre-image: the client resumes, or learns it is gone
                raise _Ended
            else:
                requests.append(change)
        yield from self._announce(requests)

    def _announce(self, changes: list[Change]) -> Iterator[str]:
        """Each change judged by the request before and after it: one the caller may see
        after is `created` or `updated`, with the request as the change left it; one it
        could see only before is `deleted`."""
        if not changes:
            return
        with admission.permitted(self._seconds), pymongo.timeout(self._seconds):
            repository = bot_requests()
            seen = repository.judge(
                self._visibility, bot=self._query.bot, created_by=self._query.created_by
            )
            after = [change.after is not None and seen(change.after) for change in changes]
            shown = [
                change.after
                for change, seen_after in zip(changes, after, strict=True)
                if seen_after
            ]
            items = iter(repository.shown(shown, self._query.reads))
        for change, seen_after in zip(changes, after, strict=True):
            event_id = feed_ids.encode(change.token, self._scope)
            if seen_after:
                kind = "created" if change.kind == "insert" else "updated"
                yield event(kind, event_id, self._item(next(items)))
            elif change.before is not None and seen(change.before):
                yield event("deleted", event_id, {"id": str(change.document_id)})

    def _item(self, document: dict) -> dict:
        return _ITEM.dump(selected(document, self._query.selection))
