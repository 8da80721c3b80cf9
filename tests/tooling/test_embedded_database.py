"""runtime/embedded_database.py: how `make run`, the tests and the benchmark start SecantusDB."""

import os
import socket

import pymongo
import pytest

from runtime import embedded_database
from runtime.embedded_database import EmbeddedDatabase, StartError


@pytest.fixture
def database(tmp_path):
    database = EmbeddedDatabase(tmp_path / "data", tmp_path / "secantusd.log")
    yield database
    database.stop()


def test_starts_stops_and_starts_again_on_the_same_port_and_data(database):
    database.start()
    with pymongo.MongoClient(database.uri) as client:
        client.demo.notes.insert_one({"_id": 1})

    database.stop()

    assert database.process is None
    assert not database.answers()
    database.start()
    with pymongo.MongoClient(database.uri) as client:
        assert client.demo.notes.find_one() == {"_id": 1}


def test_a_daemon_that_exits_is_reported_with_the_end_of_its_log(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        database = EmbeddedDatabase(tmp_path / "data", tmp_path / "log", taken.getsockname()[1])

        with pytest.raises(StartError, match="did not start; .*log ends:\n.") as raised:
            database.start()

    assert database.process is None
    assert database.log_tail() in str(raised.value)


def test_a_missing_daemon_says_how_to_install_it(database, monkeypatch):
    monkeypatch.setattr(embedded_database, "DAEMON", "secantusd-py-absent")

    with pytest.raises(StartError, match="`make install` installs it"):
        database.start()

    assert database.process is None


def test_its_own_session_keeps_a_terminal_ctrl_c_from_reaching_it(database):
    database.launch(own_session=True)

    assert os.getsid(database.process.pid) == database.process.pid != os.getsid(0)
