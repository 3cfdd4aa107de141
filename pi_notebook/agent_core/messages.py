"""The core's messages: AgentMessage = Message + every role an app registers.

The LLM only understands ``user``, ``assistant`` and ``toolResult``. An agent and its UI need more: a shell
command the user ran, a summary of compacted history, an extension's note. Each such role is a pydantic model
tagged by a literal ``role`` and registered with :func:`register_message_type`, together with the converter
that says what the LLM sees of it. The core registers only ``user``, ``assistant`` and ``toolResult``; the
coding agent's four roles register from :mod:`pi_notebook.coding_agent.messages` through the same public call.

A message whose role nobody registered still loads: it becomes an :class:`OpaqueMessage` that keeps its raw
JSON (it round-trips unchanged), is never sent to the LLM, and says why it is opaque.
"""

from __future__ import annotations

import copy
import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar, Union, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..ai import AssistantMessage, PiModel, ToolResultMessage, UserMessage, describe_pending

LlmMessage = UserMessage | AssistantMessage | ToolResultMessage
ToLlm = Callable[[Any], "LlmMessage | Sequence[LlmMessage] | None"]
_M = TypeVar("_M", bound=PiModel)


class MessageTypeError(ValueError):
    """A message class cannot be registered (no literal ``role``, or the role is taken by another class)."""


class MessageValidationError(ValueError):
    """A message of a registered role does not match its model."""

    def __init__(self, role: str, error: ValidationError | str):
        self.role = role
        self.error = error
        super().__init__(f"invalid {role!r} message: {error}")


class OpaqueMessage(BaseModel):
    """A message this kernel cannot type: its role is not registered, or it does not match its model.

    It keeps the raw JSON untouched, so saving it again loses nothing; it is never sent to the LLM.
    """

    model_config = ConfigDict(defer_build=True)  # compiled on first use, not at import

    raw: dict[str, Any]
    """The message exactly as read."""
    reason: str
    """Why it is opaque (unknown role, or the validation error)."""

    @property
    def role(self) -> Any:
        """The raw ``role`` value (may be missing or not a string)."""
        return self.raw.get("role")

    def to_pi_json(self) -> dict[str, Any]:
        """The raw JSON, unchanged (a copy)."""
        return copy.deepcopy(self.raw)


AgentMessage = UserMessage | AssistantMessage | ToolResultMessage | PiModel | OpaqueMessage
"""For type hints: an LLM Message, a message of a role an app registered (a :class:`PiModel` with a literal
``role``), or an :class:`OpaqueMessage`. The core registers only the three LLM roles; an app adds its own
through :func:`register_message_type` (the coding agent's four live in :mod:`pi_notebook.coding_agent`), and
:func:`registered_message_types` lists what is registered now."""


# --- the registry --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MessageType:
    """A registered role: its model class and what the LLM sees of it."""

    role: str
    model: type[PiModel]
    to_llm: ToLlm | None
    """Converter to LLM messages; ``None`` means the role never reaches the LLM."""


_lock = threading.Lock()
_registry: dict[str, MessageType] = {}
_parser: TypeAdapter[Any] | None = None
_passthrough: frozenset[type] = frozenset()


def _role_of(model_cls: type) -> str:
    if not (isinstance(model_cls, type) and issubclass(model_cls, PiModel)):
        raise MessageTypeError(f"{model_cls!r} is not a PiModel subclass")
    field = model_cls.__pydantic_fields__.get("role")
    args = get_args(field.annotation) if field is not None and get_origin(field.annotation) is Literal else ()
    if field is None or len(args) != 1 or not isinstance(args[0], str) or field.default != args[0]:
        raise MessageTypeError(
            f"{model_cls.__name__} needs a field like `role: Literal['myRole'] = 'myRole'` to be registered"
        )
    return args[0]


def register_message_type(model_cls: type[_M], *, to_llm: ToLlm | None = None, replace: bool = False) -> type[_M]:
    """Register an AgentMessage role.

    ``model_cls`` is a :class:`~pi_notebook.ai.PiModel` subclass with ``role: Literal["x"] = "x"``.
    ``to_llm(message)`` returns a Message, a list of Messages, or ``None`` to keep it from the LLM; without
    it the role is UI-only. Registering the same role again with another class raises
    :class:`MessageTypeError` unless ``replace=True`` (handy when a notebook cell that defines the class runs
    again). Returns ``model_cls`` so it can be used as a decorator factory's result.
    """
    global _parser, _passthrough, _version
    role = _role_of(model_cls)
    with _lock:
        existing = _registry.get(role)
        if existing is not None and existing.model is not model_cls and not replace:
            raise MessageTypeError(
                f"role {role!r} is already registered to {existing.model.__qualname__}; "
                f"pass replace=True to register {model_cls.__qualname__} instead"
            )
        changed = existing is None or existing.model is not model_cls or existing.to_llm is not to_llm
        _registry[role] = MessageType(role, model_cls, to_llm)
        _parser = None  # rebuilt on next use, with every registered class
        _passthrough = frozenset(t.model for t in _registry.values() if t.to_llm is _unchanged)
        if changed:
            _version += 1
    if changed:
        _notify(role)
    return model_cls


# --- listening to the registry -------------------------------------------------------------------------

_version = 0
_listeners: dict[int, Callable[[], Callable[[str], None] | None]] = {}  # token → a getter of the listener
_next_token = 0


def registry_version() -> int:
    """A number that grows whenever a role is registered or its converter replaced: whatever was converted
    with an older number may convert differently now."""
    return _version


def on_registry_change(listener: Callable[[str], None]) -> Callable[[], None]:
    """Call ``listener(role)`` after each registration that changes something (a new role, another class or
    another converter for a role), on the thread that registered. Returns ``unsubscribe``.

    A bound method is held weakly (its object is not kept alive by the registry and drops out when collected),
    so a view that listens, such as an inspector, may simply be forgotten; anything else is held until
    ``unsubscribe()``. A listener that raises does not stop the others or the registration: it is reported as a
    warning.
    """
    global _next_token
    getter: Callable[[], Callable[[str], None] | None]
    if hasattr(listener, "__self__") and hasattr(listener, "__func__"):
        getter = weakref.WeakMethod(listener)
    else:
        getter = lambda: listener  # noqa: E731 - a getter like WeakMethod's
    with _lock:
        _next_token += 1
        token = _next_token
        _listeners[token] = getter

    def unsubscribe() -> None:
        with _lock:
            _listeners.pop(token, None)

    return unsubscribe


def _notify(role: str) -> None:
    with _lock:
        current = list(_listeners.items())
    for token, getter in current:
        listener = getter()
        if listener is None:  # its object was collected
            with _lock:
                _listeners.pop(token, None)
            continue
        try:
            listener(role)
        except Exception as e:  # one broken view must not break registering (a notebook cell) or the others
            warnings.warn(f"a registry listener failed: {type(e).__name__}: {e}", RuntimeWarning, stacklevel=3)


def message_type(role: object) -> MessageType | None:
    """The registration for ``role``, or ``None`` (also for a role that is not a string)."""
    return _registry.get(role) if isinstance(role, str) else None


def registered_message_types() -> tuple[MessageType, ...]:
    """Every registered role, in registration order."""
    return tuple(_registry.values())


def passed_through_types() -> frozenset[type]:
    """The classes whose messages reach the LLM as they are (the three LLM roles, unless an app registered
    another converter for one): :func:`~pi_notebook.agent_core.convert_to_llm` appends them without a call."""
    return _passthrough


def _unchanged(message: Any) -> Any:
    return message


# The three roles every LLM API understands pass through unchanged, through the same public call apps use.
for _cls in (UserMessage, AssistantMessage, ToolResultMessage):
    register_message_type(_cls, to_llm=_unchanged)


def _get_parser() -> TypeAdapter[Any]:
    global _parser
    parser = _parser  # read once: a registration may reset it meanwhile
    if parser is not None:
        return parser
    with _lock:
        if _parser is None:
            describe_pending()  # the classes' field descriptions, before their schemas are built here
            classes = tuple(t.model for t in _registry.values())
            union = Union[classes] if len(classes) > 1 else classes[0]  # noqa: UP007 - built at run time
            # The union is built at run time from the registry: no static type describes it.
            _parser = TypeAdapter(Annotated[union, Field(discriminator="role")])  # type: ignore[arg-type]
        return _parser


def from_pi_json(data: dict[str, Any], *, lenient: bool = True) -> Any:
    """Pi's JSON → a typed AgentMessage.

    An unregistered role gives an :class:`OpaqueMessage`. A registered role that does not validate gives an
    :class:`OpaqueMessage` too when ``lenient`` (the default, so a load never loses data), else raises
    :class:`MessageValidationError`.
    """
    if not isinstance(data, dict):
        raise TypeError(f"a message must be a JSON object, got {type(data).__name__}")
    role = data.get("role")
    if not isinstance(role, str) or role not in _registry:
        return OpaqueMessage(raw=data, reason=f"unknown role {role!r}")
    parser = _parser or _get_parser()
    try:
        return parser.validator.validate_python(data)  # the compiled validator: no Python code per object
    except ValidationError as e:
        if not lenient:
            raise MessageValidationError(role, e) from e
        return OpaqueMessage(raw=data, reason=f"invalid {role!r} message: {e}")


def to_pi_json(message: Any) -> dict[str, Any]:
    """A typed AgentMessage → Pi's JSON (camelCase; ``None`` keys omitted). Dicts pass through as copies."""
    if isinstance(message, dict):
        return copy.deepcopy(message)
    dump = getattr(message, "to_pi_json", None)
    if dump is None:
        raise TypeError(f"not an AgentMessage: {type(message).__name__}")
    return cast("dict[str, Any]", dump())


def opaque_messages(messages: Sequence[Any]) -> list[tuple[int, OpaqueMessage]]:
    """The messages this kernel could not type, with their positions: ask this to learn what a history holds
    that will never reach the LLM because its role is unknown or invalid (``message.reason`` says which)."""
    typed = (as_agent_message(m) for m in messages)
    return [(i, m) for i, m in enumerate(typed) if isinstance(m, OpaqueMessage)]


def as_agent_message(message: Any) -> Any:
    """Accept a typed message or Pi JSON; return the typed message."""
    return from_pi_json(message) if isinstance(message, dict) else message
