"""Application time of one page of 100 bot requests: schema dump plus JSON encoding.

No database: the page is what the repository hands the route, built in memory in the data
set's shape. `python -m bench.serialization` profiles it with pyinstrument and writes the
report to bench/results/serialization-profile.txt.
"""

import datetime as dt
import statistics
import time
from pathlib import Path

from bson import ObjectId

from app import create_app
from repositories.pages import OffsetPage
from schemas.bot_requests import BotRequestSchema
from schemas.pages import page_schema

RESULTS = Path(__file__).resolve().parent / "results"


def sample_page(size: int = 100) -> OffsetPage:
    stamp = dt.datetime(2026, 1, 2, 3, 4, 5, 678000)
    results = [
        {
            "_id": ObjectId(),
            "bot": {"creditCost": 3, "name": "Ember Orbit 12", "slug": "bot-12"},
            "createdBy": {"name": "Iris Quartz"},
            "organization": {"name": "Meadow Nova 4"} if n % 5 else None,
            "inputs": {"prompt": "Alpha brisk cobalt delta ember fable", "temperature": 0.7},
            "response": {"message": "Garnet harbor iris jade kepler lumen " * 3, "tokens": 312},
            "ip": "203.0.113.7",
            "createdAt": stamp,
            "updatedAt": stamp + dt.timedelta(seconds=n),
        }
        for n in range(size)
    ]
    return OffsetPage(results, 1, size, 5_000)


def _render(app, schema, page) -> str:
    return app.json.dumps(schema.dump(page))


def measure(iterations: int = 300) -> dict:
    app = create_app({"TESTING": True})
    schema = page_schema(BotRequestSchema)()
    page = sample_page()
    with app.app_context():
        _render(app, schema, page)
        timings = []
        for _ in range(iterations):
            started = time.perf_counter()
            _render(app, schema, page)
            timings.append(time.perf_counter() - started)
    timings.sort()
    return {
        "page_size": len(page.results),
        "median_ms": statistics.median(timings) * 1000,
        "p90_ms": timings[int(0.9 * len(timings))] * 1000,
        "goal_ms": 2.0,
    }


def profile(iterations: int = 300) -> str:
    from pyinstrument import Profiler

    app = create_app({"TESTING": True})
    schema = page_schema(BotRequestSchema)()
    page = sample_page()
    with app.app_context(), Profiler(interval=0.0002) as profiler:
        for _ in range(iterations):
            _render(app, schema, page)
    return profiler.output_text(unicode=True, color=False)


if __name__ == "__main__":
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "serialization-profile.txt").write_text(profile())
    print(measure())
