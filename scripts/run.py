"""`make run`, `make serve` and `make db`: the embedded database and the app, as one unit.

With MONGODB_URI unset, the SecantusDB daemon (`secantusd-py`) keeps its data in var/ and
listens on 127.0.0.1:EMBEDDED_DB_PORT (27018: the app's default URI). On the first start the
demo data is seeded and the demo tokens are kept in var/demo-tokens.txt (mode 600) so that
every later start can show them again: a development convenience, never for production.
An embedded database already running from this folder (say, `make db` in another terminal)
is reused and left running. Ctrl-C stops what this script started, the app first.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import dotenv
from flask.helpers import get_load_dotenv

from runtime.config import ConfigError, server_settings_from_env
from runtime.embedded_database import EmbeddedDatabase, StartError

ROOT = Path(__file__).resolve().parent.parent
VAR = ROOT / "var"
DATA = VAR / "secantus"
PID_FILE = VAR / "secantusd.pid"
LOG_FILE = VAR / "secantusd.log"
TOKENS_FILE = VAR / "demo-tokens.txt"


class Stop(Exception):
    """Something the user must fix, told in a sentence rather than a traceback."""


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _port_is_free(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _is_daemon(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    command_line = Path(f"/proc/{pid}/cmdline")
    return not command_line.exists() or b"secantusd" in command_line.read_bytes()


def _stop_process(process: subprocess.Popen, timeout: float = 15.0) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class LocalDatabase(EmbeddedDatabase):
    """The embedded database of this folder, found again through its pid file, so that a
    second start (say, `make db` in another terminal) is reused instead of colliding."""

    def __init__(self, port: int):
        super().__init__(DATA, LOG_FILE, port)

    def running_pid(self) -> int | None:
        """The pid of the daemon started from this folder, after clearing a stale pid file."""
        if not PID_FILE.exists():
            return None
        text = PID_FILE.read_text().strip()
        if text.isdigit() and _is_daemon(int(text)):
            return int(text)
        print(f"Removing the stale pid file var/{PID_FILE.name}: no database runs as {text!r}.")
        PID_FILE.unlink()
        return None

    def start_or_reuse(self) -> bool:
        """Start the daemon, or reuse the one running; True when its data is new."""
        pid = self.running_pid()
        if pid is not None:
            if not self.answers():
                raise Stop(
                    f"The embedded database (pid {pid}) does not answer on port {self.port}. "
                    f"Set EMBEDDED_DB_PORT to the port it was started with, or stop it: kill {pid}"
                )
            print(f"Reusing the embedded database already running (pid {pid}); it stays running.")
            return False
        if not _port_is_free("127.0.0.1", self.port):
            raise Stop(
                f"Port {self.port} is in use by another program. Stop it, or choose another "
                f"port: EMBEDDED_DB_PORT={self.port + 1} make ..."
            )
        fresh = not self.data.exists()
        try:
            # Ctrl-C reaches the app first; run() stops the database after it.
            self.launch(own_session=True)
            PID_FILE.write_text(f"{self.process.pid}\n")
            print(f"Starting the embedded database on port {self.port} (data in var/) ...")
            self.wait()
        except StartError as error:
            raise Stop(str(error)) from error
        return fresh

    def stop(self, timeout: float = 15.0) -> None:
        if self.process is not None:
            super().stop(timeout)
            PID_FILE.unlink(missing_ok=True)


def _flask(env: dict, *args: str) -> None:
    command = [sys.executable, "-m", "flask", "--app", "app", *args]
    if subprocess.run(command, cwd=ROOT, env=env).returncode != 0:
        raise Stop(f"`flask --app app {' '.join(args)}` failed; see its message above.")


def _demo_tokens() -> list[tuple[str, str, str]]:
    """(name, token, who) from the tokens file: each KEY=value after its comment."""
    tokens, comment = [], ""
    for line in TOKENS_FILE.read_text().splitlines():
        if line.startswith("# "):
            comment = line[2:]
        elif "=" in line:
            key, value = line.split("=", 1)
            tokens.append((key.removesuffix("_TOKEN").lower(), value, comment))
    return tokens


def _banner(base_url: str, embedded: bool) -> None:
    print(f"\nBot Catalogue Service at {base_url}")
    if not embedded:
        print(
            "Using MONGODB_URI. Issue a token with: .venv/bin/flask --app app tokens issue --help"
        )
    elif TOKENS_FILE.exists():
        tokens = _demo_tokens()
        print(f"\nDemo tokens (from {TOKENS_FILE.relative_to(ROOT)}, a development convenience):")
        for name, token, who in tokens:
            print(f"  {name:<13} {token}\n  {'':<13} {who}")
        member = dict((name, token) for name, token, _ in tokens).get("member")
        if member:
            print("\nTry:")
            print(f'  curl -H "Authorization: Bearer {member}" {base_url}/v1/bots/')
    else:
        print("No demo tokens file; `make clean` then `make run` seeds a fresh demo database.")
    print("\nCtrl-C stops it.\n", flush=True)


def _server_command(mode: str, host: str, port: int) -> list[str]:
    if mode == "serve":
        return [sys.executable, "-m", "gunicorn", "--config", "gunicorn.conf.py", "wsgi:app"]
    return [
        sys.executable,
        "-m",
        "flask",
        "--app",
        "app",
        "run",
        "--host",
        host,
        "--port",
        str(port),
    ]


def run(mode: str) -> None:
    settings = server_settings_from_env(os.environ)
    host, port = settings["HOST"], settings["PORT"]
    env = dict(os.environ)
    database = None
    if not env.get("MONGODB_URI"):
        database = LocalDatabase(settings["EMBEDDED_DB_PORT"])
    if mode == "db" and database is None:
        raise Stop("MONGODB_URI is set: `make db` runs the embedded database only without it.")
    if mode != "db" and not _port_is_free(host, port):
        raise Stop(
            f"Port {port} on {host} is in use. Stop what uses it, or run with PORT={port + 1}."
        )
    server = None
    try:
        fresh = database.start_or_reuse() if database else False
        if database:
            env["MONGODB_URI"] = database.uri
        if mode == "db":
            if database.process:
                print(f"Embedded database at {database.uri}. Ctrl-C stops it.", flush=True)
                database.process.wait()
            return
        _flask(env, "db", "init")
        if database and (fresh or not TOKENS_FILE.exists()):
            _flask(env, "db", "seed-demo", "--new-tokens", "--tokens-file", str(TOKENS_FILE))
        shown_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        _banner(f"http://{shown_host}:{port}", embedded=database is not None)
        server = subprocess.Popen(_server_command(mode, host, port), cwd=ROOT, env=env)
        status = server.wait()
        if status != 0:
            raise Stop(f"The server stopped with status {status}.")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if server is not None:
            _stop_process(server)
        if database is not None:
            database.stop()


def reset_db() -> None:
    """`make reset-db`: the embedded database's data, and the demo tokens that name it, go;
    everything else in var/ and the installed tools stay. Refused while the database runs."""
    pid = LocalDatabase(server_settings_from_env(os.environ)["EMBEDDED_DB_PORT"]).running_pid()
    if pid is not None:
        raise Stop(f"The embedded database runs (pid {pid}); stop it first, then reset it.")
    removed = [path for path in (DATA, TOKENS_FILE) if path.exists()]
    for path in removed:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    shown = ", ".join(f"var/{path.relative_to(VAR)}" for path in removed) or "nothing"
    print(f"Removed {shown}; `make run` starts on an empty database and seeds the demo data.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["dev", "serve", "db", "reset-db"])
    mode = parser.parse_args().mode
    # The .env that `flask` reads too (.env.example): found from the working folder up, and
    # never over the environment; the app and gunicorn inherit it from here. Flask's own
    # switch, FLASK_SKIP_DOTENV, turns it off for both.
    if get_load_dotenv():
        dotenv.load_dotenv(dotenv.find_dotenv(usecwd=True), encoding="utf-8")
    # Ctrl-C and `kill` both stop everything, even when started in the background, where
    # the shell has SIGINT ignored and children would inherit that.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        reset_db() if mode == "reset-db" else run(mode)
    except Stop as problem:
        print(f"\n{problem}", file=sys.stderr)
        return 1
    except ConfigError as error:
        print(f"Error: {error.format_message()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
