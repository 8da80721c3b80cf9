"""`python -m bench.tables`: the tables of docs/performance.md, written from bench/results/ into
the regions of that page marked for them, so that no figure there is typed by hand.

A region is `<!-- table: NAME -->`, the table, `<!-- end of table -->`; NAME is a key of
TABLES. tests/tooling/test_performance_tables.py fails while a region and the results it is
made from disagree: after a run, `python -m bench.tables` writes them again.
"""

import json
import re
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PAGE = ROOT / "docs" / "performance.md"
REGION = re.compile(r"(<!-- table: ([\w-]+) -->\n)(.*?)(<!-- end of table -->)", re.DOTALL)


def _results(name: str) -> dict:
    return json.loads((RESULTS / name).read_text())


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A table of the docs' generated regions (scripts/reference.py's too); a `|` in a cell
    is escaped, as it would end the cell."""
    cells = [[str(cell).replace("|", "\\|") for cell in row] for row in rows]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def _rate(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:,.1f}"


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _measured(results: dict) -> str:
    """The line under a table of another run than `make bench`'s: where it ran."""
    m = results["machine"]
    return (
        f"\n\nMeasured on {m['cores']} cores of {m['cpu']}, Python {m['python']}, pymongo "
        f"{m['pymongo']} ({m.get('date', 'date not recorded')})."
    )


def machine() -> str:
    latest = _results("latest.json")
    m = latest["machine"]
    return (
        f"The run of {m.get('date', 'an unrecorded date')}: {m['cores']} cores of {m['cpu']}, "
        f"{m['memory_gib']} GiB, Python {m['python']}, pymongo {m['pymongo']}, "
        f"{latest['engine']}; {latest['scale']['requests']:,} bot requests; "
        f"{latest['seconds_per_side']} s a side; gunicorn {latest['gunicorn']['workers']} workers "
        f"of {latest['gunicorn']['threads']} threads."
    )


def results() -> str:
    """Every endpoint row against its floor, then the caller's lookup alone."""
    latest = _results("latest.json")
    rows = [
        [row["endpoint"], row["connections"], _rate(row["http"]["requests_per_s"]),
         _ms(row["http"]["p50_ms"]), _ms(row["http"]["p99_ms"]),
         _rate(row["floor"]["requests_per_s"]), _ms(row["floor"]["p50_ms"]),
         _ratio(row["ratio_requests_per_s"])]
        for row in latest["endpoints"]
    ]  # fmt: skip
    rows += [
        [f"auth: {kind} (floor only)", latest["connections"], "", "", "",
         _rate(floor["requests_per_s"]), _ms(floor["p50_ms"]), ""]
        for kind, floor in latest["authentication"].items()
    ]  # fmt: skip
    header = ["endpoint", "conn.", "HTTP req/s", "p50 ms", "p99 ms", "floor req/s",
              "floor p50 ms", "HTTP / floor"]  # fmt: skip
    serialization = latest["serialization"]["median_ms"]
    return (
        markdown_table(header, rows)
        + f"\n\nA page of 100 bot requests dumped and encoded as JSON, in process: "
        f"{serialization:.2f} ms (median)."
    )


def caches() -> str:
    """The rows the exact caches serve: on, off, and the same answer from Eve."""
    rows = []
    for row in _results("latest.json")["endpoints"]:
        if "caches_off" not in row:
            continue
        eve = row.get("eve")
        rows.append([
            row["endpoint"], _rate(row["http"]["requests_per_s"]),
            _rate(row["caches_off"]["requests_per_s"]), _ratio(row["ratio_caches_on_off"]),
            _ratio(row.get("ratio_caches_off_floor")),
            _rate(eve["requests_per_s"]) if eve else "", _ratio(row.get("ratio_eve")),
            _ratio(row.get("ratio_eve_caches_off")),
        ])  # fmt: skip
    header = ["row", "on req/s", "off req/s", "on / off", "off / floor", "Eve req/s",
              "on / Eve", "off / Eve"]  # fmt: skip
    return markdown_table(header, rows)


def exports() -> str:
    rows = [
        [row["endpoint"], f"{row['http']['rows']:,}", _rate(row["http"]["rows_per_s"]),
         f"{row['http']['first_bytes_s']:.2f} s", _rate(row["floor"]["rows_per_s"]),
         _ratio(row["ratio_rows_per_s"])]
        for row in _results("latest.json")["exports"]
    ]  # fmt: skip
    return markdown_table(
        ["export", "rows", "HTTP rows/s", "first bytes", "floor rows/s", "ratio"], rows
    )


def tracing() -> str:
    rows = []
    for row in _results("latest.json")["endpoints"]:
        if "tracing" not in row:
            continue
        rates = row["tracing"]["requests_per_s"]
        rows.append([row["endpoint"], _rate(rates["off"]), _rate(rates["every"]),
                     _ratio(row["ratio_tracing_every_off"]), _rate(rates["tenth"]),
                     _ratio(row["ratio_tracing_tenth_off"])])  # fmt: skip
    header = ["row", "off req/s", "every trace req/s", "/ off", "1 in 10 req/s", "/ off"]
    return markdown_table(header, rows)


def framework() -> str:
    rows = []
    for row in _results("latest.json")["endpoints"]:
        if "bare" in row:
            rates = row["bare"]["requests_per_s"]
            rows.append([row["endpoint"], _rate(rates["service"]), _rate(rates["bare"]),
                         _ratio(row["ratio_bare"])])  # fmt: skip
    return markdown_table(["row", "service req/s", "bare Flask req/s", "service / bare"], rows)


def feeds() -> str:
    measured = _results("latest.json")["feeds"]
    events = [
        [row["clients"], _rate(row["events_per_s"]), _rate(row["events_per_s_per_client"]),
         row["missed"], _ms(row["latency_p50_ms"]), _ms(row["latency_p99_ms"])]
        for row in measured["events"]
    ]  # fmt: skip
    held = [
        [row["endpoint"], _rate(row["requests_per_s"]["none"]),
         _rate(row["requests_per_s"]["held"]), _ratio(row["ratio_held_none"])]
        for row in measured["held"]
    ]  # fmt: skip
    memory = measured["memory"]
    return (
        markdown_table(["clients", "events/s", "each client", "missed", "write to event, p50 ms",
                "p99 ms"], events)
        + "\n\n"
        + markdown_table(["row", "no feed req/s", f"{measured['slots']} feeds held req/s",
                  "held / none"], held)
        + f"\n\nOne worker: {memory['worker_rss_mb']} MB resident with no feed, "
        f"{memory['per_feed_kb']} kB more per idle feed."
    )  # fmt: skip


def _latency(figures: dict | None) -> str:
    """A median in ms, with the list's total in parentheses where it counted one, and the
    first call where it took ten times as long."""
    if figures is None:
        return ""
    total = figures.get("total_results")
    first = figures.get("first_ms", 0)
    return (
        f"{figures['median_ms']:,.0f}"
        + ("" if total is None else f" ({total:,})")
        + (f"; first {first:,.0f}" if first > 10 * figures["median_ms"] else "")
    )


def scale() -> str:
    curve = _results("scale.json")["curve"]
    names = [name for name in curve[0] if name not in ("requests", "preparation_s")]
    rows = [[f"{row['requests']:,}", *(_latency(row.get(name)) for name in names)] for row in curve]
    return markdown_table(["bot requests", *names], rows) + _measured(_results("scale.json"))


# The sweep's cases, as a column can say them.
_SHORT = {"bot by slug beside a slow list": "by slug + slow list", "bot by slug": "by slug"}


def gunicorn() -> str:
    measured = _results("gunicorn.json")
    sweep = measured["rows"]
    cases = list(dict.fromkeys((row["case"], row["connections"]) for row in sweep))
    by_settings: dict[str, dict] = {}
    for row in sweep:
        settings = row["settings"]
        name = f"{settings['worker-class']} {settings['workers']}w"
        if "threads" in settings:
            name += f" {settings['threads']}t keep-alive {settings['keep-alive']}"
        by_settings.setdefault(name, {})[(row["case"], row["connections"])] = row
    rows = [
        [name, *(f"{cells[key]['requests_per_s']:,.0f}/s, {cells[key]['p50_ms']:.0f}/"
                 f"{cells[key]['p99_ms']:.0f}" for key in cases)]
        for name, cells in by_settings.items()
    ]  # fmt: skip
    header = ["settings", *(f"{_SHORT.get(case, case)}, {n} conn." for case, n in cases)]
    return markdown_table(header, rows) + _measured(measured)


def load() -> str:
    measured = _results("load.json")
    rows = [[step, f"{seconds:,.1f}"] for step, seconds in measured["seconds"].items()]
    header = [f"step ({measured['documents']:,} documents)", "seconds"]
    return markdown_table(header, rows) + _measured(measured)


def soak() -> str:
    s = _results("soak.json")
    return markdown_table(
        ["seconds", "connections", "requests", "req/s", "p50 ms", "p99 ms", "errors",
         "RSS after warm-up MiB", "RSS at the end MiB"],
        [[s["seconds"], s["connections"], f"{s['requests']:,}", _rate(s["requests_per_s"]),
          _ms(s["p50_ms"]), _ms(s["p99_ms"]), s["errors"], s["rss_mib_after_warmup"],
          s["rss_mib_final"]]],
    ) + _measured(s)  # fmt: skip


def cache_warmth() -> str:
    """`make bench-caches`: how much of a slow list the catalogue cache served."""
    measured = _results("caches.json")
    rows = [
        [row["connections"], f"{row['answers']:,}",
         f"{row['after_start']['share_from_cache']:.1%} ({row['after_start']['answers']:,})",
         f"{row['after_rename']['share_from_cache']:.1%} ({row['after_rename']['answers']:,})",
         row["refused"]]
        for row in measured["rows"]
    ]  # fmt: skip
    header = ["connections", f"answers in {measured['seconds']:.0f} s", "from the cache after the "
              "start", "from the cache after the rename", "refused"]  # fmt: skip
    return markdown_table(header, rows) + _measured(measured)


TABLES: dict[str, Callable[[], str]] = {
    "cache-warmth": cache_warmth,
    "machine": machine,
    "results": results,
    "caches": caches,
    "exports": exports,
    "tracing": tracing,
    "framework": framework,
    "feeds": feeds,
    "scale": scale,
    "gunicorn": gunicorn,
    "load": load,
    "soak": soak,
}


def regenerated(text: str) -> str:
    """`text` with every marked region written again from the results."""
    return REGION.sub(lambda m: f"{m.group(1)}{TABLES[m.group(2)]()}\n{m.group(4)}", text)


def regions(text: str) -> list[str]:
    return [match.group(2) for match in REGION.finditer(text)]


def main() -> None:
    PAGE.write_text(regenerated(PAGE.read_text()))
    print(f"wrote {', '.join(regions(PAGE.read_text()))} into {PAGE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
