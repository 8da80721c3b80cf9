"""scripts/run.py (`make run`/`serve`/`db`): the embedded database's life, and clear refusals."""

import importlib.util
import subprocess

import pytest

from tests.support import ROOT
from tests.support.wire_server import free_port


@pytest.fixture
def run_script(tmp_path, monkeypatch):
    """The script, with its var/ folder moved to a temporary one."""
    spec = importlib.util.spec_from_file_location("run_script", ROOT / "scripts" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    var = tmp_path / "var"
    monkeypatch.setattr(module, "VAR", var)
    monkeypatch.setattr(module, "DATA", var / "secantus")
    monkeypatch.setattr(module, "PID_FILE", var / "secantusd.pid")
    monkeypatch.setattr(module, "LOG_FILE", var / "secantusd.log")
    return module


def test_a_busy_server_port_is_refused_before_anything_starts(run_script, busy_port, monkeypatch):
    monkeypatch.setenv("PORT", str(busy_port))
    monkeypatch.setenv("MONGODB_URI", "mongodb://127.0.0.1:1/")

    with pytest.raises(run_script.Stop, match=f"Port {busy_port} on 127.0.0.1 is in use"):
        run_script.run("dev")


def test_a_busy_database_port_is_refused(run_script, busy_port):
    database = run_script.LocalDatabase(busy_port)

    with pytest.raises(run_script.Stop, match=f"Port {busy_port} is in use by another program"):
        database.start_or_reuse()
    assert database.process is None


def test_a_stale_pid_file_is_removed(run_script, capsys):
    finished = subprocess.Popen(["true"])
    finished.wait()
    run_script.VAR.mkdir()
    run_script.PID_FILE.write_text(f"{finished.pid}\n")

    assert run_script.LocalDatabase(free_port()).running_pid() is None

    assert not run_script.PID_FILE.exists()
    assert "Removing the stale pid file" in capsys.readouterr().out


def test_starts_reuses_and_stops_the_embedded_database(run_script):
    port = free_port()
    first = run_script.LocalDatabase(port)
    try:
        assert first.start_or_reuse() is True
        assert first.answers()
        assert run_script.PID_FILE.read_text().strip() == str(first.process.pid)

        second = run_script.LocalDatabase(port)
        assert second.start_or_reuse() is False
        assert second.process is None
        second.stop()
        assert first.answers()
    finally:
        first.stop()
    assert not run_script.PID_FILE.exists()
    assert not first.answers()
    again = run_script.LocalDatabase(port)
    try:
        assert again.start_or_reuse() is False, "the data of the first start is reused"
    finally:
        again.stop()


def test_reset_db_removes_the_data_and_its_demo_tokens_and_nothing_else(run_script, monkeypatch):
    monkeypatch.setattr(run_script, "TOKENS_FILE", run_script.VAR / "demo-tokens.txt")
    run_script.DATA.mkdir(parents=True)
    (run_script.DATA / "collection.wt").write_text("data")
    run_script.TOKENS_FILE.write_text("member bcs_x\n")
    run_script.LOG_FILE.write_text("a log\n")

    run_script.reset_db()

    assert not run_script.DATA.exists() and not run_script.TOKENS_FILE.exists()
    assert run_script.LOG_FILE.read_text() == "a log\n"


def test_reset_db_is_refused_while_the_database_runs(run_script, monkeypatch):
    monkeypatch.setattr(run_script.LocalDatabase, "running_pid", lambda self: 4242)
    run_script.DATA.mkdir(parents=True)

    with pytest.raises(run_script.Stop, match="runs \\(pid 4242\\); stop it first"):
        run_script.reset_db()
    assert run_script.DATA.exists()
