"""The bridge from the agent's background loop to the kernel's main thread (where a cell's code runs)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from pi_notebook.notebook.runner import NoMainThread, on_main_thread, run_blocking


def test_work_of_a_run_reaches_the_main_thread_in_order_with_its_events():
    seen: list[str] = []

    async def make(post):
        post("before")
        where = await on_main_thread(lambda: threading.current_thread() is threading.main_thread())
        seen.append(f"main={where}")
        inner = await asyncio.gather(*(on_main_thread(lambda i=i: i * i) for i in range(3)))  # from child tasks too
        post("after")
        return inner

    result, interrupted = run_blocking(make, on_event=seen.append)
    assert (result, interrupted) == ([0, 1, 4], False)
    assert seen == ["before", "main=True", "after"]


def test_an_error_on_the_main_thread_is_raised_in_the_run():
    async def make(post):
        try:
            await on_main_thread(lambda: 1 / 0)
        except ZeroDivisionError as e:
            return f"caught {type(e).__name__}"

    assert run_blocking(make) == ("caught ZeroDivisionError", False)


def test_outside_a_run_there_is_no_main_thread_to_ask():
    with pytest.raises(NoMainThread):
        asyncio.run(on_main_thread(lambda: None))


def test_the_stop_button_during_main_thread_work_fails_that_work_and_stops_the_run():
    from pi_notebook.notebook.runner import Interrupted

    stopped = []

    def user_code():
        raise KeyboardInterrupt  # what the stop button raises in the code running on the main thread

    async def make(post):
        try:
            await on_main_thread(user_code)
        except Interrupted as e:
            return f"tool result: {e}"

    result, interrupted = run_blocking(make, on_interrupt=lambda future: stopped.append(True))
    assert result == "tool result: the stop button interrupted it" and interrupted and stopped == [True]
