"""Lesson 13 (``notebooks/13-errors-thinking-images.ipynb``): failed replies, thinking and images on the next
request.

:class:`AnthropicWire` is a real HTTP server on 127.0.0.1 that answers in Anthropic's streaming wire format, as the
test suite's scripted servers do (``tests/ai/scripted_server.py``): the real ``anthropic`` SDK talks to it, with
no network and no key. Lesson 14 uses it too. The ``check_*`` functions check the lesson's three exercises.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..agent_core import convert_to_llm
from ..ai import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    build_request,
    get_model,
)
from ..ai.providers.transform import transform_messages
from ..coding_agent import BashExecutionMessage
from .exercise import expect, report, unanswered

# --- Anthropic's wire format -----------------------------------------------------------------------------


def _event(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def _block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    chunks = [_event({"type": "content_block_start", "index": index, "content_block": start})]
    chunks += [_event({"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    return [*chunks, _event({"type": "content_block_stop", "index": index})]


def text(index: int, *parts: str) -> list[bytes]:
    """A text block streamed in ``parts``."""
    return _block(index, {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in parts])


def thinking(index: int, thought: str, signature: str) -> list[bytes]:
    """A thinking block and its signature (Anthropic sends the signature as the block's last delta)."""
    deltas = [{"type": "thinking_delta", "thinking": thought}, {"type": "signature_delta", "signature": signature}]
    return _block(index, {"type": "thinking", "thinking": "", "signature": ""}, deltas)


def start(input_tokens: int = 20, cache_read: int = 0, cache_write: int = 0) -> list[bytes]:
    """``message_start``, with the input side of the usage."""
    usage = {"input_tokens": input_tokens, "cache_read_input_tokens": cache_read,
             "cache_creation_input_tokens": cache_write, "output_tokens": 1}  # fmt: skip
    message: dict[str, Any] = {"id": "msg_local", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
               "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}  # fmt: skip
    return [_event({"type": "message_start", "message": message})]


def reply(*blocks: list[bytes], output_tokens: int = 10, stop_reason: str = "end_turn", **usage: int) -> list[bytes]:
    """A whole streamed response: ``message_start``, the blocks, ``message_delta`` (stop reason, output tokens),
    ``message_stop``."""
    chunks = start(**usage)
    for block in blocks:
        chunks += block
    delta = {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
             "usage": {"output_tokens": output_tokens}}  # fmt: skip
    return [*chunks, _event(delta), _event({"type": "message_stop"})]


def overloaded_after(*parts: str) -> list[bytes]:
    """A response that starts a text block, then fails with Anthropic's ``overloaded_error`` event."""
    opened = text(0, *parts)[:-1]  # the block never stops
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return [*start(), *opened, _event(error)]


class AnthropicWire:
    """``with AnthropicWire() as wire``: a server on 127.0.0.1 that answers each POST with the next queued
    response (:meth:`add`), streamed chunk by chunk, and keeps each request's JSON body in :attr:`bodies`."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self._queue: deque[tuple[list[bytes], float]] = deque()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def add(self, chunks: list[bytes], delay: float = 0.0) -> None:
        """Queue one response; ``delay`` seconds between its chunks."""
        self._queue.append((chunks, delay))

    def __enter__(self) -> AnthropicWire:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        wire = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                wire.bodies.append(json.loads(self.rfile.read(int(self.headers.get("content-length") or 0))))
                chunks, delay = wire._queue.popleft() if wire._queue else (overloaded_after(), 0.0)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in chunks:
                        time.sleep(delay)
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client hung up (an abort): nothing more to send
                    self.close_connection = True

        return Handler


# --- exercise 1: which stored messages are sent ----------------------------------------------------------


def _assistant(blocks: list[Any], stop: StopReason = "stop", error: str | None = None, at: int = 0) -> AssistantMessage:
    return AssistantMessage(content=blocks, api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5",
                            stop_reason=stop, error_message=error, timestamp=at)  # fmt: skip


HISTORY: list[Message] = [
    UserMessage(content="Is plum in stock?", timestamp=0),
    _assistant([TextContent(text="Let me ch")], "error", "overloaded_error: Overloaded", at=1),
    UserMessage(content="Try again.", timestamp=2),
    _assistant([ToolCall(id="toolu_1", name="check_stock", arguments={"item": "plum"})], "toolUse", at=3),
    ToolResultMessage(tool_call_id="toolu_1", tool_name="check_stock", content=[TextContent(text="3")], timestamp=4),
    _assistant([TextContent(text="There are 3")], "aborted", "Request was aborted", at=5),
    UserMessage(content="Well?", timestamp=6),
]
"""Exercise 1's stored history (index = timestamp)."""


def sent_indices() -> list[int]:
    """The indices of :data:`HISTORY` the next Anthropic request carries."""
    kept = transform_messages(HISTORY, get_model("anthropic/claude-sonnet-4-5"))
    return sorted({int(m.timestamp) for m in kept})


def check_sent(answer: Any) -> None:
    """Exercise 1: ``answer`` is the set of indices of :data:`HISTORY` sent with the next request."""
    name = "Exercise 1 (what the next request carries)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, (set, list, tuple)), "answer with a set of indices, such as {0, 1}")
    truth = sent_indices()
    for i in range(len(HISTORY)):
        message = HISTORY[i]
        role = message.role + (f" ({message.stop_reason})" if isinstance(message, AssistantMessage) else "")
        if i in truth and i not in answer:
            expect(name, False, f"message {i}, {role}, is sent", "only failed and aborted replies are left out.")
        if i not in truth and i in answer:
            expect(name, False, f"message {i}, {role}, is not sent: it is stored, shown, and skipped by the provider",
                   "an incomplete reply is not replayed to the model.")  # fmt: skip
    report(name, f"{set(truth)}: the error and the aborted reply stay in the history, out of the request.")


# --- exercise 2: a signed thought, on three models -------------------------------------------------------

THOUGHT = ThinkingContent(thinking="The shelf count is 3.", thinking_signature="EqQBCgIYAhIM1gbcDa==")
SIGNED: list[Message] = [
    UserMessage(content="How many plums?", timestamp=0),
    _assistant([THOUGHT, TextContent(text="3 plums.")], at=1),
    UserMessage(content="And pears?", timestamp=2),
]
"""Exercise 2: a reply of ``anthropic/claude-sonnet-4-5`` that thought first, and a next prompt."""

TARGETS = ("anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5", "openai-completions/gpt-4.1-mini")
FATES = ("thinking", "text", "dropped")


def thought_becomes(spec: str) -> str:
    """What the signed thought of :data:`SIGNED` becomes in ``spec``'s request: ``thinking`` (a thinking block with
    its signature), ``text`` (plain text) or ``dropped``."""
    body = json.dumps(build_request(get_model(spec), Context(messages=SIGNED)))
    if THOUGHT.thinking_signature and THOUGHT.thinking_signature in body:
        return "thinking"
    return "text" if THOUGHT.thinking in body else "dropped"


def check_thinking_fate(answer: Any) -> None:
    """Exercise 2: ``answer`` maps each of :data:`TARGETS` to one of :data:`FATES`."""
    name = "Exercise 2 (a signed thought, on three models)"
    if unanswered(name, answer, *(answer.values() if isinstance(answer, dict) else ())):
        return
    expect(name, isinstance(answer, dict) and set(answer) == set(TARGETS),
           f"answer with a dict whose keys are {list(TARGETS)} and values from {FATES}")  # fmt: skip
    for spec in TARGETS:
        truth = thought_becomes(spec)
        expect(
            name, answer[spec] == truth, f"{spec}: the thought is sent as {truth!r}, not {answer[spec]!r}",
            "only the model that wrote a signature can check it; any other model (another id counts) reads the "
            "thought as text.",
        )  # fmt: skip
    report(name, "same model: the signed block; any other: plain text.")


# --- exercise 3: Pi's blockImages, as a converter --------------------------------------------------------

BLOCKED = "Image reading is disabled."
ONE_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVQI12P4z8AAAAMBAQAY3Y2wAAAAAElFTkSuQmCC"


def _image() -> ImageContent:
    return ImageContent(data=ONE_PIXEL_PNG, mime_type="image/png")


def _history() -> list[Any]:
    return [
        UserMessage(content=[TextContent(text="Compare these:"), _image(), _image()], timestamp=0),
        ToolResultMessage(tool_call_id="t1", tool_name="read", content=[_image()], timestamp=1),
        UserMessage(content="No pictures here.", timestamp=2),
        BashExecutionMessage(command="ls", output="chart.png", exit_code=0, timestamp=3),
    ]


def _blocks(message: Any) -> list[str]:
    if isinstance(message.content, str):
        return [message.content]
    return [b.text if b.type == "text" else b.type for b in message.content]


def check_block_images(answer: Any) -> None:
    """Exercise 3: ``answer`` is a ``convert_to_llm`` that converts as :func:`convert_to_llm` does, then replaces
    each image in user and tool-result messages with :data:`BLOCKED`, said once for images in a row."""
    name = "Exercise 3 (block images)"
    if unanswered(name, answer):
        return
    expect(name, callable(answer), f"answer with a function messages -> messages, not {type(answer).__name__}")
    history = _history()
    before = [m.model_copy(deep=True) for m in history]
    got = answer(history)
    expect(name, history == before, "your function changed the messages it was given: build new ones",
           "message.model_copy(update={'content': new_blocks}).")  # fmt: skip
    expect(name, isinstance(got, list) and len(got) == 4,
           f"it returns {len(got) if isinstance(got, list) else type(got).__name__} messages; convert_to_llm gives 4",
           "start from convert_to_llm(messages): it translates the bashExecution too.")  # fmt: skip
    want = [[m.role, _blocks(m)] for m in convert_to_llm(history)]
    want[0][1], want[1][1] = ["Compare these:", BLOCKED], [BLOCKED]
    for i, (message, (role, blocks)) in enumerate(zip(got, want, strict=True)):
        seen = [getattr(message, "role", None), _blocks(message)]
        expect(name, seen == [role, blocks], f"message {i} is {seen}, not {[role, blocks]}",
               "images in a row become one text; a message without images is left as it is.")  # fmt: skip
    report(name, "every image is now one line of text, and the rest is what convert_to_llm gave.")
