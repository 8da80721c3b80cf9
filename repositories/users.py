"""Users, as authentication needs them: role and memberships."""

from bson import ObjectId
from pymongo.database import Database


class UserRepository:
    def __init__(self, db: Database):
        self._users = db.users

    def find(self, user_id: ObjectId) -> dict | None:
        return self._users.find_one({"_id": user_id}, {"role": 1, "organizations": 1})
