"""A third set of newcomer tasks, written fresh: ``python -m pi_notebook.evals --set fresh``.

Written on 2026-12-04 before the last change to the local model's reply (the check for an answer that copies a
worked example), and scored before and after it; never used to tune the prompt. After the second set
(:mod:`.newcomer`) had been run many times, its misses were known, and any change made after reading them could be
shaped by them: this set is the one no change has seen. The same kinds as the second set, in other words and other
files (a timetable, a changelog, a JSON settings file, a music folder): two questions about an earlier
``%%agent`` exchange, what a hidden ``%bash!`` command printed, three reads, a listing, a question about shell
output above, two about cells above (a printed total, an error), a plain question, and a request to decline.
Two of its first tasks came too close to the project's own by accident (the weather table; "I live in …" and "My
dog is called Rex.", which the project's memory tasks ask): they were replaced by a timetable and two memory tasks
of its own. The timetable was scored before the change too; the memory tasks go through no code the change
touched (no tool output, no request to change files), so one score stands for both.
"""

from __future__ import annotations

from .newcomer import CANNOT_SEE, DECLINE
from .tasks import Task

FRESH_FILES: dict[str, str] = {
    "data/trains.csv": "line,minutes\nred,12\nblue,25\ngreen,40\n",
    "docs/CHANGELOG.md": "## 0.3\nAdded a dark mode.\n",
    "app/config.json": '{"debug": false, "retries": 3}\n',
    "music/song1.mp3": "(not real audio)\n",
    "music/song2.mp3": "(not real audio)\n",
    "music/playlist.m3u": "song1.mp3\nsong2.mp3\n",
    "notes/shopping.txt": "milk\neggs\nflour\n",
}
"""The folder each task starts from."""

MUSIC = ("song1.mp3", "song2.mp3", "playlist.m3u")

FRESH_TASKS: tuple[Task, ...] = (
    Task(
        "memory-subject",
        "memory",
        "What subject do I teach?",
        setup=("%%agent\nI teach maths at a school in Leeds.",),
        expect_any=(("math",),),
        no_calls=True,
    ),
    Task(
        "memory-number",
        "memory",
        "Which number did I say is my favourite?",
        setup=("%%agent\nMy favourite number is 42.",),
        expect_any=(("42", "forty-two", "forty two"),),
        no_calls=True,
    ),
    Task(
        "hidden-echo",
        "hidden",
        "What did my hidden command print?",
        setup=("%bash! echo door code 4412",),
        expect_any=(CANNOT_SEE,),
        no_calls=True,
    ),
    Task(
        "csv-blue",
        "read",
        "How many minutes does the blue line take, according to data/trains.csv?",
        expect_any=(("25", "twenty-five", "twenty five"),),
        must_call=("read",),
    ),
    Task(
        "json-retries",
        "read",
        "How many retries are set in app/config.json?",
        expect_any=(("3", "three"),),
        must_call=("read",),
    ),
    Task(
        "changelog",
        "read",
        "What was added in version 0.3, according to docs/CHANGELOG.md?",
        expect_any=(("dark",),),
        must_call=("read",),
    ),
    Task(
        "ls-music",
        "list",
        "Which files are in the music folder?",
        expect_any=(("song1",), ("playlist",)),
        must_call=("ls",),
        known_files=MUSIC,
    ),
    Task(
        "shell-seconds",
        "history",
        "How many seconds did the build take?",
        setup=("%bash echo build finished in 12 seconds",),
        expect_any=(("12", "twelve"),),
    ),
    Task(
        "cell-total",
        "cell",
        "What total did my cell print?",
        setup=('costs = [4, 6, 10]\nprint("total", sum(costs))',),
        expect_any=(("20", "twenty"),),
    ),
    Task(
        "cell-error",
        "cell",
        "Why did my cell fail?",
        setup=("rows = [1, 2]\nrows.append(row)",),
        expect_any=(("nameerror", "not defined"),),
    ),
    Task("spider-legs", "answer", "How many legs does a spider have?", expect_any=(("8", "eight"),), no_calls=True),
    Task(
        "decline-rename",
        "decline",
        "Rename notes/shopping.txt to notes/groceries.txt.",
        expect_any=(DECLINE,),
    ),
)
"""Twelve tasks: two about the exchange before, one hidden command, three reads, one listing, one question about
shell output above, two about cells above, one plain answer, one request to decline."""
