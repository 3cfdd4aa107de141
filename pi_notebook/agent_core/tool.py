"""Agent tools: what the LLM may call, how it runs, and how its arguments are checked.

A tool *fails* by raising; the loop turns the exception's text into an ``is_error`` tool result the model
reads. Arguments are validated against the tool's JSON Schema (with AJV-style type coercion, as Pi does)
before the tool runs.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..ai import ImageContent, TextContent, Tool


@dataclass
class AgentToolResult:
    """What a tool returns: ``content`` for the LLM, ``details`` for the UI and logs only."""

    content: list[TextContent | ImageContent] = field(default_factory=list)
    details: Any = None

    @classmethod
    def text(cls, text: str, details: Any = None) -> AgentToolResult:
        """A result holding one text block."""
        return cls(content=[TextContent(text=text)], details=details)


OnUpdate = Callable[[AgentToolResult], None]


@dataclass
class AgentTool:
    """A tool the agent can run.

    ``execute(tool_call_id, params, signal, on_update)`` may be a coroutine function or a plain function (run
    in a worker thread so it cannot block the loop). It returns an :class:`AgentToolResult` (a plain string
    is accepted as one text block) and raises to fail. ``signal`` is an
    :class:`~pi_notebook.ai.abort.AbortSignal`; ``on_update(partial_result)`` streams progress.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    execute: Callable[..., Any]
    label: str = ""

    def to_tool(self) -> Tool:
        """The LLM-facing definition."""
        return Tool(name=self.name, description=self.description, parameters=self.parameters)

    async def run(self, tool_call_id: str, params: dict[str, Any], signal: Any, on_update: OnUpdate) -> AgentToolResult:
        """Call ``execute`` and normalise what it returns."""
        if inspect.iscoroutinefunction(self.execute):
            out = await self.execute(tool_call_id, params, signal, on_update)
        else:
            out = await asyncio.to_thread(self.execute, tool_call_id, params, signal, on_update)
            if inspect.isawaitable(out):
                out = await out
        if isinstance(out, str):
            return AgentToolResult.text(out)
        if not isinstance(out, AgentToolResult):
            raise TypeError(f"tool {self.name!r} returned {type(out).__name__}, expected AgentToolResult or str")
        return out


class ToolArgumentsError(ValueError):
    """Arguments that do not match the tool's schema (the message is what the LLM is told)."""


# AJV's messages, which Pi shows the model, for the keywords tools actually use.
def _ajv_message(error: Any) -> tuple[str, str]:
    path = "/".join(str(p) for p in error.absolute_path)
    v, arg = error.validator, error.validator_value
    if v == "required":
        missing = next((p for p in arg if isinstance(error.instance, dict) and p not in error.instance), "")
        return path or missing or "root", f"must have required property '{missing}'"
    messages: dict[str, Callable[[], str]] = {
        "type": lambda: f"must be {','.join(arg) if isinstance(arg, list) else arg}",
        "enum": lambda: "must be equal to one of the allowed values",
        "const": lambda: "must be equal to constant",
        "minimum": lambda: f"must be >= {arg}",
        "maximum": lambda: f"must be <= {arg}",
        "exclusiveMinimum": lambda: f"must be > {arg}",
        "exclusiveMaximum": lambda: f"must be < {arg}",
        "minLength": lambda: f"must NOT have fewer than {arg} characters",
        "maxLength": lambda: f"must NOT have more than {arg} characters",
        "minItems": lambda: f"must NOT have fewer than {arg} items",
        "maxItems": lambda: f"must NOT have more than {arg} items",
        "pattern": lambda: f'must match pattern "{arg}"',
        "additionalProperties": lambda: "must NOT have additional properties",
    }
    return path or "root", messages.get(v, lambda: str(error.message))()


_SCALARS = ("string", "number", "integer", "boolean", "null")


def _coerce(value: Any, schema: Any) -> Any:
    """AJV ``coerceTypes: true`` for scalars: "5" → 5, 1 → "1", "true" → True, "" / 0 / False → null."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: _coerce(v, props.get(k)) for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items")
        return [_coerce(v, items) for v in value]
    wanted = schema.get("type")
    types = wanted if isinstance(wanted, list) else [wanted]
    if not types or any(_is_type(value, t) for t in types if t):
        return value
    for t in types:
        converted = _convert_scalar(value, t)
        if converted is not _NO:
            return converted
    return value


_NO = object()


def _is_type(value: Any, t: str) -> bool:
    checks = {
        "string": lambda: isinstance(value, str),
        "boolean": lambda: isinstance(value, bool),
        "integer": lambda: (
            (isinstance(value, int) and not isinstance(value, bool))
            or (isinstance(value, float) and value.is_integer())
        ),
        "number": lambda: isinstance(value, (int, float)) and not isinstance(value, bool),
        "null": lambda: value is None,
        "object": lambda: isinstance(value, dict),
        "array": lambda: isinstance(value, list),
    }
    return checks.get(t, lambda: True)()


def _convert_scalar(value: Any, t: str | None) -> Any:
    if t in ("number", "integer"):
        if isinstance(value, bool) or value is None:
            return int(value) if value is not None else 0
        if isinstance(value, str) and value.strip():
            try:
                number = float(value)
            except ValueError:
                return _NO
            if t == "integer":
                return int(number) if number.is_integer() else _NO
            return int(number) if number.is_integer() and "." not in value else number
    elif t == "string":
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return json.dumps(value)
        if value is None:
            return ""
    elif t == "boolean":
        return {"true": True, "false": False, 1: True, 0: False, None: False}.get(value, _NO)
    elif t == "null" and value in ("", 0, False):
        return None
    return _NO


def validate_tool_arguments(
    tool: AgentTool | Tool, arguments: dict[str, Any], call_name: str | None = None
) -> dict[str, Any]:
    """Coerce and validate ``arguments`` against the tool's schema; return the validated copy.

    Raises :class:`ToolArgumentsError` with Pi's message format::

        Validation failed for tool "<name>":
          - <path>: <message>

        Received arguments:
        <arguments as indented JSON>
    """
    args: dict[str, Any] = _coerce(copy.deepcopy(arguments), tool.parameters)
    import jsonschema  # imported on first use: it takes a second to import, and loading the extension should not

    validator_cls = jsonschema.validators.validator_for(tool.parameters, default=jsonschema.Draft7Validator)
    errors = sorted(validator_cls(tool.parameters).iter_errors(args), key=lambda e: list(e.absolute_path))
    if not errors:
        return args
    lines = "\n".join("  - {}: {}".format(*_ajv_message(e)) for e in errors)
    received = json.dumps(arguments, indent=2, ensure_ascii=False)
    raise ToolArgumentsError(
        f'Validation failed for tool "{call_name or tool.name}":\n{lines}\n\nReceived arguments:\n{received}'
    )
