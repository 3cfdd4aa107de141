"""Time loading a 10,000-entry Pi session: ``SessionFile.open`` + ``build_session_context``.

Run: ``python -m tests.benchmarks.bench_session_load [--entries N] [--repeat R] [--profile]``; the measures
P5, P5b and P5c (``python -m tests.benchmarks --only P5,P5b,P5c``) write their sessions with :func:`write_session`.

The session is written with ``SessionFile``'s own appends, into a temporary directory: a realistic mix of
user turns, assistant replies with thinking and tool calls, tool results, ``!`` commands, extension messages,
labels, a branch and compactions. The baseline, measured in the same run on the same file, is the least any
loader must do: read the bytes, split the lines, ``json.loads`` each one. The issue's target: "loading
10,000 entries takes well under a second". Times are the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.coding_agent.session_entries import SessionWarning

WORDS = ["the", "session", "file", "tree", "branch", "leaf", "entry", "summary", "tool", "call", "result"]
MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}


def text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(WORDS, k=words))


def assistant(rng: random.Random, content: list[dict[str, Any]], stop: str, now: int) -> dict[str, Any]:
    tokens = rng.randint(500, 50_000)
    cost = {"input": tokens * 3e-6, "output": 0.0075, "cacheRead": 0, "cacheWrite": 0, "total": tokens * 3e-6}
    usage = {
        "input": tokens,
        "output": 500,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": tokens,
        "cost": cost,
    }
    return {
        "role": "assistant",
        "content": content,
        **MODEL,
        "usage": usage,
        "stopReason": stop,
        "timestamp": now,
    }


def write_session(path: Path, entries: int, *, compactions: bool = True, seed: int = 7) -> None:
    """Append about ``entries`` entries of a coding-agent session."""
    rng = random.Random(seed)
    now = 1_772_370_000_000
    with SessionFile.create(path, cwd="/home/user/project") as session:
        session.append_model_change("anthropic", "claude-sonnet-4-5")
        session.append_thinking_level_change("medium")
        session.append_session_info("Benchmark session")
        turn, count = 0, 3  # (session.entries would copy the list at every turn)
        while count < entries:
            turn, now = turn + 1, now + 10_000
            prompt = session.append_message({"role": "user", "content": text(rng, 30), "timestamp": now})
            count += 2  # the prompt and the final reply
            for call in range(rng.randint(0, 3)):
                call_id = f"toolu_{turn}_{call}"
                thinking = {"type": "thinking", "thinking": text(rng, 40), "thinkingSignature": "sig" * 20}
                tool_call = {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "f.py"}}
                content = [thinking, {"type": "text", "text": text(rng, 20)}, tool_call]
                session.append_message(assistant(rng, content, "toolUse", now))
                result = {"role": "toolResult", "toolCallId": call_id, "toolName": "read", "isError": False}
                result |= {
                    "content": [{"type": "text", "text": text(rng, 150)}],
                    "details": {},
                    "timestamp": now,
                }
                session.append_message(result)
                count += 2
            session.append_message(assistant(rng, [{"type": "text", "text": text(rng, 80)}], "stop", now))
            if turn % 7 == 0:
                bash = {
                    "role": "bashExecution",
                    "command": "make test",
                    "output": text(rng, 100),
                    "exitCode": 0,
                }
                session.append_message({**bash, "cancelled": False, "truncated": False, "timestamp": now})
                count += 1
            if turn % 11 == 0:
                session.append_custom_message_entry("reminder", text(rng, 10), display=turn % 2 == 0)
                count += 1
            if turn % 13 == 0:
                session.append_label_change(prompt.id, f"turn {turn}")
                count += 1
            if compactions and turn % 300 == 0:
                session.append_compaction(text(rng, 200), prompt.id, 120_000, {"readFiles": [], "modifiedFiles": []})
                count += 1
            if turn == 50:  # one abandoned branch
                session.branch_with_summary(prompt.id, text(rng, 30))
                count += 1


def best_times(repeat: int, **fns: Callable[[], object]) -> dict[str, float]:
    """The best time of each function, run in turns so that a busy machine slows them alike."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def load(path: Path) -> None:
    with SessionFile.open(path, readonly=True) as session:
        session.build_session_context()


def baseline(path: Path) -> None:
    for line in path.read_bytes().decode("utf-8").split("\n"):
        if line:
            json.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="print the top functions of one load")
    args = parser.parse_args()
    warnings.simplefilter("error", SessionWarning)  # the file written here must load cleanly

    with tempfile.TemporaryDirectory() as tmp:
        path, flat = Path(tmp) / "bench.jsonl", Path(tmp) / "no_compaction.jsonl"
        start = time.perf_counter()
        write_session(path, args.entries)
        write_time = time.perf_counter() - start
        write_session(flat, args.entries, compactions=False)
        for name in (path, flat):
            with SessionFile.open(name, readonly=True) as session:
                count, messages = len(session.entries), len(session.build_session_context().messages)
            size = name.stat().st_size / 1e6
            print(f"{name.name}: {count} entries, {size:.1f} MB, {messages} messages in the context")
        print(f"{'writing bench.jsonl, one flushed append per entry':<52} {write_time * 1000:6.0f} ms")

        timed = {"base": lambda: baseline(path), "ours": lambda: load(path), "flat": lambda: load(flat)}
        best = best_times(args.repeat, **timed)
        rows = [
            ("baseline: read + split + json.loads per line", best["base"]),
            ("SessionFile.open + build_session_context", best["ours"]),
            ("the same without compaction (every message typed)", best["flat"]),
        ]
        for label, seconds in rows:
            print(f"{label:<52} {seconds * 1000:6.0f} ms  ({seconds / best['base']:4.1f}x baseline)")
        verdict = "met" if max(best["ours"], best["flat"]) < 1.0 else "NOT met"
        print(f"target, well under a second for 10,000 entries: {verdict}")

        if args.profile:
            profiler = cProfile.Profile()
            profiler.runcall(load, path)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
