"""P4g: one google-generative-ai response of 10,000 small text chunks, from a local ``streamGenerateContent`` server.

The server (127.0.0.1, a thread of this process) answers every POST with the same prepared body: 10,000
``data: <GenerateContentResponse>`` events each carrying a few characters of text (and the usage so far, as
Gemini sends it), the last one with ``finishReason: STOP``, written at once (chunked transfer encoding), so the
client's work is what is measured.

* **baseline**: the raw ``google-genai`` SDK, ``client.aio.models.generate_content_stream(...)`` iterated to the
  end, joining the text of the parts (the least a caller does with a stream), client created and closed per call
  as our provider does.
* **P4g**: ``pi_notebook.ai.complete()`` on a ``google/gemini-2.5-flash`` model whose ``base_url`` is the server.

Each call runs in its own ``asyncio.run`` on a fresh thread (``harness.run_async``), for both sides.
Goal: ≤ 1.2× the baseline.
"""

from __future__ import annotations

import json
from typing import Any

from .harness import Result, compare, measure, ratio_goal, run_async
from .sse import complete_text, sse_server

KEY = "AIza-bench-0000"
MODEL_ID = "gemini-2.5-flash"


def sse_body(chunks: int) -> bytes:
    """The whole streamed response: ``chunks`` text chunks of a few characters (a word and a count), as Gemini
    writes them."""
    words = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog")
    parts = []
    for i in range(chunks):
        candidate: dict[str, Any] = {"content": {"parts": [{"text": f" {words[i % len(words)]}{i}"}], "role": "model"}}
        if i == chunks - 1:
            candidate["finishReason"] = "STOP"
        candidate["index"] = 0
        usage = {"promptTokenCount": 20, "candidatesTokenCount": i + 1, "totalTokenCount": 21 + i}
        body = {"candidates": [candidate], "usageMetadata": usage, "modelVersion": MODEL_ID, "responseId": "bench"}
        parts.append(f"data: {json.dumps(body)}\r\n\r\n")
    return "".join(parts).encode()


def raw_sdk(base_url: str) -> str:
    """The baseline: the google-genai SDK streaming the response, text joined."""
    from google import genai
    from google.genai import types

    async def go() -> str:
        options = types.HttpOptions(base_url=base_url, api_version="")
        client = genai.Client(api_key=KEY, vertexai=False, http_options=options)
        try:
            stream = await client.aio.models.generate_content_stream(
                model=MODEL_ID,
                contents=[{"role": "user", "parts": [{"text": "Count."}]}],
                config={"maxOutputTokens": 32000, "automaticFunctionCalling": {"disable": True}},
            )
            pieces = []
            async for chunk in stream:
                if chunk.candidates and chunk.candidates[0].content and chunk.candidates[0].content.parts:
                    for part in chunk.candidates[0].content.parts:
                        if part.text:
                            pieces.append(part.text)
            return "".join(pieces)
        finally:
            client.close()
            await client.aio.aclose()

    return run_async(go)


def ours_complete(base_url: str) -> str:
    from pi_notebook.ai.models import get_model

    return complete_text(get_model(f"google/{MODEL_ID}", base_url=base_url), KEY)


@measure("P4g", "google-generative-ai stream of 10,000 small chunks: complete() vs the raw google-genai SDK")
def p4g(quick: bool) -> list[Result]:
    chunks = 1_000 if quick else 10_000
    repeats = 1 if quick else 9
    with sse_server(sse_body(chunks), prefix="/v1beta") as url:
        expected = raw_sdk(url)
        assert ours_complete(url) == expected
        base, timing = compare(lambda: raw_sdk(url), lambda: ours_complete(url), repeats)
        row = Result("P4g", f"complete() on {chunks:,} chunks", "raw google-genai SDK", timing, base)
        return [ratio_goal(row, 1.2, quick)]
