"""P1's floor: the message classes rebuilt as plain pydantic models, to time what pydantic-core itself costs on
the same shapes.

Each registered message class (and every PiModel it holds: content blocks, usage, cost) gets a twin made with
``create_model``: the same fields, annotations, aliases and defaults (``None`` for an optional field), the same
discriminated unions, ``extra="allow"``, and nothing of ours (no ``MISSING`` defaults, no hooks, no custom
``__init__``). Parsing Pi's JSON into the twins and dumping them back (``exclude_none``: the nearest plain rule to
"absent stays absent") is the least a typed pydantic layer over these messages costs. It is a timing reference
only: the twins do not keep Pi's explicit ``null`` values, which the real classes must.
"""

from __future__ import annotations

import functools
import operator
import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, TypeAdapter, create_model
from pydantic.alias_generators import to_camel
from pydantic_core import MISSING, PydanticUndefined

from pi_notebook.agent_core.messages import registered_message_types
from pi_notebook.ai._base import PiModel

CONFIG = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, extra="allow")


def _twin_type(annotation: Any, twins: dict[type, type]) -> Any:
    """``annotation`` with every PiModel class in it replaced by its twin."""
    if isinstance(annotation, type) and issubclass(annotation, PiModel):
        return _twin(annotation, twins)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is None or not args:
        return annotation
    if origin is Annotated:
        return Annotated[(_twin_type(args[0], twins), *annotation.__metadata__)]
    inner = [_twin_type(a, twins) for a in args]
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(operator.or_, inner)
    if origin is typing.Literal:
        return annotation
    return origin[tuple(inner)] if len(inner) > 1 else origin[inner[0]]


def _twin(cls: type[PiModel], twins: dict[type, type]) -> type[BaseModel]:
    if cls in twins:
        return twins[cls]
    cls.model_rebuild()
    fields: dict[str, Any] = {}
    for name, info in cls.__pydantic_fields__.items():
        annotation = _twin_type(info.annotation, twins)
        if info.discriminator is not None:
            annotation = Annotated[annotation, Discriminator(info.discriminator)]
        if info.default_factory is not None:
            default = Field(default_factory=_twin_factory(info.default_factory, twins), alias=info.alias)
        elif info.default is PydanticUndefined:
            default = Field(alias=info.alias)
        else:
            default = Field(None if info.default is MISSING else info.default, alias=info.alias)
        fields[name] = (annotation, default)
    twin = create_model(f"Plain{cls.__name__}", __config__=CONFIG, **fields)
    twins[cls] = twin
    return twin


def _twin_factory(factory: Any, twins: dict[type, type]) -> Any:
    if isinstance(factory, type) and issubclass(factory, PiModel):
        return _twin(factory, twins)
    return factory


@functools.cache
def plain_parser() -> TypeAdapter[Any]:
    """A discriminated union (by ``role``) of the twins of every registered message class."""
    twins: dict[type, type] = {}
    members = [_twin(t.model, twins) for t in registered_message_types()]
    union = functools.reduce(operator.or_, members)
    return TypeAdapter(Annotated[union, Field(discriminator="role")])


def plain_parse(raw: list[dict[str, Any]]) -> list[Any]:
    validate = plain_parser().validator.validate_python
    return [validate(m) for m in raw]


def plain_dump(models: list[Any]) -> list[dict[str, Any]]:
    return [m.__pydantic_serializer__.to_python(m, mode="json", by_alias=True, exclude_none=True) for m in models]
