"""``AgentSession``: one agent conversation kept in a Pi session file (Pi: ``core/agent-session.ts``).

It owns what every front end shares: the session file and how messages reach it (:mod:`.session_writer`), the
:class:`~pi_notebook.agent_core.Agent`, the choice of model, tools and system prompt (:mod:`.run_policy`), the one
context pipeline (:mod:`.context_pipeline`: your ``transform_context``, the fitter, compaction), recovery after a
failed call, forks when a run is repeated (:mod:`.branching`), and the recording of runs and shell commands with
secrets masked. A front end (Pi's "modes"; here the notebook) adds only its own I/O. No IPython here::

    import asyncio
    from pi_notebook.coding_agent import AgentSession

    with AgentSession.open("sessions") as session:  # the folder's newest session, or a new one
        asyncio.run(session.bash("ls"))  # recorded as a bashExecution message the model sees next
        asyncio.run(session.prompt("Which of these files is the largest?"))
        print([m.role for m in session.messages])

:meth:`AgentSession.preview` is the next request, computed by the same code a run uses (nothing is compacted,
written or sent); every view of "what the LLM gets" reads it.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent_core import convert_to_llm, prepare_llm_messages
from ..ai import Model, get_model
from .branching import BranchPlanner, Fork
from .masking import MaskedReply, SecretsMaskedWarning, mask_message, masked_names, masking_note, secrets_in_file
from .messages import CustomMessage
from .run_policy import RunPlan, SessionSettings, Settings, compaction_settings, plan_run, resolve_model
from .session import SessionError, SessionFile
from .session_context import covered_by_summaries, entry_lines
from .session_entries import CompactionEntry
from .session_events import CompactionEvent, SessionNote
from .session_writer import SessionWriter

if TYPE_CHECKING:  # the loop, compaction, tools and asyncio load at the first run, not with the session
    from ..agent_core import Agent, CallPreview
    from .approval import ApprovalGate, ApprovalPolicy, Approver
    from .branch_summary import BranchSummary
    from .context_pipeline import ContextPipeline
    from .messages import BashExecutionMessage
    from .secrets import SecretMasker

NOTICE = "pi_notebook.notice"
"""customType of a one-time notice about the context (a message the model sees only part of)."""
RUN_STOPPED = "pi_notebook.run_stopped"
"""``customType`` of the notice recorded when the loop stopped a run before the model answered."""


@dataclass
class SessionPreview:
    """The next request of a session: :class:`~pi_notebook.agent_core.CallPreview` and what the session knows."""

    call: CallPreview
    plan: RunPlan
    compaction: dict[str, Any] = field(default_factory=dict)
    """Where the next compaction would cut (:func:`~pi_notebook.coding_agent.context_pipeline.compaction_state`)."""
    covered: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """A compaction summary's text → the messages it replaced (Pi JSON), read from the session file."""
    notes: list[str] = field(default_factory=list)
    system_tokens: int = 0
    """Estimated tokens of the system prompt (chars / 4)."""
    tools_tokens: int = 0
    """Estimated tokens of the tool definitions."""

    def request(self, model: Model | None = None) -> dict[str, Any]:
        """The body ``model``'s provider (default: the run's) would be sent."""
        return self.call.request(model)


class AgentSession:
    """A conversation in a session file: what every front end runs, records and inspects."""

    first_run_note = "no run yet: showing the defaults of the next run"
    """What a preview says before the first run (a front end names its own command)."""
    approval_fix = (
        "To allow it, set approve='none' (or leave this tool out of approve) in the session's settings, or give "
        "the session an approver (session.approver)."
    )
    """What a call refused for want of an approver says to do (a front end names its own command)."""

    def __init__(
        self, file: SessionFile, settings: Settings | None = None, *, cwd: str | None = None, note: str | None = None
    ):
        self.file = file
        self.settings: Settings = settings if settings is not None else SessionSettings()
        self.cwd = cwd or os.getcwd()
        self.note = note
        self._agent: Agent | None = None  # made on first use (`agent`): loading a session does not need it
        self._history: list[Any] = []  # the history until then
        self._agent_lock = threading.Lock()
        self.writer = SessionWriter(file)
        self._running = False  # a run is streaming: what is recorded now joins the history after it (Pi's rule)
        self._listener: Callable[[Any], Any] | None = None  # the current run's on_event
        self.pipeline: ContextPipeline | None = None
        self._preview_pipeline: ContextPipeline | None = None  # the last preview's, when the runs' did not suit
        self._imageless: Any = None  # the converter for models that read no images (one, kept: see _convert_for)
        self._choices: dict[str, Any] = {}  # the last run's own choices: the next preview's
        self._notices: list[str] = []  # said during a run, recorded after it
        self._change_listeners: list[Callable[[], Any]] = []
        self._held = 0
        self._change_pending = False
        self._transform: Any = None
        self._run_masker: SecretMasker | None = None  # the secrets a run masks (asked once, when it starts)
        self._masked_in: dict[str, set[str]] = {}  # where a run masked what: said once when it ends
        self.branches = BranchPlanner(file)
        self.approver: Approver | None = None
        """Asked before a call of a tool the ``approve`` setting names (:mod:`.approval`); ``None``: such a call
        is refused at once, with one result saying how to allow it."""
        self._gate: ApprovalGate | None = None  # the agent's before_tool_call, made with the agent
        from .plugins import load_plugins

        load_plugins()  # the installed plugins' roles and tools, before the history is read (once per process)
        self.reload()
        self._recover()

    @classmethod
    def open(cls, where: str | os.PathLike[str], settings: Settings | None = None, *, cwd: str | None = None) -> Any:
        """Continue a session or start one. ``where`` is a session file (created if missing) or a folder: its newest
        session, else a new file named as Pi names them. Another process's session raises ``SessionLockedError``."""
        from .pi_sessions import pi_session_file_name

        path = Path(where).expanduser()
        if path.suffix != ".jsonl":
            found = [p for p in path.glob("*.jsonl") if p.is_file()] if path.is_dir() else []
            path = max(found, key=lambda p: p.stat().st_mtime) if found else path / pi_session_file_name()
        path.parent.mkdir(parents=True, exist_ok=True)
        cwd = cwd or os.getcwd()
        existing = path.exists() and path.stat().st_size > 0
        return cls(SessionFile.open(path) if existing else SessionFile.create(path, cwd=cwd), settings, cwd=cwd)

    # --- history --------------------------------------------------------------------------------------

    def on_change(self, listener: Callable[[], Any]) -> Callable[[], None]:
        """Call ``listener()`` whenever the history changed (a run or a command ended, a message was recorded,
        another session or branch was opened). Returns ``unsubscribe``."""
        self._change_listeners.append(listener)
        return lambda: self._change_listeners.remove(listener) if listener in self._change_listeners else None

    def _changed(self) -> None:
        if self._held:
            self._change_pending = True
            return
        for listener in list(self._change_listeners):
            listener()

    @contextmanager
    def holding_changes(self) -> Iterator[None]:
        """Tell the change listeners once, when the block ends, on the thread that entered it (a front end whose
        views live on one thread runs the session's work elsewhere inside this)."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held and self._change_pending:
                self._change_pending = False
                self._changed()

    @property
    def agent(self) -> Agent:
        """The session's :class:`~pi_notebook.agent_core.Agent`, holding the history; made on first use."""
        if self._agent is None:
            with self._agent_lock:
                if self._agent is None:
                    from ..agent_core import Agent  # the loop, events and asyncio: not needed to load a session

                    agent = Agent(None, system_prompt=self.settings.system_prompt)
                    agent.replace_messages(self._history)
                    agent.subscribe(self._on_event)
                    provider_stream = agent.stream_fn
                    agent.stream_fn = lambda *call: self._masked_stream(provider_stream, *call)
                    self.approvals.install(agent)
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

    @property
    def compactor(self) -> Any:
        """The compaction the runs use (``None`` before the first run)."""
        return self.pipeline.compactor if self.pipeline is not None else None

    @property
    def fitter(self) -> Any:
        """The stage that cuts oversized messages for the LLM (``None`` before the first run)."""
        return self.pipeline.fitter if self.pipeline is not None else None

    def _append(self, message: Any) -> None:
        if self._agent is None:
            self._history.append(message)
        else:
            self._agent.append_message(message)

    def llm_messages(self) -> list[Any]:
        """The history through Pi's two stages: your ``transform_context``, then ``convert_to_llm``. The session's
        own stages (fitting, compaction's view) are not applied: the next request's Messages are
        ``preview().call.llm_messages``."""
        custom = self._agent.convert_to_llm if self._agent is not None else None
        return prepare_llm_messages(self.messages, self._transform, custom or convert_to_llm)

    def reload(self) -> None:
        """Rebuild the agent's history from the session file at its leaf."""
        with self.writer.lock:
            context = self.file.build_session_context()  # types the messages of the context, and only those
            messages = list(context.messages)
            masker = self.masker()
            if secrets_in_file(self.file.path, masker):  # a file written before masking, or by Pi: not as stored
                messages = [mask_message(m, masker)[0] for m in messages]
            self.writer.read_back(messages, context.entry_ids)
            if self._agent is None:
                self._history = messages
            else:
                self._agent.replace_messages(messages)
            self._context_model = context.model
            self._context_thinking = context.thinking_level
        self._changed()

    def record(self, message: Any) -> None:
        """Add any registered AgentMessage to the session (stored, shown, and sent per its converter), from any
        thread. While a run streams it joins the history when the run ends, as Pi queues it (a tool call and
        its result stay together), and waits in a journal meanwhile, so a crash does not lose it. A message the
        file refuses stays in memory (:meth:`check_saved` says so). Known secrets in it are masked first."""
        message, names = mask_message(message, self.masker())
        if names and self._listener is not None:
            self._masked_in.setdefault("a recorded message", set()).update(names)
        elif names:
            warnings.warn(masking_note({"the recorded message": set(names)}), SecretsMaskedWarning, stacklevel=2)
        with self.writer.lock:
            if self._running or self.is_streaming:
                self.writer.defer(message)
                return
            self._release_deferred()
            self.writer.write(message)
            self._append(message)
        self._changed()

    def check_saved(self) -> None:
        """Raise :class:`~.session_writer.SessionWriteError` (one line) if some messages are not in the file yet."""
        self.writer.check()

    def _release_deferred(self) -> None:
        """Messages recorded during the run that just ended: into the file and the history, in their order."""
        with self.writer.lock:
            for message in self.writer.release():
                self._append(message)

    def _recover(self) -> None:
        """Commands a crashed process recorded during a run and never wrote: into the history now."""
        recovered = self.writer.recover()
        for message in recovered:
            self._append(message)
        if recovered:
            n = len(recovered)
            self.note = (
                f"recovered {n} message{'s' if n != 1 else ''} recorded during a run the last process did not finish"
            )
            self._changed()

    def _on_event(self, event: Any) -> None:
        if event.type == "message_end":
            if getattr(event.message, "role", None) == "toolResult" and self._gate is not None:
                self._gate.annotate(event.message)  # the approval decision, in its details, before it is stored
            self.writer.write(event.message)  # a refused write keeps it in memory; check_saved() says so

    # --- the pipeline ---------------------------------------------------------------------------------

    @property
    def transform_context(self) -> Any:
        """Your own ``transform_context(messages)`` (sync or async; Pi's ``(messages, signal)`` too), or ``None``.

        It runs first in the session's pipeline, so fitting and compaction see what it returns. Setting it takes
        effect at the next LLM call and tells the change listeners (open views); nothing stored changes."""
        return self._transform

    @transform_context.setter
    def transform_context(self, fn: Any) -> None:
        if fn is not None and not callable(fn):
            raise TypeError(f"transform_context must be callable or None, not {type(fn).__name__}")
        self._transform = fn
        for pipeline in (self.pipeline, self._preview_pipeline):
            if pipeline is not None:
                pipeline.user = fn
        if self.pipeline is None and self._agent is not None:
            self._agent.transform_context = fn
        self._changed()

    def resolve_model(self, spec: str | None = None) -> Model:
        """The model ``spec`` (``provider/id``) names, else the settings' default, else the default by keys."""
        return resolve_model(self.settings, spec)

    @property
    def approvals(self) -> ApprovalGate:
        """The agent's ``before_tool_call`` hook that asks :attr:`approver` first (:mod:`.approval`); its
        ``always`` holds the tools approved for the rest of the session."""
        if self._gate is None:
            from .approval import ApprovalGate

            self._gate = ApprovalGate(
                policy=lambda: self.approval_policy(self.agent.state.model), approver=lambda: self.approver,
                cwd=lambda: self.cwd, fix=lambda: self.approval_fix, mask=self._mask_text, say=self._say,
            )  # fmt: skip
        return self._gate

    def approval_policy(self, model: Model | None = None) -> ApprovalPolicy:
        """Which tools ask first when ``model`` (default: the next run's) runs under the ``approve`` setting, and
        why (:func:`~.approval.approval_policy`)."""
        from .approval import approval_policy

        return approval_policy(self.settings.approve, model or self.next_plan().model)

    def _mask_text(self, text: str) -> str:
        masker = self._run_masker if self._running else self.masker()
        return masker.mask(text)[0] if masker else text

    def compaction_settings(self, model: Model) -> Any:
        """The compaction settings a run with ``model`` uses: the session's, scaled to a small window."""
        return compaction_settings(self.settings, model)

    def plan_run(self, model: Model | str | None = None, **choices: Any) -> RunPlan:
        """The plan of a run with these choices (``tools``, ``system_prompt``, ``thinking``, ``max_turns``,
        ``prompt``): what it would be set up with, by :func:`~pi_notebook.coding_agent.run_policy.plan_run`."""
        chosen = model if isinstance(model, Model) else self.resolve_model(model)
        return plan_run(self.settings, chosen, **choices)

    def next_plan(self) -> RunPlan:
        """The plan of the next run: the last run's own choices (its model, tools...) over the current settings;
        before any run, the settings' defaults. Its prompt is not known yet."""
        return self.plan_run(**self._choices)

    def _pipeline_for(self, plan: RunPlan, *, keep: bool) -> ContextPipeline:
        """The session's pipeline if it suits ``plan`` (compaction state is kept across runs), else a new one: a
        run's becomes the session's (``keep``); a preview's is kept aside for the next preview, so a view that
        previews after every change does not start afresh (nothing in it has acted: a run may adopt it)."""
        from .context_pipeline import ContextPipeline

        settings = self.compaction_settings(plan.model)
        for pipeline in (self.pipeline, self._preview_pipeline):
            if pipeline is not None and pipeline.fits(plan.model, settings) and pipeline.small == plan.small:
                break
        else:
            pipeline = ContextPipeline(
                plan.model, settings, small=plan.small, user=self._transform, on_compaction=self._on_compaction,
                on_oversized=self._on_oversized, previous_details=self._last_details(),
            )  # fmt: skip
        if keep:
            self.pipeline = pipeline
        elif pipeline is not self.pipeline:
            self._preview_pipeline = pipeline
        return pipeline

    def _configure(self, agent: Agent, plan: RunPlan, pipeline: ContextPipeline) -> None:
        """Set ``agent`` up for ``plan``: the run and every preview go through here, so they cannot differ."""
        agent.set_model(plan.model)
        agent.set_system_prompt(plan.system_prompt)
        agent.set_tools(plan.tools(self.cwd))
        agent.set_thinking_level(plan.thinking)  # type: ignore[arg-type]
        agent.max_turns = plan.max_turns
        agent.loop_guard = plan.loop_guard()
        agent.stream_options["session_id"] = self.file.session_id  # prompt caching per session, as Pi does
        if agent.transform_context is not pipeline:
            agent.transform_context = pipeline
        convert = self._convert_for(plan.model, agent.convert_to_llm)
        if agent.convert_to_llm is not convert:
            agent.convert_to_llm = convert

    def _convert_for(self, model: Model, current: Callable[..., Any]) -> Callable[..., Any]:
        """The converter for ``model`` around the one in use (yours, or Pi's): the same object every time for the
        same converter, so a view that previews after every change can tell nothing changed."""
        from .context_pipeline import ImagelessConvert, convert_for

        base = current.base if isinstance(current, ImagelessConvert) else current
        wanted = convert_for(model, base)
        if not isinstance(wanted, ImagelessConvert):
            return wanted
        if self._imageless is None or self._imageless.base is not base:
            self._imageless = wanted
        return self._imageless

    def preview(
        self, prompt: str | None = None, *, plan: RunPlan | None = None, messages: Sequence[Any] | None = None
    ) -> SessionPreview:
        """The next request (:meth:`next_plan`, or ``plan``), computed as a run computes it and without acting:
        nothing is compacted, written, remembered or sent. With ``prompt``, the first request of a run on it;
        without, that request minus the prompt. ``messages`` replaces the history (a what-if)."""
        from ..agent_core import Agent
        from .context_pipeline import overhead_tokens

        plan = plan or self.next_plan()
        if prompt is not None:
            plan = dataclasses.replace(plan, prompt=prompt)
        pipeline = self._pipeline_for(plan, keep=False)
        agent = Agent(None, **(dict(self._agent.stream_options) if self._agent is not None else {}))
        if self._agent is not None:
            agent.convert_to_llm = self._agent.convert_to_llm
        self._configure(agent, plan, pipeline)
        history = self.messages if messages is None else list(messages)
        call = agent.preview(prompt, messages=history)
        notes = list(pipeline.last_preview.notes) if pipeline.last_preview is not None else []
        if not self._choices:
            notes.append(self.first_run_note)
        system, tools = overhead_tokens(call.context)
        first = history[0] if history else None
        summarised = getattr(first, "role", None) == "compactionSummary" or pipeline.compactor.summary_message
        covered = covered_by_summaries(self.file) if summarised else {}
        return SessionPreview(
            call=call, plan=plan, compaction=pipeline.compaction_state(call.messages), covered=covered, notes=notes,
            system_tokens=system, tools_tokens=tools,
        )  # fmt: skip

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
        """Store the compaction in the session file (Pi's ``compaction`` entry) and tell the run's listener."""
        self.file.append_compaction(
            result.summary, self.writer.entry_id_of(first_kept), result.tokens_before, result.details
        )
        if self._listener is not None:
            self._listener(CompactionEvent(summary))

    # --- running ----------------------------------------------------------------------------------------

    async def prompt(
        self,
        text: str,
        *,
        model: Model | str | None = None,
        tools: Sequence[str] | None = None,
        system_prompt: str | None = None,
        thinking: str | None = None,
        max_turns: int | None = None,
        anchor: str | None = None,
        on_event: Callable[[Any], Any] | None = None,
    ) -> list[Any]:
        """Run the agent on ``text`` until it is idle, recording every message as it completes; return the new
        messages. The choices override the settings for this run (and are what :meth:`preview` shows next).
        ``anchor`` names where the run comes from (a notebook cell): running it again forks the conversation
        from where it started, with a summary of the abandoned branch. ``on_event`` gets the agent's events,
        :class:`CompactionEvent` and :class:`SessionNote`.

        When the loop stopped the run before the model answered (``max_turns``, the loop guard), the reason is
        recorded as a Pi ``custom`` message (``customType`` :data:`RUN_STOPPED`, ``display=True``) and handed to
        ``on_event`` as a ``message_end``. It is deliberately not hidden from the LLM: Pi's ``custom`` role has no
        exclude flag, and the next run is better for knowing that the previous one was cut short and why."""
        from ..agent_core.events import MessageEndEvent
        from .recovery import run_with_recovery

        choices: dict[str, Any] = {
            "tools": tools,
            "system_prompt": system_prompt,
            "thinking": thinking,
            "max_turns": max_turns,
        }
        choices = {"model": model, **{k: v for k, v in choices.items() if v is not None}}
        plan = self.plan_run(prompt=text, **choices)
        self.approval_policy(plan.model)  # a wrong approve setting fails here, before anything is recorded
        self._listener = on_event
        self._masked_in = {}
        self._run_masker = self.masker()
        masked_text, hit = self._run_masker.mask(text) if self._run_masker else (text, False)
        if hit:
            self._masked_in["the prompt"] = set(masked_names(text, masked_text))
        unsubscribe = self.agent.subscribe(on_event) if on_event is not None else None
        try:
            await self._start_run(plan, anchor)
            self._choices = {**choices, "model": plan.model}
            start = len(self.messages)
            self._notices = []
            with self.writer.lock:
                self._running = True
            try:
                await run_with_recovery(self.agent, lambda: self.agent.prompt(masked_text), compactor=self.compactor)
            finally:
                with self.writer.lock:
                    self._running = False
                    self._release_deferred()
        finally:
            self._run_masker = None
            if unsubscribe is not None:
                unsubscribe()
        try:
            for notice in self._run_notices():
                self.record(notice)  # the run is over: written at once (record() reports the change)
                if on_event is not None:
                    on_event(MessageEndEvent(notice))
            if self._masked_in:
                self._say(masking_note(self._masked_in))
        finally:
            self._listener = None
        self._changed()
        return self.messages[start:]

    async def _start_run(self, plan: RunPlan, anchor: str | None) -> None:
        """Before a run: the deferred messages in, a fork if ``anchor`` ran before, the model and thinking level
        recorded if they changed (Pi's entries), and the agent set up for ``plan``."""
        self._release_deferred()
        fork = self.branches.fork_for(anchor)
        if fork is not None:
            summary = await self._branch_summary(fork, plan.model)
            # Through the writer, as every entry: after a backlog the file could not take yet, and kept with it.
            if self.writer.write_entry(lambda: self.branches.fork(fork, summary)):
                self.reload()
        if anchor:
            self.writer.write_entry(lambda: self.branches.mark(anchor))
        model = plan.model
        if self._context_model != {"provider": model.provider, "modelId": model.id}:
            self.writer.write_entry(lambda: self.file.append_model_change(model.provider, model.id))
            self._context_model = {"provider": model.provider, "modelId": model.id}
        if plan.thinking != self._context_thinking:
            self.writer.write_entry(lambda: self.file.append_thinking_level_change(plan.thinking))
            self._context_thinking = plan.thinking
        self._configure(self.agent, plan, self._pipeline_for(plan, keep=True))
        self.approvals.install(self.agent)  # still first, if a hook was set on the agent since

    async def _branch_summary(self, fork: Fork, model: Model) -> BranchSummary:
        """Pi's model-written branch summary when ``branch_summary_model`` is set (``same`` = the run's model);
        otherwise, or when that model fails, a summary written without a model."""
        from .branch_summary import BranchSummaryError, describe_branch, summarize_branch

        spec = self.settings.branch_summary_model
        if spec:
            try:
                written = await summarize_branch(
                    fork.abandoned, model if spec == "same" else get_model(spec), previous_details=fork.details
                )
                if written is not None:
                    return written
            except BranchSummaryError as e:
                self._say(f"{e}; the branch summary was written without a model")
        return describe_branch(fork.abandoned, fork.details)

    def masker(self) -> SecretMasker | None:
        """The secrets masked now: those the environment holds (:func:`~.secrets.known_secrets`); ``None`` when
        masking is off (``mask_secrets=False``) or no secret is known."""
        if not self.settings.mask_secrets:
            return None
        from .secrets import SecretMasker

        return SecretMasker.from_environment() or None

    def _masked_stream(self, provider_stream: Callable[..., Any], *call: Any) -> Any:
        """The provider's stream of one call, its replies masked (:class:`~.masking.MaskedReply`)."""
        inner = provider_stream(*call)
        masker = self._run_masker if self._running else self.masker()
        if not masker:
            return inner
        return MaskedReply(inner, masker, lambda names: self._masked_in.setdefault("a reply", set()).update(names))

    def _say(self, text: str) -> None:
        if self._listener is not None:
            self._listener(SessionNote(text))

    def _run_notices(self) -> list[CustomMessage]:
        """What the run leaves to say: each new notice once (across restarts too), and why the loop stopped it."""
        said = {m.content for m in self.messages if isinstance(m, CustomMessage) and m.custom_type == NOTICE}
        notices = [
            CustomMessage(custom_type=NOTICE, content=text, display=True)
            for text in dict.fromkeys(self._notices)
            if text not in said
        ]
        stop = self.agent.state.stop
        if stop is not None:
            details = {"reason": stop.reason, **stop.details}
            words = self.stop_text(stop)
            notices.append(CustomMessage(custom_type=RUN_STOPPED, content=words, display=True, details=details))
        return notices

    def stop_text(self, stop: Any) -> str:
        """The words recorded when the loop stopped a run (a front end names its own options)."""
        return stop.message

    def abort(self) -> None:
        """Stop the current run (thread-safe); what it said so far is kept."""
        if self._agent is not None:
            self._agent.abort()

    async def bash(
        self,
        command: str,
        *,
        exclude: bool = False,
        timeout: float | None = None,
        signal: Any = None,
        on_output: Callable[[Any], Any] | None = None,
    ) -> BashExecutionMessage:
        """Run a user's shell command in the session's folder and record it (Pi's ``!cmd``; ``exclude``: ``!!cmd``,
        shown and stored, never sent). Secrets are masked unless the settings say not to; ``on_output`` gets the
        live tail (:class:`~pi_notebook.coding_agent.user_bash.BashProgress`); ``signal`` stops it, recorded as
        cancelled."""
        from .user_bash import run_user_bash

        message = await run_user_bash(
            command, cwd=self.cwd, exclude_from_context=exclude, timeout=timeout, signal=signal,
            post=on_output or (lambda _item: None), mask_secrets=self.settings.mask_secrets,
        )  # fmt: skip
        self.record(message)
        return message

    # --- session management -----------------------------------------------------------------------------

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
            self.writer = SessionWriter(file)
            self.writer.unsaved.extend(carried)
            self.writer.retry()
        self.branches = BranchPlanner(file)
        self.pipeline = self._preview_pipeline = None  # another conversation: its own compaction state
        self.reload()
        self._recover()

    def close(self) -> None:
        """Close the session file (releasing its lock); what could not be written yet is said first."""
        try:
            self.check_saved()
        finally:
            self.file.close()

    def __enter__(self) -> AgentSession:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def describe(self) -> str:
        """File, entry count and leaf."""
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
        """The newest entries of the file, one line each."""
        return entry_lines(self.file, limit)
