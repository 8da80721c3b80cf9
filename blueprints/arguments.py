"""Query-string parsing shared by every blueprint: strict, and a 400 on any doubt."""

from marshmallow import ValidationError
from webargs.flaskparser import FlaskParser

from web import openapi


class QueryParser(FlaskParser):
    """webargs' parser, made strict.

    A repeated parameter is refused instead of silently taking its first value, and the
    schemas' own `unknown = RAISE` applies, so an unknown parameter is a 400 naming it.
    """

    DEFAULT_VALIDATION_STATUS = 400

    def load_querystring(self, req, schema):
        repeated = sorted({key for key, values in req.args.lists() if len(values) > 1})
        if repeated:
            raise ValidationError({key: ["Given more than once."] for key in repeated})
        return req.args.to_dict()


class Blueprint(openapi.Blueprint):
    ARGUMENTS_PARSER = QueryParser(unknown=None)
