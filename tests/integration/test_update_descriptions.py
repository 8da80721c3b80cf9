"""A request as an update left it, rebuilt from its pre-image and the change's
`updateDescription` (runtime/update_descriptions.py), is the document the server holds after
that update: the server's own answer is the reference, on the wire server, whose test
databases keep pre-images (tests/conftest.py)."""

import pytest

from runtime.update_descriptions import NotApplicable, applied

BEFORE = {
    "_id": 1,
    "inputs": {"items": [1, 2, 3], "0": "a key, not an index"},
    "tags": [1, 2, 3, 4],
    "status": "running",
    "nested": [{"a": 1}, {"a": 2}],
}
UPDATES = [
    {"$set": {"status": "done", "response": {"message": "hi"}}},
    {"$unset": {"status": ""}, "$push": {"tags": 5}},
    {"$set": {"inputs.items.1": 20, "inputs.0": "b", "nested.1.a": 3}},
    {"$set": {"tags.6": 7}},
    {"$pop": {"tags": 1}, "$set": {"inputs.new.deep": True}},
    [{"$set": {"tags": {"$slice": ["$tags", 2]}, "status": "$$REMOVE"}}],
    [{"$set": {"nested": {"$slice": ["$nested", 1]}}}],
]


@pytest.mark.parametrize("update", UPDATES, ids=repr)
def test_a_document_after_an_update_is_what_the_server_holds(wire_db, update):
    wire_db.botrequests.insert_one(dict(BEFORE))
    with wire_db.botrequests.watch(full_document_before_change="required") as stream:
        wire_db.botrequests.update_one({"_id": 1}, update)
        change = stream.next()

    after = applied(change["fullDocumentBeforeChange"], change["updateDescription"])

    assert after == wire_db.botrequests.find_one({"_id": 1})


def test_a_path_the_document_cannot_hold_is_not_applied():
    with pytest.raises(NotApplicable):
        applied({"status": "x"}, {"updatedFields": {"status.a": 1}})
    with pytest.raises(NotApplicable):
        applied({"tags": [1]}, {"updatedFields": {"tags.x": 1}})
    with pytest.raises(NotApplicable):
        applied({}, {"truncatedArrays": [{"field": "tags", "newSize": 0}]})
