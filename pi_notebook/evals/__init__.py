"""An offline eval of small notebook tasks: ``python -m pi_notebook.evals --model local``.

It scores any model the magics can run (``local``, ``ollama/…``, ``anthropic/…`` with a key) on thirty-three
tasks a newcomer tries first: the original twenty, four about the notebook cells they just ran, five after an
``%%agent`` cell (three about it, two about something else), two after a hidden ``%bash!`` command and two about
the notebook's variables (``vars``) (the report
gives the original twenty's score apart); the README's table of scores comes from this command. ``--set newcomer``
scores a second set (:mod:`.newcomer`), ``--set fresh`` a third (:mod:`.fresh`) and ``--set unseen`` a fourth
(:mod:`.unseen`, written after the last change), all written without looking at the project's tasks; the README
says what was changed after the misses of the second and third were known.
"""

from .fresh import FRESH_FILES, FRESH_TASKS
from .newcomer import NEWCOMER_FILES, NEWCOMER_TASKS
from .run import TaskResult, check, report, run_eval, run_task
from .tasks import DEMO_FILES, TASKS, Task
from .unseen import UNSEEN_FILES, UNSEEN_TASKS

__all__ = [
    "DEMO_FILES", "FRESH_FILES", "FRESH_TASKS", "NEWCOMER_FILES", "NEWCOMER_TASKS", "TASKS", "UNSEEN_FILES",
    "UNSEEN_TASKS", "Task", "TaskResult", "check", "report", "run_eval", "run_task",
]  # fmt: skip
