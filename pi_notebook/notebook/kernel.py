"""The kernel's session: :class:`~pi_notebook.coding_agent.agent_session.AgentSession` with the notebook's I/O.

Everything a conversation is (the session file, the agent, the model, tool and prompt choice, the context
pipeline, compaction, recovery, forks, recording) lives in the coding agent's ``AgentSession``, as in Pi, where a
front end ("mode") adds only its own I/O. This adapter adds the notebook's: which file a notebook records into
(and how a restarted kernel finds it again), the stop button, events handed to the cell on the kernel's main
thread, the notebook's wording, the approval prompt in the running cell (:mod:`.approval`), and a head start for
the offline model.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import threading
import time
import warnings
from typing import Any

from ..coding_agent.agent_session import AgentSession
from ..coding_agent.session import SessionFile
from ..coding_agent.session_entries import SessionWarning
from .approval import NotebookApprover
from .config import PiNotebook
from .pi_layout import publish_when_ready
from .runner import run_blocking
from .session_paths import fallback_folder, last_session_path, open_or_create, remember_session, session_path_for


class NotebookSession(AgentSession):
    """What ``pi_notebook.current_session()`` returns: the session file, the agent and the history, run from the
    kernel's main thread (the work itself runs on a background loop; see :mod:`.runner`)."""

    first_run_note = "no %%agent run yet: showing the defaults of the next run"
    approval_fix = (
        "Open the notebook in JupyterLab (or another page that draws widgets) to approve it there, or allow calls "
        "without asking: %agent_config approve=none (or name only the tools that should ask, e.g. approve=edit)."
    )

    def __init__(
        self,
        file: SessionFile,
        config: PiNotebook,
        *,
        shell: Any = None,
        cwd: str | None = None,
        note: str | None = None,
    ):
        self.shell = shell
        self.load_warnings: list[str] = []  # what loading the file found damaged, shown once by %load_ext
        self.warm_up_error: Exception | None = None
        super().__init__(file, config, cwd=cwd, note=note)
        self.approver = NotebookApprover(shell)  # asks in the running cell (see .approval)

    @property
    def config(self) -> PiNotebook:
        """The extension's settings (``%agent_config``, ``c.PiNotebook``)."""
        return self.settings  # type: ignore[return-value]

    def stop_text(self, stop: Any) -> str:
        """Why a run stopped, in the notebook's terms: the limit is the cell's ``--max-turns``."""
        if stop.reason != "max_turns":
            return stop.message
        n = stop.details.get("maxTurns")
        return (
            f"Stopped after {n} {'turn' if n == 1 else 'turns'} (--max-turns {n}) before the model gave an answer; "
            "run the cell again with a higher --max-turns or ask a narrower question."
        )

    # --- running, from the kernel's main thread -------------------------------------------------------------

    def run_prompt(self, text: str, *, on_event: Any = None, **choices: Any) -> tuple[list[Any], bool]:
        """:meth:`~AgentSession.prompt` from a cell: its events handed to ``on_event`` on this thread, the stop
        button aborting the run (the partial reply is kept). ``choices``: ``model``, ``tools``, ``system_prompt``,
        ``thinking``, ``max_turns``, ``anchor``. Returns (new messages, interrupted)."""

        def interrupt(future: Any) -> None:
            # Mid-reply: abort keeps the partial answer. Between retries (nothing streaming): cancel the wait.
            if self.is_streaming:
                self.abort()
            else:
                future.cancel()

        with self.holding_changes():  # the views hear of it here, on the kernel's main thread
            new, interrupted = run_blocking(
                lambda post: self.prompt(text, on_event=post, **choices), on_event=on_event, on_interrupt=interrupt
            )
        return new or [], interrupted

    def run_bash(
        self, command: str, *, exclude: bool = False, timeout: float | None = None, on_event: Any = None
    ) -> tuple[Any, bool]:
        """:meth:`~AgentSession.bash` from a cell: the live tail handed to ``on_event``, the stop button sending
        SIGINT, then SIGTERM, then SIGKILL (recorded as cancelled). Returns (message, interrupted)."""
        from ..ai import AbortController

        controller = AbortController()
        with self.holding_changes():
            message, interrupted = run_blocking(
                lambda post: self.bash(
                    command, exclude=exclude, timeout=timeout, signal=controller.signal, on_output=post
                ),
                on_event=on_event,
                on_interrupt=lambda _future: controller.abort(),
            )
        assert message is not None
        return message, interrupted

    def warm_up(self, *, in_cell: bool = False) -> threading.Thread | None:
        """If the next run's model is the in-process local one, load it on a background thread (the GGUF, and the
        start of the prompt every first request shares), so that the first ``%%agent`` does not wait for it; then,
        after each cell, read ahead what the next ``%%agent``'s request starts with (:meth:`_read_ahead`). Not when
        ``%agent_config warm_up=False`` or the environment sets ``PI_NOTEBOOK_NO_PRELOAD=1`` (CI, tests).

        It costs the cells nothing: it goes on only while no cell runs (``in_cell``: one runs now, the
        ``%load_ext`` cell), and a cell printing meanwhile loses nothing (llama.cpp's loading output goes to a log
        callback, not through a swapped ``sys.stdout``; see :func:`~pi_notebook.ai.providers.local.preload`).
        Returns the thread, if started."""
        if not self.config.warm_up or os.environ.get("PI_NOTEBOOK_NO_PRELOAD", "") not in ("", "0"):
            return None
        self.stop_warm_up()
        idle = self._idle = _Idle(self.shell, running=in_cell)
        try:
            loop: Any = asyncio.get_running_loop()  # the kernel's, on this thread: read-ahead is planned there
        except RuntimeError:
            loop = None
        if loop is not None:

            def after_cell() -> None:  # in IPython's post_execute: nothing here may raise
                if not loop.is_closed():
                    loop.call_later(idle.QUIET, self._read_ahead, idle)

            idle.after_cell = after_cell

        def work() -> None:
            try:
                idle.wait()  # everything here is work for the GIL: finding the model may import an HTTP client
                plan = self.next_plan()
                if plan.model.api != "local":
                    return
                from ..ai.providers.local import preload, stop_preload
                from ..ai.types import Context

                atexit.register(stop_preload)  # runs before the join below (atexit goes last-in first-out)
                idle.wait()
                tools = [tool.to_tool() for tool in plan.tools(self.cwd)]
                preload(plan.model, Context(system_prompt=plan.system_prompt, tools=tools), pause=idle.wait)
                if loop is not None and not loop.is_closed():
                    loop.call_soon_threadsafe(self._read_ahead, idle)
            except Exception as e:  # a preload is only a head start: the first run loads (and reports) for real
                self.warm_up_error = e
                logging.getLogger(__name__).debug("preloading the local model failed: %s", e)

        thread = threading.Thread(target=work, name="pi-warm-up", daemon=True)
        atexit.register(thread.join, 30)  # no interpreter teardown under a running load
        thread.start()
        return thread

    def _read_ahead(self, idle: _Idle) -> None:
        """On the kernel's main thread, once no cell has run for a moment: if the next run's model is the local one
        and it is loaded, compute the next request as a run would (:meth:`preview`, a few ms) and have a worker
        thread read its start into the model's cache (:func:`~pi_notebook.ai.providers.local.read_ahead`)."""
        if not idle.quiet() or idle.closed:
            return
        try:
            from ..ai.providers.local import is_loaded, read_ahead

            plan = self.next_plan()
            if plan.model.api != "local" or not is_loaded(plan.model):
                return
            contexts = [self.preview(text, plan=plan).call.context for text in ("Hello.", "Thanks.")]
        except Exception as e:  # a head start only: the run computes (and reports) its request for real
            logging.getLogger(__name__).debug("reading ahead failed: %s", e)
            return
        threading.Thread(
            target=read_ahead, args=(plan.model, contexts), kwargs={"pause": idle.wait}, name="pi-read-ahead",
            daemon=True,
        ).start()  # fmt: skip

    def stop_warm_up(self) -> None:
        """No more reading ahead for this session (the extension unloads, or a new preload starts)."""
        idle = getattr(self, "_idle", None)
        if idle is not None:
            idle.close()

    # --- which file ------------------------------------------------------------------------------------------

    @classmethod
    def for_shell(cls, shell: Any, config: PiNotebook) -> NotebookSession:
        """Attach to the notebook's session file (created on first use)."""
        cwd = os.getcwd()
        path = last_session_path(shell, config)
        created = not path.exists()
        with warnings.catch_warnings(record=True) as caught:  # told once, in one line each (load_warnings)
            warnings.simplefilter("always", SessionWarning)
            try:
                file, note = open_or_create(path, cwd)
            except OSError as e:  # the folder cannot be created (read-only, a file in the way): record elsewhere
                fallback = fallback_folder() / path.name
                file, note = open_or_create(fallback, cwd)
                moved = f"cannot write {path.parent} ({e.strerror or e}); this session is in {fallback}"
                note = f"{moved}; {note}" if note else moved
                created = False
            session = cls(file, config, shell=shell, cwd=cwd, note=note)
        session.load_warnings = [str(w.message) for w in caught if issubclass(w.category, SessionWarning)]
        for w in caught:  # anything else is not ours to reword
            if not issubclass(w.category, SessionWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if created:  # Pi's folder has no file per notebook: the pointer is the way back
            remember_session(shell, config, file.path)
        publish_when_ready(session)
        return session

    def open_fresh(self) -> tuple[SessionFile, str | None]:
        """A new, empty session file for this notebook; an ``OSError`` naming its path if it cannot be made."""
        path = session_path_for(self.shell, self.config, fresh=True, cwd=self.cwd)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return SessionFile.create(path, cwd=self.cwd), None
        except OSError as e:
            with contextlib.suppress(OSError):
                if path.stat().st_size == 0:
                    path.unlink()  # created, but its header could not be written (disk full)
            elsewhere = f" ({e.filename})" if e.filename and os.fspath(e.filename) != str(path) else ""
            raise OSError(e.errno, f"{e.strerror or e}{elsewhere}", str(path)) from e

    def switch_to(self, file: SessionFile, note: str | None = None) -> None:
        """Record into another session file from now on; a restarted kernel comes back to it."""
        super().switch_to(file, note)
        remember_session(self.shell, self.config, file.path)


class _Idle:
    """Whether the kernel runs no cell (IPython's ``pre_execute`` / ``post_execute``), for the preload to wait on:
    :meth:`wait` returns once no cell has run for the seconds the preload's next step asks (cells run one after
    another, as by Run All, go first); :attr:`after_cell` is called as each cell ends."""

    QUIET = 0.3

    def __init__(self, shell: Any, *, running: bool):
        self.shell, self.closed = shell, False
        self.after_cell: Any = None
        self._idle = threading.Event()
        self._since = 0.0  # when the last cell ended (time.monotonic)
        self._events = getattr(shell, "events", None)
        if self._events is None or not running:
            self._idle.set()
        if self._events is not None:
            self._events.register("pre_execute", self._pre)
            self._events.register("post_execute", self._post)

    def _pre(self) -> None:
        self._idle.clear()

    def _post(self) -> None:
        self._since = time.monotonic()
        self._idle.set()
        if self.after_cell is not None:
            self.after_cell()

    def quiet(self, seconds: float = QUIET) -> bool:
        """Whether no cell runs and none has for ``seconds``."""
        return self._idle.is_set() and time.monotonic() - self._since >= seconds

    def wait(self, quiet: float = QUIET) -> None:
        while True:
            self._idle.wait()
            settled = self._since + quiet - time.monotonic()
            if settled <= 0:
                return
            time.sleep(settled)

    def close(self) -> None:
        self.closed, self.after_cell = True, None
        self._idle.set()  # a preload waiting goes on (and ends) rather than waiting for a cell that never comes
        if self._events is not None:
            for event, callback in (("pre_execute", self._pre), ("post_execute", self._post)):
                with contextlib.suppress(ValueError):
                    self._events.unregister(event, callback)
