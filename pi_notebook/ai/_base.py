"""The pydantic base that makes Python objects speak Pi's JSON.

Python attributes are snake_case; the JSON is Pi's camelCase, produced by an alias generator. Two details
make ``model_validate(pi_json).to_pi_json() == pi_json`` hold exactly:

* unknown keys are kept (``extra="allow"``), as Pi keeps whatever its objects carry;
* a field that is ``None`` is omitted (TypeScript ``undefined`` is an absent key), *unless* the JSON it was
  read from had an explicit ``null`` for it, which then round-trips as ``null``.

Both are done by pydantic-core alone, with no Python code run per object, so parsing and dumping cost what
they cost on a plain pydantic model. The second works through pydantic's ``MISSING`` sentinel: a field
declared with the default ``None`` gets ``MISSING`` as its real default, which pydantic-core leaves out of
every dump, while an explicit ``null`` is validated to ``None`` and dumped as ``null``. Reading such a field
gives ``None`` either way (a small descriptor on the class maps ``MISSING`` to ``None``). Assigning ``None``
to it (or ``model_copy(update=...)``) makes the key absent again, unless it holds, or held before a value
was assigned, an explicit ``null``. ``Cls(field_name=None)`` (the Python name, when it differs from the JSON
key) also leaves the key absent; ``Cls(jsonKey=None)`` is an explicit ``null``. pydantic's own
``model_dump()`` leaves absent keys out too.

Importing costs little: a model's validator and serializer are compiled on first use (``defer_build``), and
the attribute docstrings that describe the fields are read then too (before the first schema is built, or when
``model_fields`` is read), once per source file, not once per class.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import operator
import sys
import threading
import time
import types
import typing
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo
from pydantic_core import core_schema

if TYPE_CHECKING:
    from typing_extensions import Self

try:
    from pydantic_core import MISSING
except ImportError as e:  # pragma: no cover - pydantic < 2.12
    raise ImportError("pi_notebook needs pydantic >= 2.12 (for pydantic_core.MISSING)") from e


class _JsNumber:
    """Dumped as JSON.stringify does: ``NaN`` and the infinities become ``null`` (pydantic-core does it for
    values it serializes as "any"; a typed ``float`` would keep them, and ``json.dumps`` would then refuse)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        schema = handler(source)
        schema["serialization"] = core_schema.simple_ser_schema("any")
        return schema


#: Pi stores numbers as JS numbers; ``int | float`` keeps an integer ``0`` as ``0`` instead of ``0.0``.
Number = Annotated[int | float, _JsNumber]

_set = object.__setattr__


def now_ms() -> int:
    """The current time as Unix milliseconds, the unit of every message timestamp."""
    return time.time_ns() // 1_000_000


class _Optional:
    """Class-level view of a field whose default is ``MISSING``: reads give ``None`` for an absent value.

    It raises ``AttributeError`` on the class itself, as pydantic fields do, so that pydantic neither takes it
    for a default when it collects a subclass's fields nor routes assignments to it.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            raise AttributeError(self.name)
        value = obj.__dict__.get(self.name)
        return None if value is MISSING else value

    def __set__(self, obj: Any, value: Any) -> None:  # only reached through object.__setattr__
        obj.__dict__[self.name] = _assigned(obj, self.name, value, obj.__dict__.get(self.name, MISSING))


class PiModel(BaseModel):
    """Base of every message, content block and entry: snake_case in Python, Pi's camelCase in JSON."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="allow",
        protected_namespaces=(),
        # Attribute docstrings become field descriptions, read once per source (describe_fields): pydantic's
        # own reading (use_attribute_docstrings) inspects the source again for every class.
        use_attribute_docstrings=False,
        # The validators and serializers are compiled on first use, not when the class is defined: importing
        # the package (``%load_ext``) does not pay for models it does not use yet.
        defer_build=True,
    )

    #: Fields whose default is ``None`` in the declaration (``MISSING`` in pydantic): absent unless set.
    __pi_optional__: ClassVar[frozenset[str]] = frozenset()
    #: Those of them whose Python name is not their JSON key: ``Cls(name=None)`` leaves them absent.
    __pi_renamed__: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Runs before pydantic collects the fields: a declared default of None becomes MISSING.
        super().__init_subclass__(**kwargs)
        for name, annotation in inspect.get_annotations(cls).items():
            if name.startswith("_") or "ClassVar" in str(annotation):
                continue
            value = cls.__dict__.get(name, MISSING)
            if value is None:
                type.__setattr__(cls, name, MISSING)
            elif isinstance(value, FieldInfo) and value.default is None:
                field = value._copy()
                field.default = MISSING
                field._attributes_set["default"] = MISSING
                type.__setattr__(cls, name, field)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        fields = cls.__pydantic_fields__
        optional = frozenset(name for name, field in fields.items() if field.default is MISSING)
        cls.__pi_optional__ = optional
        cls.__pi_renamed__ = tuple(name for name in optional if (fields[name].alias or name) != name)
        for name in optional:
            if not isinstance(_class_attribute(cls, name), _Optional):
                type.__setattr__(cls, name, _Optional(name))
        _describe_later(cls)
        if not cls.__pydantic_complete__:  # defer_build: pydantic sets no __signature__ until it builds
            type.__setattr__(cls, "__signature__", _Signature(None))

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        super().__pydantic_on_complete__()
        type.__setattr__(cls, "__signature__", _Signature(cls.__dict__.get("__signature__")))

    def __init__(self, /, **data: Any) -> None:
        for name in self.__pi_renamed__:
            if data.get(name, 0) is None:
                data = _without_renamed_nones(type(self), data)
                break
        self.__pydantic_validator__.validate_python(data, self_instance=self)
        if self.__pydantic_private__ is None:
            _set(self, "__pydantic_private__", {})

    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]  # nested objects skip it, as before

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Self:
        """Validate ``obj`` (Pi's JSON, or the Python names) into this class."""
        if isinstance(obj, dict) and cls.__pi_renamed__:
            obj = _without_renamed_nones(cls, obj)
        model = super().model_validate(obj, **kwargs)
        if model.__pydantic_private__ is None:
            _set(model, "__pydantic_private__", {})
        return model

    @classmethod
    def model_validate_json(cls, json_data: Any, **kwargs: Any) -> Self:
        model = super().model_validate_json(json_data, **kwargs)
        if model.__pydantic_private__ is None:
            _set(model, "__pydantic_private__", {})
        return model

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Any = None,
    ) -> bool | None:
        """pydantic's ``model_rebuild`` (which a first use calls, ``defer_build``), the field descriptions given
        first (:func:`describe_pending`), so that the schema has them."""
        describe_pending()
        return super().model_rebuild(
            force=force,
            raise_errors=raise_errors,
            _parent_namespace_depth=_parent_namespace_depth + 1,  # the caller's frame, past this one
            _types_namespace=_types_namespace,
        )

    @classmethod
    # The pydantic mypy plugin puts its own field-typed signature on every model's model_construct, this
    # override's too, and then finds it incompatible with BaseModel's: the plugin's doing, not this signature's.
    def model_construct(cls, _fields_set: set[str] | None = None, **values: Any) -> Self:  # type: ignore[override]
        model = super().model_construct(_fields_set, **values)
        for name in cls.__pi_optional__:
            if model.__dict__.get(name, MISSING) is None:
                model.__dict__[name] = MISSING  # no validation ran: nothing is an explicit null
        if model.__pydantic_private__ is None:
            _set(model, "__pydantic_private__", {})
        return model

    def model_copy(self, *, update: Any = None, deep: bool = False) -> Self:
        copied = super().model_copy(update=update, deep=deep)
        if update:
            optional = self.__pi_optional__
            for name, value in update.items():
                if name in optional:
                    copied.__dict__[name] = _assigned(copied, name, value, self.__dict__.get(name, MISSING))
        return copied

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.__pi_optional__:
            value = _assigned(self, name, value, self.__dict__.get(name, MISSING))
        super().__setattr__(name, value)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, BaseModel):
            return NotImplemented
        if type(self) is not type(other):
            return False
        # Objects typed inside another one have no private dict; those built directly have an empty one.
        if (self.__pydantic_private__ or {}) != (other.__pydantic_private__ or {}):
            return False
        if (self.__pydantic_extra__ or {}) != (other.__pydantic_extra__ or {}):
            return False
        if self.__dict__ == other.__dict__:
            return True
        names = tuple(type(self).__pydantic_fields__)
        if self.__dict__.keys() <= set(names) and other.__dict__.keys() <= set(names):
            return False
        getter = operator.itemgetter(*names) if names else (lambda _: ())
        try:
            return getter(self.__dict__) == getter(other.__dict__)
        except KeyError:
            return False

    __hash__ = None  # type: ignore[assignment]  # unhashable, as a mutable model with __eq__ is; typeshed wants a method

    def __iter__(self) -> Any:
        for name, value in super().__iter__():
            yield name, (None if value is MISSING else value)

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, (None if value is MISSING else value)

    @property
    def _explicit_nulls(self) -> frozenset[str]:
        """The JSON keys that are explicit ``null`` values, or were until a value was assigned."""
        values = self.__dict__
        fields = type(self).__pydantic_fields__
        nulls = {field.alias or name for name, field in fields.items() if values.get(name, 0) is None}
        nulls.update(fields[name].alias or name for name in _nulls_overwritten(self))
        extra = self.__pydantic_extra__
        if extra:
            nulls.update(key for key, value in extra.items() if value is None)
        return frozenset(nulls)

    @_explicit_nulls.setter
    def _explicit_nulls(self, keys: Any) -> None:
        # The None fields named in ``keys`` are written as null; the optional ones not named, left out.
        values = self.__dict__
        optional = self.__pi_optional__
        remembered = set()
        for name, field in type(self).__pydantic_fields__.items():
            named = (field.alias or name) in keys
            value = values.get(name, 0)
            if named and value is MISSING:
                values[name] = None
            elif not named and name in optional and value is None:
                values[name] = MISSING
            elif named and name in optional and value is not None:
                remembered.add(name)
        private = _private(self)
        private[_NULLS] = frozenset(remembered)

    def set_numbers(self, **values: int | float) -> None:
        """Assign numbers to fields declared with a number default (token counts, costs): what ``setattr`` does
        for them, without pydantic's dispatch per attribute (a stream does this for every chunk)."""
        fields = type(self).__pydantic_fields__
        for name in values:
            field = fields.get(name)
            if field is None or type(field.default) not in (int, float):
                raise AttributeError(f"{type(self).__name__}.{name} is not a number field")
        self.__dict__.update(values)
        self.__pydantic_fields_set__.update(values)

    def to_pi_json(self) -> dict[str, Any]:
        """This object as Pi's JSON (camelCase keys, unset optional keys absent)."""
        out: dict[str, Any] = self.__pydantic_serializer__.to_python(self, mode="json", by_alias=True)
        return out


_NULLS = "_pi_nulls"
"""Key, in an object's pydantic private dict, of the optional fields that held an explicit ``null`` before a
value was assigned to them: assigning ``None`` again makes them ``null`` again, not absent."""


def _private(model: BaseModel) -> dict[str, Any]:
    private = model.__pydantic_private__
    if private is None:
        private = {}
        _set(model, "__pydantic_private__", private)
    return private


def _nulls_overwritten(model: Any) -> frozenset[str]:
    private = model.__pydantic_private__
    return private.get(_NULLS, frozenset()) if private else frozenset()


def _assigned(model: Any, name: str, value: Any, current: Any) -> Any:
    """The value to store when ``value`` is assigned to the optional field ``name`` (holding ``current``):
    ``None`` makes the key absent (``MISSING``), unless it holds, or held before a value replaced it, an
    explicit ``null``."""
    if value is None:
        if current is None or name in _nulls_overwritten(model):
            return None
        return MISSING
    if current is None:  # an explicit null replaced by a value: remembered
        private = _private(model)
        private[_NULLS] = private.get(_NULLS, frozenset()) | {name}
    return value


_pending: list[tuple[type[BaseModel], str, dict[str, Any], int]] = []
"""Classes whose field docstrings are still to be read: (class, source file, module globals, line of the class
statement)."""
_described_at_once = False  # once a model was built, classes defined later are described when defined
_pending_lock = threading.Lock()


def _describe_later(cls: type[BaseModel]) -> None:
    """Remember where ``cls`` is being defined; its field docstrings are read before any model is built
    (:func:`describe_pending`): parsing the sources (a few ms each) is then not part of importing the package."""
    frame = _defining_frame(cls)
    if frame is None:
        return
    _pending.append((cls, frame.f_code.co_filename, frame.f_globals, frame.f_lineno))
    if _described_at_once:
        describe_pending()


def describe_pending() -> None:
    """Give the classes defined so far their field descriptions (see :func:`describe_fields`). Called before a
    PiModel's schema is built (``model_rebuild``), when ``model_fields`` is read, and before a ``TypeAdapter``
    over these classes is made."""
    global _described_at_once
    if not _pending and _described_at_once:
        return
    with _pending_lock:
        _described_at_once = True
        while _pending:
            _describe(*_pending.pop(0))


class _FieldsView:
    """``PiModel.model_fields``: pydantic's (the class's ``__pydantic_fields__``), described first."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        describe_pending()
        return (owner if owner is not None else type(obj)).__pydantic_fields__


type.__setattr__(PiModel, "model_fields", _FieldsView())


def _describe(cls: type[BaseModel], filename: str, module_globals: dict[str, Any], line: int) -> None:
    """The field docstrings of ``cls``, defined at ``line`` of ``filename``, as its fields' descriptions."""
    source = "".join(linecache.getlines(filename, module_globals))
    docs = _docstrings_at(source, cls.__qualname__, line)
    for name, field in cls.__pydantic_fields__.items():
        if field.description is None and name in docs:
            field.description = docs[name]


def describe_fields(cls: type[BaseModel]) -> None:
    """Give each field of the pydantic model ``cls`` that has no description the docstring written under it,
    as ``use_attribute_docstrings`` does but reading each module's source once, not once per class. Call it
    before the model is built (``defer_build``), so that its JSON schema has them too."""
    frame = _defining_frame(cls)
    if frame is not None:
        _describe(cls, frame.f_code.co_filename, frame.f_globals, frame.f_lineno)


def _defining_frame(cls: type) -> Any:
    """The frame running ``cls``'s class statement (its module's or notebook cell's code), or None."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") != cls.__module__:
        frame = frame.f_back
    return frame


def _docstrings_at(source: str, qualname: str, line: int) -> dict[str, str]:
    """``{field: docstring}`` for the string literals right after an annotated attribute in the body of class
    ``qualname`` of ``source``, defined at ``line`` (pydantic's ``use_attribute_docstrings`` rule), parsed once
    per source."""
    found = _classes_in(source).get(qualname, ())
    if len(found) > 1:  # the same name defined twice in one source: the one being defined
        found = [c for c in found if c[0] <= line <= c[1]]
    return found[0][2] if len(found) == 1 else {}


@functools.lru_cache(maxsize=64)
def _classes_in(source: str) -> dict[str, list[tuple[int, int, dict[str, str]]]]:
    """Qualified name of each class defined in ``source`` → (first line, last line, attribute docstrings) of
    each definition."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, list[tuple[int, int, dict[str, str]]]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                qualname = prefix + node.name
                docs: dict[str, str] = {}
                previous: ast.stmt | None = None
                for statement in node.body:
                    if (
                        isinstance(previous, ast.AnnAssign)
                        and isinstance(previous.target, ast.Name)
                        and isinstance(statement, ast.Expr)
                        and isinstance(statement.value, ast.Constant)
                        and isinstance(statement.value.value, str)
                    ):
                        docs[previous.target.id] = inspect.cleandoc(statement.value.value)
                    previous = statement
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                found.setdefault(qualname, []).append((first, node.end_lineno or node.lineno, docs))
                visit(node.body, qualname + ".")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, f"{prefix}{node.name}.<locals>.")

    visit(tree.body, "")
    return found


class _Signature:
    """``cls.__signature__``: pydantic's (keyword arguments named after the fields), shown as the declarations
    read: ``= None``, not the ``MISSING`` it became, and ``Number`` as ``int | float``. A model not built yet
    (``defer_build``) is built on first access, as pydantic would have built it when it was defined."""

    def __init__(self, pydantic_signature: Any) -> None:
        self.pydantic_signature = pydantic_signature  # pydantic's lazy class attribute, None before the build
        self.signature: inspect.Signature | None = None

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is not None or owner is None:
            raise AttributeError("__signature__")  # class-only, as pydantic's
        if self.pydantic_signature is None:
            owner.model_rebuild(raise_errors=False)  # on success, __pydantic_on_complete__ replaces self
            if owner.__dict__.get("__signature__") is self:
                raise AttributeError("__signature__")  # cannot be built yet: inspect falls back to __init__
            return owner.__signature__
        if self.signature is None:
            signature = self.pydantic_signature.__get__(None, owner)
            self.signature = signature.replace(
                parameters=[
                    p.replace(annotation=_shown(p.annotation), default=None if p.default is MISSING else p.default)
                    for p in signature.parameters.values()
                ]
            )
        return self.signature


def _shown(annotation: Any) -> Any:
    """``annotation`` without the ``_JsNumber`` marker that :data:`Number` carries."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        base, *metadata = typing.get_args(annotation)
        kept = [m for m in metadata if m is not _JsNumber]
        shown = _shown(base)
        arguments = (shown, *kept)
        return Annotated[arguments] if kept else shown
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(operator.or_, [_shown(arg) for arg in typing.get_args(annotation)])
    return annotation


def _class_attribute(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def _without_renamed_nones(cls: type[PiModel], obj: dict[str, Any]) -> dict[str, Any]:
    drop = [name for name in cls.__pi_renamed__ if name in obj and obj[name] is None]
    return {key: value for key, value in obj.items() if key not in drop} if drop else obj
