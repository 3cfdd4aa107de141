"""Recorded cells on a real Jupyter kernel (#22): big and odd outputs stay bounded, and the cells survive a restart.

Each case runs in a real ``ipykernel`` (``jupyter_client``, as in :mod:`.test_real_kernel`) with the extension
loaded and cells recorded (``cells=all``, the default). The model is the real ``openai-completions`` provider
talking to a scripted server on 127.0.0.1, so what is measured is the HTTP body the model would receive. For each
case: the kernel's peak RSS growth while the cell runs (``VmHWM``, reset before the cell) with recording off and
on, after a warm-up run, so the recorder's own share is the difference; the longest line of the session file;
the request's size; and the one line in it that says what was cut. The numbers are printed (``pytest -s``).

IPython itself needs several times a big repr to show it (it formats, serialises and sends it): that part is the
same with recording off, and is not the recorder's to bound.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ai.scripted_server import Reply, ScriptedServer, sse
from tests.reliability.test_real_kernel import Kernel, kernels  # noqa: F401 (the fixture)
from tests.reliability.test_reattach_restart import restart

MB = 1024 * 1024
SETUP = (
    "%load_ext pi_notebook\nimport ctypes, gc, json, os, pi_notebook\nlibc = ctypes.CDLL('libc.so.6')\n"
    "os.environ.update(OPENAI_API_KEY='sk-local-' + 'test-0000', OPENAI_BASE_URL={url!r})"
)  # a cell that loads the extension is its own: not recorded
ASK = "%%agent --model openai-completions/gpt-4o-mini --tools none\n"
MESSAGES = (
    "import pi_notebook, json\nprint(json.dumps([m.to_pi_json() for m in pi_notebook.current_session().messages]))"
)
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="  # a 1×1 PNG
FRAME = '''
class Frame:
    """DataFrame-like: its repr is 50 MB (what pandas prints with display.max_rows = None)."""

    rows = 1_638_400  # × 32 characters: 50 MB

    def __repr__(self):
        row = "      1.000000    2.000000  foo\\n"  # 32 characters
        return "           a         b    c\\n" + row * self.rows + f"\\n[{self.rows} rows x 3 columns]"
'''


# --- the model, the kernel, what is measured -------------------------------------------------------------------


def answer(text: str) -> Reply:
    """A Chat Completions stream that says ``text``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]})

    return Reply(chunks=[chunk({"role": "assistant", "content": text}), chunk({}, "stop"), sse("[DONE]")])


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        s._httpd.handle_error = lambda request, address: None  # a client gone mid-reply is not the test's failure
        yield s


@pytest.fixture
def kernel(kernels, server, tmp_path, monkeypatch) -> Kernel:  # noqa: F811
    """A real kernel with the extension loaded, its temp files (full outputs) in ``tmp_path/tmp``."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    started = kernels()
    started.run(SETUP.format(url=server.url + "/v1"))
    return started


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise LookupError(field)


def peak_growth(kernel: Kernel, code: str, cells: str) -> float:
    """The kernel's peak RSS growth (MB) while ``code`` runs with ``cells`` recorded (``off`` or ``all``)."""
    kernel.run(f"pi_notebook.current_session().config.cells = {cells!r}; gc.collect(); libc.malloc_trim(0)")
    before = _status_mb(kernel.pid, "VmRSS")
    Path(f"/proc/{kernel.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
    kernel.watch(kernel.send(code), timeout=300)
    return _status_mb(kernel.pid, "VmHWM") - before


def recorder_share(kernel: Kernel, code: str) -> tuple[float, float]:
    """(peak growth with recording on, its part that recording adds), in MB; ``code`` is recorded once, after a
    small cell recorded first (what the first recorded cell of a kernel imports is not the output's cost)."""
    peak_growth(kernel, "print('warm-up')", "all")
    peak_growth(kernel, code, "off")  # a kernel's first big allocation costs more than the next
    off = peak_growth(kernel, code, "off")
    on = peak_growth(kernel, code, "all")
    return on, on - off


def session_lines(folder: Path) -> list[bytes]:
    return (folder / ".pi_sessions" / "work.jsonl").read_bytes().splitlines()


def stored_cells(folder: Path) -> list[dict[str, Any]]:
    """The notebookCell messages of the session file."""
    entries = [json.loads(line) for line in session_lines(folder)]
    return [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "notebookCell"]


def ask(kernel: Kernel, server: ScriptedServer, prompt: str, reply: str = "Seen.") -> bytes:
    """Run ``%%agent prompt``; the body of the request the model received."""
    server.add(answer(reply))
    seen = len(server.requests)
    kernel.run(ASK + prompt)
    assert len(server.requests) == seen + 1
    return server.requests[-1].body


def user_texts(body: bytes) -> str:
    """The text of the request's user messages (where the recorded cells are), joined."""
    parts = []
    for message in json.loads(body)["messages"]:
        if message["role"] == "user":
            content = message["content"]
            parts += [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    return "\n".join(parts)


def report(case: str, **numbers: float) -> None:
    print(
        f"\n[{case}] " + ", ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in numbers.items())
    )


# --- big outputs: the tail is kept, the whole goes to a file, the recorder holds no copy ----------------------------


BIG = {  # code, the bytes it prints, how its output ends
    "a 50 MB DataFrame-like repr": ("Frame()", 50 * MB, "[1638400 rows x 3 columns]\n"),
    "50 MB printed at once": (
        "print('      1.000000    2.000000  foo\\n' * 1_638_400, end='')",
        50 * MB,
        "2.000000  foo\n",
    ),
    "10,000 printed lines": ("for i in range(10_000): print(f'line {i}')", 98_890, "line 9999\n"),
}


@pytest.mark.parametrize("case", list(BIG))
def test_big_text_output_keeps_a_tail_a_file_and_one_line_saying_so(case, kernel, server, tmp_path):
    code, payload, tail = BIG[case]
    kernel.run("pi_notebook.current_session().config.cells = 'off'")
    kernel.run(FRAME)
    on, share = recorder_share(kernel, code)
    cell = stored_cells(tmp_path)[-1]
    assert cell["source"] == code and cell["truncated"] and cell["output"].endswith(tail)
    assert len(cell["output"].encode()) <= 50 * 1024  # the tail Pi keeps of a command's output
    full = Path(cell["fullOutputPath"])
    assert full.parent == tmp_path / "tmp" and full.stat().st_size >= payload
    body = ask(kernel, server, "What did the last cell print?")
    sent = user_texts(body)
    assert sent.count("[Output truncated. Full output: ") == 1 and str(full) in sent
    longest = max(len(line) for line in session_lines(tmp_path))
    report(case, payload_mb=payload / MB, peak_mb=on, recorder_mb=share, line_kb=longest / 1024,
           request_kb=len(body) / 1024)  # fmt: skip
    assert share < 8, f"recording adds {share:.1f} MB to the kernel's peak"  # it keeps no copy of the output
    assert longest < 64 * 1024 and len(body) < 64 * 1024


def test_a_20_mb_image_is_left_out_with_one_line_and_costs_nothing(kernel, server, tmp_path):
    code = "from IPython.display import Image, display\ndisplay(Image(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(20 * 2**20)))"
    on, share = recorder_share(kernel, code)
    cell = stored_cells(tmp_path)[-1]
    assert cell["images"] == [] and cell["omitted"] == ["an image/png of 20.0 MB was left out: larger than 4.0 MB"]
    body = ask(kernel, server, "What does the picture show?")
    assert user_texts(body).count("[an image/png of 20.0 MB was left out: larger than 4.0 MB]") == 1
    assert b"image_url" not in body
    longest = max(len(line) for line in session_lines(tmp_path))
    report("a 20 MB image", payload_mb=20.0, peak_mb=on, recorder_mb=share, line_kb=longest / 1024,
           request_kb=len(body) / 1024)  # fmt: skip
    assert share < 8 and longest < 16 * 1024 and len(body) < 16 * 1024


def test_an_error_with_a_20_mb_message_keeps_its_start_and_end(kernel, server, tmp_path):
    code = "raise ValueError('start ' + 'v' * 20 * 2**20 + ' end')"
    on, share = recorder_share(kernel, code)
    error = stored_cells(tmp_path)[-1]["error"]
    assert error["name"] == "ValueError" and error["value"].startswith("start vvv") and error["value"].endswith("end")
    assert "characters cut here: a long error message" in error["value"] and len(error["value"]) < 3_000
    assert error["traceback"].startswith("…\n") and error["traceback"].endswith(" end")
    body = ask(kernel, server, "Why did it fail?")
    assert user_texts(body).count("characters cut here: a long error message") == 1
    longest = max(len(line) for line in session_lines(tmp_path))
    report("a 20 MB error message", payload_mb=20.0, peak_mb=on, recorder_mb=share, line_kb=longest / 1024,
           request_kb=len(body) / 1024)  # fmt: skip
    assert longest < 32 * 1024 and len(body) < 32 * 1024  # (its peak varies by a copy of 20 MB, with or without)


# --- odd output: binary junk ------------------------------------------------------------------------------------


JUNK = r"""
import sys
junk = bytes(range(256)) * 4 + b'\xff\xfe\xc3\x28\xed\xa0\x80\x00\x00'
print('before', junk.decode('utf-8', 'surrogateescape'), 'after')  # lone surrogates, NULs, C0 and C1
print('\x1b[31mred\x1b[0m \x1b]0;a title\x07 \x1b[2J\x1b[Hcleared', junk.decode('latin-1'))
sys.stderr.write('err \udc80\udcff \x00 end\n')  # (a high surrogate such as \ud800 stops ipykernel's own output)

class Junk:
    def __repr__(self):
        return 'repr ' + junk.decode('utf-8', 'surrogateescape') + ' \x1b[1mbold\x1b[0m'

display(Junk())
raise ValueError('bad \udcff \x00 \x1b[31mvalue')
"""


def test_binary_junk_is_recorded_as_clean_text_and_sent_as_valid_json(kernel, server, tmp_path):
    reply = kernel.watch(kernel.send(JUNK), timeout=60)
    assert [e["ename"] for e in reply.errors] == ["ValueError"]  # the kernel itself coped
    (cell,) = stored_cells(tmp_path)
    output = cell["output"]
    for word in ("before", "after", "red", "cleared", "err", "end", "repr", "bold"):
        assert word in output
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", output)  # ANSI and control characters dropped
    assert not re.search(r"[\ud800-\udfff]", output)  # no lone surrogate: a provider would refuse the JSON
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]", cell["error"]["traceback"])
    raw = (tmp_path / ".pi_sessions" / "work.jsonl").read_bytes()
    raw.decode("utf-8")  # strict: the file is valid UTF-8
    body = ask(kernel, server, "What did it print?")
    sent = body.decode("utf-8")  # strict, and valid JSON
    assert "before" in user_texts(body) and "\\u0000" not in sent
    report("binary junk", line_kb=max(len(line) for line in session_lines(tmp_path)) / 1024,
           request_kb=len(body) / 1024)  # fmt: skip


# --- the stop button: a real SIGINT -------------------------------------------------------------------------------


def test_a_cell_stopped_by_a_real_interrupt_is_recorded_as_interrupted_and_bounded(kernel, server, tmp_path):
    msg_id = kernel.send("import time\nprint('working', flush=True)\ntime.sleep(120)\nprint('never')")
    kernel.watch(msg_id, until=lambda r: "working" in r.output, timeout=60)
    kernel.km.interrupt_kernel()
    reply = kernel.watch(msg_id, timeout=60)
    assert [e["ename"] for e in reply.errors] == ["KeyboardInterrupt"]

    before = _status_mb(kernel.pid, "VmRSS")
    Path(f"/proc/{kernel.pid}/clear_refs").write_text("5")
    spam = "i = 0\nwhile True:\n    print('spam', i, 'x' * 200)\n    i += 1"
    msg_id = kernel.send(spam)
    printed = kernel.watch(msg_id, until=lambda r: sum(map(len, r.text)) > 20 * MB, timeout=120)
    kernel.km.interrupt_kernel()
    kernel.watch(msg_id, printed, timeout=60)
    peak = _status_mb(kernel.pid, "VmHWM") - before
    kernel.run("print('after the stop')")  # the recorder's hooks were put back: the next cell is its own

    slept, spammed, after = stored_cells(tmp_path)
    assert slept["cancelled"] and slept["error"]["name"] == "KeyboardInterrupt" and slept["output"] == "working\n"
    assert spammed["cancelled"] and spammed["truncated"] and len(spammed["output"].encode()) <= 50 * 1024
    assert spammed["output"].rstrip("\n").rsplit("\n", 1)[-1].startswith("spam")  # up to where the interrupt fell
    assert os.path.getsize(spammed["fullOutputPath"]) >= 20 * MB
    assert after["output"] == "after the stop\n" and not after["cancelled"]
    body = ask(kernel, server, "Why did it stop?")
    sent = user_texts(body)
    assert sent.count("(cell interrupted)") == 2 and sent.count("[Output truncated.") == 1
    longest = max(len(line) for line in session_lines(tmp_path))
    report("interrupted", printed_mb=sum(map(len, printed.text)) / MB, peak_mb=peak, line_kb=longest / 1024,
           request_kb=len(body) / 1024)  # fmt: skip
    # (the kernel's peak is mostly ipykernel's: what it buffers of the flood between two sends)
    assert peak < 128 and longest < 64 * 1024 and len(body) < 128 * 1024


# --- a background thread still printing when the next %%agent runs --------------------------------------------------


THREAD = """
import sys, threading, time
label, stop, kept_stream = ['during-1'], threading.Event(), sys.stdout  # kept_stream: the stream this cell had

def chatter():
    i = 0
    while not stop.is_set():
        print(label[0], i, 'y' * 100)            # print: whatever sys.stdout is now
        kept_stream.write(f'kept {label[0]} {i}\\n')  # a stream kept from the cell that started the thread
        i += 1
        time.sleep(0.001)

threading.Thread(target=chatter, daemon=True).start()
time.sleep(0.3)
print('cell one done')
"""


def test_a_background_thread_printing_later_reaches_no_later_cell_nor_the_request(kernel, server, tmp_path):
    kernel.run(THREAD)
    kernel.run("label[0] = 'LA' + 'TE'\ntime.sleep(1)\nprint('cell two')")
    body = ask(kernel, server, "What did my cells print?", reply="They printed ticks.")
    before = _status_mb(kernel.pid, "VmRSS")
    time.sleep(2)  # the thread goes on printing after the agent's turn: nothing keeps it
    grown = _status_mb(kernel.pid, "VmRSS") - before
    kernel.run("stop.set()")
    one, two, _ = stored_cells(tmp_path)
    # The thread's prints while its cell ran are that cell's (bounded as any output); afterwards they are nobody's.
    assert "during-1" in one["output"] and "cell one done\n" in one["output"] and "LATE" not in one["output"]
    assert two["output"] == "cell two\n"
    (line,) = two["omitted"]
    assert re.fullmatch(r"[\d,]+ characters printed meanwhile by a thread an earlier cell started were left out", line)
    assert "LATE" not in user_texts(body) and "LATE" not in json.dumps(one)
    messages = json.loads(kernel.run(MESSAGES).strip().splitlines()[-1])
    prompt, reply = [m for m in messages if m["role"] in ("user", "assistant")]
    assert prompt["content"] == [{"type": "text", "text": "What did my cells print?"}]
    assert reply["content"] == [{"type": "text", "text": "They printed ticks."}]
    # The stream the first cell kept writes into no ended cell: no full-output file is opened for it afterwards.
    files = {p.name for p in (tmp_path / "tmp").glob("pi-bash-*.log")}
    recorded = {Path(c["fullOutputPath"]).name for c in (one, two) if c.get("fullOutputPath")}
    assert files <= recorded, files - recorded
    report("background thread", rss_growth_mb=grown, request_kb=len(body) / 1024,
           line_kb=max(len(line) for line in session_lines(tmp_path)) / 1024)  # fmt: skip
    assert grown < 8 and len(body) < 64 * 1024


# --- a real restart: the cells come back into the history and the next request -------------------------------------


def test_recorded_cells_come_back_after_a_real_kernel_restart(kernel, server, tmp_path):
    kernel.run("x = [3, 1, 2]")
    failed = kernel.watch(kernel.send("d = {'a': 1}\nd['b']"))
    assert [e["ename"] for e in failed.errors] == ["KeyError"]
    kernel.run(f"from IPython.display import Image, display\nimport base64\ndisplay(Image(base64.b64decode({PNG!r})))")
    first = ask(kernel, server, "What went wrong, and what does the picture show?", reply="d has no key 'b'.")
    stored = stored_cells(tmp_path)  # the Pi JSONL file
    assert [c["source"].splitlines()[0] for c in stored] == [
        "x = [3, 1, 2]",
        "d = {'a': 1}",
        "from IPython.display import Image, display",
    ]
    assert stored[1]["error"]["name"] == "KeyError" and "d['b']" in stored[1]["error"]["traceback"]
    assert [i["data"] for i in stored[2]["images"]] == [PNG]

    restart(kernel)
    kernel.run(SETUP.format(url=server.url + "/v1"))
    messages = json.loads(kernel.run(MESSAGES).strip().splitlines()[-1])
    assert stored_cells(tmp_path) == stored  # the file holds them, untouched by loading it again
    assert [m for m in messages if m["role"] == "notebookCell"] == stored  # back in the history, as stored
    assert [m["role"] for m in messages] == ["notebookCell"] * 3 + ["user", "assistant"]
    second = ask(kernel, server, "And after the restart?")
    for body in (first, second):
        sent = user_texts(body)
        assert "x = [3, 1, 2]" in sent and "The cell failed with KeyError: 'b'" in sent and "d['b']" in sent
        images = [b for m in json.loads(body)["messages"] if isinstance(m["content"], list) for b in m["content"]
                  if b.get("type") == "image_url"]  # fmt: skip
        assert [b["image_url"]["url"] for b in images] == [f"data:image/png;base64,{PNG}"]
    assert "d has no key 'b'." in second.decode()  # the reply before the restart is in the history too
