"""gunicorn's logger as gunicorn.conf.py gives it: no access line is made where the logging
configuration (runtime/logs.py) would drop it, and one is where it would be written."""

import logging

import pytest
from gunicorn.config import Config

from runtime import logs
from web.gunicorn_worker import Logger


@pytest.fixture
def logger(monkeypatch):
    config = Config()
    config.set("logconfig_dict", logs.CONFIG)
    made = []
    monkeypatch.setattr(Logger, "atoms", lambda self, *args: made.append(args) or {})
    return Logger(config), made


def test_the_access_line_gunicorn_would_drop_is_never_made(logger):
    gunicorn_logger, made = logger

    gunicorn_logger.access(None, None, {}, None)

    assert made == []


def test_an_access_line_someone_turned_on_is_made(logger):
    gunicorn_logger, made = logger
    gunicorn_logger.access_log.setLevel(logging.INFO)
    try:
        gunicorn_logger.access(None, None, {}, None)
    finally:
        gunicorn_logger.access_log.setLevel(logging.WARNING)

    assert len(made) == 1
