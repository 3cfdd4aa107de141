"""``python -m pi_notebook.evals [--model SPEC] [--set NAME] [--tasks a,b] [--max-turns N]``: score a model on the
project's tasks (default) or a newcomer set (newcomer, fresh, unseen), print a table."""

from __future__ import annotations

import argparse
import sys

from .fresh import FRESH_FILES, FRESH_TASKS
from .newcomer import NEWCOMER_FILES, NEWCOMER_TASKS
from .run import line, report, run_eval
from .tasks import DEMO_FILES, TASKS
from .unseen import UNSEEN_FILES, UNSEEN_TASKS

SETS = {
    "project": (TASKS, DEMO_FILES),
    "newcomer": (NEWCOMER_TASKS, NEWCOMER_FILES),
    "fresh": (FRESH_TASKS, FRESH_FILES),
    "unseen": (UNSEEN_TASKS, UNSEEN_FILES),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pi_notebook.evals", description=__doc__)
    parser.add_argument("--model", default="local", help="a --model spec (default: local)")
    parser.add_argument("--set", default="project", choices=sorted(SETS), help="which tasks (default: project)")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: all of the set)")
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--sampling", default="", help="local model only: k=v,... overrides, e.g. repeat_penalty=1.1")
    args = parser.parse_args(argv)
    if args.sampling:
        from ..ai.providers import local

        for pair in args.sampling.split(","):
            key, _, value = pair.partition("=")
            if key.strip() not in local.SAMPLING:
                parser.error(f"--sampling: {key!r} is not one of {', '.join(local.SAMPLING)}")
            local.SAMPLING[key.strip()] = float(value)
    every, files = SETS[args.set]
    wanted = {n.strip() for n in args.tasks.split(",") if n.strip()}
    unknown = wanted - {t.name for t in every}
    if unknown:
        parser.error(f"unknown task(s) {', '.join(sorted(unknown))}; known: {', '.join(t.name for t in every)}")
    tasks = tuple(t for t in every if not wanted or t.name in wanted)
    results = run_eval(
        args.model, tasks, max_turns=args.max_turns, files=files, progress=lambda r: print(line(r), flush=True)
    )
    print(report(args.model, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
