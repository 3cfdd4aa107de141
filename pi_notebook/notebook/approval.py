"""The notebook's approver: the running cell asks before a tool call that needs a click, and the run waits.

The agent runs on a background loop (:mod:`.runner`); the question is put on the kernel's main thread
(:func:`~.runner.on_main_thread`), where the cell's output is: the prompt (:mod:`.approval_widget`) shows what the
call would do, with Approve, Deny and "Always this session". The cell is still running, and ipykernel handles
the page's messages only between cells, so the clicks are heard another way while the main thread waits:

* ipykernel 7.4 and later pass every widget message through its comm's ``_reply_subshell_for`` on the kernel's
  shell channel thread (to route it) before the main thread handles it: the prompt's comm takes the message
  there as well (:class:`_Peek`), and the main thread handles it as usual after the cell.
* Older kernels (ipykernel 6, where ``Kernel.do_one_iteration`` exists) are pumped with the registry package
  ``jupyter-ui-poll``, which handles the waiting messages on the main thread and delays queued cells until this
  one ends. (On ipykernel 7.4 it has nothing to call: ``do_one_iteration`` is gone.)

A page that draws the prompt says so at once (a ping). When none does within :data:`PING_SECONDS` (nbclient,
nbval, ``jupyter execute``, a kernel without a page, a kernel that cannot hear the page), the call is refused
with one clear result instead of waiting forever. The stop button while the prompt waits stops the run, and the
call is recorded as stopped. Once answered the cell keeps the decision as plain text.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from ..coding_agent.approval import ApprovalRequest, Decision

if TYPE_CHECKING:
    from .approval_widget import ApprovalWidget

PING_SECONDS = 0.8
"""How long a prompt waits for a page to say it drew it before the call is refused (headless runs end at once)."""
POLL_SECONDS = 0.02

NO_PAGE = (
    f"no page showed the approval prompt within {PING_SECONDS:g} s: a run without a page (nbclient, nbval, "
    "jupyter execute) or a front end that does not draw widgets"
)
NO_KERNEL = "this Python is no Jupyter kernel (a script or terminal IPython): no page can show the prompt"
DEAF_KERNEL = "this ipykernel cannot hear the page while a cell runs (ipykernel 6 with jupyter-ui-poll, or 7.4+, can)"
NOT_FROM_A_CELL = "the run was not started by a cell (%%agent), so no cell can show the prompt"


class NotebookApprover:
    """:class:`~pi_notebook.coding_agent.approval.Approver` of a notebook's session: asks in the running cell."""

    def __init__(self, shell: Any, *, ping_seconds: float = PING_SECONDS):
        self.shell = shell
        self.ping_seconds = ping_seconds

    async def ask(self, request: ApprovalRequest) -> Decision:
        import asyncio

        from .runner import Interrupted, NoMainThread, on_main_thread

        cancelled = threading.Event()
        try:
            return await on_main_thread(lambda: ask_in_cell(self.shell, request, self.ping_seconds, cancelled))
        except NoMainThread:
            return Decision("unanswered", reason=NOT_FROM_A_CELL)
        except Interrupted:  # the stop button, while the prompt waited: the run stops
            return Decision("stopped")
        except asyncio.CancelledError:  # the run was stopped another way: the prompt stops waiting
            cancelled.set()
            raise


def ask_in_cell(shell: Any, request: ApprovalRequest, ping_seconds: float, cancelled: threading.Event) -> Decision:
    """Show the prompt in the running cell and wait for the page's answer (on the kernel's main thread). The stop
    button raises ``KeyboardInterrupt`` through it; the cell keeps the outcome as text either way."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return Decision("unanswered", reason=NO_KERNEL)
    from IPython.display import display

    from .approval_widget import ApprovalWidget, decided_text

    widget = ApprovalWidget(request)
    hearing = _hearing(kernel, widget)
    if hearing is None:
        widget.settle("unanswered")
        return Decision("unanswered", reason=DEAF_KERNEL)
    waiting = f"… waiting for your approval: {request.summary}"
    handle = display({**_view(widget), "text/plain": waiting}, raw=True, display_id=True)
    decision = Decision("stopped")
    try:
        decision = _wait(widget, hearing, ping_seconds, cancelled)
    finally:
        hearing.close()
        handle.update({"text/plain": decided_text(request, decision)}, raw=True)
        widget.settle({"approve": "approved", "deny": "denied"}.get(decision.verdict, decision.verdict))
    return decision


def _view(widget: ApprovalWidget) -> dict[str, Any]:
    result = widget._repr_mimebundle_()
    data = (result[0] if isinstance(result, tuple) else result) or {}
    return {k: v for k, v in data.items() if k == "application/vnd.jupyter.widget-view+json"}


def _wait(widget: ApprovalWidget, hearing: _Hearing, ping_seconds: float, cancelled: threading.Event) -> Decision:
    deadline = time.monotonic() + ping_seconds
    while True:
        hearing.pump()
        if widget.decision is not None:
            return widget.decision
        if cancelled.is_set():
            return Decision("stopped")
        if not widget.pinged.is_set() and time.monotonic() > deadline:
            return Decision("unanswered", reason=NO_PAGE)
        widget.changed.wait(POLL_SECONDS)
        widget.changed.clear()


class _Hearing:
    """How the page's messages reach the prompt while the cell runs."""

    def pump(self) -> None:
        """Let waiting messages in (a no-op where they arrive by themselves)."""

    def close(self) -> None:
        """Stop listening."""


class _Peek(_Hearing):
    """ipykernel 7.4+: the prompt's comm takes each message on the shell channel thread as it is routed."""

    def __init__(self, widget: ApprovalWidget):
        comm = widget.comm
        self.comm, route = comm, comm._reply_subshell_for

        def peek(data: Any, default: Any) -> Any:
            if isinstance(data, dict) and data.get("method") == "custom":
                widget.heard(data.get("content"), early=True)
            return route(data, default)  # routed as it would have been

        comm._reply_subshell_for = peek

    def close(self) -> None:
        self.comm.__dict__.pop("_reply_subshell_for", None)


class _UiPoll(_Hearing):
    """ipykernel 6: ``jupyter-ui-poll`` handles the waiting messages on this thread (the prompt's own handler
    takes them)."""

    def __init__(self) -> None:
        from jupyter_ui_poll import ui_events  # type: ignore[import-untyped]

        self._events = ui_events()
        self._poll = self._events.__enter__()

    def pump(self) -> None:
        self._poll(10)

    def close(self) -> None:
        self._events.__exit__(None, None, None)


def _hearing(kernel: Any, widget: ApprovalWidget) -> _Hearing | None:
    """How this kernel lets the prompt hear the page during the cell; ``None`` if it cannot."""
    comm = getattr(widget, "comm", None)
    if comm is None:
        return None
    if getattr(kernel, "shell_channel_thread", None) is not None and hasattr(comm, "_reply_subshell_for"):
        return _Peek(widget)
    if hasattr(kernel, "do_one_iteration"):
        try:
            return _UiPoll()
        except ImportError:  # the dependency is missing (an install without it): nothing can hear the page
            return None
    return None
