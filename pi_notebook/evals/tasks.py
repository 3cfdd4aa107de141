"""The notebook tasks the offline eval scores a model on.

Each task is what a newcomer types in their first hour: a plain question, "list demo/", "read demo/todo.txt and
answer from it", "run a command and tell me what it printed", a question about shell output already in the
history, a question about the notebook cells they just ran (what a cell printed, why the last one failed, which
variable it defined, what its output says), a question about what they said in the ``%%agent`` cell before, what a
hidden ``%bash!`` command printed (the model cannot see it and must say so), and requests no tool can serve (the
model should say so, not act). A
task passes when the final reply answers it (a few expected words, case-insensitive, that only a reply which read
the context can hold), the right kind of tool was used or not used, nothing was written, and the reply does not
repeat itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DEMO_FILES: dict[str, str] = {
    "demo/todo.txt": "Buy milk.\nCall Ana about the offsite.\nFix the login test.\n",
    "demo/notes.md": "# Project Nimbus\n\nA weather dashboard. Owner: Priya. Deadline: Friday.\n",
    "demo/data.csv": "city,temp\nOslo,4\nLima,19\nCairo,27\n",
}
"""The folder every task starts from (written afresh into a temporary working directory)."""

DECLINE_WORDS = (
    "can't", "cannot", "can not", "unable", "not able", "don't have", "do not have", "no tool", "not possible",
    "i'm sorry", "i am sorry", "not available", "no access", "don't know", "do not know",
)  # fmt: skip

CANNOT_SEE = (
    "can't", "cannot", "can not", "unable", "not able", "don't have", "do not have", "not visible", "not shown",
    "don't know", "do not know", "no access", "not see", "not available", "not sent",
)  # fmt: skip
"""Words of a reply that says it cannot see something, rather than making it up."""


@dataclass(frozen=True)
class Task:
    """One eval task: the prompt, what runs before it, and what the reply must show."""

    name: str
    kind: str
    """answer | list | read | shell | history | cell | memory | followup | hidden | vars | decline"""
    prompt: str
    setup: tuple[str, ...] = ()
    """Cells run before the prompt, in the real shell: ``%bash ...`` (shell output the model should use from the
    history), ``%%agent`` (an exchange before, with the model under test) or plain Python code cells, each recorded
    as a ``notebookCell`` message as in a notebook."""
    expect_any: tuple[tuple[str, ...], ...] = ()
    """Each inner tuple: at least one of these words must be in the final reply (all tuples must hold)."""
    tools: str | None = None
    """``--tools`` for this task (None: the model's default tools)."""
    must_call: tuple[str, ...] = ()
    """At least one call to one of these tools."""
    no_calls: bool = False
    """The task is answered without any tool call."""
    known_files: tuple[str, ...] = ()
    """When set, every file name in the reply (``name.ext``) must be one of these (or in the prompt): a listing
    answered with a file that does not exist fails."""
    extra: dict = field(default_factory=dict)


def _files(*names: str) -> tuple[tuple[str, ...], ...]:
    return tuple((n, n.split(".")[0]) for n in names)


TASKS: tuple[Task, ...] = (
    Task("capital", "answer", "What is the capital of France?", expect_any=(("paris",),), no_calls=True),
    Task("arithmetic", "answer", "What is 2 + 3? Answer with the number.", expect_any=(("5", "five"),), no_calls=True),
    Task("sky", "answer", "What color is the sky on a clear day?", expect_any=(("blue",),), no_calls=True),
    Task("greeting", "answer", "Say hello to me in one short sentence.", expect_any=(("hello", "hi"),), no_calls=True),
    Task(
        "fruit",
        "answer",
        "Name one fruit that is yellow.",
        expect_any=(("banana", "lemon", "pineapple", "mango"),),
        no_calls=True,
    ),
    Task("ls-demo", "list", "List the files in demo.", expect_any=_files("todo.txt", "notes.md"), must_call=("ls",)),
    Task(
        "ls-question",
        "list",
        "What files are in the demo folder?",
        expect_any=_files("data.csv", "todo.txt"),
        must_call=("ls", "find"),
    ),
    Task(
        "ls-exists",
        "list",
        "Is there a file named notes.md in the demo folder? Check with ls.",
        expect_any=(("yes",),),
        must_call=("ls", "find"),
    ),
    Task(
        "read-first",
        "read",
        "Read demo/todo.txt and tell me the first item.",
        expect_any=(("milk",),),
        must_call=("read",),
    ),
    Task(
        "read-call",
        "read",
        "Who should I call, according to demo/todo.txt?",
        expect_any=(("ana",),),
        must_call=("read",),
    ),
    Task(
        "read-project",
        "read",
        "Read demo/notes.md. What is the project called?",
        expect_any=(("nimbus",),),
        must_call=("read",),
    ),
    Task("read-owner", "read", "Who is the owner in demo/notes.md?", expect_any=(("priya",),), must_call=("read",)),
    Task(
        "shell-echo",
        "shell",
        "Run the command `echo hello-pi` and tell me what it printed.",
        expect_any=(("hello-pi",),),
        tools="bash",
        must_call=("bash",),
    ),
    Task(
        "shell-wc",
        "shell",
        "Run `wc -l demo/todo.txt` and tell me how many lines the file has.",
        expect_any=(("3 lines", "three lines", "3 line", "is 3", "has 3", ": 3"),),
        tools="bash",
        must_call=("bash",),
    ),
    Task(
        "shell-pwd-file",
        "shell",
        "Run `cat demo/data.csv` and tell me the warmest city.",
        expect_any=(("cairo",),),
        tools="bash,read",
        must_call=("bash", "read"),
    ),
    Task(
        "history-build",
        "history",
        "What was the build number in the output of the command I ran?",
        setup=("%bash echo The build number is 4711",),
        expect_any=(("4711",),),
    ),
    Task(
        "history-todo",
        "history",
        "What is the last item on my todo list, shown above?",
        setup=("%bash cat demo/todo.txt",),
        expect_any=(("login",),),
    ),
    Task(
        "history-ls",
        "history",
        "Name one file that my ls command listed.",
        setup=("%bash ls demo",),
        expect_any=(("todo.txt", "notes.md", "data.csv"),),
    ),
    Task(
        "cell-print",
        "cell",
        "What number did my cell print?",
        setup=('n = 7 * 191\nprint("rows loaded:", n)',),
        expect_any=(("1337",),),
    ),
    Task(
        "cell-error",
        "cell",
        "Why did the last cell fail?",
        setup=('prices = {"apple": 120, "pear": 80}', 'prices["plum"]'),
        expect_any=(("plum", "keyerror"),),
    ),
    Task(
        "cell-variable",
        "cell",
        "Which variable did my last cell define?",
        setup=('temps = {"Oslo": 4, "Lima": 19, "Cairo": 27}', "warmest_city = max(temps, key=temps.get)"),
        expect_any=(("warmest_city",),),
    ),
    Task(
        "cell-output",
        "cell",
        "What does the output of my cell say about the meeting?",
        setup=('import datetime\n\ndatetime.date(2024, 5, 2).strftime("The meeting moved to %A at 3 pm.")',),
        expect_any=(("thursday",),),
    ),
    Task(
        "memory-city",
        "memory",
        "Which city do I live in?",
        setup=("%%agent\nI live in Porto.",),
        expect_any=(("porto",),),
        no_calls=True,
    ),
    Task(
        "memory-pet",
        "memory",
        "What is my dog called?",
        setup=("%%agent\nMy dog is called Rex.",),
        expect_any=(("rex",),),
        no_calls=True,
    ),
    Task(
        "memory-fresh",
        "memory",
        "Who is the owner in demo/notes.md?",
        setup=("%%agent\nList the files in demo.",),
        expect_any=(("priya",),),
        must_call=("read",),
    ),
    Task(
        "followup-sum",
        "followup",
        "What is 5 + 4? Answer with the number.",
        setup=("%%agent\nSay hello in one word.",),
        expect_any=(("9", "nine"),),
        no_calls=True,
    ),
    Task(
        "followup-decline",
        "followup",
        "Send a text message to Maria.",
        setup=("%%agent\nWhat is the capital of Spain?",),
        expect_any=(DECLINE_WORDS,),
        no_calls=True,
    ),
    Task(
        "hidden-last",
        "hidden",
        "What did my last command print?",
        setup=("%bash! echo token-5521",),
        expect_any=(CANNOT_SEE,),
        no_calls=True,
    ),
    Task(
        "hidden-then-read",
        "hidden",
        "What is the first item in demo/todo.txt?",
        setup=("%bash! echo token-5521",),
        expect_any=(("milk",),),
        must_call=("read",),
    ),
    Task(
        "vars-value",
        "vars",
        "What is the value of total in my notebook?",
        setup=('total = sum(len(line) for line in open("demo/todo.txt"))',),
        expect_any=(("58",),),
        must_call=("vars",),
    ),
    Task(
        "vars-columns",
        "vars",
        "Which columns does the DataFrame weather have?",
        setup=('import pandas as pd\n\nweather = pd.read_csv("demo/data.csv")',),
        expect_any=(("city",), ("temp",)),
        must_call=("vars",),
    ),
    Task("decline-email", "decline", "Send an email to Bob saying hi.", expect_any=(DECLINE_WORDS,), no_calls=True),
    Task(
        "decline-flight",
        "decline",
        "Book me a flight to Paris for tomorrow.",
        expect_any=(DECLINE_WORDS,),
        no_calls=True,
    ),
)
"""Thirty-three tasks: five plain answers, three listings, four reads, three commands, three questions about shell
output above, four about notebook cells above, three about the exchange before (two facts the user gave in the
``%%agent`` cell before, and a new question after a listing, which the model must not answer with that listing
again), two follow-ups about something else (a sum, a request to decline: what was said before must not get in the
way), two after a hidden ``%bash!`` command (what it printed: say it cannot be seen, never make it up; a question
about something else, answered as if it had not run), two about the notebook's variables that only ``vars``
can answer (a value computed in a cell, the columns of a DataFrame read from a file), two requests to decline.
Twenty of them are the original set (:data:`ORIGINAL`)."""

ORIGINAL = tuple(t.name for t in TASKS if t.kind not in ("cell", "memory", "followup", "hidden", "vars"))
"""The twenty tasks of the first eval (before the notebook cells, #22, and the memory and hidden tasks, #24)."""


SCAFFOLDING = ("answer the question from this output", "output of ", "<tool_call>", "question: ")
"""Phrases of the prompt's own scaffolding: a reply that repeats them is parroting, not answering."""


FILE_NAME = re.compile(r"(?<![\w.-])[\w-]+\.[A-Za-z]{2,4}(?![\w])")
"""A file name as a reply writes one: ``notes.txt``, ``cat.png``."""


def unknown_files(text: str, known: tuple[str, ...], prompt: str = "") -> list[str]:
    """The file names in ``text`` that are neither in ``known`` nor in ``prompt``."""
    allowed = {k.rsplit("/", 1)[-1].lower() for k in known} | {m.lower() for m in FILE_NAME.findall(prompt)}
    return [name for name in dict.fromkeys(FILE_NAME.findall(text)) if name.lower() not in allowed]


def contains(text: str, word: str) -> bool:
    """``word`` in ``text`` as a whole word or phrase, case-insensitive (``3`` is not found in ``2023``, ``hi``
    not in ``this``)."""
    text, word = text.lower().replace("’", "'"), word.lower()
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text) is not None
