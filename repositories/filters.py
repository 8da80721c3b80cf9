"""Filters of a list: text matches, and one disjoint filter per visibility branch.

Flat and ordered matters to the embedded engine, which uses an index only for a filter
without top-level operators, and takes the first field it has an index for. Filters are
therefore written field by field with the most selective indexed field first.
"""

import re

from access.policy import Visibility


def contains(text: str) -> dict:
    """Case-insensitive substring; every character literal, so no pattern can backtrack."""
    return {"$regex": re.escape(text), "$options": "i"}


def equals_ignoring_case(text: str) -> dict:
    return {"$regex": f"^{re.escape(text)}$", "$options": "i"}


def combine(*clauses: dict) -> dict:
    """AND of the clauses, keys merged flat in order where they do not collide (flat and
    ordered: the module's docstring says why)."""
    merged: dict = {}
    for clause in clauses:
        if merged.keys() & clause.keys():
            return {"$and": [dict(clause) for clause in clauses if clause]}
        merged.update(clause)
    return merged


def _negation(branch: dict) -> dict:
    """NOT branch, on the branch's own field when it has just one."""
    if len(branch) != 1:
        return {"$nor": [branch]}
    ((field, condition),) = branch.items()
    if isinstance(condition, dict) and condition.keys() == {"$in"}:
        return {field: {"$nin": condition["$in"]}}
    if isinstance(condition, dict) and condition and all(op.startswith("$") for op in condition):
        return {field: {"$not": condition}}
    return {field: {"$ne": condition}}


def disjoint_filters(visibility: Visibility, filters: dict, narrow: dict | None = None) -> list:
    """One filter per visibility branch, each excluding the branches before it."""
    return [
        combine(narrow or {}, branch, *map(_negation, visibility.branches[:index]), filters)
        for index, branch in enumerate(visibility.branches)
    ]
