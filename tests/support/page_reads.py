"""Reading lists the way a client and the reference do, shared by the page tests of
tests/integration: one plain query's page, a keyset walk from its first page to its last, and
which values a walk leaves to its tail."""

from bson import Code, Regex

from repositories.bson_order import sort_order
from repositories.pages import ListPlan, ListQuery
from repositories.pipelines import read_page


def keyset_page(collection, visibility, filters, *, sort, limit, resume=None, counted=False):
    """A keyset page as a list reads it (repositories/pipelines.py)."""
    query = ListQuery(sort=sort, page=None, limit=limit, pagination="keyset", cursor=resume,
                      count="exact" if counted else "none")  # fmt: skip
    return read_page(collection, ListPlan.of(visibility, filters, query, None))


def offset_page(collection, visibility, filters, *, sort, page, limit, counted=True):
    """An offset page as a list reads it."""
    query = ListQuery(sort=sort, page=page, limit=limit, count="exact" if counted else "none")
    return read_page(collection, ListPlan.of(visibility, filters, query, None))


def reference(collection, visibility, filters, sort, page, limit):
    match = {"$and": [visibility.as_filter(), filters]}
    total = collection.count_documents(match)
    cursor = collection.find(match, sort=list(sort_order(sort).items()))
    ids = [document["_id"] for document in cursor.skip((page - 1) * limit).limit(limit)]
    return ids, total


def walk(collection, visibility, filters, sort, limit, counted=False) -> tuple[list, list]:
    """Every page's ids, following `next`; and each page's total."""
    ids, totals, resume = [], [], None
    for _ in range(1000):
        page = keyset_page(
            collection, visibility, filters, sort=sort, limit=limit, resume=resume, counted=counted
        )
        assert len(page.results) <= limit
        ids += [document["_id"] for document in page.results]
        totals.append(page.total_results)
        if page.next is None:
            return ids, totals
        assert page.results, "a next page after an empty one"
        resume = page.next
    raise AssertionError("the walk did not end")


def all_ids(collection, visibility, filters, sort) -> list:
    match = {"$and": [visibility.as_filter(), filters]}
    sorted_by = list(sort_order(sort).items())
    return [document["_id"] for document in collection.find(match, {"_id": 1}, sort=sorted_by)]


def tail_value(value) -> bool:
    scoped = isinstance(value, Code) and value.scope is not None
    return scoped or isinstance(value, list | Regex | bytes)
