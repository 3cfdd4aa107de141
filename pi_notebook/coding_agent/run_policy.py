"""Which model, tools and system prompt a run gets: the session's settings, a run's own choices, and the policy
for small models (Pi: the model, tool and prompt choice of ``AgentSession``).

A run's choices (a model, ``tools``, a system prompt, a thinking level, a turn limit) win over the settings; what
is left is taken from the settings, except that a small in-process model (api ``local``) gets its own short prompt
and read-only tools while the settings hold the defaults: each token of a long prompt costs its small window, and
each tool listed is one more way for a 135M model to go wrong. The default tools are Pi's and those an app
registered with ``default=True`` (:func:`default_tools`: the notebook app adds its own tools so).
:func:`plan_run` decides; the run and every preview
of it apply the same :class:`RunPlan`, so a view cannot show other tools or another prompt than the run sends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..ai import Model, default_model, get_model

if TYPE_CHECKING:
    from ..agent_core import AgentTool
    from .compaction import CompactionSettings

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
DEFAULT_TOOLS = "read,bash,edit,write"  # Pi's default active tools

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant working inside a Jupyter notebook. The user may run shell commands; you "
    "see their output as messages that start with 'Ran'. Use the tools you are given to read files, run "
    "commands and edit files in the notebook's working directory. Be concise."
)

LOCAL_TOOLS = "read,ls"
"""Pi's tools a small in-process model gets unless a run or the settings say otherwise: read-only, and few (and
the read-only tools an app registered as defaults: :func:`default_tools`)."""

LOCAL_SYSTEM_PROMPT = "You are a helpful assistant in a Jupyter notebook. Answer briefly and plainly."
"""The system prompt for small in-process models (when the default prompt is in use): short, because every
token of it costs a small context window, and a long prompt distracts a small model more than it helps."""

SMALL_MODEL_GUARD = {"min_repeats": 3, "min_repeated_chars": 120}
"""The loop guard's settings for a small model (``LoopGuardSettings``): a tail repeated 3 times over 120
characters is already degenerate in its short answers."""

DEFAULT_WINDOW = 128_000
"""The context window assumed for a model that does not say."""


class Settings(Protocol):
    """What a session reads of its settings (:class:`SessionSettings`, or the notebook's ``PiNotebook``)."""

    default_model: str
    tools: str
    system_prompt: str
    thinking: str
    max_turns: int
    compaction: bool
    reserve_tokens: int
    keep_recent_tokens: int
    branch_summary_model: str
    mask_secrets: bool
    approve: str


@dataclass
class SessionSettings:
    """The settings of an :class:`~pi_notebook.coding_agent.agent_session.AgentSession` outside a notebook."""

    default_model: str = ""
    """``provider/id``; empty: Pi's default model of the first provider whose key is set, else the offline one."""
    tools: str = DEFAULT_TOOLS
    """Comma-separated tool names, or ``none``."""
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    thinking: str = "off"
    max_turns: int = 20
    """Most LLM calls in one run; 0 = no limit."""
    compaction: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000
    branch_summary_model: str = ""
    """Writes the summary of an abandoned branch: ``provider/id``, ``same`` (the run's model) or empty (no model)."""
    mask_secrets: bool = True
    approve: str = "default"
    """The tools whose calls wait for the user's approval: comma-separated names, ``none``, or ``default`` (by the
    model's kind: :func:`~pi_notebook.coding_agent.approval.approval_policy`)."""


def parse_tools(spec: str) -> list[str]:
    """``"read,bash"`` → ``["read", "bash"]``; ``"none"`` or ``""`` → ``[]``; a name no tool is registered under
    (:func:`~pi_notebook.coding_agent.tools.register_tool`): ValueError naming the choices."""
    from .tools import tool_names

    names = [n.strip() for n in spec.split(",") if n.strip()]
    if names in ([], ["none"]):
        return []
    known = tool_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown tool(s) {', '.join(unknown)}; choose from {', '.join(known)} or none")
    return list(dict.fromkeys(names))  # a name given twice is one tool (providers refuse two of one name)


def default_tools(*, small: bool = False) -> str:
    """The tools a run gets while the settings hold the defaults: Pi's (:data:`DEFAULT_TOOLS`; for a small model
    :data:`LOCAL_TOOLS`), then each tool an app registered with ``default=True`` (for a small model, only those
    that are also read-only), in the order of registration."""
    from .tools import registered_tools

    names = parse_tools(LOCAL_TOOLS if small else DEFAULT_TOOLS)
    names += [t.name for t in registered_tools() if t.default and (t.read_only or not small) and t.name not in names]
    return ",".join(names)


def holds_default_tools(spec: str) -> bool:
    """Whether the tools setting ``spec`` is a default: Pi's (:data:`DEFAULT_TOOLS`) or the app's
    (:func:`default_tools`), which a small model trades for its own."""
    return parse_tools(spec) in (parse_tools(DEFAULT_TOOLS), parse_tools(default_tools()))


def resolve_model(settings: Settings, spec: str | None = None) -> Model:
    """The model ``spec`` names, else the settings' default model, else the default by keys (the offline one last)."""
    spec = spec or settings.default_model
    return get_model(spec) if spec else default_model()


def is_small(model: Model) -> bool:
    """A small in-process model, which gets the small-model policy."""
    return model.api == "local"


@dataclass(frozen=True)
class RunPlan:
    """Everything a run is set up with: the same plan gives the same request."""

    model: Model
    tool_names: tuple[str, ...]
    system_prompt: str
    thinking: str
    max_turns: int | None
    """``None``: no limit."""
    prompt: str = ""
    """The prompt, which a small model's tools read for the paths it names (``""``: a prompt not known yet)."""
    mask_secrets: bool = True

    @property
    def small(self) -> bool:
        return is_small(self.model)

    def tools(self, cwd: str) -> list[AgentTool]:
        """The tools, working in ``cwd``: a small model's ``path`` arguments limited to what exists (and to what the
        prompt names, at any depth) and each registered tool's own narrowing (``register_tool(narrow=...)``), the
        results masked for secrets when the plan says so."""
        from .secrets import mask_tool
        from .tools import make_tool, registered_tool
        from .tools.path_choices import with_path_choices

        made = [make_tool(name, cwd) for name in self.tool_names]
        if self.small:
            made = [with_path_choices(tool, cwd, self.prompt) for tool in made]
            narrows = [registered_tool(name).narrow for name in self.tool_names]
            made = [
                tool if narrow is None else narrow(tool, cwd, self.prompt)
                for tool, narrow in zip(made, narrows, strict=True)
            ]
        return [mask_tool(tool) for tool in made] if self.mask_secrets else made

    def loop_guard(self) -> Any:
        """The loop guard's settings: tighter for a small model (its answers are short)."""
        from ..agent_core import LoopGuardSettings

        return LoopGuardSettings(**SMALL_MODEL_GUARD) if self.small else True


def plan_run(
    settings: Settings,
    model: Model,
    *,
    tools: Sequence[str] | None = None,
    system_prompt: str | None = None,
    thinking: str | None = None,
    max_turns: int | None = None,
    prompt: str = "",
) -> RunPlan:
    """The plan of a run with ``model``: the run's own choices, else the settings, with the small-model policy."""
    small = is_small(model)
    if tools is not None:
        names = list(tools)
    elif small and holds_default_tools(settings.tools):
        names = parse_tools(default_tools(small=True))  # read-only unless asked: it must not write by mistake
    else:
        names = parse_tools(settings.tools)
    if system_prompt is None:
        default = settings.system_prompt == DEFAULT_SYSTEM_PROMPT
        system_prompt = LOCAL_SYSTEM_PROMPT if small and default else settings.system_prompt
    limit = settings.max_turns if max_turns is None else max_turns
    return RunPlan(
        model=model, tool_names=tuple(names), system_prompt=system_prompt, thinking=thinking or settings.thinking,
        max_turns=limit or None, prompt=prompt, mask_secrets=settings.mask_secrets,
    )  # fmt: skip


def compaction_settings(settings: Settings, model: Model) -> CompactionSettings:
    """The compaction settings a run with ``model`` uses: the session's, scaled to a small window."""
    from .compaction import CompactionSettings

    # Pi's defaults assume a 100k+ window; on a small one (the local model has 8,192 tokens) a reserve larger
    # than the whole window would mean "compact before every call": then scale the settings to the window.
    window = model.context_window or DEFAULT_WINDOW
    reserve, keep = settings.reserve_tokens, settings.keep_recent_tokens
    if reserve >= window:
        reserve, keep = window // 4, min(keep, window // 2)
    elif keep >= window - reserve:
        # e.g. 32k: keeping 20,000 tokens above a 16,384 threshold would compact again at every call
        keep = (window - reserve) // 2
    return CompactionSettings(enabled=settings.compaction, reserve_tokens=reserve, keep_recent_tokens=keep)
