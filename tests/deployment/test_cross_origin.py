"""CORS_ORIGINS through a real gunicorn (docs/api.md#browsers-on-other-origins): set in the
environment as an operator sets it, read by every worker, answered on each of them."""

from tests.support.factories import World, bearer

DASHBOARD = "https://dash.example.com"
PREFLIGHT = {
    "Origin": DASHBOARD,
    "Access-Control-Request-Method": "GET",
    "Access-Control-Request-Headers": "authorization",
}


def test_every_worker_lets_the_named_origin_read(gunicorn, wire_db, open_connections):
    token = World(wire_db).token(user=World(wire_db).user("Ada"))
    server = gunicorn({"CORS_ORIGINS": f"{DASHBOARD}, http://localhost:3000"})

    connections = open_connections(server)
    assert len(connections) == 2
    for connection in connections:
        status, headers, _ = server.request("OPTIONS", "/v1/bots/", PREFLIGHT, connection)
        assert status == 204
        assert headers["Access-Control-Allow-Origin"] == DASHBOARD
        assert "authorization" in headers["Access-Control-Allow-Headers"].lower()

        status, headers, body = server.request(
            "GET", "/v1/bots/", {**bearer(token), "Origin": DASHBOARD}, connection
        )
        assert status == 200 and "results" in body
        assert headers["Access-Control-Allow-Origin"] == DASHBOARD
        assert "X-Request-ID" in headers["Access-Control-Expose-Headers"]

        status, headers, _ = server.request(
            "GET", "/v1/bots/", {**bearer(token), "Origin": "https://elsewhere.example"},
            connection,
        )  # fmt: skip
        assert status == 200
        assert "Access-Control-Allow-Origin" not in headers
