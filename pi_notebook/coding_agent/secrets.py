"""Masking of the secrets the extension knows, in shell output and tool results (beyond Pi).

``%bash env``, ``%bash cat .env`` or the agent's ``bash``/``read`` tools would otherwise store API keys
verbatim in the session file and send them to the LLM. The secrets known are the values of the environment
variables that hold a provider's key (:data:`~pi_notebook.ai.keys.ENV_VARS`) and of every variable whose
name has an ``API_KEY``, ``APIKEY``, ``TOKEN``, ``SECRET`` or ``PASSWORD`` part (``OPENAI_API_KEY``,
``GH_TOKEN``, ``AWS_SECRET_ACCESS_KEY``), when at least :data:`MIN_LENGTH` characters long. Each occurrence
— raw, or as shells and programs quote it (escaped in double or single quotes, repr'd, JSON-escaped,
URL-encoded) — becomes ``[masked: NAME]``; the views show a "secrets masked" badge when an output holds one.

Not masked: secrets the environment does not hold (a ``.env`` file's other entries), pieces of a secret, a
secret split by colour codes in the live view, and the full-output temp file only line by line.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..ai import TextContent
from ..ai.keys import ENV_VARS
from ..ai.redact import mark_occurrences, replace_marked, secret_forms

if TYPE_CHECKING:  # the tool protocol (and asyncio) is not needed to mask a %bash output
    from ..agent_core import AgentTool, AgentToolResult

__all__ = [
    "MASKED",
    "MIN_LENGTH",
    "SECRET_NAME",
    "SecretMasker",
    "has_masked",
    "known_secrets",
    "mask_tool",
    "mask_tool_result",
]

MIN_LENGTH = 8
"""Shorter values are not masked: they would match ordinary text, and are no real secret."""
SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD)(?:_|$)", re.IGNORECASE)
"""An environment variable whose name matches holds a secret."""
MASKED = re.compile(r"\[masked: [A-Za-z_][A-Za-z0-9_]*\]")
"""The marker a masked secret becomes (what the views look for to show their badge)."""
_PROVIDER_VARS = tuple(dict.fromkeys(name for names in ENV_VARS.values() for name in names))


def has_masked(text: Any) -> bool:
    """Whether ``text`` holds a ``[masked: NAME]`` marker."""
    return isinstance(text, str) and MASKED.search(text) is not None


def known_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Secret value (stripped) → the variable holding it, for the variables described in the module
    docstring; provider key variables name a value first, then the others in alphabetical order."""
    env = os.environ if environ is None else environ
    names = [n for n in _PROVIDER_VARS if n in env] + sorted(n for n in env if SECRET_NAME.search(n))
    found: dict[str, str] = {}
    for name in names:
        value = (env.get(name) or "").strip()
        if len(value) >= MIN_LENGTH:
            found.setdefault(value, name)
    return found


def _shell_forms(value: str) -> list[str]:
    """How shells print ``value``: escaped in double quotes (``declare -p``, ``export -p``), in single quotes
    (``set``, ``alias``) and with backslashes (``printf %q``)."""
    return [
        re.sub(r'([\\"$`])', r"\\\1", value),
        value.replace("'", "'\\''"),
        re.sub(r"([^\w\-./:=@%+,])", r"\\\1", value),
    ]


class SecretMasker:
    """Masks a fixed set of secrets (``value → name``) in text, tool results and files."""

    def __init__(self, secrets: Mapping[str, str]):
        forms: dict[str, str] = {}
        for value, name in secrets.items():
            for form in (*secret_forms(value), *_shell_forms(value)):
                if len(form) >= MIN_LENGTH:
                    forms.setdefault(form, name)
        self._forms = forms

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> SecretMasker:
        """A masker for the secrets the environment holds now (see :func:`known_secrets`)."""
        return cls(known_secrets(environ))

    def __bool__(self) -> bool:
        return bool(self._forms)

    def forms(self) -> list[bytes]:
        """Every form a secret is masked in, as UTF-8 bytes (to look for them in a file)."""
        return [form.encode("utf-8", "surrogatepass") for form in self._forms]

    @property
    def longest(self) -> int:
        """Length of the longest form a secret is masked in (0 without secrets)."""
        return max(map(len, self._forms), default=0)

    def mask(self, text: str) -> tuple[str, bool]:
        """``text`` with every form of every secret replaced by ``[masked: NAME]``, and whether any was.

        Overlapping secrets are masked together: one run of text covered by several becomes their markers
        side by side, so no piece of either is left between them."""
        present = [form for form in self._forms if form in text]
        if not present:
            return text, False
        covered = bytearray(len(text))
        for form in present:
            mark_occurrences(text, form, covered)

        def markers(start: int, end: int) -> str:
            names = dict.fromkeys(self._forms[f] for f in present if text.find(f, start, end) != -1)
            return "".join(f"[masked: {name}]" for name in names) or "[masked: secret]"

        return replace_marked(text, covered, markers), True

    def mask_live(self, text: str) -> str:
        """:meth:`mask` for text that may go on (a live tail): a trailing piece that could be the start of a
        secret is held back until the next call shows whether it is one."""
        held = 0
        for form in self._forms:
            for size in range(min(len(form) - 1, len(text)), held, -1):
                if text.endswith(form[:size]):
                    held = size
                    break
        return self.mask(text[: len(text) - held])[0]

    def mask_value(self, value: Any) -> tuple[Any, bool]:
        """Strings inside ``value`` (nested dicts, lists and tuples too) masked; other values unchanged."""
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, (list, tuple, dict)):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            pairs = [(k, self.mask_value(v)) for k, v in items]
            any_masked = any(m for _, (_, m) in pairs)
            if isinstance(value, dict):
                return {k: v for k, (v, _) in pairs}, any_masked
            return type(value)(v for _, (v, _) in pairs), any_masked
        return value, False

    def mask_file(self, path: str | os.PathLike[str]) -> bool:
        """Mask a UTF-8 text file in place (a command's full output); whether anything was masked.

        A quick binary scan comes first, so a large file without secrets is only read. The rewrite goes line
        by line: a secret that spans lines is not found here."""
        forms = self.forms()
        if not forms or not file_contains(path, forms):
            return False
        temporary = f"{os.fspath(path)}.masking"
        masked = False
        with (
            open(path, encoding="utf-8", errors="replace", newline="") as source,
            open(temporary, "w", encoding="utf-8", newline="") as target,
        ):
            for line in source:
                text, hit = self.mask(line)
                masked |= hit
                target.write(text)
        os.replace(temporary, path)
        return masked


def file_contains(path: str | os.PathLike[str], forms: list[bytes]) -> bool:
    """Whether the file holds any of ``forms`` (read in 1 MiB chunks, a form across two chunks included)."""
    overlap = max(len(f) for f in forms) - 1
    tail = b""
    with open(path, "rb") as file:
        while chunk := file.read(1 << 20):
            window = tail + chunk
            if any(form in window for form in forms):
                return True
            tail = window[len(window) - overlap :]
    return False


def mask_tool_result(result: AgentToolResult, masker: SecretMasker) -> tuple[AgentToolResult, bool]:
    """``result`` with its text blocks and ``details`` masked, and whether anything was."""
    from ..agent_core import AgentToolResult

    content, masked = [], False
    for block in result.content:
        if isinstance(block, TextContent):
            text, hit = masker.mask(block.text)
            masked |= hit
            block = block.model_copy(update={"text": text}) if hit else block
        content.append(block)
    details, hit = masker.mask_value(result.details)
    return AgentToolResult(content=content, details=details), masked or hit


def mask_tool(tool: AgentTool, masker: Callable[[], SecretMasker] = SecretMasker.from_environment) -> AgentTool:
    """``tool`` with its results, partial results and error texts masked, and the full output a result
    names (``details.fullOutputPath``) masked on disk. ``masker()`` is asked on every call, so a key set
    later (``%env``) is known."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        current = masker()

        def update(partial: AgentToolResult) -> None:
            if on_update is not None:
                on_update(mask_tool_result(partial, current)[0])

        try:
            result = await tool.run(tool_call_id, params, signal, update)
        except Exception as error:
            text, hit = current.mask(str(error))
            if not hit:
                raise
            raise _same_kind(error, text) from None
        details = result.details
        path = details.get("fullOutputPath") if isinstance(details, dict) else None
        if current and isinstance(path, str) and os.path.isfile(path):
            current.mask_file(path)
        return mask_tool_result(result, current)[0]

    return dataclasses.replace(tool, execute=execute)


def _same_kind(error: Exception, text: str) -> Exception:
    """An exception of ``error``'s class with the message ``text`` (a ``RuntimeError`` if it cannot be)."""
    try:
        replacement = type(error)(text)
    except Exception:
        return RuntimeError(text)
    return replacement if str(replacement) == text else RuntimeError(text)
