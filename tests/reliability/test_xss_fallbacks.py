"""Nothing a model, a tool, a shell or an extension writes runs in a reader's browser (issue #11: XSS in every
fallback).

An XSS corpus (script tags, event handlers, ``javascript:``/``data:``/``vbscript:`` URLs in HTML and in
Markdown links, images and reference definitions, SVG, MathML, ``<iframe srcdoc>``, styles, entity and
backslash tricks, breakouts of our own ``<pre>``, ``<details>`` and fences) goes into every field of every role
that the views show. Every output that is not the widget is then checked, as HTML parsed element by element:

* the ``text/html`` fallback of the transcript (``pi_notebook.show``, a finished cell's saved form) and of the
  inspector (``pi_notebook.inspect``): escaped text, class names and our one ``<style>`` (``saved.STYLE``) only;
* the ``text/markdown`` of ``messages_mimebundle`` and of ``MessagesView``, rendered by two real Markdown
  renderers with no sanitiser of their own (mistune with raw HTML and harmful links allowed, and marked, which
  JupyterLab uses): whatever a front end without a sanitiser makes of it;
* ``jupyter nbconvert --to html`` of an executed notebook holding all of it (with the widget state nbclient
  saves, then with the fallbacks only);
* headless Chromium, with ``window.__pwned`` as the trap: the nbconvert pages and the Markdown as marked renders
  it, every link clicked.

The live widget views are checked by their own tests (``widgets/test``, ``tests/e2e``).
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import mistune
import nbformat
import pytest

from pi_notebook.agent_core import from_pi_json
from pi_notebook.ai import AssistantMessage, ImageContent, TextContent, ThinkingContent
from pi_notebook.ai.types import ToolCall, ToolResultMessage, UserMessage
from pi_notebook.coding_agent import BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from pi_notebook.notebook.cell_message import CellError, NotebookCellMessage
from pi_notebook.notebook.inspector import inspect
from pi_notebook.notebook.render import MessagesView, messages_mimebundle
from pi_notebook.notebook.saved import STYLE
from pi_notebook.notebook.widgets import show

ROOT = Path(__file__).resolve().parents[2]
MARKED = ROOT / "widgets" / "node_modules" / "marked" / "lib" / "marked.esm.js"
MARKER = "__pwned"


def _js(name: str) -> str:
    return f"window.{MARKER}='{name}'"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# --- the corpus ----------------------------------------------------------------------------------------------

PAYLOADS: dict[str, str] = {
    # raw HTML
    "script": "<script>{js}</script>",
    "script_src": "<SCRIPT SRC=//evil.invalid/x.js></SCRIPT>",
    "img_onerror": '<img src=x onerror="{js}">',
    "img_onerror_slashes": "<img/src=x/onerror={js}>",
    "svg_onload": '<svg onload="{js}"><circle r="1"/></svg>',
    "svg_script": "<svg><script>{js}</script></svg>",
    "iframe_srcdoc": '<iframe srcdoc="<script>parent.{js}</script>"></iframe>',
    "iframe_js": '<iframe src="javascript:{js}"></iframe>',
    "a_js": '<a href="javascript:{js}">click</a>',
    "a_entities": '<a href="&#106;avascript&#58;{js}">click</a>',
    "a_tab": '<a href="jav&#x09;ascript:{js}">click</a>',
    "a_vbscript": '<a href="vbscript:msgbox(1)">vb</a>',
    "object": '<object data="javascript:{js}"></object><embed src="javascript:{js}">',
    "style_attr": "<div style=\"background:url('javascript:{js}')\">styled</div>",
    "style_tag": "<style>@import 'javascript:{js}'; body {{ background: url(\"javascript:{js}\") }}</style>",
    "details_toggle": '<details open ontoggle="{js}"><summary>s</summary></details>',
    "math_mxss": '<math><mtext><table><mglyph><style><img src=x onerror="{js}">',
    "form": '<form action="javascript:{js}"><button formaction="javascript:{js}">go</button></form>',
    "meta_refresh": '<meta http-equiv="refresh" content="0;url=javascript:{js}">',
    "base": '<base href="javascript:{js}//">',
    "breakout": "</pre></div></td></tr></table></details></sub></code>--><script>{js}</script>",
    "fence_breakout": '```\n</pre><img src=x onerror="{js}">\n```\n<img src=x onerror="{js}">',
    "tilde_breakout": '~~~~\nx\n~~~~\n</details><img src=x onerror="{js}">',
    "html_comment": '<!-- --><img src=x onerror="{js}"> -->',
    "cdata": '<![CDATA[<img src=x onerror="{js}">]]>',
    # Markdown links and images
    "md_link": "[click](javascript:{js})",
    "md_image": "![img](javascript:{js})",
    "md_data_link": "[data](data:text/html;base64,{html_b64})",
    "md_data_image": "![svg](data:image/svg+xml;base64,{svg_b64})",
    "md_vbscript": "[vb](vbscript:msgbox(1))",
    "md_upper": "[case](JaVaScRiPt:{js})",
    "md_space": "[space](   javascript:{js} )",
    "md_newline": "[newline](\njavascript:{js})",
    "md_newline_space": "[newline2](   \n   javascript:{js})",
    "md_angle": "[angle](<javascript:{js}>)",
    "md_title": '[title](javascript:{js} "title")',
    "md_escaped_colon": "[escaped](javascript\\:{js})",
    "md_entities": "[e1](&#106;avascript:{js}) [e2](javascript&#58;{js}) [e3](javascript&colon;{js})",
    "md_encoded_tab": "[tab](java&#9;script:{js})",
    "md_double_entity": "[double entity](&amp;#106;avascript:{js})",
    "md_reference": "[ref][r1]\n\n[r1]: javascript:{js}",
    "md_reference_next_line": "[ref2][r2]\n\n[r2]:\n  javascript:{js}",
    "md_reference_angle": "[r3]\n\n[r3]: <javascript:{js}>",
    "md_reference_title": '[r4][]\n\n[r4]: javascript:{js} "t"',
    "md_reference_data": "![r5]\n\n[r5]: data:image/svg+xml;base64,{svg_b64}",
    "md_autolink": "<javascript:{js}>",
    "md_nested": "[![img](https://example.invalid/x.png)](javascript:{js})",
    "md_html_in_link": '[<img src=x onerror="{js}">](https://example.invalid)',
    "md_after_code": "`code` [after code](javascript:{js}) and `<b>` [after tag code](javascript:{js})",
    "md_list": "- [item](javascript:{js})\n  - [nested](vbscript:msgbox(1))",
    "md_table": "| a |\n|---|\n| [cell](javascript:{js}) |",
    "md_quote": "> [quote](javascript:{js})",
    "md_heading": "# [heading](javascript:{js})",
    "md_emphasis": "*[em](javascript:{js})* **[strong](data:text/html,{js})**",
}


def payload(name: str) -> str:
    svg = f"<svg xmlns='http://www.w3.org/2000/svg' onload=\"{_js(name)}\"><script>{_js(name)}</script></svg>"
    return PAYLOADS[name].format(js=_js(name), html_b64=_b64(f"<script>parent.{_js(name)}</script>"), svg_b64=_b64(svg))


CORPUS = "\n\n".join(payload(name) for name in PAYLOADS)
"""Every payload, each in a paragraph of its own (some need to start a line)."""
ONE_LINE = " ".join(payload(name).replace("\n", " ") for name in PAYLOADS)
"""Every payload on one line (for names, commands, titles)."""


def _assistant(**kw: Any) -> AssistantMessage:
    fields = {"api": "faux", "provider": "faux", "model": "faux-1", **kw}
    return AssistantMessage(**fields)


def role_messages(text: str = CORPUS, line: str = ONE_LINE) -> dict[str, list[Any]]:
    """Per role, messages with ``text`` (or ``line``) in every field a view shows."""
    return {
        "user": [UserMessage(content=text)],
        "user_blocks": [UserMessage(content=[TextContent(text=text), ImageContent(data=_b64(line), mime_type=line)])],
        "assistant_text": [_assistant(content=[TextContent(text=text)], model=line)],
        "assistant_thinking": [_assistant(content=[ThinkingContent(thinking=text)])],
        "assistant_error": [_assistant(content=[], stop_reason="error", error_message=text)],
        "assistant_error_one_line": [_assistant(content=[], stop_reason="aborted", error_message=line)],
        "tool_call": [
            _assistant(
                content=[ToolCall(id="c1", name=line, arguments={"command": text, line: [text]})],
                stop_reason="toolUse",
            )
        ],
        "tool_result": [
            ToolResultMessage(tool_call_id="c1", tool_name=line, content=[TextContent(text=text)], is_error=True)
        ],
        "bash_execution": [
            BashExecutionMessage(command=text, output=text, exit_code=1, truncated=True, full_output_path=line),
            BashExecutionMessage(command=line, output=text, exit_code=None, cancelled=True),
        ],
        "custom": [CustomMessage(custom_type=line, content=text, display=True, details={"x": text})],
        "custom_hidden": [CustomMessage(custom_type=line, content=[TextContent(text=text)], display=False)],
        "branch_summary": [BranchSummaryMessage(summary=text, from_id=line)],
        "compaction_summary": [CompactionSummaryMessage(summary=text, tokens_before=12_345)],
        "notebook_cell": [
            NotebookCellMessage(
                source=text,
                execution_count=3,
                output=text,
                images=[ImageContent(data=_b64(line), mime_type=line)],
                error=CellError(name=line, value=text, traceback=text),
                truncated=True,
                full_output_path=line,
                omitted=[line],
            ),
            NotebookCellMessage(source=line, output=text, cancelled=True, exclude_from_context=True),
        ],
        "unknown_role": [from_pi_json({"role": line, "content": text, "timestamp": 1})],
    }


ROLES = list(role_messages())


# --- what counts as live ---------------------------------------------------------------------------------------

DANGEROUS_TAGS = {
    "script", "iframe", "frame", "frameset", "object", "embed", "applet", "base", "meta", "link", "style", "svg",
    "math", "form", "button", "input", "textarea", "select", "template", "noscript", "xmp", "plaintext", "portal",
    "video", "audio", "source", "track", "marquee", "isindex", "image", "animate", "set", "foreignobject",
}  # fmt: skip
URL_ATTRS = {
    "href", "src", "action", "formaction", "data", "poster", "background", "xlink:href", "srcset", "ping",
    "codebase", "cite", "dynsrc", "lowsrc", "longdesc", "manifest", "icon", "archive", "classid", "content", "to",
    "from", "values", "by",
}  # fmt: skip
DANGEROUS_SCHEMES = ("javascript:", "vbscript:", "data:", "livescript:")


def dangerous_url(value: str) -> bool:
    """Whether a browser would take ``value`` (an attribute, entities already decoded) as a script or data URL:
    it drops leading and trailing C0 controls and spaces and every tab and newline before reading the scheme."""
    url = "".join(c for c in value if c not in "\t\n\r").strip("".join(map(chr, range(0x21)))).lower()
    for part in [url, *(p.strip().split(" ")[0] for p in url.split(","))]:  # srcset: "url 2x, url 3x"
        part = part.split("url=", 1)[-1] if part.startswith(("0;", "0 ;")) else part  # meta refresh content
        if part.startswith(DANGEROUS_SCHEMES):
            return True
    return False


class _Scan(HTMLParser):
    """Every element and attribute of an HTML text (entities decoded, as a browser reads them)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, list[tuple[str, str]], list[str]]] = []  # tag, attrs, enclosing tags
        self.stack: list[str] = []
        self.script_text: dict[int, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, [(k, v or "") for k, v in attrs], list(self.stack)))
        if tag not in ("img", "br", "hr", "meta", "link", "input", "base", "embed", "source", "track", "wbr"):
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, [(k, v or "") for k, v in attrs], list(self.stack)))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] in ("script", "style"):
            index = max(i for i, e in enumerate(self.elements) if e[0] == self.stack[-1])
            self.script_text[index] = self.script_text.get(index, "") + data


def scan(text: str) -> _Scan:
    parser = _Scan()
    parser.feed(text)
    parser.close()
    return parser


def attribute_problems(tag: str, attrs: list[tuple[str, str]]) -> list[str]:
    problems = []
    for name, value in attrs:
        if name.startswith("on"):
            problems.append(f"<{tag} {name}=...>: an event handler")
        elif name in ("srcdoc", "formaction"):
            problems.append(f"<{tag} {name}=...>")
        elif name in URL_ATTRS and dangerous_url(value):
            problems.append(f"<{tag} {name}={value[:60]!r}>: a script or data URL")
        elif name == "style" and any(s in value.lower() for s in ("url(", "expression(", "javascript:", "@import")):
            problems.append(f"<{tag} style={value[:60]!r}>")
    return problems


def html_problems(text: str, allowed: dict[str, set[str]] | None = None) -> list[str]:
    """What in ``text`` could run script or load a script/data URL, described one per line (``[]``: none).

    With ``allowed`` (tag -> attributes), every tag must also be one of those, written plainly (quoted
    attributes, nothing else): a parser quirk (``<img/src=x/onerror=...>``) cannot then hide anything."""
    problems = []
    for tag, attrs, _ in scan(text).elements:
        if tag in DANGEROUS_TAGS:
            problems.append(f"<{tag}> element")
        problems += attribute_problems(tag, attrs)
    if allowed is not None:
        for start in (m.start() for m in _TAG_START.finditer(text)):
            tag = _PLAIN_TAG.match(text, start)
            if tag is None:
                problems.append(f"not a plain tag: {text[start : start + 60]!r}")
                continue
            names = _PLAIN_ATTR.findall(tag[2])
            if tag[1] not in allowed or not set(names) <= allowed[tag[1]]:
                problems.append(f"unexpected <{tag[1]} {' '.join(names)}>")
    return problems


_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")  # where an HTML tokenizer starts a tag, comment or declaration
_PLAIN_TAG = re.compile(r'</?([a-z][a-z0-9]*)((?:\s+[a-z][a-z-]*(?:="[^"<>]*"|=[a-z][a-z-]*)?)*)\s*/?>')
_PLAIN_ATTR = re.compile(r'([a-z][a-z-]*)(?:="[^"]*"|=[a-z][a-z-]*)?')
_FALLBACK_TAG_NAMES = ["h4", "pre", "details", "summary", "b", "p", "i", "table", "thead", "tbody", "tr", "th", "td"]
_FALLBACK_TAG_NAMES += ["i"]
FALLBACK_TAGS = {
    **{tag: {"style"} for tag in _FALLBACK_TAG_NAMES}, "div": {"class", "style"}, "details": {"class", "style"},
}  # fmt: skip
"""What the widgets' text/html fallbacks are made of (and nothing else), once our own ``<style>`` is taken out."""


def without_our_style(text: str) -> str:
    """``text`` without the one ``<style>`` block of ours a saved form starts with (which loads nothing)."""
    assert text.count(STYLE) <= 1
    assert not re.search(r"url\(|@import|expression\(|javascript:|<(?!/?style>)", STYLE)
    return text.replace(STYLE, "", 1)


_MARKDOWN_TAG_NAMES = ["p", "strong", "em", "code", "pre", "details", "summary", "sub", "ul", "li", "blockquote", "hr",
                       "br", "thead", "tbody", "tr", "del", "h1", "h2", "h3", "h4", "h5", "h6"]  # fmt: skip
MARKDOWN_TAGS = {
    **{tag: {"class"} for tag in _MARKDOWN_TAG_NAMES},
    "table": {"class"}, "th": {"align", "style"}, "td": {"align", "style"}, "ol": {"start", "class"},
    "a": {"href", "title"}, "img": {"src", "alt", "title"}, "input": {"type", "checked", "disabled", "class"},
}  # fmt: skip
"""What a Markdown renderer makes of our Markdown: its own tags (raw HTML in the Markdown would add others)."""


# --- Markdown as front ends render it ----------------------------------------------------------------------------

_MISTUNE = mistune.create_markdown(
    renderer=mistune.HTMLRenderer(escape=False, allow_harmful_protocols=True),
    plugins=["strikethrough", "table", "url", "task_lists"],
)
_MISTUNE_AST = mistune.create_markdown(renderer="ast", plugins=["strikethrough", "table", "url"])

_MARKED_SCRIPT = """
import { marked } from %s;
let input = "";
for await (const chunk of process.stdin) input += chunk;
process.stdout.write(JSON.stringify(JSON.parse(input).map((md) => marked.parse(md, { gfm: true }))));
"""


def marked_html(markdowns: list[str]) -> list[str]:
    """``markdowns`` rendered by marked (JupyterLab's Markdown renderer), without any sanitiser."""
    node = shutil.which("node")
    assert node and MARKED.is_file(), "node and widgets/node_modules (npm ci in widgets/) are needed for marked"
    proc = subprocess.run(
        [node, "--input-type=module", "-e", _MARKED_SCRIPT % json.dumps(MARKED.as_uri())],
        input=json.dumps(markdowns), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def _link_urls(tokens: list[dict[str, Any]]) -> Iterator[str]:
    for token in tokens:
        if token.get("type") in ("link", "image"):
            yield token.get("attrs", {}).get("url", "")
        yield from _link_urls(token.get("children") or [])


def markdown_problems(md: str, rendered_by_marked: str | None = None) -> list[str]:
    """What a Markdown renderer without a sanitiser would turn into live content."""
    problems = [f"mistune: {p}" for p in html_problems(_MISTUNE(md), MARKDOWN_TAGS)]
    problems += [
        f"a Markdown link or image to {url[:60]!r}" for url in _link_urls(_MISTUNE_AST(md)) if dangerous_url(url)
    ]
    if rendered_by_marked is not None:
        problems += [f"marked: {p}" for p in html_problems(rendered_by_marked, MARKDOWN_TAGS)]
    return problems


# --- the fallbacks of the transcript, MessagesView and the inspector ------------------------------------------------


def _bundle(obj: Any) -> dict[str, Any]:
    result = obj._repr_mimebundle_()
    return result[0] if isinstance(result, tuple) else result


@pytest.fixture(scope="module")
def bundles() -> dict[str, dict[str, str]]:
    """Per role: the transcript's html and markdown, the hidden-shown transcript's, MessagesView's markdown
    and the inspector's html."""
    out = {}
    for role, messages in role_messages().items():
        transcript = _bundle(show(messages, title=ONE_LINE))
        shown_all = _bundle(show(messages, show_hidden=True))
        out[role] = {
            "transcript html": transcript["text/html"],
            "transcript markdown": messages_mimebundle(messages, title=ONE_LINE)["text/markdown"],
            "transcript (show_hidden) html": shown_all["text/html"],
            "transcript (streaming) markdown": messages_mimebundle([], streaming=messages[-1])["text/markdown"],
            "MessagesView markdown": _bundle(MessagesView(messages, title=ONE_LINE))["text/markdown"],
            "inspector html": _bundle(inspect(messages))["text/html"],
        }
    return out


@pytest.fixture(scope="module")
def marked_rendered(bundles) -> dict[tuple[str, str], str]:
    keys = [(role, kind) for role, b in bundles.items() for kind in b if kind.endswith("markdown")]
    return dict(zip(keys, marked_html([bundles[r][k] for r, k in keys]), strict=True))


@pytest.mark.parametrize("role", ROLES)
def test_the_html_fallbacks_of_transcript_and_inspector_hold_nothing_live(bundles, role):
    for kind, text in bundles[role].items():
        if kind.endswith("html"):
            assert html_problems(without_our_style(text), FALLBACK_TAGS) == [], kind
            assert "&lt;script&gt;" in text  # shown, as text


@pytest.mark.parametrize("role", ROLES)
def test_the_markdown_fallbacks_render_to_nothing_live(bundles, marked_rendered, role):
    for kind, md in bundles[role].items():
        if kind.endswith("markdown"):
            assert markdown_problems(md, marked_rendered[role, kind]) == [], kind


def test_only_unsafe_links_are_neutralised_and_what_was_written_stays_readable():
    text = (
        "[docs](https://example.invalid/a) [mail](mailto:a@example.invalid) [rel](notes/a.md) "
        "`[code](javascript:x)` [bad](javascript:x) [ok][d] [worse][e]\n\n"
        "[d]: https://example.invalid/b\n[e]: vbscript:x"
    )
    md = messages_mimebundle([UserMessage(content=text)])["text/markdown"]
    assert "`[code](javascript:x)`" in md  # code is left exactly as written
    for rendered in (_MISTUNE(md), *marked_html([md])):
        hrefs = [dict(attrs)["href"] for tag, attrs, _ in scan(rendered).elements if tag == "a"]
        assert hrefs == [
            "https://example.invalid/a",
            "mailto:a@example.invalid",
            "notes/a.md",
            "https://example.invalid/b",
        ]
        shown = html.unescape(rendered)
        assert "[bad](javascript:x)" in shown and "[e]: vbscript:x" in shown  # shown as written, as text


def test_the_checker_finds_what_it_looks_for():
    """The scan above is only worth as much as it catches: each payload, unescaped, is reported."""
    markdown = [name for name in PAYLOADS if name.startswith("md_")]
    by_marked = dict(zip(markdown, marked_html([payload(name) for name in markdown]), strict=True))
    for name in PAYLOADS:
        raw = payload(name)
        if name in by_marked:
            assert markdown_problems(raw, by_marked[name]), name
        else:
            assert html_problems(raw, FALLBACK_TAGS), name
    assert html_problems(_MISTUNE(payload("fence_breakout")))
    assert html_problems("<img/src=x/onerror=alert(1)>", FALLBACK_TAGS) == [
        "not a plain tag: '<img/src=x/onerror=alert(1)>'"
    ]


# --- nbconvert: an executed notebook holding the corpus in every role ------------------------------------------------


def _notebook_cells() -> list[str]:
    one_line = shlex.quote(ONE_LINE)
    blocks = [
        "faux.thinking(CORPUS)",
        "faux.text(CORPUS)",
        'faux.tool_call("bash", {"command": "cat corpus.txt; : " + shlex.quote(ONE_LINE)})',
    ]
    return [
        "%load_ext pi_notebook\nimport pi_notebook, shlex\nfrom pi_notebook.ai import faux\n"
        "from pi_notebook.coding_agent import CustomMessage, BranchSummaryMessage, CompactionSummaryMessage\n"
        "from pi_notebook.notebook.render import MessagesView\n"
        "CORPUS = open('corpus.txt').read()\nONE_LINE = open('one_line.txt').read()",
        f"faux.set_responses([faux.message([{', '.join(blocks)}]), faux.message([faux.text(CORPUS)])])",
        "%%agent --model faux/faux-1 --tools bash\n{CORPUS}",
        f"%bash cat corpus.txt; : {one_line}",
        "%bash! cat corpus.txt",
        "pi_notebook.record(CustomMessage(custom_type=ONE_LINE, content=CORPUS, display=True))",
        "pi_notebook.show(pi_notebook.current_session(), show_hidden=True, title=ONE_LINE)",
        "pi_notebook.show([BranchSummaryMessage(summary=CORPUS, from_id=ONE_LINE),\n"
        "                  CompactionSummaryMessage(summary=CORPUS, tokens_before=1)], title=ONE_LINE)",
        "pi_notebook.inspect(pi_notebook.current_session())",
        "MessagesView(pi_notebook.current_session().messages, title=ONE_LINE)",
        "faux.set_responses([faux.message([], stop_reason='error', error_message=CORPUS)])",
        "%%agent --model faux/faux-1 --tools none --max-turns 1\nfail",
    ]


def _jupyter(*args: str, cwd: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def _without(nb: Any, *mimetypes: str) -> Any:
    copy = nbformat.from_dict(json.loads(json.dumps(nb)))
    copy.metadata.pop("widgets", None)
    for cell in copy.cells:
        for output in cell.get("outputs", []):
            for mimetype in mimetypes:
                output.get("data", {}).pop(mimetype, None)
    return copy


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> dict[str, Path]:
    """``jupyter nbconvert --execute`` the notebook, then ``--to html``: as executed (widget state saved), with
    the text/html fallbacks only, and with the text/markdown fallbacks only."""
    folder = tmp_path_factory.mktemp("xss-notebook")
    (folder / "corpus.txt").write_text(CORPUS)
    (folder / "one_line.txt").write_text(ONE_LINE)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in _notebook_cells()])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / "corpus.ipynb")
    _jupyter("nbconvert", "--to", "notebook", "--execute", "--allow-errors", "corpus.ipynb",
             "--output", "executed.ipynb", cwd=folder)  # fmt: skip
    executed = nbformat.read(folder / "executed.ipynb", as_version=4)
    widget = "application/vnd.jupyter.widget-view+json"
    nbformat.write(_without(executed, widget), folder / "html_fallback.ipynb")
    nbformat.write(_without(executed, widget, "text/html"), folder / "markdown_fallback.ipynb")
    _jupyter("nbconvert", "--to", "html", "executed.ipynb", "html_fallback.ipynb", "markdown_fallback.ipynb",
             cwd=folder)  # fmt: skip
    return {name: folder / f"{name}.html" for name in ("executed", "html_fallback", "markdown_fallback")}


def test_the_executed_notebook_holds_the_corpus_in_every_output(converted):
    nb = nbformat.read(converted["executed"].with_suffix(".ipynb"), as_version=4)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error" and o.ename != "CellInterrupted"]
    saved = [o for o in outputs if "application/vnd.pi-notebook.transcript+json" in o.get("data", {})]
    assert len(saved) >= 5 and all(MARKER in o.data["text/html"] for o in saved)  # %%agent, %bash, show()
    assert all(MARKER in json.dumps(o.data["application/vnd.pi-notebook.transcript+json"]) for o in saved)
    assert [o for o in outputs if "text/markdown" in o.get("data", {})]  # MessagesView
    # show(), inspect() and the magics save their static form only (#25): no widget state at all
    assert "widgets" not in nb.metadata


# nbconvert's own page: its scripts (require.js, MathJax, the widget loader) and styles are no payload's.
_DATA_SCRIPT_TYPES = {"application/vnd.jupyter.widget-view+json", "application/vnd.jupyter.widget-state+json"}
_WIDGET_LOADER = re.compile(r"\s*var element = document\.getElementById\('[\w-]+'\);\s*")
"""The one script nbconvert puts in a widget's output area."""


@pytest.mark.parametrize("variant", ["executed", "html_fallback", "markdown_fallback"])
def test_nbconvert_html_holds_nothing_live(converted, variant):
    page = converted[variant].read_text(encoding="utf-8")
    assert MARKER in page and "&lt;script&gt;" in page  # the corpus is on the page, as text
    parsed = scan(page)
    problems = []
    for index, (tag, attrs, enclosing) in enumerate(parsed.elements):
        problems += attribute_problems(tag, attrs)
        if tag not in DANGEROUS_TAGS:
            continue
        body = parsed.script_text.get(index, "")
        if dict(attrs).get("type") in _DATA_SCRIPT_TYPES:
            json.loads(body)  # data, and whole: no "</script>" in it ended the element early
        elif MARKER in body or MARKER in json.dumps(attrs):
            problems.append(f"<{tag}> holding a payload")
        elif tag == "style" and f"<style>{body}</style>" == STYLE:
            continue  # ours: class names and colours
        elif "main" in enclosing and not (tag == "script" and _WIDGET_LOADER.fullmatch(body)):
            problems.append(f"<{tag}> in the notebook's content: {body[:80]!r}")
    assert problems == []


# --- a real browser: nothing runs -----------------------------------------------------------------------------------

# Chromium's own parser and DOM decide: every element of the content, every attribute, every link clicked.
_INSPECT_AND_CLICK = r"""async ({ root, dangerous, urlAttrs, style }) => {
  const schemes = /^(javascript|vbscript|data|livescript):/i;
  const loader = /^\s*var element = document\.getElementById\('[\w-]+'\);\s*$/;
  const problems = [];
  const scope = root ? [document.querySelector(root)] : [...document.querySelectorAll('.jp-OutputArea-output')];
  for (const area of scope) {
    for (const el of area.querySelectorAll('*')) {
      const tag = el.tagName.toLowerCase();
      const view = el.type === 'application/vnd.jupyter.widget-view+json';
      const ours = (tag === 'script' && (loader.test(el.text) || view)) || (tag === 'style' && el.outerHTML === style);
      if (dangerous.includes(tag) && !ours) problems.push('<' + tag + '>');
      for (const a of el.attributes) {
        const value = a.value.replace(/[\t\n\r]/g, '').replace(/^[\x00-\x20]+/, '');
        const name = a.name;
        if (name.startsWith('on') || name === 'srcdoc' || name === 'formaction') problems.push(tag + ' ' + name);
        if (urlAttrs.includes(name) && schemes.test(value)) problems.push(tag + ' ' + name + '=' + value.slice(0, 40));
        if (name === 'style' && /url\(|expression\(|@import/i.test(value)) problems.push(tag + ' style');
      }
    }
  }
  for (const d of document.querySelectorAll('details')) d.open = true;
  for (const a of document.querySelectorAll('a[href]')) {
    // Following a web or file link would leave the page; every other link is clicked.
    const href = a.getAttribute('href').trim();
    if (['http:', 'https:', 'file:', 'mailto:'].includes(a.protocol) && !href.startsWith('#')) continue;
    if (/^(https?|file|mailto):/i.test(href)) continue;  // a web link the URL parser rejects
    try { a.click(); } catch (e) {}
  }
  await new Promise((r) => setTimeout(r, 500));
  return { problems, pwned: window.__pwned ?? null, scope: scope.length };
}"""


def _inspect_and_click(page: Any, root: str | None) -> dict[str, Any]:
    return page.evaluate(
        _INSPECT_AND_CLICK,
        {"root": root, "dangerous": sorted(DANGEROUS_TAGS), "urlAttrs": sorted(URL_ATTRS), "style": STYLE},
    )


def test_chromium_runs_none_of_it(converted, bundles, marked_rendered, tmp_path):
    from playwright.sync_api import sync_playwright

    from tests.e2e.lab import CHROMIUM, CHROMIUM_ARGS

    # The fallbacks as a front end without widgets shows them: the HTML ones as they are, the Markdown ones as
    # marked renders them; each put in the page with innerHTML, as a naive front end would.
    fragments = [text for b in bundles.values() for kind, text in b.items() if kind.endswith("html")]
    fragments += list(marked_rendered.values())
    blank = tmp_path / "blank.html"
    blank.write_text("<!doctype html><meta charset=utf-8><body><div id=out></div></body>")
    dialogs: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            # Offline, as in CI: only the files themselves load.
            context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
            for variant, path in converted.items():
                page = context.new_page()
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                page.goto(path.as_uri(), wait_until="load")
                result = _inspect_and_click(page, None)
                assert result["scope"] >= 8 and result["problems"] == [] and result["pwned"] is None, variant
                page.close()
            page = context.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(blank.as_uri(), wait_until="load")
            page.evaluate("(h) => { document.getElementById('out').innerHTML = h; }", "\n".join(fragments))
            assert page.locator("#out a").count() > 0 and page.locator("#out pre").count() > 0  # it is all there
            result = _inspect_and_click(page, "#out")
            assert result["problems"] == [] and result["pwned"] is None
        finally:
            browser.close()
    assert dialogs == []
