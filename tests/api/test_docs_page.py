"""GET /docs: Swagger UI 5 from the flask-swagger-ui package's files, served by the app itself."""

import subprocess
import tempfile
from html.parser import HTMLParser

import pytest

from tests.support.browser import chromium
from tests.support.live_server import served
from web.docs_page import DOCS_ASSETS


class _References(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        self.urls += [value for name, value in attrs if name in ("src", "href") and value]


def _references(html: str) -> list[str]:
    parser = _References()
    parser.feed(html)
    return parser.urls


def test_docs_page_references_only_local_assets(offline_app):
    response = offline_app.test_client().get("/docs")

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    urls = _references(html)
    assert sorted(urls) == sorted(f"/docs/assets/{name}" for name in DOCS_ASSETS)
    assert "://" not in html
    assert '"validatorUrl": null' in html


@pytest.mark.parametrize("name", DOCS_ASSETS)
def test_docs_assets_are_served(offline_app, name):
    response = offline_app.test_client().get(f"/docs/assets/{name}")

    assert response.status_code == 200
    assert response.mimetype in {"text/css", "text/javascript"}
    assert len(response.data) > 10_000
    response.close()


@pytest.mark.parametrize("name", ["index.html", "swagger-initializer.js", "..%2F__init__.py"])
def test_only_the_pages_assets_are_served(offline_app, name):
    """The package's demo page points at an internet pet store: not ours to serve."""
    assert offline_app.test_client().get(f"/docs/assets/{name}").status_code == 404


@pytest.fixture
def live_server(offline_app):
    with served(offline_app) as url:
        yield url


@pytest.mark.browser
@pytest.mark.skipif(chromium() is None, reason="no chromium binary on this machine")
def test_docs_page_renders_every_operation_in_a_browser(live_server):
    """Chromium resolves no host but the loopback: the page must work with no internet."""
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--virtual-time-budget=20000",
                "--dump-dom",
                f"{live_server}/docs",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )

    dom = result.stdout
    for path in (
        "/v1/bots/",
        "/v1/bots/{slug}/",
        "/v1/organizations/{organization_id}/bots/",
        "/v1/organizations/{organization_id}/bots/{slug}/",
        "/v1/requests/",
        "/v1/requests/{bot_request_id}/",
        "/v1/organizations/{organization_id}/requests/",
        "/v1/organizations/{organization_id}/requests/{bot_request_id}/",
        "/v1/requests/export",
        "/v1/organizations/{organization_id}/requests/export",
        "/v1/requests/feed",
        "/v1/organizations/{organization_id}/requests/feed",
        "/healthz",
        "/readyz",
    ):
        assert f'data-path="{path}"' in dom, path
    assert "Bot Catalogue Service" in dom
