"""The pydantic base that makes Python objects speak Pi's JSON.

Python attributes are snake_case; the JSON is Pi's camelCase, produced by an alias generator. Two details
make ``model_validate(pi_json).to_pi_json() == pi_json`` hold exactly:

* unknown keys are kept (``extra="allow"``), as Pi keeps whatever its objects carry;
* a field that is ``None`` is omitted (TypeScript ``undefined`` is an absent key), *unless* the JSON it was
  read from had an explicit ``null`` for it, which then round-trips as ``null``.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, SerializationInfo, model_serializer, model_validator
from pydantic.alias_generators import to_camel

#: Pi stores numbers as JS numbers; ``int | float`` keeps an integer ``0`` as ``0`` instead of ``0.0``.
Number = int | float


def now_ms() -> int:
    """The current time as Unix milliseconds, the unit of every message timestamp."""
    return time.time_ns() // 1_000_000


class PiModel(BaseModel):
    """Base of every message, content block and entry: snake_case in Python, Pi's camelCase in JSON."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="allow",
        use_attribute_docstrings=True,
        protected_namespaces=(),
    )

    # The JSON keys that were explicitly ``null`` in the input, so they round-trip as ``null``.
    _explicit_nulls: frozenset[str] = PrivateAttr(default=frozenset())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_explicit_nulls(cls, data: Any, handler: Any) -> Any:
        obj = handler(data)
        if isinstance(data, dict) and isinstance(obj, PiModel):
            nulls = frozenset(k for k, v in data.items() if v is None)
            if nulls:
                obj._explicit_nulls = nulls
        return obj

    @model_serializer(mode="wrap")
    def _omit_unset_nones(self, handler: Any, info: SerializationInfo) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        for name, field in type(self).model_fields.items():
            alias = field.alias or name
            key = alias if info.by_alias else name
            if key in data and data[key] is None and alias not in self._explicit_nulls:
                del data[key]
        return data

    def to_pi_json(self) -> dict[str, Any]:
        """This object as Pi's JSON (camelCase keys, unset optional keys absent)."""
        return self.model_dump(mode="json", by_alias=True)
