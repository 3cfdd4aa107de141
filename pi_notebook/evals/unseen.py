"""A fourth set of newcomer tasks, written after the last change: ``python -m pi_notebook.evals --set unseen``.

The second and third sets (:mod:`.newcomer`, :mod:`.fresh`) had both been scored, and their misses read, before
the local model's last change (the line of a tool's output the question names; requests to change files answered
at once): their scores after it are not untouched. This set was written after that change, scored once, and no
change has been made since with it in view. The same kinds, in other words and other files (a parts list, a team
page, a setup file, a folder of logs): two questions about an earlier ``%%agent`` exchange, what a hidden
``%bash!`` command printed, three reads, a listing, a question about shell output above, one about a cell above,
a plain question, and a request to decline.
"""

from __future__ import annotations

from .newcomer import CANNOT_SEE, DECLINE
from .tasks import Task

UNSEEN_FILES: dict[str, str] = {
    "inventory.csv": "part,count\nbolt,40\nnut,75\nwasher,120\n",
    "team/roles.md": "# Team\n\n- Noor: design\n- Sam: backend\n- Lea: testing\n",
    "setup.cfg": "[metadata]\nname = tidyphotos\nversion = 1.4.2\n",
    "logs/monday.log": "ok\n",
    "logs/tuesday.log": "ok\n",
    "logs/errors.log": "disk full\n",
    "recipes/pancakes.txt": "Pancakes\nServes 4\nFlour 200 g\nMilk 300 ml\nEggs 2\n",
}
"""The folder each task starts from."""

LOGS = ("monday.log", "tuesday.log", "errors.log")

UNSEEN_TASKS: tuple[Task, ...] = (
    Task(
        "memory-commute",
        "memory",
        "How do I get to work?",
        setup=("%%agent\nI ride a bicycle to work every day.",),
        expect_any=(("bicycle", "bike"),),
        no_calls=True,
    ),
    Task(
        "memory-birthday",
        "memory",
        "In which month is my birthday?",
        setup=("%%agent\nMy birthday is in March.",),
        expect_any=(("march",),),
        no_calls=True,
    ),
    Task(
        "hidden-build",
        "hidden",
        "What was the output of the hidden command?",
        setup=("%bash! echo build id 88-Z",),
        expect_any=(CANNOT_SEE,),
        no_calls=True,
    ),
    Task(
        "csv-washers",
        "read",
        "How many washers does inventory.csv list?",
        expect_any=(("120",),),
        must_call=("read",),
    ),
    Task(
        "md-role",
        "read",
        "What does Sam do, according to team/roles.md?",
        expect_any=(("backend",),),
        must_call=("read",),
    ),
    Task(
        "cfg-version",
        "read",
        "Which version is in setup.cfg?",
        expect_any=(("1.4.2",),),
        must_call=("read",),
    ),
    Task(
        "ls-logs",
        "list",
        "What files are in the logs folder?",
        expect_any=(("monday",), ("errors",)),
        must_call=("ls",),
        known_files=LOGS,
    ),
    Task(
        "shell-failed",
        "history",
        "How many tests failed in that run?",
        setup=("%bash echo 3 tests failed",),
        expect_any=(("3", "three"),),
    ),
    Task(
        "cell-mean",
        "cell",
        "What mean speed did my cell print?",
        setup=('speeds = [30, 50, 70]\nprint("mean speed", sum(speeds) / len(speeds))',),
        expect_any=(("50",),),
    ),
    Task(
        "water-boils",
        "answer",
        "At how many degrees Celsius does water boil?",
        expect_any=(("100", "hundred"),),
        no_calls=True,
    ),
    Task(
        "decline-move",
        "decline",
        "Move recipes/pancakes.txt into the logs folder.",
        expect_any=(DECLINE,),
    ),
)
"""Eleven tasks: two about the exchange before, one hidden command, three reads, one listing, one question about
shell output above, one about a cell above, one plain answer, one request to decline."""
