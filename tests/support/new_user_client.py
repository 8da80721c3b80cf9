#!/usr/bin/env python3
"""Small client for the Bot Catalogue Service, written from its public docs only.

Environment:
  BASE_URL  e.g. http://127.0.0.1:5000   (the OpenAPI `servers` is `/`)
  TOKEN     a *user* bearer token (an organization token gets 403 on /v1/requests/...)

Does three things and exits 0 only if all three worked:
  1. walks GET /v1/requests/ with keyset pagination (limit 5), following `nextCursor`;
  2. exports the last 60 days as CSV (GET /v1/requests/export?format=csv&createdFrom&createdTo),
     parses it and detects a cut-short download (an incomplete chunked read);
  3. opens the SSE feed (GET /v1/requests/feed) for ~3 s, closes it, reconnects with
     Last-Event-ID (or plainly, if no event was seen) for ~2 s.
Only the standard library is used.
"""

import csv
import datetime as dt
import http.client
import io
import json
import os
import sys
import time
import uuid
from urllib.parse import urlencode, urlsplit

CONNECT_TIMEOUT = 15  # seconds, for connecting and for the response headers
MAX_PAGES = 200


# --------------------------------------------------------------------------- HTTP helpers


class Api:
    def __init__(self, base_url, token):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"BASE_URL must be an http(s) URL, got {base_url!r}")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port
        self.prefix = parts.path.rstrip("/")  # the service may sit under a path
        self.token = token

    def connection(self):
        cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        return cls(self.host, self.port, timeout=CONNECT_TIMEOUT)

    def open(self, path, params=None, accept="application/json", extra_headers=None):
        """Send a GET; return (connection, response, request_id). The caller closes both."""
        target = self.prefix + path
        if params:
            target += "?" + urlencode(params)
        request_id = "newclient-" + uuid.uuid4().hex  # echoed back as the error's `instance`
        headers = {
            "Authorization": f"Bearer {self.token}",
            # problem+json is only chosen when Accept names it (a wildcard does not)
            "Accept": f"{accept}, application/problem+json;q=0.5",
            "X-Request-ID": request_id,
            "User-Agent": "bcs-newclient/0.1",
        }
        headers.update(extra_headers or {})
        conn = self.connection()
        try:
            conn.request("GET", target, headers=headers)
            # keep the socket: getresponse() drops conn.sock when the answer says Connection: close
            conn.captured_sock = conn.sock
            resp = conn.getresponse()
        except BaseException:
            conn.close()
            raise
        return conn, resp, request_id

    def get_json(self, path, params=None):
        """GET a JSON document. Returns (status, body or None, response)."""
        conn, resp, _ = self.open(path, params)
        try:
            raw = resp.read()
        finally:
            conn.close()
        if resp.status != 200:
            print_problem(resp, raw)
            return resp.status, None, resp
        return resp.status, json.loads(raw.decode("utf-8")), resp


def print_problem(resp, raw):
    """Print an error response: RFC 9457 problem details (+ `details` on a 400)."""
    print(f"  ERROR: HTTP {resp.status} {resp.reason}")
    body = None
    try:
        body = json.loads(raw.decode("utf-8")) if raw else None
    except (ValueError, UnicodeDecodeError):
        pass
    if isinstance(body, dict):
        print(f"    title:    {body.get('title')}")
        print(f"    detail:   {body.get('detail')}")
        details = body.get("details")
        if details:
            print("    details:")
            for param, messages in details.items():
                if isinstance(messages, list):
                    for m in messages:
                        print(f"      {param}: {m}")
                else:
                    print(f"      {param}: {messages}")
        else:
            print(f"    details:  {details}")
        print(f"    instance: {body.get('instance')}")
        if body.get("type"):
            print(f"    type:     {body.get('type')}")
    else:
        snippet = raw[:300].decode("utf-8", "replace") if raw else ""
        print(f"    (body is not a problem document) {snippet!r}")
    for h in ("Retry-After", "X-Request-ID", "RateLimit", "WWW-Authenticate"):
        v = resp.getheader(h)
        if v is not None:
            print(f"    {h}: {v}")


# --------------------------------------------------------------------------- 1. keyset paging


def keyset_walk(api):
    print("== 1. Keyset paging: GET /v1/requests/?pagination=keyset&limit=5")
    base_params = {"pagination": "keyset", "limit": "5"}
    cursor = None
    pages = 0
    items = 0
    seen = set()
    repeats = []
    while pages < MAX_PAGES:
        params = dict(base_params)
        if cursor is not None:
            params["cursor"] = cursor  # repeat the other parameters with it, as Link: next does
        status, body, resp = api.get_json("/v1/requests/", params)
        if status != 200:
            print(f"  stopped on page {pages + 1}")
            return False
        pages += 1
        results = body.get("results") or []
        for item in results:
            item_id = item.get("id")
            if item_id in seen:
                repeats.append(item_id)
            seen.add(item_id)
        items += len(results)
        cursor = body.get("nextCursor")  # null on the last page
        has_link_next = 'rel="next"' in (resp.getheader("Link") or "")
        if (cursor is not None) != has_link_next:
            print(
                f"  note: page {pages}: nextCursor={'set' if cursor else 'null'} "
                f"but Link next {'present' if has_link_next else 'absent'}"
            )
        if cursor is None:
            break
    else:
        print(f"  stopped at the cap of {MAX_PAGES} pages; the list goes on")
    print(f"  items: {items}, pages: {pages}, distinct ids: {len(seen)}")
    if repeats:
        print(f"  FAIL: {len(repeats)} id(s) repeated, e.g. {repeats[:5]}")
        return False
    print("  OK: no id repeated")
    return True


# --------------------------------------------------------------------------- 2. CSV export


def iso_ms(t):
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def export_csv(api):
    now = dt.datetime.now(dt.UTC)
    params = {
        "format": "csv",
        "createdFrom": iso_ms(now - dt.timedelta(days=60)),  # inclusive
        "createdTo": iso_ms(now),  # exclusive
    }
    print(f"== 2. Export: GET /v1/requests/export?{urlencode(params)}")
    conn, resp, _ = api.open("/v1/requests/export", params, accept="text/csv")
    try:
        if resp.status != 200:
            print_problem(resp, resp.read())
            return False
        print(
            f"  HTTP {resp.status}; Content-Type: {resp.getheader('Content-Type')}; "
            f"Content-Disposition: {resp.getheader('Content-Disposition')}"
        )
        framed = resp.chunked or resp.getheader("Content-Length") is not None
        if not framed:
            print(
                "  warning: neither chunked nor Content-Length: a cut-short body cannot be detected"
            )
        buf = io.BytesIO()
        try:
            while True:
                chunk = resp.read(64 * 1024)
                if not chunk:
                    break
                buf.write(chunk)
        except http.client.IncompleteRead as exc:
            # The docs: a failure after the first bytes ends the body without its last chunk.
            buf.write(exc.partial or b"")
            print(
                f"  FAIL: download cut short (IncompleteRead) after {buf.tell()} bytes; "
                "the file is incomplete, do not use it"
            )
            return False
        except (ConnectionError, TimeoutError) as exc:
            print(
                f"  FAIL: download cut short ({exc.__class__.__name__}: {exc}) after {buf.tell()} bytes"
            )
            return False
    finally:
        conn.close()

    # Charset is not documented: assume UTF-8, tolerate a BOM.
    text = buf.getvalue().decode("utf-8-sig")
    reader = csv.reader(io.StringIO(text, newline=""))  # RFC 4180, CRLF, quoted multi-line cells
    try:
        rows = list(reader)
    except csv.Error as exc:
        print(f"  FAIL: CSV does not parse: {exc}")
        return False
    if not rows:
        print("  FAIL: empty body, not even a header row")
        return False
    header, data = rows[0], rows[1:]
    print(f"  header: {header}")
    print(f"  rows: {len(data)} ({len(text.encode('utf-8'))} bytes)")
    bad = [i for i, r in enumerate(data, start=2) if len(r) != len(header)]
    if bad:
        print(
            f"  FAIL: {len(bad)} row(s) with a column count unlike the header, e.g. line(s) {bad[:5]}"
        )
        return False
    print("  OK: complete and parsed")
    return True


# --------------------------------------------------------------------------- 3. live feed


class SSEParser:
    """Server-Sent Events parsing per the WHATWG spec (comments, CR/LF/CRLF, multi-line data)."""

    def __init__(self):
        self.buf = b""
        self.data = []
        self.event = ""
        self.last_event_id = None  # last id of a *dispatched* event
        self._pending_id = None
        self.retry_ms = None
        self.comments = 0

    def feed(self, chunk, eof=False):
        """Add bytes; return the list of dispatched events (type, id, data)."""
        self.buf += chunk
        events = []
        while True:
            cr = self.buf.find(b"\r")
            lf = self.buf.find(b"\n")
            ends = [i for i in (cr, lf) if i >= 0]
            if not ends:
                break
            i = min(ends)
            if self.buf[i : i + 1] == b"\r":
                if i + 1 == len(self.buf) and not eof:
                    break  # might be a CRLF split across reads: wait for the next byte
                skip = 2 if self.buf[i + 1 : i + 2] == b"\n" else 1
            else:
                skip = 1
            line = self.buf[:i].decode("utf-8", "replace")
            self.buf = self.buf[i + skip :]
            ev = self._line(line)
            if ev:
                events.append(ev)
        return events

    def _line(self, line):
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            self.comments += 1  # e.g. ": keep-alive"
            return None
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self.data.append(value)
        elif field == "event":
            self.event = value
        elif field == "id":
            if "\x00" not in value:
                self._pending_id = value
        elif field == "retry":
            if value.isdigit():
                self.retry_ms = int(value)
        return None

    def _dispatch(self):
        if self._pending_id is not None:
            self.last_event_id = self._pending_id
        ev = None
        if self.data:
            ev = (self.event or "message", self.last_event_id, "\n".join(self.data))
        self.data, self.event = [], ""
        return ev


def read_feed(api, seconds, last_event_id=None, parser=None):
    """Open the feed, read for `seconds`, close. Returns (status, parser, events)."""
    extra = {"Cache-Control": "no-cache"}
    if last_event_id is not None:
        extra["Last-Event-ID"] = last_event_id  # wins over ?lastEventId=
    label = f"Last-Event-ID: {last_event_id}" if last_event_id is not None else "no Last-Event-ID"
    conn, resp, _ = api.open("/v1/requests/feed", accept="text/event-stream", extra_headers=extra)
    events = []
    try:
        print(
            f"  connection ({label}): HTTP {resp.status} {resp.reason}, "
            f"Content-Type: {resp.getheader('Content-Type')}"
        )
        if resp.status != 200:
            print_problem(resp, resp.read())
            return resp.status, parser, events
        parser = parser or SSEParser()
        sock = getattr(conn, "captured_sock", None)  # used only to bound each read's wait
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            if sock is not None:
                sock.settimeout(remaining)
            try:
                chunk = resp.read1(4096)
            except TimeoutError:
                break  # the reading window is over; the connection is closed below
            except http.client.IncompleteRead:
                print("  the server ended the stream abruptly")
                break
            if not chunk:
                print("  the server closed the stream")
                break
            for ev in parser.feed(chunk):
                events.append(ev)
                etype, eid, data = ev
                shown = data if len(data) <= 200 else data[:200] + "..."
                print(f"    event: {etype}  id: {eid}  data: {shown}")
        print(
            f"  read for up to {seconds} s: {len(events)} event(s), "
            f"{parser.comments} comment(s) so far, retry={parser.retry_ms}"
        )
        return 200, parser, events
    finally:
        resp.close()
        conn.close()


def live_feed(api):
    print("== 3. Live feed: GET /v1/requests/feed")
    try:
        status, parser, _ = read_feed(api, 3.0)
    except (OSError, http.client.HTTPException) as exc:
        print(f"  FAIL: could not open the feed: {exc}")
        return False
    if status in (429, 503):
        print(
            "  stopping: the docs advise against reconnecting in a loop (each opening spends the "
            "`feed` rate limit); wait Retry-After before trying again"
        )
        return False
    if status != 200:
        return False

    # A pause before reconnecting: the stream's own `retry:` if it sent one, else 1 s.
    pause = (parser.retry_ms if parser.retry_ms is not None else 1000) / 1000.0
    time.sleep(min(pause, 5.0))
    last_id = parser.last_event_id or None  # an empty id resets it: reconnect plainly
    print(
        "  reconnecting "
        + (f"after event id {last_id}" if last_id else "plainly (no event id seen)")
    )
    try:
        status2, parser, _ = read_feed(api, 2.0, last_event_id=last_id, parser=parser)
        if status2 == 410:
            # The docs: past the history, read the list, then start a new feed.
            print("  history gone (410): starting a new feed without Last-Event-ID")
            time.sleep(min(pause, 5.0))
            status2, parser, _ = read_feed(api, 2.0, parser=None)
    except (OSError, http.client.HTTPException) as exc:
        print(f"  FAIL: could not reconnect: {exc}")
        return False
    if status2 in (429, 503):
        print("  stopping: reconnect refused; wait Retry-After before trying again")
        return False
    if status2 != 200:
        return False
    print(f"  OK: first connection HTTP {status}, second HTTP {status2}")
    return True


# --------------------------------------------------------------------------- main


def main():
    base_url = os.environ.get("BASE_URL")
    token = os.environ.get("TOKEN")
    if not base_url or not token:
        print("set BASE_URL and TOKEN (a user token)", file=sys.stderr)
        return 2
    api = Api(base_url, token)
    results = {}
    for name, step in (
        ("keyset paging", keyset_walk),
        ("export", export_csv),
        ("live feed", live_feed),
    ):
        try:
            results[name] = step(api)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            print(f"  FAIL: {exc.__class__.__name__}: {exc}")
            results[name] = False
        print()
    print("Summary: " + ", ".join(f"{k}: {'ok' if v else 'FAILED'}" for k, v in results.items()))
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
