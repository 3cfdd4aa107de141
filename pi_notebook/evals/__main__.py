"""``python -m pi_notebook.evals [--model SPEC] [--tasks a,b] [--max-turns N]``: score a model, print a table."""

from __future__ import annotations

import argparse
import sys

from .run import line, report, run_eval
from .tasks import TASKS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pi_notebook.evals", description=__doc__)
    parser.add_argument("--model", default="local", help="a --model spec (default: local)")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: all)")
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
    wanted = {n.strip() for n in args.tasks.split(",") if n.strip()}
    unknown = wanted - {t.name for t in TASKS}
    if unknown:
        parser.error(f"unknown task(s) {', '.join(sorted(unknown))}; known: {', '.join(t.name for t in TASKS)}")
    tasks = tuple(t for t in TASKS if not wanted or t.name in wanted)
    results = run_eval(args.model, tasks, max_turns=args.max_turns, progress=lambda r: print(line(r), flush=True))
    print(report(args.model, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
