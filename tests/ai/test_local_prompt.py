"""What the local provider shows a small model and how it reads the reply: pure functions, no model needed."""

import json

from pi_notebook.ai import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_notebook.ai.providers.local_prompt import (
    CHATML_TEMPLATE,
    build_prompt,
    chat_messages,
    named_calls,
    parse_call,
    render,
    tool_mode,
)
from pi_notebook.coding_agent.tools import create_bash_tool, create_ls_tool, create_read_tool
from pi_notebook.coding_agent.tools.path_choices import list_entries, with_path_choices


def _reply(content, stop_reason="stop", **kw):
    return AssistantMessage(content=content, api="local", provider="local", model="m", stop_reason=stop_reason, **kw)


def _demo(tmp_path):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "todo.txt").write_text("Buy milk.\n")
    (tmp_path / ".hidden").mkdir()
    return [with_path_choices(t(str(tmp_path)), tmp_path) for t in (create_read_tool, create_ls_tool)]


def test_the_prompt_is_never_html_escaped():
    text = render(CHATML_TEMPLATE, [{"role": "user", "content": 'What\'s in <b>"this"</b> & that?'}])
    assert 'What\'s in <b>"this"</b> & that?' in text
    assert "&#39;" not in text and "&amp;" not in text
    assert text.endswith("<|im_start|>assistant\n")


def test_a_template_without_a_system_role_gets_the_system_text_in_the_first_user_turn():
    template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    text = render(template, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    assert text == "<user>Be brief.\n\nHi"


def test_path_choices_list_what_exists_and_skip_hidden_folders(tmp_path):
    read, ls = _demo(tmp_path)
    assert read.parameters["properties"]["path"]["enum"] == ["demo/todo.txt"]
    assert ls.parameters["properties"]["path"]["enum"] == [".", "demo"]
    assert list_entries(tmp_path) == ([".", "demo"], ["demo/todo.txt"])


def test_a_request_naming_an_existing_path_must_start_with_a_call_on_that_path(tmp_path):
    tools = [t.to_tool() for t in _demo(tmp_path)]
    mode, allowed = tool_mode([UserMessage(content="What does demo/todo.txt say?")], tools, 1)
    assert mode == "call" and [t.name for t in allowed] == ["read"]
    assert allowed[0].parameters["properties"]["path"]["enum"] == ["demo/todo.txt"]
    mode, allowed = tool_mode([UserMessage(content="List the files in demo.")], tools, 1)
    assert mode == "call" and [t.name for t in allowed] == ["ls"]
    # "demo" inside "demonstration" or "demo/x" is not the folder demo
    assert named_calls("Show me a demonstration.", tools) == []
    assert tool_mode([UserMessage(content="What is 2 + 2?")], tools, 1) == ("auto", tools)


def test_a_command_in_backticks_is_the_only_command_bash_may_run(tmp_path):
    bash = create_bash_tool(str(tmp_path)).to_tool()
    mode, allowed = tool_mode([UserMessage(content="Run `echo hi` and tell me what it printed.")], [bash], 1)
    assert mode == "call" and allowed[0].parameters["properties"]["command"]["enum"] == ["echo hi"]
    assert "echo hi" in build_prompt(None, "", [UserMessage(content="Run `echo hi`")], [bash]).grammar


def test_after_the_tool_round_only_an_answer_is_allowed_and_the_question_is_repeated(tmp_path):
    tools = [t.to_tool() for t in _demo(tmp_path)]
    history = [
        UserMessage(content="What does demo/todo.txt say?"),
        _reply([ToolCall(id="c1", name="read", arguments={"path": "demo/todo.txt"})], "toolUse"),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="Buy milk.")]),
    ]
    prompt = build_prompt(CHATML_TEMPLATE, "Be brief.", history, tools)
    assert prompt.mode == "answer" and prompt.grammar.startswith("root ::= answer\n")
    turns = chat_messages("Be brief.", history, tools)
    assert turns[-2]["content"] == '<tool_call>{"name": "read", "arguments": {"path": "demo/todo.txt"}}</tool_call>'
    assert turns[-1] == {
        "role": "user",
        "content": "Question: What does demo/todo.txt say?\nOutput of read:\n```\nBuy milk.\n```\n"
        "Answer the question from this output.",
    }


def test_failed_replies_are_not_shown_to_the_model_and_turns_alternate():
    history = [
        UserMessage(content="one"),
        _reply([TextContent(text="boom")], "error", error_message="x"),
        UserMessage(content="two"),
    ]
    turns = chat_messages("", history, [])
    assert turns == [{"role": "user", "content": "one\n\ntwo"}]


def test_the_grammar_allows_only_required_arguments_and_the_path(tmp_path):
    read = _demo(tmp_path)[0].to_tool()
    grammar = build_prompt(None, "", [UserMessage(content="hi")], [read]).grammar
    assert "offset" not in grammar and "limit" not in grammar and "demo/todo.txt" in grammar


def test_parse_call_reads_a_complete_call_only():
    call = '<tool_call>{"name": "ls", "arguments": {"path": "demo"}}</tool_call>'
    assert parse_call(call) == ("ls", {"path": "demo"})
    assert parse_call('<tool_call>{"name": "ls", "argu') is None
    assert parse_call("Paris.") is None
    assert json.loads(json.dumps(parse_call('<tool_call>{"name": "x"}</tool_call>'))) == ["x", {}]


def test_a_file_named_without_its_folder_is_found_when_its_name_is_unique(tmp_path):
    tools = [t.to_tool() for t in _demo(tmp_path)]
    mode, allowed = tool_mode([UserMessage(content="What does todo.txt say?")], tools, 1)
    assert mode == "call" and allowed[0].parameters["properties"]["path"]["enum"] == ["demo/todo.txt"]
    (tmp_path / "todo.txt").write_text("another\n")  # two files of that name: the model is not pushed to either
    tools = [t.to_tool() for t in _demo_again(tmp_path)]
    mode, allowed = tool_mode([UserMessage(content="What does todo.txt say?")], tools, 1)
    assert allowed[0].parameters["properties"]["path"]["enum"] == ["todo.txt"]  # the exact name wins


def _demo_again(tmp_path):
    return [with_path_choices(t(str(tmp_path)), tmp_path) for t in (create_read_tool, create_ls_tool)]


def test_a_path_the_prompt_names_is_reachable_at_any_depth_but_not_outside(tmp_path):
    from pi_notebook.coding_agent.tools.path_choices import mentioned_entries

    deep = tmp_path / "src" / "app" / "conf"
    deep.mkdir(parents=True)
    (deep / "settings.yaml").write_text("debug: true\n")
    (tmp_path / ".secret").mkdir()
    (tmp_path / ".secret" / "key.txt").write_text("x")
    prompt = "What does src/app/conf/settings.yaml say? And ../etc/passwd, .secret/key.txt?"
    assert mentioned_entries(prompt, tmp_path) == ([], ["src/app/conf/settings.yaml"])
    read = with_path_choices(create_read_tool(str(tmp_path)), tmp_path, prompt)
    assert "src/app/conf/settings.yaml" in read.parameters["properties"]["path"]["enum"]
    mode, allowed = tool_mode([UserMessage(content=prompt)], [read.to_tool()], 1)
    assert mode == "call" and allowed[0].parameters["properties"]["path"]["enum"] == ["src/app/conf/settings.yaml"]
