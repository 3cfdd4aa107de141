"""What the ``local`` provider shows a small in-process model, and how it reads the reply (pure, no llama.cpp).

Small models (135M-1B parameters) follow a short, concrete format far better than a long tool schema, so the
request is rendered here rather than by llama-cpp-python's function-calling handler (whose Jinja template also
HTML-escapes the prompt: every ``'`` reached the model as ``&#39;``):

* the model's own chat template (read from the GGUF), rendered **without** autoescaping; ChatML if it has none;
* the tools as one line each, and one way to call them: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``;
* a grammar that lets the model either answer in words or emit exactly one well-formed call whose arguments
  follow the tool's JSON schema, with paths relative to the working directory (no ``/Users/...``, no URLs);
* after ``max_tool_rounds`` rounds of tool calls since the user's last message, the grammar allows only an
  answer, and the last tool result repeats the question: a small model then answers from what it has, shown only
  the worked examples of tool calls, with the words of that output slightly favoured (:attr:`ReplyPlan.source`)
  and, when a word of the question names one line of the output, that line said once more (:func:`focus_line`);
* a request to change files (:func:`asks_to_change`) while no tool on offer can is answered at once (the model
  says it cannot), not read or listed;
* worked examples for what the context holds: notebook cells, the prompt before the current one (which the coding
  agent's small-model stage sends as a note, "Earlier I said: …", without the answer the model would copy), and a
  hidden ``%bash!`` command (a note that it ran, never its output: the model says it cannot see it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"

CHATML_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Used when a GGUF carries no chat template."""

TOOL_RULES = (
    "You can use these tools:\n{tools}\n"
    "To use a tool, reply with only one line in this form:\n"
    '<tool_call>{{"name": "{example}", "arguments": {example_args}}}</tool_call>\n'
    "Use a tool only when the request is about files, folders or commands here. For anything else, answer "
    "in plain words. If no tool can do what is asked, say that you cannot do it."
)

# Worked examples, shown to the model as earlier turns (a 135M model copies a pattern it has just seen far more
# reliably than it follows a rule): when to call which tool, how a tool's output comes back and is answered from,
# when to answer directly, and when to decline. Each needs the tool it shows (``None``: no tool). Once a tool has
# answered, only the tool examples are shown: a decline just before a tool's output was copied in place of
# reading it ("I cannot do that").
EXAMPLES: tuple[tuple[str | None, tuple[str, ...]], ...] = (
    ("ls", ("List the files in src.", '{"name": "ls", "arguments": {"path": "src"}}', "app.py\nutils/",
            "The files in src are app.py and the folder utils/.")),
    ("read", ("Who wrote docs/readme.md, according to the file?",
              '{"name": "read", "arguments": {"path": "docs/readme.md"}}', "# Readme\nWritten by Tom in May.",
              "According to docs/readme.md, Tom wrote it.")),
    ("bash", ("Run `git status` and tell me the result.", '{"name": "bash", "arguments": {"command": "git status"}}',
              "nothing to commit, working tree clean", "git status says: nothing to commit, working tree clean.")),
    ("vars", ("What is the value of limit in my notebook?", '{"name": "vars", "arguments": {"name": "limit"}}',
              "limit: int = 250", "In your notebook, limit is 250.")),
    (None, ("Say hi.", "Hi! How can I help you?")),
    (None, ("Turn on the lights in my office.", "Sorry, I cannot do that: I have no tool for it.")),
)  # fmt: skip


ON_DEMAND = frozenset({"vars"})
"""Tools whose worked example is shown only when it is in play (the request names one of its choices, or it was
called in this exchange): every example shown shifts what a 135M model says to everything else (the ``vars``
example shown always cost three of the original twenty eval tasks)."""


def _called(messages: list[Any]) -> set[str]:
    """The tools called since the user's last message."""
    names: set[str] = set()
    for m in reversed(messages):
        if m.role == "user":
            break
        if m.role == "toolResult":
            names.add(m.tool_name)
    return names


CELL_MARK = "Ran notebook cell"
"""How the text of a notebook cell the user ran starts (the notebook app's ``notebookCell`` role, as sent)."""

# Worked examples for questions about the cells the user ran, shown when the context holds such a cell: a 135M
# model otherwise answers from the code (or from nothing) rather than from the output or the error below it.
# Their names, values and error differ from anything a real question would likely be about, so that a copied
# example is a wrong answer, not a right one.
CELL_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("Ran notebook cell [5]:\n```python\nprint(\"size:\", 6 * 8)\n```\nOutput:\n```\nsize: 48\n\n```\n\n"
     "What did my cell print?",
     "Cell [5] printed: size: 48"),
    ("Ran notebook cell [6]:\n```python\nlabels = sorted([\"b\", \"a\"])\n```\n(no output)\n\n"
     "Which variable did my cell define?",
     "Cell [6] defined the variable labels."),
    ("Ran notebook cell [7]:\n```python\nscores = [8, 9, 10]\n```\n(no output)\n\n"
     "Ran notebook cell [8]:\n```python\nbest = max(score)\n```\n\n"
     "The cell failed with NameError: name 'score' is not defined\n```\n" + "-" * 75 + "\n"
     "NameError                                 Traceback (most recent call last)\nCell In[8], line 1\n"
     "----> 1 best = max(score)\nNameError: name 'score' is not defined\n```\n\nWhy did my last cell fail?",
     "Cell [8] failed with NameError: name 'score' is not defined. The list is called scores."),
)  # fmt: skip


HIDDEN_MARK = "Ran a hidden command"
"""How the note that stands for a hidden command (``%bash!``) starts, as the coding agent's pipeline writes it for
a very small model (the command and its output are never sent)."""

EARLIER_MARK = "Earlier I said: "
"""How the prompt before the current one starts, as the coding agent's pipeline rewrites it for a very small
model (its reply and tool calls are not sent: the model would go on from them or repeat them)."""

# Worked examples for an earlier exchange (shown when the context holds one) and for a hidden command (when the
# context holds its note): the model answers from what was said before, and says it cannot see a hidden output
# rather than make one up.
EARLIER_EXAMPLES: tuple[tuple[str, str], ...] = (
    (EARLIER_MARK + "I work at a bakery.\n\nWhere do I work?",
     "You said you work at a bakery."),
)  # fmt: skip
HIDDEN_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("Ran a hidden command (%bash!): its output is not shown to you, so you cannot know what it printed.\n\n"
     "What did that command output?",
     "I cannot see it: what a hidden command (%bash!) prints is not shown to me."),
)  # fmt: skip


SCAFFOLD_STOPS = ("\nOutput of ", "\nError from ", "\nQuestion: ")
"""Where an answer ends if it goes on to write the scaffolding of a tool-output turn (:func:`_tool_output_turn`):
a 135M model sometimes answers, then copies the output it was shown, label and all."""


def _tool_output_turn(tool_name: str, body: str, question: str, *, error: bool = False) -> str:
    # The question first, then the output, then the instruction: a small model answers the question it has just
    # read far better than one it has to look back for, and an instruction placed last is the one it follows.
    label = f"Error from {tool_name}" if error else f"Output of {tool_name}"
    turn = (f"Question: {question}\n" if question else "") + f"{label}:\n```\n{body.strip() or '(no output)'}\n```"
    focus = "" if error or not question else focus_line(body, question)
    return turn + focus + ("\nAnswer the question from this output." if question else "")


# Words of a question that say nothing about which line it is about.
_PLAIN_WORDS = frozenset({
    "the", "and", "for", "from", "with", "what", "which", "who", "whom", "whose", "how", "many", "much", "are",
    "was", "were", "does", "did", "give", "gives", "set", "according", "file", "files", "folder", "this", "that",
    "tell", "please", "line", "lines", "value", "values", "should", "could", "would", "can", "will", "there",
    "here", "into", "about", "say", "says", "said",
})  # fmt: skip


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_-]{2,}", text)}


def focus_line(body: str, question: str) -> str:
    """The line of a tool's output the question is about, said once more before the instruction: a word of the
    question (not a path's, not a plain word) found on one line of the output only, past its first line, and no
    other such line. A 135M model reading a table answers from its first row far more often than from the row
    asked about; shown that row (with the first line, when it is a header of the same columns), it answers from
    it. ``""`` when no single line stands out."""
    lines = [line.strip() for line in body.strip().splitlines() if line.strip()]
    if len(lines) < 3:
        return ""
    paths = re.findall(r"[\w.-]*[/.][\w./-]+", question)
    words = _words(question) - _PLAIN_WORDS - {w for p in paths for w in _words(p)}
    found: set[int] = set()
    for word in words:
        hits = [i for i, line in enumerate(lines) if re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])",
                                                                line, re.IGNORECASE)]  # fmt: skip
        if len(hits) == 1 and hits[0] > 0:
            found.add(hits[0])
    if len(found) != 1:
        return ""
    line = lines[found.pop()]
    header = lines[0]
    columns = "," in header and header.count(",") == line.count(",")
    return f"\nThe line it asks about: {line}" + (f" (columns: {header})" if columns else "")


def example_turns(
    tool_names: set[str],
    *,
    cells: bool = False,
    earlier: bool = False,
    hidden: bool = False,
    after_tool: bool = False,
) -> list[dict[str, str]]:
    """The worked examples for the tools on offer, as chat turns (and, with ``cells``, :data:`CELL_EXAMPLES`, with
    ``earlier`` :data:`EARLIER_EXAMPLES`, with ``hidden`` :data:`HIDDEN_EXAMPLES`). ``after_tool`` (a tool has
    answered, the model answers from it next): only the examples of tool calls."""
    turns: list[dict[str, str]] = []
    for needs, steps in EXAMPLES:
        if (needs is not None and needs not in tool_names) or (after_tool and needs is None):
            continue
        if len(steps) == 2:
            turns += [{"role": "user", "content": steps[0]}, {"role": "assistant", "content": steps[1]}]
            continue
        ask, call, output, answer = steps
        assert needs is not None  # a worked tool call names its tool
        turns += [
            {"role": "user", "content": ask},
            {"role": "assistant", "content": CALL_OPEN + call + CALL_CLOSE},
            {"role": "user", "content": _tool_output_turn(needs, output, ask)},
            {"role": "assistant", "content": answer},
        ]
    for shown, examples in ((cells, CELL_EXAMPLES), (earlier, EARLIER_EXAMPLES), (hidden, HIDDEN_EXAMPLES)):
        # after a tool, an example about a cell or a hidden command just before its output was copied in place of
        # reading it ("The first item in demo/todo.txt is the command itself.")
        for ask, answer in examples if shown and not after_tool else ():
            turns += [{"role": "user", "content": ask}, {"role": "assistant", "content": answer}]
    return turns


# A path a tool may take: relative to the working directory, no scheme, no leading slash or "~".
RELATIVE_PATH_PATTERN = r"^[A-Za-z0-9_.-][A-Za-z0-9_./ -]*$"


@dataclass(frozen=True)
class LocalPrompt:
    """One request for the in-process model: the prompt text, the grammar (GBNF), and the stop strings."""

    text: str
    grammar: str
    stop: tuple[str, ...]
    mode: str
    """``answer`` (no tool call allowed: no tools, or the tool rounds are used up), ``call`` (the request names
    an existing path or a command in backticks: a tool call on what it names comes first, the model picks the
    tool) or ``auto`` (the model chooses between answering and any call)."""

    @property
    def answer_only(self) -> bool:
        return self.mode == "answer"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block.type == "text":
            parts.append(block.text)
        elif block.type == "image":
            parts.append("(image omitted: this model reads text only)")
    return "\n\n".join(p for p in parts if p)


def _call_text(name: str, arguments: dict[str, Any]) -> str:
    return CALL_OPEN + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + CALL_CLOSE


def _first_sentence(text: str) -> str:
    first = re.split(r"(?<=[.!?])\s", (text or "").strip(), maxsplit=1)[0]
    return first if len(first) <= 160 else first[:159] + "…"


def tool_lines(tools: list[Any]) -> str:
    """One line per tool: ``- ls {"path": "..."}: List directory contents.``"""
    lines = []
    for tool in tools:
        props = (tool.parameters or {}).get("properties") or {}
        required = set((tool.parameters or {}).get("required") or [])
        args = ", ".join(f'"{k}"' + ("" if k in required else "?") for k in props)
        lines.append(f"- {tool.name} {{{args}}}: {_first_sentence(tool.description)}")
    return "\n".join(lines)


def _example(tools: list[Any]) -> tuple[str, str]:
    tool = tools[0]
    props = (tool.parameters or {}).get("properties") or {}
    required = (tool.parameters or {}).get("required") or list(props)[:1]
    args = {k: "..." for k in required}
    return tool.name, json.dumps(args)


def trailing_tool_rounds(messages: list[Any]) -> int:
    """How many assistant replies with tool calls follow the last user message."""
    rounds = 0
    for m in reversed(messages):
        if m.role == "user":
            break
        if m.role == "assistant" and any(b.type == "toolCall" for b in m.content):
            rounds += 1
    return rounds


def _last_question(messages: list[Any]) -> str:
    for m in reversed(messages):
        if m.role == "user":
            return _text_of(m.content).strip()
    return ""


def _shows(messages: list[Any], mark: str) -> bool:
    return any(m.role == "user" and _text_of(m.content).startswith(mark) for m in messages)


def chat_messages(system: str, messages: list[Any], tools: list[Any]) -> list[dict[str, str]]:
    """The conversation in chat-template roles (system, user, assistant), tool results as user turns."""
    out: list[dict[str, str]] = []
    system_parts = [system.strip()] if system and system.strip() else []
    if tools:
        name, example_args = _example(tools)
        system_parts.append(TOOL_RULES.format(tools=tool_lines(tools), example=name, example_args=example_args))
    if system_parts:
        out.append({"role": "system", "content": "\n\n".join(system_parts)})
    if tools:
        shows = {mark: _shows(messages, mark) for mark in (CELL_MARK, EARLIER_MARK, HIDDEN_MARK)}
        after_tool = bool(messages) and messages[-1].role == "toolResult"
        offered = {t.name for t in tools} - ON_DEMAND
        offered |= {t.name for t in named_calls(_last_question(messages), tools)} | _called(messages)
        out += example_turns(
            offered, cells=shows[CELL_MARK], earlier=shows[EARLIER_MARK], hidden=shows[HIDDEN_MARK],
            after_tool=after_tool,
        )  # fmt: skip
    question = _last_question(messages)
    kept = [m for m in messages if not (m.role == "assistant" and m.stop_reason in ("error", "aborted"))]
    for i, m in enumerate(kept):
        if m.role == "assistant":
            text = _text_of([b for b in m.content if b.type == "text"])
            calls = [_call_text(b.name, b.arguments) for b in m.content if b.type == "toolCall"]
            out.append({"role": "assistant", "content": "\n".join([t for t in (text, *calls) if t])})
        elif m.role == "toolResult":
            last = i == len(kept) - 1
            body = _text_of(m.content)
            turn = _tool_output_turn(m.tool_name, body, question if last else "", error=m.is_error)
            out.append({"role": "user", "content": turn})
        else:
            out.append({"role": "user", "content": _text_of(m.content)})
    # Chat templates expect user and assistant to alternate: merge neighbours of the same role.
    merged: list[dict[str, str]] = []
    for m in out:
        if merged and merged[-1]["role"] == m["role"] and m["role"] != "system":
            merged[-1] = {"role": m["role"], "content": merged[-1]["content"] + "\n\n" + m["content"]}
        else:
            merged.append(m)
    return merged


def render(template: str | None, messages: list[dict[str, str]], bos: str = "", eos: str = "") -> str:
    """The chat template applied to ``messages``, with a generation prompt, never HTML-escaped."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, autoescape=False)

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    template = template or CHATML_TEMPLATE
    compiled = env.from_string(template)
    if "system" not in template and messages and messages[0]["role"] == "system":
        # A template with no system role: the system text opens the first user turn.
        system, rest = messages[0]["content"], messages[1:]
        if rest and rest[0]["role"] == "user":
            rest = [{"role": "user", "content": system + "\n\n" + rest[0]["content"]}, *rest[1:]]
        messages = rest
    return compiled.render(
        messages=messages, add_generation_prompt=True, bos_token=bos, eos_token=eos, raise_exception=raise_exception
    )


def stop_strings(template: str | None) -> tuple[str, ...]:
    """End-of-turn markers of the template, in case the model writes them as text."""
    template = template or CHATML_TEMPLATE
    if "<|im_start|>" in template:
        return ("<|im_end|>", "<|im_start|>")
    if "<start_of_turn>" in template:
        return ("<end_of_turn>", "<start_of_turn>")
    return ()


def _argument_schema(parameters: dict[str, Any] | None) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(json.dumps(parameters or {"type": "object", "properties": {}}))
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict) and "enum" in prop:
            continue  # the caller listed the allowed values (e.g. the paths that exist): the grammar keeps them
        if isinstance(prop, dict) and prop.get("type") == "string" and name in ("path", "file", "file_path"):
            prop["pattern"] = RELATIVE_PATH_PATTERN
    schema.setdefault("type", "object")
    # Only the required arguments and the path: a small model fills optional ones with junk (offsets, limits,
    # globs). The path is made required so that "list demo" cannot become a listing of the wrong folder.
    props = schema.get("properties") or {}
    keep = [k for k in props if k == "path"] + [k for k in schema.get("required") or [] if k != "path" and k in props]
    schema["properties"] = {k: props[k] for k in keep}
    schema["required"] = keep
    schema["additionalProperties"] = False
    return schema


def _mentioned(value: str, text: str) -> bool:
    return value not in (".", "") and re.search(rf"(?<![\w/.-]){re.escape(value)}(?![\w/-])", text) is not None


def _narrowed(tool: Any, key: str, values: list[str]) -> Any:
    parameters = json.loads(json.dumps(tool.parameters))
    parameters["properties"][key]["enum"] = values
    parameters["required"] = sorted({*parameters.get("required", []), key})
    return tool.model_copy(update={"parameters": parameters})


def named_calls(question: str, tools: list[Any]) -> list[Any]:
    """The tools the request itself points at, narrowed to what it names: a command in backticks for
    ``bash``; an existing path (one of the ``path`` enum's values) for a path tool; one of the ``name`` enum's
    values (a notebook variable) for a tool that takes a name. Empty: it names none."""
    narrowed = []
    for tool in tools:
        props = (tool.parameters or {}).get("properties") or {}
        if tool.name == "bash" and "command" in props:
            commands = [c.strip() for c in re.findall(r"`([^`\n]+)`", question) if c.strip()]
            if commands:
                narrowed.append(_narrowed(tool, "command", commands))
        elif isinstance(props.get("name"), dict) and props["name"].get("enum"):
            # a thing by its name (a notebook variable, for ``vars``): the request names one of them
            names = [v for v in props["name"]["enum"] if _mentioned(v, question)]
            if names:
                narrowed.append(_narrowed(tool, "name", names))
        elif isinstance(props.get("path"), dict) and props["path"].get("enum"):
            choices = props["path"]["enum"]
            paths = [v for v in choices if _mentioned(v, question)]
            # "support-prompt.txt" names demo/support-prompt.txt when no other entry has that name
            by_name: dict[str, list[str]] = {}
            for v in choices:
                by_name.setdefault(v.rsplit("/", 1)[-1], []).append(v)
            paths += [
                only[0] for name, only in by_name.items()
                if len(only) == 1 and only[0] not in paths and "/" in only[0] and _mentioned(name, question)
                and not any(p.endswith("/" + name) or p == name for p in paths)
            ]  # fmt: skip
            if paths:
                narrowed.append(_narrowed(tool, "path", paths))
    return narrowed


CHANGING_TOOLS = frozenset({"write", "edit", "bash"})
"""Pi's tools that change files; the others a small model gets (``read``, ``ls``, ``find``, ``grep``, ``vars``) only
read."""

_CHANGE_VERBS = (
    "delete", "remove", "rename", "move", "erase", "overwrite", "edit", "modify", "copy", "create", "empty",
    "rm", "mv", "cp", "chmod",
)  # fmt: skip


def asks_to_change(question: str) -> bool:
    """The request tells the agent to change files ("Delete every file in photos.", "Please rename a.txt to
    b.txt"): it starts with a verb that changes files. A small model whose tools only read would otherwise read or
    list what the request names, the call its grammar forces on a named path, and answer from that."""
    first = re.match(r"\s*(?:please[,\s]+|now[,\s]+|can you\s+|could you\s+)?([A-Za-z]+)", question, re.IGNORECASE)
    return first is not None and first.group(1).lower() in _CHANGE_VERBS


def tool_mode(messages: list[Any], tools: list[Any], max_tool_rounds: int) -> tuple[str, list[Any]]:
    """The mode (see :attr:`LocalPrompt.mode`) and the tools the grammar allows calling in it."""
    if not tools:
        return "answer", []
    rounds = trailing_tool_rounds(messages)
    if rounds >= max_tool_rounds:
        return "answer", []
    question = _last_question(messages)
    if not rounds and asks_to_change(question) and not {t.name for t in tools} & CHANGING_TOOLS:
        return "answer", []  # no tool on offer can do it: say so rather than read or list what it names
    named = [] if rounds else named_calls(question, tools)
    # "Check with ls": of the calls on what the request names, the tool it names too
    said = [t for t in named if re.search(rf"(?<![\w/.-]){re.escape(t.name)}(?![\w/-])", question, re.IGNORECASE)]
    return ("call", said or named) if named else ("auto", tools)


def grammar(tools: list[Any], mode: str) -> str:
    """GBNF for the reply: an answer in words (not starting with ``<``), one tool call, or either."""
    answer = "answer ::= [^<\\n ] [^\\x00]*"
    if mode == "answer" or not tools:
        return f"root ::= answer\n{answer}"
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    call_schema = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": _argument_schema(t.parameters)},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for t in tools
        ]
    }
    rules = json_schema_to_gbnf(json.dumps(call_schema), prop_order=["name", "arguments", "path"])
    rules = re.sub(r"^root ::=", "call ::=", rules, flags=re.MULTILINE)
    choice = "" if mode == "call" else "answer | "
    return f'root ::= {choice}"{CALL_OPEN}" call "{CALL_CLOSE}"\n{answer}\n{rules}'


@dataclass(frozen=True)
class ReplyPlan:
    """What the next reply may be, decided once per call: the chat turns, the mode and the callable tools."""

    chat: list[dict[str, str]]
    mode: str
    tools: list[Any]
    """The tools the grammar lets the model call in this mode (narrowed to what the request names)."""
    source: str = ""
    """What the answer should come from: the output of the tool that has just answered (``""``: none). The
    provider favours its words a little (:data:`~pi_notebook.ai.providers.local.COPY_BIAS`)."""


def answer_source(messages: list[Any]) -> str:
    """The text of the tool result the next reply answers from: the last message's, when it is a tool result
    that is not an error (else ``""``)."""
    last = messages[-1] if messages else None
    if last is None or last.role != "toolResult" or last.is_error:
        return ""
    return _text_of(last.content)


def plan_reply(system: str, messages: list[Any], tools: list[Any], *, max_tool_rounds: int = 1) -> ReplyPlan:
    """The chat turns and what the reply may do (no template, no grammar: no llama.cpp needed)."""
    mode, callable_tools = tool_mode(messages, tools, max_tool_rounds)
    source = answer_source(messages) if mode == "answer" else ""
    return ReplyPlan(chat_messages(system, messages, tools), mode, callable_tools, source)


def build_prompt(
    template: str | None,
    system: str,
    messages: list[Any],
    tools: list[Any],
    *,
    max_tool_rounds: int = 1,
    plan: ReplyPlan | None = None,
    bos: str = "",
    eos: str = "",
) -> LocalPrompt:
    """The whole request for one reply (from ``plan`` when the caller already made it)."""
    plan = plan or plan_reply(system, messages, tools, max_tool_rounds=max_tool_rounds)
    return LocalPrompt(
        text=render(template, plan.chat, bos, eos),
        grammar=grammar(plan.tools, plan.mode),
        stop=stop_strings(template) + (SCAFFOLD_STOPS if plan.mode == "answer" else ()),
        mode=plan.mode,
    )


def parse_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """``<tool_call>{...}</tool_call>`` → (name, arguments); None when ``text`` is not a complete call."""
    body = text.strip()
    if not body.startswith(CALL_OPEN):
        return None
    body = body[len(CALL_OPEN) :]
    if body.endswith(CALL_CLOSE):
        body = body[: -len(CALL_CLOSE)]
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    arguments = data.get("arguments")
    return data["name"], arguments if isinstance(arguments, dict) else {}
