"""Optional JWT bearer tokens: accepted only when configured, checked strictly."""

import base64
import datetime as dt
import hashlib
import hmac
import json

import jwt
import pytest
from bson import ObjectId
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from access.jwt_tokens import JwtVerifier
from app import create_app
from runtime.config import ConfigError
from tests.conftest import TEST_SETTINGS
from tests.support.factories import bearer
from tests.support.jwt_claims import AUDIENCE, ISSUER, SECRET
from tests.support.jwt_claims import claims as _claims


def _app(db, **settings):
    return create_app({**TEST_SETTINGS, "MONGODB_DB": db.name, **settings}, mongo_client=db.client)


@pytest.fixture
def jwt_client(db):
    return _app(db, JWT_SECRET=SECRET).test_client()


@pytest.fixture
def member(world):
    """A member of Acme, which owns a private bot."""
    acme = world.organization("Acme")
    world.bot("public-bot")
    world.bot("acme-private", organization=acme, is_public=False)
    return world.user("Ada", organizations=[acme])


def _slugs(response) -> list[str]:
    assert response.status_code == 200, response.get_json()
    return [bot["slug"] for bot in response.get_json()["results"]]


def test_a_signed_access_token_stands_for_its_user(jwt_client, member):
    token = jwt.encode(_claims(member, type="access"), SECRET, algorithm="HS256")

    response = jwt_client.get("/v1/bots/", headers=bearer(token))

    assert _slugs(response) == ["acme-private", "public-bot"]


def test_role_and_memberships_come_from_the_users_collection(jwt_client, world):
    admin = world.user("Root", role="admin")
    world.bot("hidden", is_public=False)
    token = jwt.encode(_claims(admin, role="user"), SECRET, algorithm="HS256")

    response = jwt_client.get("/v1/bots/hidden/", headers=bearer(token))

    assert response.status_code == 200
    assert response.get_json()["isPublic"] is False


@pytest.mark.parametrize(
    "claims",
    [
        pytest.param({"exp": dt.datetime(2020, 1, 1, tzinfo=dt.UTC)}, id="expired"),
        pytest.param({"exp": None}, id="no-exp"),
        pytest.param({"type": "refresh"}, id="refresh-token"),
        pytest.param({"sub": "not-an-id"}, id="sub-not-an-id"),
        pytest.param({"sub": str(ObjectId())}, id="unknown-user"),
        pytest.param({"sub": None}, id="no-sub"),
    ],
)
def test_unusable_tokens_are_401(jwt_client, member, claims):
    payload = {key: value for key, value in _claims(member, **claims).items() if value is not None}
    token = jwt.encode(payload, SECRET, algorithm="HS256")

    response = jwt_client.get("/v1/bots/", headers=bearer(token))

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_a_token_signed_with_another_secret_is_401(jwt_client, member):
    token = jwt.encode(_claims(member), "another-secret-of-at-least-32-bytes", algorithm="HS256")

    assert jwt_client.get("/v1/bots/", headers=bearer(token)).status_code == 401


def test_an_unsigned_token_is_401(jwt_client, member):
    token = jwt.encode(_claims(member), None, algorithm="none")

    assert jwt_client.get("/v1/bots/", headers=bearer(token)).status_code == 401


def test_jwts_are_refused_unless_configured(client, member):
    token = jwt.encode(_claims(member), SECRET, algorithm="HS256")

    assert client.get("/v1/bots/", headers=bearer(token)).status_code == 401


def test_opaque_tokens_keep_working(jwt_client, world, member):
    token = world.token(user=member)

    assert _slugs(jwt_client.get("/v1/bots/", headers=bearer(token))) == [
        "acme-private",
        "public-bot",
    ]


def _pem(private_key) -> str:
    return (
        private_key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _hs256_by_hand(claims: dict, secret: str) -> str:
    """The algorithm-confusion attack: HS256 keyed with the public key. PyJWT won't sign it."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64(json.dumps(claims, default=lambda value: int(value.timestamp())).encode())
    signed = f"{header}.{payload}"
    signature = hmac.new(secret.encode(), signed.encode(), hashlib.sha256).digest()
    return f"{signed}.{_b64(signature)}"


@pytest.mark.parametrize(
    ("private_key", "algorithm"),
    [
        (rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256"),
        (ec.generate_private_key(ec.SECP256R1()), "ES256"),
    ],
    ids=["RS256", "ES256"],
)
def test_public_key_tokens(db, member, private_key, algorithm):
    client = _app(db, JWT_PUBLIC_KEY=_pem(private_key)).test_client()
    token = jwt.encode(_claims(member), private_key, algorithm=algorithm)
    forged = _hs256_by_hand(_claims(member), _pem(private_key))

    assert _slugs(client.get("/v1/bots/", headers=bearer(token))) == ["acme-private", "public-bot"]
    assert client.get("/v1/bots/", headers=bearer(forged)).status_code == 401


@pytest.mark.parametrize(
    ("secret", "public_key", "message"),
    [
        ("short", None, "at least 32 bytes"),
        (SECRET, "-----BEGIN PUBLIC KEY-----", "not both"),
    ],
)
def test_bad_configuration_is_refused_at_startup(secret, public_key, message):
    with pytest.raises(ConfigError, match=message):
        JwtVerifier.from_settings(secret, public_key)


def test_jwt_support_is_off_without_a_key():
    assert JwtVerifier.from_settings(None, None) is None


def test_a_hand_signed_token_is_well_formed(jwt_client, member):
    """So the forged token above is refused for its key, not for its shape."""
    token = _hs256_by_hand(_claims(member), SECRET)

    assert jwt_client.get("/v1/bots/", headers=bearer(token)).status_code == 200


@pytest.fixture
def provider_client(db):
    """Configured as behind an identity provider, which always names the API in `aud`."""
    return _app(db, JWT_SECRET=SECRET, JWT_AUDIENCE=AUDIENCE, JWT_ISSUER=ISSUER).test_client()


@pytest.mark.parametrize(
    ("claims", "status"),
    [
        pytest.param({"aud": AUDIENCE, "iss": ISSUER}, 200, id="matching"),
        pytest.param({"aud": ["https://other.example.com", AUDIENCE], "iss": ISSUER}, 200,
                     id="audience-among-several"),
        pytest.param({"aud": "https://other.example.com", "iss": ISSUER}, 401,
                     id="another-audience"),
        pytest.param({"aud": AUDIENCE, "iss": "https://evil.example.com/"}, 401,
                     id="another-issuer"),
        pytest.param({"iss": ISSUER}, 401, id="no-audience"),
        pytest.param({"aud": AUDIENCE}, 401, id="no-issuer"),
    ],
)  # fmt: skip
def test_audience_and_issuer_are_checked_when_configured(provider_client, member, claims, status):
    token = jwt.encode(_claims(member, **claims), SECRET, algorithm="HS256")

    assert provider_client.get("/v1/bots/", headers=bearer(token)).status_code == status


def test_without_an_audience_configured_a_token_for_some_api_is_refused(jwt_client, member):
    """It was issued for another API; only JWT_AUDIENCE says which API is this one."""
    token = jwt.encode(_claims(member, aud=AUDIENCE), SECRET, algorithm="HS256")

    assert jwt_client.get("/v1/bots/", headers=bearer(token)).status_code == 401


def test_without_an_issuer_configured_any_issuer_is_accepted(db, member):
    client = _app(db, JWT_SECRET=SECRET, JWT_AUDIENCE=AUDIENCE).test_client()
    token = jwt.encode(_claims(member, aud=AUDIENCE, iss=ISSUER), SECRET, algorithm="HS256")

    assert _slugs(client.get("/v1/bots/", headers=bearer(token))) == ["acme-private", "public-bot"]
