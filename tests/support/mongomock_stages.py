"""The aggregation stage mongomock does not know that the repositories use, taught as MongoDB
runs it: `$unionWith` (repositories/pipelines.py reads a keyset walk's tail through it)."""

from mongomock import aggregate


def _union_with(documents: list, database, options) -> list:
    """The documents so far, then those of the other collection's pipeline."""
    if isinstance(options, str):
        options = {"coll": options}
    other = database[options["coll"]].aggregate(options.get("pipeline", []))
    return [*documents, *other]


def teach() -> None:
    aggregate._PIPELINE_HANDLERS["$unionWith"] = _union_with
