"""The runtime that encodes/decodes every generated message from its schema facts: `Struct`, `Message`.

Generated classes (kafkapy/protocol/messages/) list `Field` facts (schema.py), plus annotations and a
TYPE_CHECKING-only constructor that only type checkers read.  On first use of
a (class, version) compiler.py builds one specialised encode and one decode function and caches them
on the class, so a call does no schema reflection.  Constructors (`__init__` with keyword-only
arguments and spec defaults) are compiled lazily the same way.

Byte format: Kafka's message encoding - classic (int16 string / int32 bytes, records and array
lengths, -1 = null) and flexible/compact (unsigned varint N+1, 0 = null, a tagged-field section
closing every struct); nullable struct fields carry an int8 presence prefix (-1 = null).
`records` decode to a zero-copy memoryview slice of the input; they encode from bytes, memoryview
or FileRegion (kept as a separate chunk by `encode_chunks`).

Thread-safety: compiled plans are cached per class; a race only compiles an equivalent plan twice.
Message instances are plain mutable objects (not thread-safe).
"""

from __future__ import annotations

import struct
from typing import Any, ClassVar, Self

from kafkapy.common.file_region import FileRegion
from kafkapy.protocol.compiler import compile_decoder, compile_encoder, compile_init
from kafkapy.protocol.schema import MAX_VERSION, Field, ProtocolEncodeError, parse_versions
from kafkapy.protocol.types import ProtocolDecodeError

__all__ = [
    "MAX_VERSION", "Field", "Message", "ProtocolDecodeError", "ProtocolEncodeError", "Struct", "parse_versions",
]


class _StructMeta(type):
    # Set on every class by __new__: the compiled encode/decode plans per version (compiler.py) and the
    # top-level message whose versions a nested struct follows.
    _enc_cache: dict[int, Any]
    _dec_cache: dict[int, Any]
    _root: _StructMeta

    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> _StructMeta:
        fields = ns.get("FIELDS")
        if fields is not None and "__slots__" not in ns:
            ns["__slots__"] = tuple(f.name for f in fields) + ("_unknown_tagged_fields",)
        ns.setdefault("__slots__", ())
        cls = super().__new__(mcs, name, bases, ns)
        cls._enc_cache = {}
        cls._dec_cache = {}
        cls._root = cls
        for value in ns.values():
            if isinstance(value, _StructMeta):
                value._root = cls
        return cls


class Struct(metaclass=_StructMeta):
    """A generated struct (nested in a Message class); encodes at its root message's versions."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[Field, ...]] = ()
    _enc_cache: ClassVar[dict[int, Any]]
    _dec_cache: ClassVar[dict[int, Any]]
    _root: ClassVar[type[Message]]
    _unknown_tagged_fields: list[tuple[int, bytes]] | None

    def __init__(self, **kwargs: Any) -> None:
        cls = type(self)
        if "__init__" not in cls.__dict__:
            cls.__init__ = compile_init(cls)  # type: ignore[method-assign]
        cls.__init__(self, **kwargs)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        for f in self.FIELDS:
            if getattr(self, f.name) != getattr(other, f.name):
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = []
        for f in self.FIELDS:
            v = getattr(self, f.name)
            if isinstance(v, memoryview):
                parts.append(f"{f.name}=<{v.nbytes} bytes>")
            else:
                parts.append(f"{f.name}={v!r}")
        return f"{type(self).__qualname__}({', '.join(parts)})"

    def encode(self, version: int) -> bytes:
        out = self._encode_parts(version)
        try:
            return b"".join(out)
        except TypeError:  # a FileRegion among the parts
            return b"".join(p.read_bytes() if isinstance(p, FileRegion) else p for p in out)

    def encode_chunks(self, version: int) -> list[bytes | FileRegion]:
        """Encoded bytes, with each FileRegion `records` value as its own chunk (for sendfile)."""
        out = self._encode_parts(version)
        try:
            return [b"".join(out)]
        except TypeError:
            return _merge_chunks(out)

    def _encode_parts(self, version: int) -> list[Any]:
        cls = type(self)
        enc = cls._enc_cache.get(version)
        if enc is None:
            enc = compile_encoder(cls, version)
        out: list[Any] = []
        try:
            enc(self, out)
        except ProtocolEncodeError:
            raise
        except (struct.error, AttributeError, TypeError, UnicodeEncodeError, OverflowError, ValueError) as e:
            raise ProtocolEncodeError(f"cannot encode {cls.__qualname__} v{version}: {e}") from e
        return out

    @classmethod
    def decode(cls, data: Any, version: int) -> Self:
        """Decode one message from the start of `data` (trailing bytes are ignored)."""
        return cls.decode_from(data, 0, version)[0]

    @classmethod
    def decode_from(cls, data: Any, offset: int, version: int) -> tuple[Self, int]:
        dec = cls._dec_cache.get(version)
        if dec is None:
            dec = compile_decoder(cls, version)
        mv = data if type(data) is memoryview else memoryview(data)
        if mv.format != "B" or mv.ndim != 1:
            mv = mv.cast("B")
        try:
            return dec(mv, offset, len(mv))
        except ProtocolDecodeError:
            raise
        except (IndexError, struct.error, UnicodeDecodeError, ValueError, OverflowError) as e:
            raise ProtocolDecodeError(f"malformed {cls.__qualname__} v{version}: {e}") from e


class Message(Struct):
    """A top-level generated message (request, response, data schema or coordinator record)."""

    __slots__ = ()
    API_KEY: ClassVar[int] = -1
    NAME: ClassVar[str] = ""
    TYPE: ClassVar[str] = ""
    VALID_VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    FLEXIBLE_MIN: ClassVar[int | None] = None
    LATEST_VERSION_UNSTABLE: ClassVar[bool] = False
    LISTENERS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def is_flexible(cls, version: int) -> bool:
        return cls.FLEXIBLE_MIN is not None and version >= cls.FLEXIBLE_MIN


def _merge_chunks(out: list[Any]) -> list[bytes | FileRegion]:
    chunks: list[bytes | FileRegion] = []
    run: list[Any] = []
    for p in out:
        if isinstance(p, FileRegion):
            if run:
                chunks.append(b"".join(run))
                run = []
            if p.length:
                chunks.append(p)
        else:
            run.append(p)
    if run:
        chunks.append(b"".join(run))
    return chunks
