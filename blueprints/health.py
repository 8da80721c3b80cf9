"""Probes for orchestrators: liveness without the database, readiness with a bounded ping.

Exempt from rate limits: a probe must not fail because clients behind the same address
spent the budget.
"""

from flask import current_app
from marshmallow import Schema, fields
from pymongo.errors import PyMongoError

from runtime import database
from web.blueprint import Blueprint
from web.errors import database_unavailable
from web.metrics import count_database_error

blp = Blueprint(
    "health",
    __name__,
    description="Liveness and readiness probes for orchestrators: no token, no rate limit.",
    rate_limited=False,
)


class StatusSchema(Schema):
    status = fields.String(required=True, metadata={"enum": ["ok"]})


_OK = {"status": "ok"}


@blp.route("/healthz")
@blp.doc(operationId="getLiveness")
@blp.response(200, StatusSchema)
def healthz():
    """Tell that the process serves requests; the database is not asked.

    A liveness probe: 200 as long as the process answers HTTP at all.
    """
    return _OK


@blp.route("/readyz")
@blp.doc(operationId="getReadiness")
@blp.response(200, StatusSchema)
@blp.error_responses(503)
def readyz():
    """Tell that the database answers a ping within READYZ_TIMEOUT_MS.

    A readiness probe: 200 when the database answers, 503 otherwise, so that traffic goes
    to instances that can serve it.
    """
    try:
        database.ping(current_app.config["READYZ_TIMEOUT_MS"] / 1000)
    except PyMongoError as error:
        count_database_error(error)
        raise database_unavailable() from error
    return _OK
