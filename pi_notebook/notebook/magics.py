"""The magics: ``%%agent``, ``%bash``, ``%bash!``, ``%agent_session``, ``%agent_config``, ``%agent_models``.

Each records typed AgentMessages into the kernel's session (see :mod:`.kernel`) and shows what it recorded —
only that, never the whole history, so a saved notebook does not grow with every cell. The widgets (anywidget,
ipywidgets) are imported at a magic's first display, not by ``%load_ext``.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import clear_output, display

from ..ai import UnknownModelError
from ..coding_agent import BashExecutionMessage
from ..coding_agent.run_policy import THINKING_LEVELS, parse_tools
from ..coding_agent.tools.files import FileTooLargeError, NotRegularFileError, read_regular
from ..coding_agent.user_bash import BashProgress
from .models_command import models_command, print_model_note
from .run_status import RUNNING, status_after
from .runner import Interrupted
from .static_display import running_cell_id
from .utf8 import say

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

# Leading ``--timeout S`` / ``--timeout=S`` (and an optional ``--`` ending the options), then the command.
_BASH_OPTIONS = re.compile(r"\s*((?:--timeout(?:=|\s+)\S+\s*)*)(?:--\s+)?(.*)\Z", re.DOTALL)


FIELD_SIZE_LIMIT = 100_000
"""The largest width or precision a ``{name:...}`` field of a prompt may ask for (``{x:>99999999999}`` would
fill the memory before failing)."""
# Python's format spec mini-language: [[fill]align][sign][z][#][0][width][grouping][.precision][type]
_STANDARD_SPEC = re.compile(
    r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d+))?[a-zA-Z%]?", re.DOTALL
)
_CONVERSIONS: dict[str, Callable[[object], str]] = {"r": repr, "s": str, "a": ascii}
_BRACES = " (write {{ and }} for literal braces)"
_BRACE_ERRORS = {
    "Single '}' encountered in format string": "a single } in the prompt",
    "Single '{' encountered in format string": "a single { in the prompt",
    "expected '}' before end of string": "a { in the prompt is never closed",
    "unmatched '{' in format spec": "a {...} field of the prompt is not closed where it should be",
    "end of string while looking for conversion specifier": "a { in the prompt is never closed",
    "expected ':' after conversion specifier": "a conversion (!r, !s, !a) of the prompt is one letter, then : or }",
}


class _FieldError(Exception):
    """Why one ``{...}`` field of a prompt cannot be filled (the field is added by :func:`interpolate`)."""


def interpolate(template: str, namespace: dict[str, Any]) -> str:
    """``{name}`` → the notebook variable's value (``{d[key]}``, ``{obj.attr}``, ``{x:>8.2f}``, ``{x!r}`` as in
    ``str.format``); ``{{`` / ``}}`` → literal braces. A field that cannot be filled is a one-line
    :class:`UsageError` naming it and saying why."""
    return _fill(template, namespace, nested=False)


def _fill(template: str, namespace: dict[str, Any], *, nested: bool) -> str:
    formatter = string.Formatter()
    try:
        parsed = list(formatter.parse(template))
    except ValueError as e:
        raise UsageError(_BRACE_ERRORS.get(str(e), f"the prompt's {{...}} fields: {e}") + _BRACES) from None
    out: list[str] = []
    for literal, field, spec, conversion in parsed:
        out.append(literal)
        if field is None:
            continue
        shown = "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        try:
            out.append(_field_text(field, spec or "", conversion, namespace, nested=nested))
        except _FieldError as e:
            raise UsageError(f"{shown} in the prompt: {e}{_BRACES}") from None
    return "".join(out)


def _field_text(field: str, spec: str, conversion: str | None, namespace: dict[str, Any], *, nested: bool) -> str:
    """One field's text: its value looked up, converted and formatted, each step's failure said in words."""
    value, name = _field_value(field, namespace)
    if conversion is not None:
        if conversion not in _CONVERSIONS:
            raise _FieldError(f"!{conversion} is not a conversion (!r, !s or !a)")
        try:
            value = _CONVERSIONS[conversion](value)
        except Exception as e:
            raise _FieldError(f"!{conversion} of {name} raised {type(e).__name__}: {_first_line(e)}") from None
    if "{" in spec:
        if nested:
            raise _FieldError("a field in a format spec cannot hold another field")
        spec = _fill(spec, namespace, nested=True)
    standard = _STANDARD_SPEC.fullmatch(spec)
    for part in ("width", "precision"):
        size = int(standard.group(part) or 0) if standard else 0
        if size > FIELD_SIZE_LIMIT:
            raise _FieldError(f"a {part} of {size:,} is more than the {FIELD_SIZE_LIMIT:,} a field may take")
    try:
        return format(value, spec)
    except (TypeError, ValueError) as e:
        if not spec:
            raise _FieldError(f"formatting {name} raised {type(e).__name__}: {_first_line(e)}") from None
        raise _FieldError(
            f"the format spec {spec!r} does not apply to {name} ({_a(value)}): {_first_line(e)}"
        ) from None
    except Exception as e:
        raise _FieldError(f"formatting {name} raised {type(e).__name__}: {_first_line(e)}") from None


def _field_value(field: str, namespace: dict[str, Any]) -> tuple[Any, str]:
    """The value ``field`` names (``d[key].attr``...) and how it was reached, for the messages."""
    head = re.match(r"[^.\[]*", field)
    assert head is not None
    first, pos = head.group(), head.end()
    if not first:
        raise _FieldError("empty braces name no notebook variable")
    if first.isdecimal():
        raise _FieldError("a number names no notebook variable")
    if first not in namespace:
        raise _FieldError(f"{first if first.isidentifier() else repr(first)} is not a notebook variable")
    value, name = namespace[first], first
    while pos < len(field):
        if field[pos] == ".":
            part = re.compile(r"[^.\[]*").match(field, pos + 1)
            assert part is not None
            attribute, pos = part.group(), part.end()
            if not attribute:
                raise _FieldError(f"an empty attribute name after {name}")
            value, name = _attribute(value, name, attribute), f"{name}.{attribute}"
        else:  # "[": the parser lets nothing else follow a name or a "]"
            end = field.find("]", pos)
            text = field[pos + 1 : end] if end != -1 else ""
            if not text:
                raise _FieldError(f"an empty or unclosed [...] after {name}")
            key: Any = int(text) if text.isdecimal() else text
            value, name, pos = _item(value, name, key), f"{name}[{text}]", end + 1
            if pos < len(field) and field[pos] not in ".[":
                raise _FieldError(f"only . or [ may follow {name}")
    return value, name


def _attribute(value: Any, name: str, attribute: str) -> Any:
    try:
        return getattr(value, attribute)
    except AttributeError:
        raise _FieldError(f"{name} ({_a(value)}) has no attribute {attribute!r}") from None
    except Exception as e:
        raise _FieldError(f"reading {name}.{attribute} raised {type(e).__name__}: {_first_line(e)}") from None


def _item(value: Any, name: str, key: Any) -> Any:
    try:
        return value[key]
    except KeyError:
        raise _FieldError(f"{name} ({_a(value)}) has no key {key!r}") from None
    except IndexError:
        raise _FieldError(f"{name} ({_a(value)}) has no index {key!r}") from None
    except TypeError as e:
        raise _FieldError(f"{name} ({_a(value)}) cannot be indexed by {key!r}: {_first_line(e)}") from None
    except Exception as e:
        raise _FieldError(f"{name}[{key!r}] raised {type(e).__name__}: {_first_line(e)}") from None


def _a(value: Any) -> str:
    """``"a dict"``, ``"an int"``: the value's type, for a message."""
    kind = type(value).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


SYSTEM_PROMPT_LIMIT = 1 << 20
"""The largest file ``--system @path`` reads (1 MB, some 250,000 tokens: more than most context windows)."""


def _read_system(value: str | None) -> str | None:
    """``--system``'s text, or the file ``@path`` names: a regular file of UTF-8 text, at most
    :data:`SYSTEM_PROMPT_LIMIT` bytes; anything else is refused in one line, naming the path and why."""
    if value is not None and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]  # IPython's argument splitting keeps the quotes of --system "two words"
    if value is None or not value.startswith("@"):
        return value
    path = os.path.expanduser(value[1:])
    if not path:
        raise UsageError("--system @PATH needs a file's path after the @")
    try:
        # Looked at before it is opened: a FIFO would wait for a writer, /dev/zero would never end.
        data = read_regular(path, SYSTEM_PROMPT_LIMIT)
    except NotRegularFileError as e:
        raise UsageError(f"--system {value}: {path} is not a regular file ({e.kind})") from None
    except FileTooLargeError:
        raise UsageError(
            f"--system {value}: {path} is larger than {SYSTEM_PROMPT_LIMIT:,} bytes (1 MB), the most a system "
            "prompt file may hold"
        ) from None
    except OSError as e:
        raise UsageError(f"--system {value}: {path}: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"--system {value}: {path} is not UTF-8 text (at byte {e.start})") from None


class CellInterrupted(KeyboardInterrupt):
    """The stop button interrupted a magic after it recorded what happened. Raised (not just printed) so that
    "Run All" stops here, as it does for any interrupted cell; shown as one line, without a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"Interrupted: {self}."]


def _has_frontend(shell: Any) -> bool:
    """A Jupyter kernel (widgets can render live); plain IPython in a terminal gets text at the end."""
    return getattr(shell, "kernel", None) is not None


class _RunView:
    """What one magic shows: a transcript widget updated live (throttled) in Jupyter, or the final text
    elsewhere. It shows only what this cell recorded, never the whole history. When the cell ends the widget is
    replaced by its saved form and closed: neither the page nor the kernel keeps a widget per finished cell."""

    def __init__(self, shell: Any, *, quiet: bool = False, model: Any = None):
        from .static_display import headless_kernel
        from .widgets import TranscriptWidget  # anywidget and ipywidgets load at the first display

        self.live = _has_frontend(shell) and not quiet
        # A headless kernel (nbconvert --execute, nbval) draws no view: a widget without a comm, so the saved
        # notebook holds no widget state at all (static_display.py)
        self.headless = headless_kernel()
        self.widget = TranscriptWidget(static=self.headless)
        self.model = model  # the run's model: whether it is still to be loaded (run_status)
        self.received: list[Any] = []  # every finished message, as it came
        self.done: list[Any] = []  # what is shown: the same, a retry failing the same way counted on one card
        self.streaming: Any = None
        self.notes: list[str] = []  # one line each, printed under the saved form (a live view's clear_output
        # would take a line printed before it away)
        if self.live and not self.headless:
            display(self.widget.view_bundle(), raw=True)

    def agent_event(self, event: Any) -> None:
        """Agent events (and compaction notices). Several agent runs may follow one prompt (a retry, a
        compact-and-continue), so :meth:`finish`, not ``agent_end``, makes the display final."""
        kind = getattr(event, "type", None)
        status = status_after(event, self.model) if self.live else None
        if status is not None:
            self.widget.set_status(status)
        if kind in ("message_start", "message_update"):
            self.streaming = event.message
        elif kind == "message_end":
            self.streaming = None
            self._add(event.message)
        elif kind == "compaction":
            self._add(event.message)
        elif kind == "note":  # something to read that is not part of the history (a fallback taken)
            self.notes.append(event.text)
            return
        elif kind in ("tool_execution_start", "turn_end") and self.live:
            self.widget.flush()  # a tool call held back by the throttle must show while its tool runs
            return
        else:
            return
        if self.live:
            self.widget.update(self.done, streaming=self.streaming)
            if kind != "message_update":
                self.widget.flush()

    def _add(self, message: Any) -> None:
        """Show a finished message (a retry that fails again the same way is counted on the first card: see
        :func:`~pi_notebook.notebook.widgets.collapse_repeated_errors`)."""
        from .widgets import collapse_repeated_errors

        self.received.append(message)
        self.done = collapse_repeated_errors(self.received)

    def bash_started(self, command: str) -> None:
        """A command runs: its card shows at once, and says how long it has been running until it ends."""
        if self.live:
            self.widget.set_status(RUNNING)
            self.widget.update([], streaming=BashExecutionMessage(command=command, output=""))
            self.widget.flush()

    def bash_progress(self, item: Any) -> None:
        """The tail of a running command, shown as the terminal card it will become (and its notes)."""
        if getattr(item, "type", None) == "note":
            self.notes.append(item.text)
        elif self.live and isinstance(item, BashProgress):
            self.widget.update([], streaming=BashExecutionMessage(command=item.command, output=item.tail))

    def finish(self, messages: list[Any] | None = None) -> None:
        final = self.done if messages is None else messages
        if self.live:
            # The live view gives way to the saved form (pi_notebook.notebook.saved): the transcript's JSON, which
            # the JupyterLab extension draws without a kernel, and text/html and text/plain for everything else.
            # No widget view stays, so the saved notebook holds no widget state and no copy of the widget code.
            clear_output(wait=True)
        display(self.widget.saved_bundle(final, full_text=not self.live), raw=True)
        self.widget.discard()  # the page drops its models too: nothing of them is saved, nothing stays in the kernel
        for note in dict.fromkeys(self.notes):
            say(f"pi_notebook: {note}")


@magics_class
class PiMagics(Magics):
    """Magics bound to the kernel's :class:`~pi_notebook.notebook.kernel.NotebookSession`."""

    shell: InteractiveShell  # given to __init__ (IPython's Magics allows none, for a class not registered yet)

    def __init__(self, shell: InteractiveShell, session_getter: Any):
        super().__init__(shell)
        self._session = session_getter
        self.recorder: Any = None
        """The cell recorder (:class:`~.cell_recorder.CellRecorder`) ``%agent_private`` marks the running cell with."""

    @magic_arguments()
    @argument("--model", "-m", help="provider/id, e.g. anthropic/claude-sonnet-4-5, ollama/llama3.2, local")
    @argument("--system", "-s", help="system prompt, or @path to read it from a file")
    @argument("--tools", "-t", help="comma-separated: read,bash,edit,write,grep,find,ls,python,vars,new_cell — or none")
    @argument("--thinking", choices=THINKING_LEVELS, help="reasoning effort")
    @argument("--max-turns", type=int, help="most LLM calls in this run (0 = no limit)")
    @argument("--new", action="store_true", help="start a new session first")
    @argument("--quiet", "-q", action="store_true", help="show the result only when the run ends")
    @cell_magic
    def agent(self, line: str, cell: str) -> None:
        """Run the agent on this cell's prompt, streaming its reply into the output.

        The prompt may use ``{name}`` to insert a notebook variable (``{{`` for a brace). Everything is
        recorded in the notebook's session; the stop button aborts the run and keeps what was said.
        """
        from .commands import require_key, start_new_session

        args = parse_argstring(self.agent, line)
        prompt = interpolate(cell, self.shell.user_ns).strip()
        if not prompt:
            raise UsageError("%%agent needs a prompt in the cell body")
        try:
            tools = None if args.tools is None else parse_tools(args.tools)
        except ValueError as e:
            raise UsageError(f"--tools: {e}") from e
        if args.max_turns is not None and args.max_turns < 0:
            raise UsageError("--max-turns must be 0 (no limit) or more")
        system = _read_system(args.system)  # before --new: a refused option changes nothing
        session = self._session()
        try:
            model = session.resolve_model(args.model)
        except (UnknownModelError, ValueError) as e:
            raise UsageError(f"--model: {e}") from e
        require_key(session, model)  # a missing key: one line, before anything is recorded, and the cell fails
        if args.new:
            start_new_session(session, "%%agent --new")
        _refuse_if_unrecordable(session, "%%agent not run")
        print_model_note(model)  # a model the catalogue does not know runs with its provider's defaults
        self._run(
            session, prompt, quiet=args.quiet, model=model, system_prompt=system, tools=tools,
            thinking=args.thinking, max_turns=args.max_turns,
        )  # fmt: skip

    def _run(self, session: Any, prompt: str, *, quiet: bool = False, **choices: Any) -> list[Any]:
        """Run the agent on ``prompt`` for this cell, showing the run; the new messages. A run stopped by the stop
        button (or a write the file refused) ends the cell in one line, after everything said is kept."""
        view = _RunView(self.shell, quiet=quiet, model=choices.get("model"))
        try:
            new, interrupted = session.run_prompt(
                prompt, on_event=view.agent_event, anchor=running_cell_id(self.shell), **choices
            )
        except Interrupted as e:
            raise CellInterrupted(f"{e}; what the run had finished saying is kept in the session") from None
        view.finish()
        session.check_saved()
        if interrupted:
            raise CellInterrupted("the run was aborted; everything said so far is kept in the session")
        return new

    @magic_arguments()
    @argument("--model", "-m", help="provider/id (default: as %%agent)")
    @argument("hint", nargs="*", help="anything the agent should know (e.g. 'the column is called price')")
    @line_magic
    def agent_fix(self, line: str) -> None:
        """Ask the agent why the last failing cell failed, and for a corrected cell: it is put below this one, for
        you to read and run (never run by itself). ``%agent_fix [--model M] [HINT...]``."""
        from .commands import require_key
        from .fix import corrected_cell, failing_cell, fix_prompt

        args = parse_argstring(self.agent_fix, line)
        session = self._session()
        cell = failing_cell(session.messages)
        if cell is None:
            raise UsageError(
                "%agent_fix: no failing cell to fix (the agent is sent the cells you run: run the failing cell, "
                "with %agent_config cells=all or errors, then %agent_fix)"
            )
        _refuse_if_unrecordable(session, "%agent_fix not run")
        try:
            model = session.resolve_model(args.model)
        except (UnknownModelError, ValueError) as e:
            raise UsageError(f"--model: {e}") from e
        require_key(session, model)
        print_model_note(model)
        new = self._run(session, fix_prompt(cell, " ".join(args.hint)), model=model)
        replies = [m for m in new if getattr(m, "role", None) == "assistant"]
        text = "".join(b.text for b in replies[-1].content if b.type == "text") if replies else ""
        code = corrected_cell(text)
        if code is None:
            say("pi_notebook: the reply holds no code block, so no cell was added")
            return
        self.shell.set_next_input(code, replace=False)
        say("pi_notebook: the corrected cell is below this one: read it, then run it")

    @line_magic
    def agent_private(self, line: str) -> None:
        """Keep the cell this line is in out of what the agent is sent: it is still shown in the session's
        transcript and stored (like ``%bash!`` for a command). Cells are recorded per ``%agent_config cells``."""
        if self.recorder is not None:
            self.recorder.mark_private()

    @magic_arguments()
    @argument("--timeout", type=float, help="seconds before the command is stopped")
    @argument("command", nargs="*", help="the shell command, run as typed")
    @no_var_expand
    @line_magic
    def bash(self, line: str) -> None:
        """Run a shell command; its output is recorded and the LLM sees it next turn (Pi's ``!cmd``)."""
        self._bash(line, exclude=False, magic=self.bash)

    @magic_arguments()
    @argument("--timeout", type=float, help="seconds before the command is stopped")
    @argument("command", nargs="*", help="the shell command, run as typed")
    @no_var_expand
    def bash_excluded(self, line: str) -> None:
        """Run a shell command; shown and recorded but never sent to the LLM (Pi's ``!!cmd``)."""
        self._bash(line, exclude=True, magic=self.bash_excluded)

    def _bash(self, line: str, *, exclude: bool, magic: Any) -> None:
        # Only the leading options go through the parser: the command itself runs exactly as typed (argument
        # splitting would change its quoting and spacing).
        found = _BASH_OPTIONS.match(line)
        options, command = (found.group(1), found.group(2)) if found else ("", line)
        args = parse_argstring(magic, options)
        command = command.strip()
        if not command:
            raise UsageError("usage: %bash [--timeout S] COMMAND")
        if args.timeout is not None and args.timeout <= 0:
            raise UsageError("--timeout must be a positive number of seconds")
        session = self._session()
        _refuse_if_unrecordable(session, "%bash! not run" if exclude else "%bash not run")
        view = _RunView(self.shell)
        masker = session.masker()  # shown as the running command's output will be: known secrets masked
        view.bash_started(masker.mask(command)[0] if masker else command)
        try:
            message, interrupted = session.run_bash(
                command, exclude=exclude, timeout=args.timeout, on_event=view.bash_progress
            )
        except Interrupted as e:
            raise CellInterrupted(f"{e}; the command's result was not recorded") from None
        view.finish([message])
        session.check_saved()  # a write the file refused (disk full, file closed meanwhile): one line, cell fails
        if interrupted:  # as %%agent: recorded, then "Run All" stops here
            raise CellInterrupted("the command was stopped; its output so far is recorded in the session")

    @line_magic
    def agent_session(self, line: str) -> None:
        """Show or change the notebook's session: ``%agent_session [new | open [N | PATH] | list | branch ID |
        label ID TEXT | export PATH]``; ``open`` alone lists Pi's sessions for this directory, ``open N`` opens one;
        ``export PATH.html`` writes one offline page (transcript and inspector), ``PATH.jsonl`` a Pi session file
        (the current branch; ``--tree``: all of it), ``PATH.md`` a Markdown transcript (a file there is replaced)."""
        from .commands import session_command

        session_command(self._session(), line)

    @line_magic
    def agent_models(self, line: str) -> None:
        """List the models ``--model`` knows, with context window, prices and whether the key is set:
        ``%agent_models [FILTER]`` (words to match in ``provider/id`` or the name, e.g. ``sonnet``)."""
        models_command(line, self._session().config.default_model)

    @line_magic
    def agent_config(self, line: str) -> None:
        """Show the settings and the tools and system prompt a ``%%agent`` without options runs with, or set them:
        ``%agent_config default_model=ollama/llama3.2 tools=read,ls``."""
        from .commands import config_command

        config_command(self._session(), line)


def _refuse_if_unrecordable(session: Any, what: str) -> None:
    """A one-line :class:`UsageError` before anything runs when the session cannot record its result (closed,
    read-only, not a session, deleted): a command must never run unrecorded, nor leave every later magic failing."""
    from .commands import recording_problem

    problem = recording_problem(session.file)
    if problem is not None:
        raise UsageError(f"{what}: the session cannot record it ({problem}); %agent_session new starts a new one")
