"""Domain exceptions: raised by the policy, the repositories and the schemas' checks against
the data, which know nothing of HTTP.

web/errors.py maps each one to its status and the JSON error body.
"""


class DomainError(Exception):
    status = 500

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NotFound(DomainError):
    status = 404


class Forbidden(DomainError):
    status = 403


class InvalidParameter(DomainError):
    """A parameter that parsed, but that the data refuses (a cursor whose item is gone)."""

    status = 400

    def __init__(self, parameter: str, message: str):
        super().__init__(message)
        self.parameter = parameter


class Gone(DomainError):
    """What was asked for is no longer held (a feed's history, past its last event)."""

    status = 410


class Unavailable(DomainError):
    """The service cannot serve this now, but may soon, or elsewhere (a worker's feeds)."""

    status = 503
