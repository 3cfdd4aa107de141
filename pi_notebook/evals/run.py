"""Run the eval tasks through the real magics (``%bash``, ``%%agent``) in an in-process IPython shell.

Every task gets a fresh temporary working directory holding ``demo/`` and a fresh session, so tasks cannot
see each other (the variables a task's cells define are removed after it). A task's setup cells run as a user
runs them, with the extension loaded: a ``%bash`` cell records its command, a plain code cell is recorded as a
``notebookCell`` message by the extension's cell recorder (a code cell it did not record is a problem of the task:
the model was not shown it). Scores are plain data (:class:`TaskResult`); :func:`report` prints them as a table.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agent_core.loop_guard import LoopGuardSettings, find_repeated_tail
from ..ai import AssistantMessage, ToolCall
from ..coding_agent.context_fit import NOTICE_TYPE
from .tasks import DEMO_FILES, ORIGINAL, SCAFFOLDING, TASKS, Task, contains, unknown_files

STRICT_REPEATS = LoopGuardSettings(min_repeats=3, min_repeated_chars=60)
"""Stricter than the loop guard's defaults (which must never fire on prose): a reply of 60+ characters that
ends in the same sentence three times does not count as an answer."""


@dataclass
class TaskResult:
    """How one task went."""

    task: Task
    passed: bool
    problems: list[str] = field(default_factory=list)
    reply: str = ""
    calls: list[str] = field(default_factory=list)
    seconds: float = 0.0
    first_text_seconds: float | None = None
    """From the cell's start to the first streamed token of text (None: no text)."""
    context: list[Any] = field(default_factory=list)
    """The messages the setup cells recorded (``bashExecution``, ``notebookCell``): what the model was shown."""


def _snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".pi_sessions"):
            out[rel] = path.read_bytes()
    return out


def _final_text(messages: list[Any]) -> tuple[str, AssistantMessage | None]:
    replies = [m for m in messages if isinstance(m, AssistantMessage)]
    if not replies:
        return "", None
    last = replies[-1]
    return "".join(b.text for b in last.content if b.type == "text").strip(), last


def check(task: Task, messages: list[Any], written: list[str]) -> tuple[list[str], str, list[str]]:
    """The problems with a run's new messages (empty: the task passed), its final text and its tool calls."""
    problems: list[str] = []
    calls = [
        f"{b.name} {b.arguments}" for m in messages if isinstance(m, AssistantMessage) for b in m.content
        if isinstance(b, ToolCall)
    ]  # fmt: skip
    names = {c.split(" ", 1)[0] for c in calls}
    text, last = _final_text(messages)
    # a notice to the user after the reply (what the model does not see) is not a run cut short
    ended = [m for m in messages if getattr(m, "custom_type", None) != NOTICE_TYPE]
    if last is None or not text or last is not ended[-1] or last.stop_reason not in ("stop", "length"):
        reason = last.error_message or last.stop_reason if last is not None else "no reply"
        problems.append(f"no final answer ({reason})")
    for words in task.expect_any:
        if not any(contains(text, w) for w in words):
            problems.append(f"reply lacks any of {list(words)[:4]}")
    if task.must_call and not names & set(task.must_call):
        problems.append(f"did not call {'/'.join(task.must_call)}")
    if task.no_calls and calls:
        problems.append(f"called a tool ({calls[0]})")
    invented = unknown_files(text, task.known_files, task.prompt) if task.known_files else []
    if invented:
        problems.append(f"reply names files that do not exist ({', '.join(invented[:3])})")
    if written:
        problems.append(f"wrote {written[:3]}")
    # (the user's own words are not scaffolding: "what does the output of my cell say" is answered in them)
    echoed = [p for p in SCAFFOLDING if p in text.lower() and p not in task.prompt.lower()]
    if echoed:
        problems.append(f"reply echoes the prompt ({echoed[0]!r})")
    if find_repeated_tail(text, STRICT_REPEATS) is not None:
        problems.append("reply repeats itself")
    return problems, text, calls


def setup_cell(cell: str, model: str, max_turns: int) -> str:
    """A setup cell as it is run: an ``%%agent`` cell (an exchange before the task's) runs the model under test."""
    head, newline, body = cell.partition("\n")
    if head.split(" ", 1)[0] != "%%agent":
        return cell
    return f"{head} --model {model} --max-turns {max_turns}{newline}{body}"


def run_task(ip: Any, task: Task, model: str, *, max_turns: int = 4, files: dict[str, str] | None = None) -> TaskResult:
    """One task in a fresh folder (``files``, default :data:`DEMO_FILES`) and session, through ``%load_ext`` /
    ``%bash`` / ``%%agent``."""
    import pi_notebook

    with tempfile.TemporaryDirectory(prefix="pi-eval-") as tmp:
        root = Path(tmp)
        for rel, text in (DEMO_FILES if files is None else files).items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        old = os.getcwd()
        os.chdir(root)
        names = set(ip.user_ns)
        ip.user_ns["__session__"] = str(root / f"{task.name}.ipynb")
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                ip.run_line_magic("load_ext", "pi_notebook")
                session = pi_notebook.current_session()
                recorded = len(session.messages)
                for cell in task.setup:  # numbered as in a notebook (stored): a cell is shown with its [n]
                    ip.run_cell(setup_cell(cell, model, max_turns), store_history=True)
            context = session.messages[recorded:]
            before = _snapshot(root)
            start = len(session.messages)
            first: list[float] = []
            t0 = time.monotonic()

            def on_event(event: Any) -> None:
                if not first and event.type == "message_update" and event.assistant_message_event.type == "text_delta":
                    first.append(time.monotonic() - t0)

            unsubscribe = session.agent.subscribe(on_event)
            tools = f" --tools {task.tools}" if task.tools else ""
            with contextlib.redirect_stdout(io.StringIO()):
                result = ip.run_cell(f"%%agent --model {model} --max-turns {max_turns}{tools}\n{task.prompt}")
            seconds = time.monotonic() - t0
            unsubscribe()
            after = _snapshot(root)
            written = sorted(k for k in after if before.get(k) != after[k])
            messages = session.messages[start:]
            problems, text, calls = check(task, messages, written)
            problems[:0] = unrecorded(task, context)
            if result.error_in_exec is not None:
                problems.insert(0, f"cell raised {type(result.error_in_exec).__name__}: {result.error_in_exec}")
        finally:
            with contextlib.redirect_stdout(io.StringIO()):
                ip.run_line_magic("unload_ext", "pi_notebook")
            os.chdir(old)
            for name in set(ip.user_ns) - names:  # what the task's cells defined: the next task starts without it
                del ip.user_ns[name]
    return TaskResult(task, not problems, problems, text, calls, seconds, first[0] if first else None, context)


def unrecorded(task: Task, context: list[Any]) -> list[str]:
    """A problem for each plain code cell of ``task.setup`` that was not recorded as a ``notebookCell`` message (the
    extension not recording cells: ``%agent_config cells=off``), empty when the model was shown every one."""
    from ..notebook.cell_recorder import is_own_cell

    sources = [getattr(m, "source", None) for m in context if getattr(m, "role", None) == "notebookCell"]
    return [
        f"setup cell {i} was not recorded as a notebookCell (is %agent_config cells=all?)"
        for i, cell in enumerate(task.setup, 1)
        if not is_own_cell(cell) and cell not in sources
    ]


def run_eval(
    model: str,
    tasks: tuple[Task, ...] = TASKS,
    *,
    max_turns: int = 4,
    progress: Any = None,
    files: dict[str, str] | None = None,
) -> list[TaskResult]:
    """Score ``model`` (a ``--model`` spec) on ``tasks``, each in a fresh folder holding ``files``."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    # The setup cells are numbered as in a notebook (stored in the shell's history): an in-memory history keeps
    # them out of the user's IPython history (a shell that exists already keeps its own).
    ip = InteractiveShell.instance(config=Config({"HistoryManager": {"hist_file": ":memory:"}}))
    results = []
    for task in tasks:
        result = run_task(ip, task, model, max_turns=max_turns, files=files)
        results.append(result)
        if progress is not None:
            progress(result)
    return results


def line(result: TaskResult) -> str:
    """One result as a table row."""
    mark = "pass" if result.passed else "FAIL"
    reply = " ".join(result.reply.split())
    reply = reply if len(reply) <= 60 else reply[:59] + "…"
    why = "; ".join(result.problems)
    return f"{mark}  {result.task.kind:<8} {result.task.name:<15} {result.seconds:5.1f}s  {reply!r}  {why}"


def report(model: str, results: list[TaskResult]) -> str:
    """The score, per kind and overall, with the median time to the first token of text."""
    passed = sum(r.passed for r in results)
    kinds: dict[str, list[TaskResult]] = {}
    for r in results:
        kinds.setdefault(r.task.kind, []).append(r)
    per_kind = ", ".join(f"{k} {sum(x.passed for x in v)}/{len(v)}" for k, v in kinds.items())
    firsts = sorted(r.first_text_seconds for r in results if r.first_text_seconds is not None)
    median = f"{firsts[len(firsts) // 2]:.1f}s" if firsts else "n/a"
    original = [r for r in results if r.task.name in ORIGINAL and r.task in TASKS]
    first = f"; the original {len(ORIGINAL)}: {sum(r.passed for r in original)}/{len(ORIGINAL)}"
    return (
        f"{model}: {passed}/{len(results)} tasks ({100 * passed / max(1, len(results)):.0f} %) — {per_kind}; "
        f"median time to first text {median}" + (first if len(original) == len(ORIGINAL) else "")
    )
