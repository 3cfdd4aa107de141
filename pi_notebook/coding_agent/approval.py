"""Asking before a tool acts: which calls need a click, what the user is shown, and what the model is told.

Pi asks nothing before a tool runs. Here a session asks before a call of a tool its ``approve`` setting names:

* ``approve`` is a comma list of tool names, ``none``, or ``default``: the default names :data:`ACTING_TOOLS`
  (``python,bash,edit,write``: they run code or change files) for a model that acts for real (a cloud provider,
  Ollama, any server), and nothing for the offline ``local`` model (its default tools only read; a run that gives
  it more names them itself, with ``--tools``) nor for the scripted ``faux`` model (the user wrote every call it
  makes: tests and the teaching notebooks use it). :func:`approval_policy` says which applied, and why.
* Before such a call the session's :class:`Approver` gets an :class:`ApprovalRequest` showing what would happen
  (the command, the code, a unified diff for ``edit``/``write``: :mod:`.approval_preview`) and answers with a
  :class:`Decision`. "Always" approves the tool for the rest of the session (until ``approve`` changes).
* A denial is the tool result the model sees (an error: :data:`DENIED_TEXT` and the user's reason); with no
  approver, or one that cannot ask (a script, nbclient), the call is refused at once with one result saying how to
  allow it. The result's ``details["approval"]`` records the decision in the session file.

:class:`ApprovalGate` is the Agent's ``before_tool_call`` hook that does this (it blocks a call with a reason, as
the core's hook allows); :class:`~.agent_session.AgentSession` installs it. No IPython here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:  # the loop's types, asyncio and the diffing load with the first run, not with %agent_config
    from ..agent_core import BeforeToolCallResult, ToolCallContext
    from ..ai import Model
    from .approval_preview import Kind

__all__ = [
    "ACTING_TOOLS",
    "APPROVE_DEFAULT",
    "DENIED_TEXT",
    "STOPPED_TEXT",
    "ApprovalGate",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approver",
    "Decision",
    "approval_policy",
    "model_kind",
    "parse_approve",
]

APPROVE_DEFAULT = "default"
"""The ``approve`` setting that lets the model's kind decide (:func:`approval_policy`)."""
ACTING_TOOLS = ("python", "bash", "edit", "write")
"""The tools the default asks about for a model that acts for real: they run code or change files."""

DENIED_TEXT = "The user denied this call: it did not run."
STOPPED_TEXT = "The user stopped the run while this call waited for approval: it did not run."

ModelKind = Literal["scripted", "local", "real"]
Verdict = Literal["approve", "deny", "unanswered", "stopped"]


def model_kind(model: Model) -> ModelKind:
    """``scripted`` (the faux provider: the user wrote its calls), ``local`` (the offline in-process model) or
    ``real`` (everything else: a cloud provider, Ollama, any server; it chooses its own calls)."""
    if model.provider == "faux" or model.api.split(":", 1)[0] == "faux":
        return "scripted"
    if model.api == "local":
        return "local"
    return "real"


def parse_approve(spec: str) -> list[str] | None:
    """The tools the ``approve`` setting names: ``None`` for ``default``, ``[]`` for ``none``, else the names (each
    a registered tool); ``ValueError`` naming the choices for anything else."""
    from .run_policy import parse_tools

    spec = spec.strip()
    if spec == APPROVE_DEFAULT:
        return None
    if not spec:
        raise ValueError("approve: name the tools that ask first (e.g. python,bash,edit,write), none or default")
    if "default" in (n.strip() for n in spec.split(",")) and spec != APPROVE_DEFAULT:
        raise ValueError("approve: 'default' stands alone; or name the tools, e.g. python,bash,edit,write")
    try:
        return parse_tools(spec)
    except ValueError as e:
        raise ValueError(f"approve: {e}") from None


@dataclass(frozen=True)
class ApprovalPolicy:
    """Which tools ask first in a run, and why (what ``%agent_config`` shows)."""

    tools: tuple[str, ...]
    setting: str
    """The ``approve`` setting it comes from."""
    why: str
    """``"set"``, or for the default the kind of model it applied to."""

    def needs(self, tool: str) -> bool:
        return tool in self.tools

    def describe(self) -> str:
        """``python,bash,edit,write (the default for anthropic/..., a model that acts for real)``."""
        names = ",".join(self.tools) or "none"
        return names if self.why == "set" else f"{names} ({self.why})"


_DEFAULT_WHY = {
    "real": "a model that acts for real",
    "local": "the offline model: its default tools only read",
    "scripted": "a scripted model: you wrote its calls",
}


def approval_policy(setting: str, model: Model) -> ApprovalPolicy:
    """The tools that ask first when ``model`` runs under the ``approve`` setting ``setting``."""
    names = parse_approve(setting)
    if names is not None:
        return ApprovalPolicy(tuple(names), setting, "set")
    kind = model_kind(model)
    tools = ACTING_TOOLS if kind == "real" else ()
    return ApprovalPolicy(tools, setting, f"the default for {model.provider}/{model.id}, {_DEFAULT_WHY[kind]}")


@dataclass(frozen=True)
class ApprovalRequest:
    """What the user is asked about: one tool call and what it would do."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    """The call's arguments, validated (known secrets masked)."""
    kind: Kind
    """How :attr:`text` reads: ``command``, ``code``, ``diff`` or ``arguments``."""
    text: str
    """The command (bash), the code (python), the unified diff (edit, write) or the arguments as JSON."""
    path: str | None = None
    """The file an ``edit`` or ``write`` changes."""
    note: str = ""
    """What :attr:`text` does not say (the edit would fail; the file would be created)."""

    @property
    def summary(self) -> str:
        """One line naming the call: ``bash `ls -l```, ``edit notes.txt``."""
        if self.kind in ("command", "code"):
            first = self.text.strip().split("\n", 1)[0]
            more = " ..." if len(first) > 80 or "\n" in self.text.strip() else ""
            return f"{self.tool_name} `{first[:80]}{more}`"
        return f"{self.tool_name} {self.path}" if self.path else self.tool_name


@dataclass(frozen=True)
class Decision:
    """An approver's answer."""

    verdict: Verdict
    """``approve``, ``deny``; ``unanswered`` (nothing could ask: :attr:`reason` says why) or ``stopped`` (the
    user stopped the run while it waited)."""
    always: bool = False
    """With ``approve``: approve this tool's later calls too, for the rest of the session."""
    reason: str = ""
    """Why (a denial's reason is passed on to the model)."""

    @classmethod
    def approve(cls, *, always: bool = False) -> Decision:
        return cls("approve", always=always)

    @classmethod
    def deny(cls, reason: str = "") -> Decision:
        return cls("deny", reason=reason)


class Approver(Protocol):
    """Asks the user about a tool call (a front end: the notebook shows a prompt with buttons)."""

    async def ask(self, request: ApprovalRequest) -> Decision: ...


_RECORDED = {"approve": "approved", "deny": "denied", "unanswered": "unanswered", "stopped": "stopped"}


@dataclass
class ApprovalGate:
    """The Agent's ``before_tool_call`` hook of a session: lets a call through, or blocks it with the text the
    model reads. ``policy()`` is the run's :class:`ApprovalPolicy`, ``approver()`` who is asked (``None``: nobody,
    and a call that needs approval is refused at once), ``cwd()`` where the tools work, ``fix()`` what a refusal
    says to do (a front end's words), ``mask(text)`` masks known secrets, ``say(text)`` tells the run's listener
    (one line, for the user)."""

    policy: Callable[[], ApprovalPolicy]
    approver: Callable[[], Approver | None]
    cwd: Callable[[], str]
    fix: Callable[[], str]
    mask: Callable[[str], str] = lambda text: text
    say: Callable[[str], None] = lambda text: None
    then: Callable[..., Any] | None = None
    """A ``before_tool_call`` hook set on the agent by someone else: it runs after an approval."""
    always: dict[str, str] = field(default_factory=dict)
    """Tool name → the ``approve`` setting under which the user said "always" (a new setting asks again)."""
    _records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def install(self, agent: Any) -> None:
        """Make this the agent's ``before_tool_call`` (a hook found there runs after it)."""
        if agent.before_tool_call is not self:
            self.then = agent.before_tool_call
            agent.before_tool_call = self

    async def __call__(self, context: ToolCallContext, signal: Any = None) -> BeforeToolCallResult | None:
        from ..agent_core import BeforeToolCallResult

        verdict = await self._decide(context, signal)
        if verdict is not None:
            return BeforeToolCallResult(block=True, reason=verdict)
        if self.then is not None:
            result = self.then(context, signal)
            return await result if inspect.isawaitable(result) else result
        return None

    async def _decide(self, context: ToolCallContext, signal: Any) -> str | None:
        """``None`` to let the call run, else the text of its result."""
        call = context.tool_call
        policy = self.policy()
        if not policy.needs(call.name):
            return None
        if self.always.get(call.name) == policy.setting:
            self._records[call.id] = {"decision": "approved", "asked": False, "always": True}
            return None
        if signal is not None and signal.is_set():
            return self._refuse(call, Decision("stopped"), None)
        approver = self.approver()
        if approver is None:
            return self._refuse(call, Decision("unanswered", reason="no approver is set"), None)
        import asyncio

        from .approval_preview import Preview, preview_call

        try:
            preview = await asyncio.to_thread(preview_call, call.name, context.args, self.cwd())
        except Exception as e:  # still asked, with the arguments: a preview that fails must not decide
            arguments = preview_call("", context.args, self.cwd()).text
            preview = Preview("arguments", arguments, note=f"what it would do could not be worked out: {e}")
        request = ApprovalRequest(
            tool_call_id=call.id, tool_name=call.name, args=context.args, kind=preview.kind,
            text=self.mask(preview.text), path=preview.path, note=self.mask(preview.note),
        )  # fmt: skip
        decision = await self._ask(approver, request, signal)
        if decision.verdict != "approve":
            return self._refuse(call, decision, request)
        if decision.always:
            self.always[call.name] = policy.setting
        self._records[call.id] = {"decision": "approved", "asked": True, "always": decision.always}
        also = f" and every later {call.name} call this session" if decision.always else ""
        self.say(f"you approved {request.summary}{also}")
        return None

    @staticmethod
    async def _ask(approver: Approver, request: ApprovalRequest, signal: Any) -> Decision:
        """The approver's answer; the run being stopped meanwhile (``signal``) is ``stopped``, an approver that
        fails is ``unanswered`` (the call does not run)."""
        import asyncio

        from ..ai import AbortSignal

        asking = asyncio.ensure_future(approver.ask(request))
        stopped = asyncio.ensure_future(signal.wait()) if isinstance(signal, AbortSignal) else None
        try:
            await asyncio.wait([f for f in (asking, stopped) if f is not None], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for future in (asking, stopped):
                if future is not None and not future.done():
                    future.cancel()  # an approver still asking is told (CancelledError) and gives up
        if not asking.done() or asking.cancelled():
            return Decision("stopped")
        error = asking.exception()
        if error is not None:
            return Decision("unanswered", reason=f"the approval prompt failed: {str(error) or type(error).__name__}")
        decision = asking.result()
        if not isinstance(decision, Decision):
            return Decision("unanswered", reason=f"the approver answered {decision!r}, not a Decision")
        return decision

    def _refuse(self, call: Any, decision: Decision, request: ApprovalRequest | None) -> str:
        record: dict[str, Any] = {"decision": _RECORDED[decision.verdict], "asked": request is not None}
        if decision.reason:
            record["reason"] = decision.reason
        self._records[call.id] = record
        summary = request.summary if request is not None else call.name
        if decision.verdict == "deny":
            said = f": {decision.reason}" if decision.reason else ""
            self.say(f"you denied {summary}{said}")
            return DENIED_TEXT + (f" Their reason: {decision.reason}" if decision.reason else "")
        if decision.verdict == "stopped":
            if request is not None:
                self.say(f"the stop button ended the run while {summary} waited for approval")
            return STOPPED_TEXT
        why = decision.reason or "nothing answered"
        self.say(f"{summary} did not run: it needs approval, and nothing here can approve it ({why})")
        return f"This {call.name} call needs approval, and nothing here can approve it ({why}): it did not run. " + (
            self.fix()
        )

    def annotate(self, message: Any) -> None:
        """Record the decision about a call in its tool result's ``details["approval"]`` (kept in the session
        file, never sent); called as the result is finished."""
        record = self._records.pop(getattr(message, "tool_call_id", ""), None)
        if record is None:
            return
        details = message.details
        if details is None or isinstance(details, dict):
            message.details = {**(details or {}), "approval": record}
