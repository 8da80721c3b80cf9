"""A JWT's claims as an identity provider would sign them for a user, and the settings the
JWT tests configure: shared by tests/api/test_jwt.py and tests/deployment/test_jwt.py."""

import datetime as dt

SECRET = "a-test-secret-of-at-least-32-bytes!"
AUDIENCE = "https://bots.example.com"
ISSUER = "https://id.example.com/"


def claims(user_id, **overrides) -> dict:
    now = dt.datetime.now(dt.UTC)
    return {"sub": str(user_id), "exp": now + dt.timedelta(minutes=5), **overrides}
