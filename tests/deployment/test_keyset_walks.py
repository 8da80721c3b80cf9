"""Eight keyset walks one item a page, side by side, through gunicorn with its default settings:
every page is a 200, and each walk gives its list's items in the offset order
(docs/api.md#keyset-pages). A page is one query (repositories/pipelines.py), so it holds a
database permit for one round trip, not dozens."""

import threading
from urllib.parse import quote

from tests.support.factories import World, bearer

WALKS = [
    "/v1/requests/?sortBy=updatedAt:desc",
    "/v1/requests/?sortBy=createdAt:asc",
    "/v1/requests/?sortBy=createdAt:desc",
    "/v1/organizations/{acme}/requests/?sortBy=createdAt:desc",
    "/v1/organizations/{acme}/requests/?sortBy=updatedAt:asc",
    "/v1/organizations/{acme}/bots/?sortBy=name",
    "/v1/bots/?sortBy=name",
    "/v1/organizations/{acme}/bots/?sortBy=creditCost:desc",
]


def _scene(db) -> dict:
    """Ada, in Acme, sees a couple of dozen requests and bots in each list."""
    world = World(db)
    acme = world.organization("Acme")
    ada = world.user("Ada", organizations=[acme])
    bob = world.user("Bob", organizations=[acme])
    bots = [world.bot(f"public-{n:02d}", credit_cost=n % 4) for n in range(12)]
    bots += [
        world.bot(f"acme-{n:02d}", organization=acme, is_public=False, credit_cost=n % 3)
        for n in range(12)
    ]
    for n in range(24):
        world.bot_request(bot=bots[n], created_by=(ada, bob)[n % 2], organization=acme)
    return {"token": bearer(world.token(user=ada)), "acme": str(acme)}


def _walk(server, path: str, headers: dict, statuses: list) -> list[str]:
    """The ids of every keyset page of one item, following `nextCursor`."""
    ids, url = [], f"{path}&pagination=keyset&limit=1"
    for _ in range(100):
        status, _, body = server.request("GET", url, headers)
        statuses.append((url, status))
        if status != 200:
            return ids
        ids += [item["id"] for item in body["results"]]
        if not body.get("nextCursor"):
            return ids
        url = f"{path}&pagination=keyset&limit=1&cursor={quote(body['nextCursor'])}"
    raise AssertionError(f"{path}: the walk did not end")


def test_side_by_side_walks_of_one_item_a_page_get_200s_only(gunicorn, wire_db):
    scene = _scene(wire_db)
    server = gunicorn()
    paths = [path.format(**scene) for path in WALKS]
    expected = {
        path: [
            item["id"]
            for item in server.request("GET", f"{path}&limit=100", scene["token"])[2]["results"]
        ]
        for path in paths
    }
    statuses, walked = [], {}

    def walk(path: str) -> None:
        walked[path] = _walk(server, path, scene["token"], statuses)

    threads = [threading.Thread(target=walk, args=(path,)) for path in paths]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    refused = [(url, status) for url, status in statuses if status != 200]
    assert not refused, refused
    assert walked == expected
    assert all(len(ids) >= 12 for ids in walked.values()), walked
