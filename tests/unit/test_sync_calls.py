"""app.py's `ensure_sync`: Flask's answer for each view and hook, kept per function."""

import pytest


def test_a_plain_function_is_called_as_it_is_every_time(offline_app):
    def view():
        return "ok"

    assert offline_app.ensure_sync(view) is view
    assert offline_app.ensure_sync(view) is view


def test_a_bound_method_is_called_as_it_is(offline_app):
    class Hooks:
        def after(self, response):
            return response

    hooks = Hooks()
    assert offline_app.ensure_sync(hooks.after) == hooks.after


def test_a_coroutine_function_is_still_flasks_to_wrap_or_refuse(offline_app):
    async def view():
        return "ok"

    for _ in range(2):  # refused each time: a refusal is not kept as an answer
        with pytest.raises(RuntimeError, match="async"):  # this project installs no asgiref
            offline_app.ensure_sync(view)
