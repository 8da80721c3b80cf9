"""A base for schemas that dump stored documents: same output, less of marshmallow's overhead.

Marshmallow reads each field through a generic accessor (dotted paths, attributes, a
fallback to `getattr`), which is most of the cost of dumping a page of 100 bot requests.
A document is a plain dict, so a field whose key is plain is read with `dict.get`; the
missing-value default and the field's own `_serialize` are applied exactly as marshmallow's
`Field.serialize` does. Any other object, or a field that needs marshmallow's reading
(a dotted or `dict`-attribute key, a field that reads no attribute or reads it its own
way), goes through marshmallow unchanged.

A field selection (`Selected`, docs/api.md#field-selection) dumps the item, then keeps the selected
names.
"""

from marshmallow import Schema, missing
from marshmallow.fields import Field

from schemas.selection import Selected, keep


def _plain(name: str, field: Field) -> bool:
    key = field.attribute if field.attribute is not None else name
    return (
        field._CHECK_ATTRIBUTE
        and type(field).serialize is Field.serialize
        and type(field).get_value is Field.get_value
        and isinstance(key, str)
        and "." not in key
        and not hasattr(dict, key)
    )


class DocumentSchema(Schema):
    def dump(self, obj, *, many=None):
        if isinstance(obj, Selected):
            return keep(super().dump(obj.value), obj.fields)
        return super().dump(obj, many=many)

    def _document_fields(self) -> list | None:
        """(output key, document key, field) per field; None when one of them is not plain."""
        if not hasattr(self, "_plan"):
            fields = self.dump_fields.items()
            self._plan = None
            if type(self).get_attribute is Schema.get_attribute and all(
                _plain(name, field) for name, field in fields
            ):
                self._plan = [
                    (
                        field.data_key if field.data_key is not None else name,
                        field.attribute if field.attribute is not None else name,
                        name,
                        field,
                    )
                    for name, field in fields
                ]
        return self._plan

    def _serialize(self, obj, *, many: bool = False):
        plan = self._document_fields()
        if many or type(obj) is not dict or plan is None:
            return super()._serialize(obj, many=many)
        result = self.dict_class()
        for key, attribute, name, field in plan:
            value = obj.get(attribute, missing)
            if value is missing:
                default = field.dump_default
                value = default() if callable(default) else default
                if value is missing:
                    continue
            result[key] = field._serialize(value, name, obj)
        return result
