"""JWT bearer tokens through a real gunicorn, its settings read from the environment
(tests/api/test_jwt.py checks the rules through Flask's test client)."""

import jwt

from tests.support.factories import World, bearer
from tests.support.jwt_claims import AUDIENCE, ISSUER, SECRET, claims


def test_an_identity_provider_token_through_gunicorn(gunicorn, wire_db):
    world = World(wire_db)
    ada = world.user("Ada")
    world.bot("public-bot")
    server = gunicorn({"JWT_SECRET": SECRET, "JWT_AUDIENCE": AUDIENCE, "JWT_ISSUER": ISSUER})

    def status(**given) -> int:
        token = jwt.encode(claims(ada, **given), SECRET, algorithm="HS256")
        return server.request("GET", "/v1/bots/", bearer(token))[0]

    assert status(aud=AUDIENCE, iss=ISSUER) == 200
    assert status(aud="https://other.example.com", iss=ISSUER) == 401
    assert status(aud=AUDIENCE, iss="https://evil.example.com/") == 401
    assert status(iss=ISSUER) == 401
