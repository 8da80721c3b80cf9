"""`wsgi:app` with one fault planted, for tests that need a real server to answer a 500.

gunicorn serves it as `tests.support.faulty_wsgi:app` (with gunicorn.conf.py as always): reading one
bot by its slug raises, as a bug would; every other endpoint is the production code.
"""

from repositories.bots import BotRepository
from wsgi import app

FAULT = "planted fault: the bot could not be read"


def _fail(*args, **kwargs):
    raise RuntimeError(FAULT)


BotRepository.get = _fail

__all__ = ["app"]
