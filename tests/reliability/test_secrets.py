"""Secrets never become data (#11 items 7 and 8).

7. A key read from a file keeps its trailing newline; the HTTP library then refuses the header and quotes it
   (``Illegal header value b'Bearer sk-…\\n'``) into the error. Keys are stripped when read, and any form of
   the key (raw, repr'd, escaped, URL-encoded, partial) is redacted from an error text.
8. ``%bash env``, ``cat .env`` or the agent's tools would store and send the keys in the environment. Known
   secrets are masked in shell output and tool results, and none reaches a provider request.

Real SDKs against a local server on 127.0.0.1, a real IPython shell, real tools. Keys are built at run time.
"""

import asyncio
import json
import os
from urllib.parse import quote

import pytest

from pi_notebook.agent_core import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import faux
from pi_notebook.ai.keys import get_env_api_key, resolve_api_key
from pi_notebook.ai.models import get_model
from pi_notebook.ai.streaming import complete
from pi_notebook.coding_agent.secrets import SecretMasker, has_masked, known_secrets, mask_tool
from pi_notebook.coding_agent.tools import ToolError, create_bash_tool, create_read_tool
from pi_notebook.coding_agent.user_bash import run_user_bash
from pi_notebook.notebook.render import message_text
from tests.ai.scripted_server import Reply, ScriptedServer, sse
from tests.notebook.conftest import shell as shell  # the real IPython shell fixture (re-exported)

KEY = "sk-proj-" + "T3st0nly" + "Kx9Qw2Lm" + "Vb7Np4Rz"
TOKEN = "ghp_" + "Zr5Yt8Uw" + "Jc2Hd6Fe"
ENV_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_BASE_URL")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in [*ENV_VARS, *(n for n in os.environ if "TOKEN" in n or "API_KEY" in n or "SECRET" in n)]:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server():
    with ScriptedServer() as s:
        s._httpd.handle_error = lambda request, address: None
        yield s


def leaks(text: str, secret: str) -> bool:
    """Whether ``text`` shows ``secret`` in any form, or any 8 characters of it (an independent check)."""
    core = secret.strip()
    forms = {core, repr(core)[1:-1], repr(core.encode())[2:-1], json.dumps(core)[1:-1], quote(core, safe="")}
    if any(form in text for form in forms):
        return True
    return any(piece[i : i + 8] in text for piece in core.split("\n") for i in range(len(piece) - 7))


def ask():
    return {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}


def openai_model(server):
    return get_model("openai/gpt-4o-mini", base_url=server.url + "/v1")


def anthropic_model(server):
    return get_model("anthropic/claude-sonnet-4-5", base_url=server.url)


# --- 7: keys are stripped on read, and redacted from errors in every form -------------------------------------


def test_keys_are_stripped_when_read(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY + "\n")
    assert get_env_api_key("openai") == KEY
    assert resolve_api_key("openai", " " + KEY + "\r\n") == KEY
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", " \n")  # blank counts as unset
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY + "\n")
    assert get_env_api_key("anthropic") == KEY


@pytest.mark.parametrize("model_for", [openai_model, anthropic_model])
def test_a_key_with_a_trailing_newline_is_sent_stripped(server, monkeypatch, model_for):
    model = model_for(server)
    monkeypatch.setenv("OPENAI_API_KEY" if model.provider == "openai" else "ANTHROPIC_API_KEY", KEY + "\n")
    # The server rejects the key and echoes it back in the forms proxies and SDKs use.
    echoed = f"bad key {KEY!r} {quote(KEY)} Bearer {KEY[:14]}… {json.dumps(KEY)}"
    server.add(Reply.json(401, {"error": {"type": "authentication_error", "message": echoed}}))
    final = asyncio.run(complete(model, ask(), max_retries=0))
    sent = server.requests[0].headers
    assert sent.get("authorization") == f"Bearer {KEY}" or sent.get("x-api-key") == KEY
    assert final.stop_reason == "error" and final.error_message.startswith("401")
    assert not leaks(final.error_message, KEY), final.error_message


@pytest.mark.parametrize("model_for", [openai_model, anthropic_model])
def test_an_unsendable_key_is_redacted_from_the_transport_error(server, model_for):
    inner = KEY[:16] + "\n" + KEY[16:]  # cannot be stripped: the HTTP library refuses the header and quotes it
    final = asyncio.run(complete(model_for(server), ask(), api_key=inner, max_retries=0))
    assert final.stop_reason == "error" and "Illegal header value" in final.error_message
    assert not leaks(final.error_message, inner), final.error_message
    assert not server.requests


def test_the_notebook_stores_and_prints_no_key_of_a_failed_call(shell, server, monkeypatch, capsys):
    import pi_notebook.ai.providers.openai_stream as openai_stream
    import pi_notebook.coding_agent.recovery as recovery

    monkeypatch.setattr(recovery, "retry_delay_ms", lambda attempt, settings: 0)
    monkeypatch.setattr(openai_stream, "DEFAULT_MAX_RETRIES", 0)
    inner = KEY[:16] + "\n" + KEY[16:] + "\n"
    monkeypatch.setenv("OPENAI_API_KEY", inner)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    shell.agent("hi", "--model openai-compatible/x --tools none")
    failed = shell.session.messages[-1]
    assert failed.stop_reason == "error" and "Illegal header value" in failed.error_message
    for text in (failed.error_message, shell.session.file.path.read_text(), capsys.readouterr().out):
        assert not leaks(text, inner)


# --- 8: the masker -----------------------------------------------------------------------------------------


def test_known_secrets_are_provider_keys_and_secret_named_variables_of_eight_characters_or_more():
    env = {
        "OPENAI_API_KEY": KEY + "\n",
        "HF_TOKEN": "hf_" + "AbCdEfGh12",
        "MY_SERVICE_API_KEY": "svc-" + "0123456789",
        "AWS_SECRET_ACCESS_KEY": "aws/" + "Secret+Value=",
        "DB_PASSWORD": "correct horse",
        "GH_TOKEN": "short",  # under 8 characters: not a secret worth masking
        "PATH": "/usr/local/bin:/usr/bin",
        "TOKENIZERS_PARALLELISM": "false-or-true",
        "MAX_TOKENS": "1234567890",
    }
    assert known_secrets(env) == {
        KEY: "OPENAI_API_KEY",
        "hf_AbCdEfGh12": "HF_TOKEN",
        "svc-0123456789": "MY_SERVICE_API_KEY",
        "aws/Secret+Value=": "AWS_SECRET_ACCESS_KEY",
        "correct horse": "DB_PASSWORD",
    }


def test_the_masker_finds_secrets_mid_line_quoted_escaped_and_in_binary_output():
    odd = 'pa$$w"or`d\\x-123 y'
    masker = SecretMasker({KEY: "OPENAI_API_KEY", odd: "DB_PASSWORD"})
    text = (
        f"\x00\xff\ufffdprefix{KEY}suffix\n"
        f"export OPENAI_API_KEY='{KEY}'\n"
        f"{json.dumps({'key': KEY, 'pw': odd})}\n"
        'declare -x DB_PASSWORD="pa\\$\\$w\\"or\\`d\\\\x-123 y"\n'
        'pa\\$\\$w\\"or\\`d\\\\x-123\\ y\n'  # printf %q
        f"url?key={quote(odd, safe='')}\n"
    )
    masked, hit = masker.mask(text)
    assert hit and not leaks(masked, KEY) and "or`d" not in masked and "or\\`d" not in masked
    assert masked.startswith("\x00\xff\ufffdprefix[masked: OPENAI_API_KEY]suffix\n")
    assert masked.count("[masked: DB_PASSWORD]") == 4 and has_masked(masked)
    assert masker.mask("nothing here\n") == ("nothing here\n", False)
    assert not SecretMasker.from_environment({"X_TOKEN": "1234567"})  # too short: nothing to mask


def test_overlapping_and_nested_secrets_leave_no_piece_behind():
    a, b = "alpha" + "BRAVO12", "BRAVO12" + "charlie"  # share "BRAVO12"
    inner = "BRAVO12" + "x"
    masker = SecretMasker({a: "A_TOKEN", b: "B_TOKEN", inner: "C_TOKEN"})
    masked, hit = masker.mask(f"[{'alpha' + 'BRAVO12' + 'charlie'}] [{inner}] [{a}]")
    assert hit and masked == "[[masked: A_TOKEN][masked: B_TOKEN]] [[masked: C_TOKEN]] [[masked: A_TOKEN]]"


def test_the_live_tail_holds_back_what_may_be_the_start_of_a_secret(tmp_path):
    masker = SecretMasker({KEY: "OPENAI_API_KEY"})
    assert masker.mask_live("out: " + KEY[:10]) == "out: "
    assert masker.mask_live("out: " + KEY + "\n") == "out: [masked: OPENAI_API_KEY]\n"
    log = tmp_path / "full.log"
    log.write_text("a\n" * 1000 + f"KEY={KEY}\n")
    assert masker.mask_file(log) and not leaks(log.read_text(), KEY)
    assert not masker.mask_file(log)


# --- 8: %bash through a real IPython shell -------------------------------------------------------------


def test_bash_output_is_masked_in_the_session_the_llm_context_and_the_cell(shell, monkeypatch, capsys):
    monkeypatch.setenv("MY_SERVICE_API_KEY", TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    (shell.notebook.parent / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    shell.cell('%bash echo "key is $MY_SERVICE_API_KEY!"; cat .env; env | grep API_KEY; declare -p OPENAI_API_KEY')
    shell.cell(f"%bash! echo {KEY}")
    message = shell.session.messages[-2]
    assert "key is [masked: MY_SERVICE_API_KEY]!\nOPENAI_API_KEY=[masked: OPENAI_API_KEY]\n" in message.output
    assert "secrets masked" in message_text(message)
    assert shell.session.messages[-1].command == "echo [masked: OPENAI_API_KEY]"
    faux.set_responses(["noted"])
    shell.agent("What did the shell print?")
    sent = json.dumps([m.model_dump() for m in faux.calls[-1].messages])
    stored = shell.session.file.path.read_text()
    for text in (sent, stored, capsys.readouterr().out):
        assert not leaks(text, KEY) and not leaks(text, TOKEN)
    assert "[masked: MY_SERVICE_API_KEY]" in sent


def test_masking_can_be_switched_off(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_API_KEY", TOKEN)
    command = "echo $MY_SERVICE_API_KEY"
    raw = asyncio.run(run_user_bash(command, cwd=str(tmp_path), mask_secrets=False))
    assert raw.output == TOKEN + "\n"
    masked = asyncio.run(run_user_bash(command, cwd=str(tmp_path)))
    assert masked.output == "[masked: MY_SERVICE_API_KEY]\n"


def test_the_live_view_of_a_running_command_never_shows_a_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_API_KEY", TOKEN)
    posts = []
    # The secret arrives in two pieces, with a pause between: a view posted in the pause must not show the first.
    command = (
        "printf 'x %s' ${MY_SERVICE_API_KEY:0:9}; sleep 0.3; printf '%s y\\n' ${MY_SERVICE_API_KEY:9}; "
        "sleep 0.2; echo $MY_SERVICE_API_KEY"
    )
    message = asyncio.run(run_user_bash(command, cwd=str(tmp_path), post=posts.append))
    assert len(posts) >= 2 and posts[-1].tail.startswith("x [masked: MY_SERVICE_API_KEY] y")
    assert all(not leaks(p.tail, TOKEN) and not leaks(p.command, TOKEN) for p in posts)
    assert message.output == "x [masked: MY_SERVICE_API_KEY] y\n[masked: MY_SERVICE_API_KEY]\n"


def test_a_bash_magic_reaches_no_provider_request_with_the_key(shell, server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    server.add(Reply(chunks=[_chunk({"role": "assistant", "content": "ok"}), _chunk({}, "stop"), sse("[DONE]")]))
    shell.cell("%bash env")
    shell.agent("what is in the environment?", "--model openai-compatible/x --tools none")
    assert shell.session.messages[-1].stop_reason == "stop"
    (request,) = server.requests
    assert request.headers["authorization"] == f"Bearer {KEY}"  # where the key belongs
    assert "[masked: OPENAI_API_KEY]" in request.body.decode() and not leaks(request.body.decode(), KEY)


# --- 8: the agent's tools, at the HTTP boundary ------------------------------------------------------------


def _chunk(delta, finish=None):
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return sse({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]})


def _tool_calls(*calls):
    deltas = [
        {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, (n, a) in enumerate(calls)
    ]
    return Reply(chunks=[_chunk({"role": "assistant", "tool_calls": deltas}), _chunk({}, "tool_calls"), sse("[DONE]")])


def test_no_known_secret_reaches_a_provider_request_through_the_agents_tools(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MY_SERVICE_TOKEN", TOKEN)
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={KEY}\nMY_SERVICE_TOKEN='{TOKEN}'\n")
    server.add(
        _tool_calls(("bash", {"command": "echo $MY_SERVICE_TOKEN; env"}), ("read", {"path": ".env"})),
        _tool_calls(("bash", {"command": "echo $OPENAI_API_KEY; exit 3"})),
        Reply(chunks=[_chunk({"role": "assistant", "content": "done"}), _chunk({}, "stop"), sse("[DONE]")]),
    )
    tools = [mask_tool(create_bash_tool(tmp_path)), mask_tool(create_read_tool(tmp_path))]
    agent = Agent(get_model("openai-completions/gpt-4o-mini", base_url=server.url + "/v1"), tools=tools)
    asyncio.run(agent.prompt("look around"))
    assert agent.messages[-1].stop_reason == "stop" and len(server.requests) == 3
    bodies = [r.body.decode() for r in server.requests]
    for body in bodies:
        assert not leaks(body, KEY) and not leaks(body, TOKEN)
    assert "[masked: MY_SERVICE_TOKEN]" in bodies[1] and "[masked: OPENAI_API_KEY]" in bodies[2]
    errored = agent.messages[-2]  # the failing command's output is masked in its error text too
    assert errored.is_error and "[masked: OPENAI_API_KEY]" in errored.content[0].text


def test_a_masked_tool_masks_partial_results_details_and_keeps_its_error_kind(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", TOKEN)
    updates = []

    def execute(tool_call_id, params, signal, on_update):
        on_update(AgentToolResult.text(f"so far {TOKEN[:6]}", details={"partial": [TOKEN]}))
        if params.get("fail"):
            raise ToolError(f"failed with {TOKEN}")
        return AgentToolResult.text(f"got {TOKEN}", details={"raw": {"value": TOKEN}})

    tool = mask_tool(AgentTool(name="peek", description="d", parameters={"type": "object"}, execute=execute))
    result = asyncio.run(tool.run("1", {}, None, updates.append))
    assert result.content[0].text == "got [masked: MY_SERVICE_TOKEN]"
    assert result.details == {"raw": {"value": "[masked: MY_SERVICE_TOKEN]"}}
    assert updates[0].details == {"partial": ["[masked: MY_SERVICE_TOKEN]"]}
    with pytest.raises(ToolError, match=r"^failed with \[masked: MY_SERVICE_TOKEN\]$"):
        asyncio.run(tool.run("2", {"fail": True}, None, updates.append))


def test_the_notebook_agents_tools_send_no_known_secret(shell, server, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", TOKEN)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    server.add(
        _tool_calls(("bash", {"command": "echo $MY_SERVICE_TOKEN"})),
        Reply(chunks=[_chunk({"role": "assistant", "content": "done"}), _chunk({}, "stop"), sse("[DONE]")]),
    )
    shell.cell("%agent_config approve=none")  # a model that acts for real asks before bash; no page here to ask
    shell.agent("look", "--model openai-compatible/x --tools bash")
    assert len(server.requests) == 2 and "[masked: MY_SERVICE_TOKEN]" in server.requests[1].body.decode()
    for text in (*(r.body.decode() for r in server.requests), shell.session.file.path.read_text()):
        assert not leaks(text, TOKEN)
