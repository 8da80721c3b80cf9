"""The cursor codec (schemas/cursors.py) works without a request: given its list, it makes
and reads a cursor anywhere, as the benchmark does."""

import pytest
from bson import DatetimeMS, ObjectId
from marshmallow import ValidationError

from repositories.bson_order import TAIL, WALK, Position, Resume
from schemas import cursors
from schemas.queries import BotListQuerySchema, ListQuerySchema, OrganizationBotListQuerySchema

SORT = [("name", 1)]
WALKING = Resume(WALK, Position(("ember", ObjectId("0123456789abcdef01234567"))))


@pytest.mark.parametrize(
    "resume",
    [
        WALKING,
        Resume(TAIL, Position(([1, 2], ObjectId("0123456789abcdef01234567")))),
        Resume(WALK, Position((DatetimeMS(2**50), ObjectId("0123456789abcdef01234567")))),
    ],
)
def test_a_cursor_reads_back_as_the_position_it_was_made_of(resume):
    text = cursors.encode(resume, SORT, "bots")

    assert cursors.decode(text, "bots") == cursors.Cursor(SORT, resume)


def test_a_long_position_is_sent_as_its_items_id():
    resume = Resume(WALK, Position(("x" * 600, 7)))

    decoded = cursors.decode(cursors.encode(resume, SORT, "bots"), "bots")

    assert decoded == cursors.Cursor(SORT, Resume(WALK, None, anchor=7))


def test_a_cursor_of_another_list_is_refused():
    text = cursors.encode(WALKING, SORT, "bots")

    with pytest.raises(ValidationError, match="Made for another list"):
        cursors.decode(text, "organization bots")


def test_each_list_schema_loads_the_cursors_of_its_own_list_only():
    text = cursors.encode(WALKING, SORT, BotListQuerySchema.cursor_scope)

    listing = BotListQuerySchema().load({"cursor": text})

    assert listing.query.cursor == WALKING
    with pytest.raises(ValidationError, match="another list"):
        OrganizationBotListQuerySchema().load({"cursor": text})


def _lists(schema: type) -> list[type]:
    """Every list schema below `schema`: those with items."""
    found = []
    for subclass in schema.__subclasses__():
        found += ([subclass] if hasattr(subclass, "item") else []) + _lists(subclass)
    return found


def test_every_list_names_its_own_cursor_scope():
    """A list schema that inherited its parent's scope would take the parent's cursors."""
    lists = _lists(ListQuerySchema)
    scopes = [vars(schema).get("cursor_scope") for schema in lists]

    assert len(lists) == 4
    assert None not in scopes and len(set(scopes)) == len(scopes)
