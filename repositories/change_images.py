"""The pre-images of `botrequests`: MongoDB keeps, for each update and deletion, the request
as it was before, where the collection asks for it (`changeStreamPreAndPostImages`, MongoDB
6.0 and later). A live feed judges each change by the request before and after it
(blueprints/feeds.py), so it needs them; `flask db init` turns them on, and a feed is refused
while they are off (docs/deployment.md#live-feeds).
"""

from pymongo.database import Database
from pymongo.errors import CollectionInvalid

COLLECTION = "botrequests"
_ON = {"enabled": True}


def kept(db: Database) -> bool:
    """Whether the database keeps the requests' pre-images."""
    found = next(iter(db.list_collections(filter={"name": COLLECTION})), None)
    options = (found or {}).get("options", {})
    return options.get("changeStreamPreAndPostImages") == _ON


def keep(db: Database) -> bool:
    """Turns the pre-images on (the collection made if there is none yet); whether they were
    off."""
    if kept(db):
        return False
    try:
        db.create_collection(COLLECTION, changeStreamPreAndPostImages=_ON)
    except CollectionInvalid:  # there already
        db.command("collMod", COLLECTION, changeStreamPreAndPostImages=_ON)
    return True
