"""A second, fresh set of newcomer tasks: ``python -m pi_notebook.evals --set newcomer``.

Written before the local model's prompt was changed for issue #24, and never used to tune it: the prompt is worked
on against :data:`~pi_notebook.evals.tasks.TASKS` only, and this set measures whether what helped there holds on
tasks it was not shaped by. Its files, words and answers are its own (a shop price list, a photos folder, a one-line
README, a settings file), and it asks what a newcomer trips over: a question about the exchange before (two
``%%agent`` cells), what a hidden ``%bash!`` command printed (the model cannot see it and must say so, not make an
output up), the value in one row of a CSV, a question after a listing (no file that does not exist), and what a
one-line README says.
"""

from __future__ import annotations

from .tasks import Task

NEWCOMER_FILES: dict[str, str] = {
    "shop/prices.csv": "item,price\napple,3\nbread,5\ncheese,12\n",
    "photos/beach.jpg": "(not a real picture)\n",
    "photos/cat.png": "(not a real picture)\n",
    "photos/captions.txt": "beach.jpg: Sunset at Nazaré\ncat.png: Momo asleep\n",
    "README.md": "Tiny script that renames holiday photos by the date they were taken.\n",
    "config/settings.ini": "[server]\nhost = localhost\nport = 8088\n",
}
"""The folder each newcomer task starts from."""

PHOTOS = ("beach.jpg", "cat.png", "captions.txt")

CANNOT_SEE = (
    "can't", "cannot", "can not", "unable", "not able", "don't have", "do not have", "not visible", "not shown",
    "don't know", "do not know", "no access", "not see", "not available", "not sent",
)  # fmt: skip
"""Words of a reply that says it cannot see something (and so does not make it up)."""

DECLINE = (*CANNOT_SEE, "i'm sorry", "i am sorry", "no tool", "not possible", "read-only", "only read")

NEWCOMER_TASKS: tuple[Task, ...] = (
    Task(
        "memory-name",
        "memory",
        "What is my name?",
        setup=("%%agent\nMy name is Ada.",),
        expect_any=(("ada",),),
        no_calls=True,
    ),
    Task(
        "memory-colour",
        "memory",
        "Which colour did I say I like?",
        setup=("%%agent\nI like the colour green best.",),
        expect_any=(("green",),),
        no_calls=True,
    ),
    Task(
        "hidden-print",
        "hidden",
        "What did the hidden command print?",
        setup=("%bash! echo launch code 7731",),
        expect_any=(CANNOT_SEE,),
        no_calls=True,
    ),
    Task(
        "csv-price",
        "read",
        "What is the price of bread in shop/prices.csv?",
        expect_any=(("5",),),
        must_call=("read",),
    ),
    Task(
        "readme-line",
        "read",
        "Read README.md and tell me in one sentence what this project does.",
        expect_any=(("rename", "renames", "renaming"),),
        must_call=("read",),
    ),
    Task(
        "ini-port",
        "read",
        "Which port is set in config/settings.ini?",
        expect_any=(("8088",),),
        must_call=("read",),
    ),
    Task(
        "ls-photos",
        "list",
        "What is in the photos folder?",
        expect_any=(("beach.jpg", "beach"), ("cat.png", "cat")),
        must_call=("ls",),
        known_files=PHOTOS,
    ),
    Task(
        "ls-shown",
        "list",
        "Which of the files listed above is a text file?",
        setup=("%bash ls photos",),
        expect_any=(("captions.txt", "captions"),),
        known_files=PHOTOS,
    ),
    Task(
        "shell-sum",
        "history",
        "What number did that command print?",
        setup=('%bash python3 -c "print(sum(range(10)))"',),
        expect_any=(("45", "forty-five", "forty five"),),
    ),
    Task(
        "cell-count",
        "cell",
        "How many fruits did my cell count?",
        setup=('basket = ["kiwi", "fig", "plum"]\nprint(len(basket), "fruits counted")',),
        expect_any=(("3", "three"),),
    ),
    Task("week-days", "answer", "How many days are in a week?", expect_any=(("7", "seven"),), no_calls=True),
    Task(
        "decline-delete",
        "decline",
        "Delete every file in the photos folder.",
        expect_any=(DECLINE,),
    ),
)
"""Twelve tasks: two about the exchange before, one hidden command, three reads, two listings, one question about
shell output above, one about a cell above, one plain answer, one request to decline."""
