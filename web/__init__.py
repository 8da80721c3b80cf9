"""What every HTTP response goes through, whatever the endpoint: the JSON error body, the
OpenAPI document, ETags, request ids, the request log, rate limits, and gunicorn's own errors."""
