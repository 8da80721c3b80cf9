"""Field selection (docs/api.md#field-selection): the `fields` parameter, and an item dumped with
only those.

The selection is a set of an item's top-level names, `id` always among them; None (the
parameter left out or empty) is every field. The repositories read, join and summarize only
the stored paths of what is selected (`stored_paths`), so a field left out is never dumped
as the null of a missing value: the dump keeps the selected names alone (`Selected`).
"""

import functools
from dataclasses import dataclass

from marshmallow import Schema, ValidationError, fields

from domain.errors import InvalidParameter


@functools.cache  # per schema class: asked on every request of an item
def names(item_schema: type[Schema]) -> tuple[str, ...]:
    """The names an item of `item_schema` holds, in its order."""
    return tuple(field.data_key or name for name, field in item_schema._declared_fields.items())


@functools.lru_cache(maxsize=1024)  # per schema class and selection: asked on every request
def stored_paths(item_schema: type[Schema], selection: frozenset[str] | None) -> frozenset[str]:
    """The stored fields that make an item of `item_schema`, or its selection, with a nested
    summary's as `field.name`: what a repository reads, so that none holds a view's fields."""
    paths = set()
    for name, field in item_schema._declared_fields.items():
        if selection is not None and (field.data_key or name) not in selection:
            continue
        stored = field.attribute or name
        nested = field.inner if isinstance(field, fields.List) else field
        if isinstance(nested, fields.Nested):
            paths.update(f"{stored}.{path}" for path in stored_paths(nested.nested, None))
        else:
            paths.add(stored)
    return frozenset(paths)


class FieldSelection(fields.Field):
    """`name[,name...]`, of the names `held`, into a frozenset with `id`."""

    def __init__(self, held, *, description: str | None = None, **kwargs):
        self.names = tuple(held)
        description = description or (
            "Comma-separated fields of each item to return (`id` always is): "
            f"{', '.join(self.names)}. A nested summary comes whole. Empty or left out: all."
        )
        super().__init__(metadata={"description": description}, **kwargs)

    @property
    def pattern(self) -> str:
        """The accepted syntax as a regular expression, for the OpenAPI document."""
        name = f"(?:{'|'.join(self.names)})"
        return f"^(?:{name}(?:,{name})*)?$"

    def _deserialize(self, value, attr, data, **kwargs):
        return parse(value, self.names)


def parse(value, held: tuple[str, ...]) -> frozenset[str] | None:
    """A selection of the names `held`, with `id`; None for an empty value (all of them)."""
    if not isinstance(value, str):
        raise ValidationError("Must be a comma-separated list of fields.")
    if value == "":
        return None
    selection = frozenset({"id", *value.split(",")})
    problem = outside(selection, held)
    if problem:
        raise ValidationError(problem)
    return selection


def outside(selection: frozenset[str] | None, held: tuple[str, ...]) -> str | None:
    """Why a selection holds a name that `held` does not, if it does."""
    unknown = sorted((selection or set()) - set(held))
    if unknown:
        return f"No field {unknown[0][:40]!r} here; fields: {', '.join(held)}."
    return None


def check(selection: frozenset[str] | None, item_schema: type[Schema]) -> None:
    """A 400 naming `fields` for a name that the caller's view does not hold: the endpoint
    accepts the names of its widest view (4.7's admin view), a caller gets its own."""
    if selection is None:
        return
    problem = outside(selection, names(item_schema))
    if problem:
        raise InvalidParameter("fields", problem)


@dataclass(frozen=True)
class Selected:
    """What a view returns for a selection: the schemas that dump it keep the selected names
    of each item (`keep`)."""

    value: object
    fields: frozenset[str]


def selected(value, selection: frozenset[str] | None):
    """`value` as a view returns it: wrapped in its selection, if there is one."""
    return value if selection is None else Selected(value, selection)


def keep(item: dict, selection: frozenset[str]) -> dict:
    return {name: value for name, value in item.items() if name in selection}
