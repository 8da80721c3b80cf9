"""A live feed's event ids (docs/api.md#live-feed): the change stream's resume token just
after the event, bound to the feed and caller it was sent to, as base64url BSON.

An id is not signed. Bound to its feed, endpoint and caller, one caller's id is a 400 on any
other feed; and whatever a forged id of one's own says, it only moves where the feed resumes:
every event is read again with the caller's visibility before it is sent.
"""

import base64
import binascii

import bson
from marshmallow import ValidationError

MAX_LENGTH = 1024
INVALID = "Not an event id of this feed: start a new feed."


def encode(token: dict, scope: str) -> str:
    document = {"f": scope, "t": token}
    return base64.urlsafe_b64encode(bson.encode(document)).decode("ascii").rstrip("=")


def decode(text: str, scope: str) -> dict:
    """The resume token of an id this feed sent; a ValidationError naming it otherwise."""
    if len(text) > MAX_LENGTH:
        raise ValidationError(INVALID)
    try:
        document = bson.decode(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError, bson.errors.BSONError):
        raise ValidationError(INVALID) from None
    if document.get("f") != scope or not isinstance(document.get("t"), dict):
        raise ValidationError(INVALID)
    return document["t"]
