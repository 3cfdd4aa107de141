"""The kernel's agent session: one Pi session file per notebook, the Agent, and what each magic records.

Every message is recorded as it completes (the prompt, each assistant reply, each tool result, each shell
command), so an interrupt or a crash loses nothing and a restarted kernel reattaches to the same file.
"""

from __future__ import annotations

import atexit
import inspect
import logging
import os
import re
import threading
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..agent_core import as_agent_message, convert_to_llm, prepare_llm_messages, to_pi_json
from ..agent_core.convert import takes_signal
from ..ai import default_model, get_model
from ..coding_agent import BashExecutionMessage, CustomMessage
from ..coding_agent.session import SessionError, SessionFile
from ..coding_agent.session_entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    SessionMessageEntry,
    SessionWarning,
)
from .branching import BranchPlanner
from .config import DEFAULT_SYSTEM_PROMPT, DEFAULT_TOOLS, LOCAL_SYSTEM_PROMPT, LOCAL_TOOLS, PiNotebook, parse_tools
from .pi_layout import publish_when_ready
from .recording import SessionWriter
from .session_paths import fallback_folder, last_session_path, open_or_create, remember_session, session_path_for

if TYPE_CHECKING:  # the run's modules (the loop, compaction, tools, asyncio) load at the first run, not with %load_ext
    from ..agent_core import Agent
    from ..ai import Model
    from ..coding_agent.branch_summary import BranchSummary
    from ..coding_agent.compaction import CompactionSettings, Compactor
    from ..coding_agent.context_fit import ContextFitter

NOTICE = "pi_notebook.notice"
"""customType of a one-time notice about the context (a message the model sees only part of)."""
RUN_STOPPED = "pi_notebook.run_stopped"
"""``customType`` of the notice recorded when the loop stopped a run before the model answered."""

SMALL_MODEL_GUARD = {"min_repeats": 3, "min_repeated_chars": 120}
"""The loop guard's settings for a small model (``LoopGuardSettings``): a tail repeated 3 times over 120
characters is already degenerate in its short answers."""


class CompactionNotice:
    """Handed to the cell when the history was compacted during a run."""

    type = "compaction"

    def __init__(self, message: Any):
        self.message = message


class NotebookSession:
    """What ``pi_notebook.current_session()`` returns: the session file, the agent and the history."""

    def __init__(
        self,
        file: SessionFile,
        config: PiNotebook,
        *,
        shell: Any = None,
        cwd: str | None = None,
        note: str | None = None,
    ):
        self.file = file
        self.shell = shell
        self.config = config
        self.cwd = cwd or os.getcwd()
        self.note = note
        self.load_warnings: list[str] = []  # what loading the file found damaged, shown once by %load_ext
        self._agent: Agent | None = None  # made on first use (`agent`): loading a session does not need it
        self._history: list[Any] = []  # the history until then
        self._agent_lock = threading.Lock()
        self._entry_ids: dict[int, str] = {}  # id(message) → its entry, for compaction's firstKeptEntryId
        self.writer = SessionWriter(file, self._written)
        self._running = False  # a run is streaming: what is recorded now joins the history after it (Pi's rule)
        self._post: Any = None  # while a run streams: hands notices to the cell
        self.compactor: Compactor | None = None
        self.fitter: ContextFitter | None = None
        self._notices: list[str] = []  # said during a run, recorded after it
        self._change_listeners: list[Any] = []
        self._transform: Any = None  # the user's transform_context, run before the fitter and compaction
        self.branches = BranchPlanner(file)
        self.reload()
        self._recover()

    # --- history --------------------------------------------------------------------------------------

    def on_change(self, listener: Any) -> Any:
        """Call ``listener()`` on the kernel's main thread whenever the history changed (a magic finished, a
        message was recorded, another session or branch was opened). Returns ``unsubscribe``."""
        self._change_listeners.append(listener)
        return lambda: self._change_listeners.remove(listener) if listener in self._change_listeners else None

    def _changed(self) -> None:
        for listener in list(self._change_listeners):
            listener()

    @property
    def agent(self) -> Agent:
        """The session's :class:`~pi_notebook.agent_core.Agent`, holding the history; made on first use."""
        if self._agent is None:
            with self._agent_lock:
                if self._agent is None:
                    from ..agent_core import Agent  # the loop, events and asyncio: not needed to load a session

                    agent = Agent(None, system_prompt=self.config.system_prompt)
                    agent.replace_messages(self._history)
                    agent.subscribe(self._on_event)
                    self._agent = agent
        return self._agent

    @property
    def is_streaming(self) -> bool:
        """Whether the agent is answering now."""
        return self._agent is not None and self._agent.is_streaming

    @property
    def messages(self) -> list[Any]:
        """The AgentMessages of the current branch, as typed objects."""
        return self._history if self._agent is None else self._agent.state.messages

    def _append(self, message: Any) -> None:
        if self._agent is None:
            self._history.append(message)
        else:
            self._agent.append_message(message)

    def llm_messages(self) -> list[Any]:
        """What the LLM would be sent now: the history after transform_context → convert_to_llm."""
        custom = self._agent.convert_to_llm if self._agent is not None else None
        return prepare_llm_messages(self.messages, self._transform, custom or convert_to_llm)

    def reload(self) -> None:
        """Rebuild the agent's history from the session file at its leaf."""
        with self.writer.lock:
            context = self.file.build_session_context()  # types the messages of the context, and only those
            self._entry_ids = {
                id(m): entry_id for m, entry_id in zip(context.messages, context.entry_ids, strict=False)
            }
            if self._agent is None:
                self._history = list(context.messages)
            else:
                self._agent.replace_messages(context.messages)
            self._context_model = context.model
            self._context_thinking = context.thinking_level
        self._changed()

    def record(self, message: Any) -> None:
        """Add any registered AgentMessage to the session (stored, shown, and sent per its converter), from any
        thread. While a run streams it joins the history when the run ends, as Pi queues it (a tool call and
        its result stay together), and waits in a journal meanwhile, so a crash does not lose it. A message the
        file refuses stays in memory (:meth:`check_saved` says so)."""
        with self.writer.lock:
            if self._running or self.is_streaming:
                self.writer.defer(message)
                return
            self._release_deferred()
            self.writer.write(message)
            self._append(message)
        self._changed()

    def check_saved(self) -> None:
        """Raise :class:`~.recording.SessionWriteError` (one line) if some messages are not in the file yet."""
        self.writer.check()

    def _release_deferred(self) -> None:
        """Messages recorded during the run that just ended: into the file and the history, in their order."""
        with self.writer.lock:
            for message in self.writer.release():
                self._append(message)

    def _recover(self) -> None:
        """Commands a crashed kernel recorded during a run and never wrote: into the history now."""
        recovered = self.writer.recover()
        for message in recovered:
            self._append(message)
        if recovered:
            n = len(recovered)
            self.note = (
                f"recovered {n} message{'s' if n != 1 else ''} recorded during a run the last kernel did not finish"
            )
            self._changed()

    def _written(self, message: Any, entry_id: str) -> None:
        self._entry_ids[id(message)] = entry_id

    def _on_event(self, event: Any) -> None:
        if event.type == "message_end":
            self.writer.write(event.message)  # a refused write keeps it in memory; the cell says so at its end

    def _last_details(self) -> dict[str, Any] | None:
        """The read/modified file lists of the last compaction on this branch (a restart must not lose them)."""
        for entry in reversed(self.file.get_branch()):
            if isinstance(entry, CompactionEntry):
                return entry.details if isinstance(entry.details, dict) else None
        return None

    def _on_oversized(self, item: Any) -> None:
        """Name a message the LLM gets only part of, once, with the fix (recorded after the run)."""
        model = self.agent.state.model
        self._notices.append(item.describe(f"{model.provider}/{model.id}" if model else "the model"))

    def _on_compaction(self, result: Any, summary: Any, first_kept: Any) -> None:
        """Store the compaction in the session file (Pi's ``compaction`` entry) and show its summary card."""
        entry_id = self._entry_id_of(self.fitter.original_of(first_kept) if self.fitter else first_kept)
        self.file.append_compaction(result.summary, entry_id, result.tokens_before, result.details)
        if self._post is not None:
            self._post(CompactionNotice(summary))

    def _entry_id_of(self, message: Any) -> str:
        known = self._entry_ids.get(id(message))
        if known is not None:
            return known
        # A message rebuilt from its own entry type (custom_message, branch_summary, compaction): find that entry.
        wanted = to_pi_json(message)
        role = wanted.get("role")
        for entry in self.file.get_branch():
            if isinstance(entry, SessionMessageEntry):
                found = to_pi_json(entry.message) == wanted
            elif isinstance(entry, CustomMessageEntry):
                found = role == "custom" and (entry.custom_type, entry.content) == (
                    wanted.get("customType"),
                    message.content,
                )
            elif isinstance(entry, BranchSummaryEntry):
                found = role == "branchSummary" and entry.summary == wanted.get("summary")
            elif isinstance(entry, CompactionEntry):
                found = role == "compactionSummary" and entry.summary == wanted.get("summary")
            else:
                found = False
            if found:
                return entry.id
        return self.file.leaf_id or ""

    # --- running ----------------------------------------------------------------------------------------

    def warm_up(self) -> threading.Thread | None:
        """If the default model is the in-process local one, import its libraries on a background thread so
        the first ``%%agent`` does not wait for them (``%agent_config warm_up=False`` turns this off). Returns
        the thread, if started."""
        if not self.config.warm_up:
            return None

        def work() -> None:
            try:
                if self.resolve_model(None).api != "local":
                    return
                from ..ai.providers.local import warm_up

                warm_up()
            except Exception as e:  # a warm-up is only a head start: the first run imports (and reports) for real
                self.warm_up_error = e
                logging.getLogger(__name__).debug("warm-up of the local model failed: %s", e)

        self.warm_up_error: Exception | None = None
        thread = threading.Thread(target=work, name="pi-warm-up", daemon=True)
        thread.start()
        atexit.register(thread.join, 30)  # no interpreter teardown under a running import
        return thread

    def resolve_model(self, spec: str | None) -> Model:
        spec = spec or self.config.default_model
        return get_model(spec) if spec else default_model()

    def prepare_run(
        self,
        *,
        model: Model,
        system_prompt: str | None,
        tools: Sequence[str] | None,
        thinking: str | None,
        max_turns: int | None,
        cell_id: str | None,
        prompt: str = "",
    ) -> None:
        """Configure the agent for one ``%%agent`` run and record what changed (model, thinking level, the
        branch a re-run cell starts from). ``prompt`` (the cell's text) lets a small model's tools reach the
        paths it names at any depth."""
        from ..agent_core.loop_guard import LoopGuardSettings
        from ..coding_agent.compaction import Compactor
        from ..coding_agent.context_fit import ContextFitter
        from ..coding_agent.secrets import mask_tool
        from ..coding_agent.tools import TOOL_FACTORIES
        from ..coding_agent.tools.path_choices import with_path_choices

        self._release_deferred()
        if self.branches.start_cell(cell_id, self._branch_summarizer(model)):
            self.reload()
        if self._context_model != {"provider": model.provider, "modelId": model.id}:
            self.writer.write_entry(lambda: self.file.append_model_change(model.provider, model.id))
            self._context_model = {"provider": model.provider, "modelId": model.id}
        level = thinking or self.config.thinking
        if level != self._context_thinking:
            self.writer.write_entry(lambda: self.file.append_thinking_level_change(level))
            self._context_thinking = level
        small = model.api == "local"
        if tools is not None:
            names = list(tools)
        elif small and self.config.tools == DEFAULT_TOOLS:
            names = parse_tools(LOCAL_TOOLS)  # read-only unless asked: a small model must not write by mistake
        else:
            names = parse_tools(self.config.tools)
        settings = self.compaction_settings(model)
        if self.compactor is None or self.compactor.model != model or self.compactor.settings != settings:
            # Small models summarise without a model: their own summary would neither fit nor help.
            self.compactor = Compactor(
                model, settings, on_compaction=self._on_compaction, digest=small, previous_details=self._last_details()
            )
            # Before compaction, a message too large for the window is cut (and named once) for the LLM only.
            self.fitter = ContextFitter(model, self.compactor, on_oversized=self._on_oversized, latest_only=small)
        self._install_transform()
        # A small model's answers are short: a tail repeated 3 times over 120 characters is already degenerate.
        self.agent.loop_guard = LoopGuardSettings(**SMALL_MODEL_GUARD) if small else True
        self.agent.set_model(model)
        self.agent.stream_options["session_id"] = self.file.session_id  # prompt caching per session, as Pi does
        if system_prompt is None:
            default = self.config.system_prompt == DEFAULT_SYSTEM_PROMPT
            system_prompt = LOCAL_SYSTEM_PROMPT if small and default else self.config.system_prompt
        self.agent.set_system_prompt(system_prompt)
        made = [TOOL_FACTORIES[name](self.cwd) for name in names]
        made = [with_path_choices(t, self.cwd, prompt) for t in made] if small else made
        self.agent.set_tools([mask_tool(t) for t in made] if self.config.mask_secrets else made)
        self.agent.set_thinking_level(level)  # type: ignore[arg-type]
        limit = self.config.max_turns if max_turns is None else max_turns
        self.agent.max_turns = limit or None

    def compaction_settings(self, model: Model) -> CompactionSettings:
        """The compaction settings a run with ``model`` uses: ``%agent_config``'s, scaled to a small window."""
        from ..coding_agent.compaction import CompactionSettings

        # Pi's defaults assume a 100k+ window; on a small one (the local model has 8,192 tokens) a reserve larger
        # than the whole window would mean "compact before every call": then scale the settings to the window.
        window = model.context_window or 128_000
        reserve, keep = self.config.reserve_tokens, self.config.keep_recent_tokens
        if reserve >= window:
            reserve, keep = window // 4, min(keep, window // 2)
        elif keep >= window - reserve:
            # e.g. 32k: keeping 20,000 tokens above a 16,384 threshold would compact again at every call
            keep = (window - reserve) // 2
        return CompactionSettings(enabled=self.config.compaction, reserve_tokens=reserve, keep_recent_tokens=keep)

    @property
    def transform_context(self) -> Any:
        """Your own ``transform_context(messages)`` (sync or async; Pi's ``(messages, signal)`` too), or ``None``.

        The agent runs it on the history before the notebook's own stages (cutting oversized messages, then
        compaction), so those see what it returns. Setting it takes effect at the next LLM call and refreshes
        the open inspectors of this session; nothing stored changes."""
        return self._transform

    @transform_context.setter
    def transform_context(self, fn: Any) -> None:
        if fn is not None and not callable(fn):
            raise TypeError(f"transform_context must be callable or None, not {type(fn).__name__}")
        self._transform = fn
        self._install_transform()
        self._changed()

    def _install_transform(self) -> None:
        """The agent's transform_context: the user's, then the fitter (which runs compaction), once there is one."""
        if self.fitter is not None:
            self.agent.transform_context = (
                self.fitter if self._transform is None else _Then(self._transform, self.fitter)
            )
        elif self._agent is not None:
            self._agent.transform_context = self._transform

    def _branch_summarizer(self, model: Model) -> Any:
        """Pi's model-written branch summary when ``branch_summary_model`` is set (``same`` = the run's model);
        otherwise ``None``: a summary written without a model. A failing model falls back to the latter."""
        from ..coding_agent.branch_summary import BranchSummaryError, describe_branch, summarize_branch
        from .runner import run_blocking

        spec = self.config.branch_summary_model
        if not spec:
            return None
        summary_model = model if spec == "same" else get_model(spec)

        def summarize(messages: Sequence[Any], details: dict[str, Any]) -> BranchSummary:
            async def go(post: Any) -> BranchSummary:
                return await summarize_branch(messages, summary_model, previous_details=details)

            try:
                result, _ = run_blocking(go)
            except BranchSummaryError as e:
                print(f"pi_notebook: {e}; the branch summary was written without a model")
                result = None
            return result or describe_branch(messages, details)

        return summarize

    def run_prompt(self, text: str, *, on_event: Any = None) -> tuple[list[Any], bool]:
        """Run the agent on ``text`` until it is idle; return (new messages, interrupted).

        When the loop stopped the run before the model answered (``--max-turns``, the loop guard), the reason is
        recorded as a Pi ``custom`` message (``customType`` :data:`RUN_STOPPED`, ``display=True``) and handed to
        ``on_event`` as a ``message_end``, so the cell shows it and the session keeps it across restarts. It is
        deliberately not hidden from the LLM: Pi's ``custom`` role has no exclude flag, and the next run is better
        for knowing that the previous one was cut short (its history ends on tool results with no answer, or on a
        cut reply) and why — after a loop-guard stop, that it should not repeat the same call.
        """
        from ..agent_core.events import MessageEndEvent
        from ..coding_agent.recovery import run_with_recovery
        from .runner import run_blocking

        start = len(self.messages)

        async def go(post: Any) -> None:
            unsubscribe = self.agent.subscribe(post)
            self._post = post
            try:
                await run_with_recovery(self.agent, lambda: self.agent.prompt(text), compactor=self.compactor)
            finally:
                self._post = None
                unsubscribe()

        def interrupt(future: Any) -> None:
            # Mid-reply: abort keeps the partial answer. Between retries (nothing streaming): cancel the wait.
            if self.agent.is_streaming:
                self.agent.abort()
            else:
                future.cancel()

        self._notices = []
        with self.writer.lock:
            self._running = True
        try:
            _, interrupted = run_blocking(go, on_event=on_event, on_interrupt=interrupt)
        finally:
            with self.writer.lock:
                self._running = False
                self._release_deferred()
        said = {m.content for m in self.messages if isinstance(m, CustomMessage) and m.custom_type == NOTICE}
        notices = [
            CustomMessage(custom_type=NOTICE, content=text, display=True) for text in dict.fromkeys(self._notices)
        ]
        notices = [n for n in notices if n.content not in said]  # named once, also across restarts
        stop = self.agent.state.stop
        if stop is not None:
            words = stop.message
            if stop.reason == "max_turns":  # in the notebook's terms: the limit is the cell's --max-turns
                n = stop.details.get("maxTurns")
                words = (
                    f"Stopped after {n} {'turn' if n == 1 else 'turns'} (--max-turns {n}) before the model gave an "
                    "answer; run the cell again with a higher --max-turns or ask a narrower question."
                )
            details = {"reason": stop.reason, **stop.details}
            notices.append(CustomMessage(custom_type=RUN_STOPPED, content=words, display=True, details=details))
        for notice in notices:
            self.record(notice)  # the run is over: written to the session at once (record() reports the change)
            if on_event is not None:
                on_event(MessageEndEvent(notice))
        if not notices:
            self._changed()
        return self.messages[start:], interrupted

    def run_bash(
        self, command: str, *, exclude: bool = False, timeout: float | None = None, on_event: Any = None
    ) -> tuple[BashExecutionMessage, bool]:
        """Run a user shell command and record it; return (message, interrupted)."""
        from ..ai import AbortController
        from .bash import run_user_bash
        from .runner import run_blocking

        controller = AbortController()

        async def go(post: Any) -> BashExecutionMessage:
            return await run_user_bash(
                command, cwd=self.cwd, exclude_from_context=exclude, timeout=timeout,
                signal=controller.signal, post=post, mask_secrets=self.config.mask_secrets,
            )  # fmt: skip

        message, interrupted = run_blocking(go, on_event=on_event, on_interrupt=lambda _: controller.abort())
        assert message is not None
        self.record(message)
        return message, interrupted

    # --- session management -----------------------------------------------------------------------------

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
        """A new, empty session file for this notebook."""
        path = session_path_for(self.shell, self.config, fresh=True, cwd=self.cwd)
        path.parent.mkdir(parents=True, exist_ok=True)
        return SessionFile.create(path, cwd=self.cwd), None

    def switch_to(self, file: SessionFile, note: str | None = None) -> None:
        """Record into another session file from now on (refused while this one holds unwritten messages)."""
        with self.writer.lock:
            self._release_deferred()
            carried: list[Any] = []
            if self.writer.unsaved and not self.writer.retry():
                if not isinstance(self.writer.error, SessionError):
                    self.check_saved()  # the file may take them later (disk full): do not leave it behind
                carried = list(self.writer.unsaved)  # it never will (closed, read-only): they go to the new one
            self.file.close()
            self.file, self.note = file, note
            self.writer = SessionWriter(file, self._written)
            self.writer.unsaved.extend(carried)
            self.writer.retry()
        remember_session(self.shell, self.config, file.path)
        self.branches = BranchPlanner(file)
        self.reload()
        self._recover()

    def describe(self) -> str:
        """File, entry count and leaf, for ``%agent_session``."""
        leaf = self.file.leaf_id or "(empty)"
        lines = [
            f"session file: {self.file.path}",
            f"entries: {len(self.file.entries)}   messages on this branch: {len(self.messages)}",
            f"leaf: {leaf}",
        ]
        if self.file.session_name:
            lines.insert(1, f"name: {self.file.session_name}")
        if self.note:
            lines.append(f"note: {self.note}")
        lines += [f"warning: {warning}" for warning in self.file.warnings]
        return "\n".join(lines)

    def entry_lines(self, limit: int = 50) -> list[str]:
        """The newest entries of the file, one line each (for ``%agent_session list``)."""
        out = []
        for entry in self.file.entries[-limit:]:
            label = self.file.get_label(entry.id)
            what = entry.type
            if isinstance(entry, SessionMessageEntry):
                what = f"message {entry.role}"
                text = _preview(to_pi_json(entry.message))
                what += f": {text}" if text else ""
            mark = "*" if entry.id == self.file.leaf_id else " "
            out.append(f"{mark} {entry.id}  {what}" + (f"  [{label}]" if label else ""))
        return out


class _Then:
    """The user's transform_context, then the notebook's own stages (``then``), as one stage for the agent."""

    def __init__(self, first: Any, then: Any):
        self.first, self.then = first, then

    async def __call__(self, messages: Sequence[Any], signal: Any = None) -> list[Any]:
        out = self.first(list(messages), signal) if takes_signal(self.first) else self.first(list(messages))
        out = await out if inspect.isawaitable(out) else out
        if isinstance(out, (str, bytes, dict)) or not isinstance(out, Sequence):
            raise TypeError(f"your transform_context returned {type(out).__name__}, not a list of messages")
        return await self.then([as_agent_message(m) for m in out], signal)


def _preview(data: dict[str, Any], width: int = 70) -> str:
    content = data.get("content", data.get("command", data.get("summary", "")))
    if isinstance(content, list):
        content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
    text = re.sub(r"\s+", " ", str(content)).strip()
    return text if len(text) <= width else text[: width - 1] + "…"
