"""`make soak`: minutes of mixed traffic against gunicorn; errors and memory over time.

The bench data set (at BENCH_SCALE, default 0.1: 20,000 bot requests) is served by gunicorn
with the recommended settings; `wrk` sends every endpoint kind in turn (bench/report.lua) for
SOAK_SECONDS (300) over SOAK_CONNECTIONS (4), while the resident memory of gunicorn's
processes is sampled every SOAK_SAMPLE_SECONDS (10). Memory growth is measured from the end of
the warm-up (the first SOAK_WARMUP_SECONDS, 30: caches filling, pools opening) to the end.
Passes with zero errors, growth under 10%, and none of the tokens used in the server's log.
Results go to bench/results/soak.json; the exit status is 1 when it does not pass.
"""

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench import dataset, servers
from bench.run import RESULTS, VAR, data_set, endpoints, env_number, machine

MAX_GROWTH = 0.10
SLOW_ENDPOINTS = {"deep page (5000)"}


def gunicorn_processes(port: int) -> list[int]:
    """The master and workers serving `port` (the workers carry the master's command line)."""
    bind = f"127.0.0.1:{port}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                command = (entry / "cmdline").read_bytes()
                if b"gunicorn" in command and bind in command:
                    pids.append(int(entry.name))
    return pids


def resident_mib(pids: list[int]) -> float:
    total_kib = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kib += int(line.split()[1])
    return total_kib / 1024


def main() -> int:
    scale = dataset.Scale.of(env_number("BENCH_SCALE", 0.1))
    seconds = int(env_number("SOAK_SECONDS", 300))
    connections = int(env_number("SOAK_CONNECTIONS", 4))
    every = env_number("SOAK_SAMPLE_SECONDS", 10)
    warmup = env_number("SOAK_WARMUP_SECONDS", 30)
    RESULTS.mkdir(parents=True, exist_ok=True)
    VAR.mkdir(parents=True, exist_ok=True)
    log = VAR / "soak-gunicorn.log"

    with contextlib.ExitStack() as stack:
        uri, db = data_set(stack, scale)
        mix = [e for e in endpoints(db) if e.name not in SLOW_ENDPOINTS]
        plan = VAR / "soak-plan.txt"
        plan.write_text("".join(f"{e.token} {e.path}\n" for e in mix))
        base = stack.enter_context(
            servers.gunicorn(uri, db.name, servers.GUNICORN, (mix[0].path, mix[0].token), log)
        )
        pids = gunicorn_processes(int(base.rsplit(":", 1)[1]))
        print(f"soak: {seconds} s of {len(mix)} endpoint kinds over {connections} connections")
        load = subprocess.Popen(
            servers.wrk(base, connections, f"{seconds}s"),
            env={**os.environ, "SOAK_PLAN": str(plan)},
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        started = time.monotonic()
        samples = []
        while load.poll() is None:
            samples.append((round(time.monotonic() - started, 1), round(resident_mib(pids), 1)))
            print(f"  {samples[-1][0]:6.1f} s  {samples[-1][1]:7.1f} MiB", flush=True)
            time.sleep(every)
        report = json.loads(load.stdout.read().strip().splitlines()[-1])

    after_warmup = next((mib for at, mib in samples if at >= warmup), samples[-1][1])
    final = samples[-1][1]
    growth = (final - after_warmup) / after_warmup
    log_text = log.read_text(errors="replace")
    leaked = sorted({e.token for e in mix if e.token in log_text})
    errors = report["socket_errors"] + report["non_2xx"]
    results = {
        "machine": machine(),
        "scale": vars(scale),
        "seconds": seconds,
        "connections": connections,
        "endpoint_kinds": [e.name for e in mix],
        "requests": report["requests"],
        "requests_per_s": round(report["requests"] / (report["duration_us"] / 1e6), 1),
        "p50_ms": report["p50_us"] / 1000,
        "p99_ms": report["p99_us"] / 1000,
        "errors": errors,
        "rss_mib_after_warmup": after_warmup,
        "rss_mib_final": final,
        "rss_growth": round(growth, 4),
        "rss_samples": samples,
        "tokens_in_server_log": len(leaked),
        "passed": errors == 0 and growth < MAX_GROWTH and not leaked,
    }
    (RESULTS / "soak.json").write_text(json.dumps(results, indent=2) + "\n")
    print(
        f"{results['requests']} requests, {results['requests_per_s']}/s, errors {errors}, "
        f"RSS {after_warmup} -> {final} MiB ({growth:+.1%}), tokens in log: {len(leaked)}"
    )
    print("PASSED" if results["passed"] else "FAILED", "(bench/results/soak.json)")
    return 0 if results["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
