"""Path ids: anything that is not an ObjectId fails to route, a 404 before any access check."""

from bson import ObjectId
from werkzeug.routing import BaseConverter


class ObjectIdConverter(BaseConverter):
    regex = "[0-9a-fA-F]{24}"

    def to_python(self, value: str) -> ObjectId:
        return ObjectId(value)

    def to_url(self, value: ObjectId) -> str:
        return str(value)
