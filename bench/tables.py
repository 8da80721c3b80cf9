"""`python -m bench.tables`: docs/performance.md's tables, from bench/results/."""

import json

from bench.run import RESULTS


def results_table(latest: dict) -> str:
    lines = [
        "| endpoint | conn. | HTTP req/s | p50 | p99 | floor req/s | p50 | p99 | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in latest["endpoints"]:
        http, floor = row["http"], row["floor"]
        lines.append(
            f"| {row['endpoint']} | {row['connections']} | {http['requests_per_s']:.1f} | "
            f"{http['p50_ms']:.1f} | {http['p99_ms']:.1f} | {floor['requests_per_s']:.1f} | "
            f"{floor['p50_ms']:.1f} | {floor['p99_ms']:.1f} | {row['ratio_requests_per_s']:.2f} |"
        )
    return "\n".join(lines)


def scale_table(scale: dict) -> str:
    names = [name for name in scale["curve"][0] if name not in ("requests", "preparation_s")]
    lines = ["| bot requests | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for row in scale["curve"]:
        cells = [
            f"{row[name]['median_ms']:,.0f} ({row[name]['total_results']:,})" for name in names
        ]
        lines.append(f"| {row['requests']:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gunicorn_table(sweep: dict) -> str:
    cases = list(dict.fromkeys((row["case"], row["connections"]) for row in sweep["rows"]))
    header = " | ".join(f"{case}, {connections} conn." for case, connections in cases)
    lines = [f"| settings | {header} |", "|---" * (len(cases) + 1) + "|"]
    by_settings: dict[str, dict] = {}
    for row in sweep["rows"]:
        settings = row["settings"]
        name = f"{settings['worker-class']} {settings['workers']}w"
        if "threads" in settings:
            name += f" {settings['threads']}t keep-alive {settings['keep-alive']}"
        by_settings.setdefault(name, {})[(row["case"], row["connections"])] = row
    for name, cells in by_settings.items():
        values = [
            f"{cells[key]['requests_per_s']:,.0f}/s, {cells[key]['p50_ms']:.0f}/"
            f"{cells[key]['p99_ms']:.0f}"
            for key in cases
        ]
        lines.append(f"| {name} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def main() -> None:
    latest = json.loads((RESULTS / "latest.json").read_text())
    print(results_table(latest), end="\n\n")
    print(f"serialization: {latest['serialization']['median_ms']:.2f} ms", end="\n\n")
    print(scale_table(json.loads((RESULTS / "scale.json").read_text())), end="\n\n")
    print(gunicorn_table(json.loads((RESULTS / "gunicorn.json").read_text())))


if __name__ == "__main__":
    main()
