"""The README's Python examples run as written, and it starts with the two commands."""

import ast
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)


def test_the_readme_starts_with_the_two_commands():
    first_block = re.search(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL).group(1)
    commands = [line for line in first_block.splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[0].endswith("jupyter lab notebooks/00-quickstart.ipynb")
    assert (README.parent / "notebooks" / "00-quickstart.ipynb").is_file()
    assert commands[1].endswith("python -m pytest -q")


def test_the_screenshots_it_shows_exist():
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", README.read_text(encoding="utf-8")):
        assert (README.parent / image).is_file(), image


def test_there_are_examples():
    assert len(BLOCKS) >= 3


def stated_results(block: str) -> list[tuple[str, object]]:
    """The lines ``expression   # <a Python literal>`` of a block: the result the README says it gives."""
    found = []
    for line in block.splitlines():
        code, _, comment = line.strip().partition("  # ")
        try:
            found.append((code.strip(), ast.literal_eval(comment.strip())))
        except (ValueError, SyntaxError):
            continue
    return found


def test_the_readme_examples_run_in_order_and_give_the_results_they_state(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files
    namespace: dict = {}
    checked = 0
    for index, block in enumerate(BLOCKS):  # one namespace, like a reader pasting them one after another
        exec(compile(block, f"README python block {index}", "exec"), namespace)
        for expression, stated in stated_results(block):
            assert eval(expression, namespace) == stated, f"README block {index}: {expression}"
            checked += 1
    assert checked >= 6
    assert [v.level for v in map(namespace["visibility"], namespace["history"])] == [
        "both",
        "ui",
        "llm",
        "both",
    ]
    # The offline agent example really calls the tool on the folder it names, then answers.
    assert [m.role for m in namespace["agent"].messages] == ["user", "assistant", "toolResult", "assistant"]


def test_every_test_the_readme_cites_exists():
    # The differences from Pi (and other claims) name the test that pins them: a renamed or deleted test must
    # not leave the README pointing at nothing.
    cited = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", README.read_text(encoding="utf-8"))
    assert len(cited) >= 20
    for path, name in cited:
        source = (README.parent / path).read_text(encoding="utf-8")
        assert not name or re.search(rf"^(?:async )?def {name}\(", source, re.MULTILINE), f"{path}::{name}"
