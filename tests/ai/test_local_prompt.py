"""What the local provider shows a small model and how it reads the reply: pure functions, no model needed."""

import json

from pi_notebook.ai import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_notebook.ai.providers.local_prompt import (
    CHATML_TEMPLATE,
    build_prompt,
    chat_messages,
    named_calls,
    parse_call,
    plan_reply,
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
    # an answer that goes on to copy the output's scaffolding ("Output of read: ...") ends there
    assert "\nOutput of " in prompt.stop and "\nQuestion: " in prompt.stop
    assert "\nOutput of " not in build_prompt(CHATML_TEMPLATE, "Be brief.", history[:1], tools).stop
    turns = chat_messages("Be brief.", history, tools)
    assert turns[-2]["content"] == '<tool_call>{"name": "read", "arguments": {"path": "demo/todo.txt"}}</tool_call>'
    assert turns[-1] == {
        "role": "user",
        "content": "Question: What does demo/todo.txt say?\nOutput of read:\n```\nBuy milk.\n```\n"
        "Answer the question from this output.",
    }


def _answer_turn(tools, question, path, output):
    history = [
        UserMessage(content=question),
        _reply([ToolCall(id="c1", name="read", arguments={"path": path})], "toolUse"),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text=output)]),
    ]
    return chat_messages("Be brief.", history, tools)[-1]["content"]


def test_the_answer_turn_repeats_the_one_line_the_question_is_about(tmp_path):
    tools = [t.to_tool() for t in _demo(tmp_path)]
    csv = "line,minutes\nred,12\nblue,25\ngreen,40\n"
    turn = _answer_turn(tools, "How long is the blue line, according to data/trains.csv?", "data/trains.csv", csv)
    hint = "The line it asks about: blue,25 (columns: line,minutes)"
    assert turn.endswith(f"```\n{hint}\nAnswer the question from this output.")
    ini = "[server]\nhost = localhost\nport = 8088\n"
    turn = _answer_turn(tools, "Which port does config/settings.ini set?", "config/settings.ini", ini)
    assert "\nThe line it asks about: port = 8088\n" in turn
    # no line stands out (none named, or two), or the output is short: nothing is added
    for question in ("What is the first row of data/trains.csv?", "Compare the red and blue lines in data/trains.csv."):
        assert "asks about" not in _answer_turn(tools, question, "data/trains.csv", csv)
    assert "asks about" not in _answer_turn(tools, "Which port is set?", "a.ini", "port = 8088\n")


def test_a_request_to_change_files_is_answered_when_no_tool_can_change_them(tmp_path):
    tools = [t.to_tool() for t in _demo(tmp_path)]  # read and ls: they only read
    for request in ("Delete demo/todo.txt.", "Please rename demo/todo.txt to demo/list.txt", "Move demo somewhere"):
        assert tool_mode([UserMessage(content=request)], tools, 1) == ("answer", []), request
    # a question about the same file still reads it first
    assert tool_mode([UserMessage(content="What does demo/todo.txt say?")], tools, 1)[0] == "call"
    # with a tool that can change files, the request goes to the tools as before
    bash = create_bash_tool(str(tmp_path)).to_tool()
    assert tool_mode([UserMessage(content="Delete demo/todo.txt.")], [*tools, bash], 1)[0] != "answer"


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


def test_a_request_naming_a_tool_gets_that_tool_for_what_it_names(tmp_path):
    _demo(tmp_path)
    (tmp_path / "demo" / "notes.md").write_text("x\n")
    tools = [t.to_tool() for t in _demo_again(tmp_path)]
    asked = "Is there a file named notes.md in the demo folder? Check with ls."
    mode, allowed = tool_mode([UserMessage(content=asked)], tools, 1)
    assert mode == "call" and [t.name for t in allowed] == ["ls"]
    mode, allowed = tool_mode([UserMessage(content="Is there a notes.md in the demo folder?")], tools, 1)
    assert sorted(t.name for t in allowed) == ["ls", "read"]  # no tool named: the model picks


def test_the_marks_are_what_the_small_model_stage_sends():
    from pi_notebook.ai.providers.local_prompt import EARLIER_MARK, HIDDEN_EXAMPLES, HIDDEN_MARK
    from pi_notebook.coding_agent.context_fit import EARLIER, HIDDEN_NOTE

    assert EARLIER == EARLIER_MARK and HIDDEN_NOTE.startswith(HIDDEN_MARK)
    assert all(ask.startswith(HIDDEN_NOTE + "\n\n") for ask, _ in HIDDEN_EXAMPLES)  # the example shows the note


def test_worked_examples_follow_what_the_context_holds(tmp_path):
    from pi_notebook.ai.providers.local_prompt import EARLIER_EXAMPLES, EARLIER_MARK, HIDDEN_EXAMPLES
    from pi_notebook.coding_agent.context_fit import HIDDEN_NOTE

    tools = [t.to_tool() for t in _demo(tmp_path)]
    question = UserMessage(content="Which city do I live in?")

    def texts(messages):
        return [turn["content"] for turn in chat_messages("", messages, tools)]

    plain = texts([question])
    earlier = texts([UserMessage(content=EARLIER_MARK + "I live in Porto."), question])
    hidden = texts([UserMessage(content=HIDDEN_NOTE), question])
    for examples, shown in ((EARLIER_EXAMPLES, earlier), (HIDDEN_EXAMPLES, hidden)):
        pairs = [text for pair in examples for text in pair]
        assert shown[len(plain) - 1 : -1] == pairs and not set(pairs) & set(plain)
    assert earlier[-1] == EARLIER_MARK + "I live in Porto.\n\nWhich city do I live in?"  # one user turn


def test_the_answer_after_a_tool_is_shown_the_tool_examples_only_and_favours_the_output(tmp_path):
    from pi_notebook.ai import get_model
    from pi_notebook.ai.options import StreamOptions
    from pi_notebook.ai.providers.local import build_local_request
    from pi_notebook.ai.types import Context

    tools = [t.to_tool() for t in _demo(tmp_path)]
    ask = UserMessage(content="What does demo/todo.txt say?")
    call = _reply([ToolCall(id="c1", name="read", arguments={"path": "demo/todo.txt"})], "toolUse")
    result = ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="Buy milk.")])
    first = [turn["content"] for turn in chat_messages("", [ask], tools)]
    after = [turn["content"] for turn in chat_messages("", [ask, call, result], tools)]
    assert "Say hi." in first and "Say hi." not in after  # no decline to copy in place of the output
    assert any("Output of ls" in text for text in after)
    model = get_model("local")
    request = build_local_request(model, Context(messages=[ask, call, result], tools=tools), StreamOptions())
    assert request["tool_call"] == "answer" and request["copy_bias"] > 0
    assert "copy_bias" not in build_local_request(model, Context(messages=[ask], tools=tools), StreamOptions())
    failed = result.model_copy(update={"is_error": True})
    assert plan_reply("", [ask, call, failed], tools).source == ""
    assert plan_reply("", [ask, call, result], tools).source == "Buy milk."
