"""Schema facts of generated messages: `Field` (one JSON field) and version-range helpers.

Generated modules build `Field` objects at import; the compiler reads them.  Facts only, no byte
format of their own.  Immutable after construction: thread-safe.
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.types import ZERO_UUID

MAX_VERSION = 0x7FFF


class ProtocolEncodeError(ValueError):
    """A message cannot be encoded at the requested version (bad value, missing field, ...)."""


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
MISSING: Any = object()

# type -> (struct format char, size)
FIXED_TYPES: dict[str, tuple[str, int]] = {
    "bool": ("?", 1),
    "int8": ("b", 1),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int32": ("i", 4),
    "uint32": ("I", 4),
    "int64": ("q", 8),
    "float64": ("d", 8),
    "uuid": ("16s", 16),
}
IMPLICIT_DEFAULTS: dict[str, Any] = {
    "bool": False, "int8": 0, "int16": 0, "uint16": 0, "int32": 0, "uint32": 0, "int64": 0,
    "float64": 0.0, "uuid": ZERO_UUID, "string": "", "bytes": b"", "records": None,
}


def parse_versions(spec: str | None) -> tuple[int, int] | None:
    """'3+' -> (3, 32767), '0-2' -> (0, 2), '5' -> (5, 5), 'none'/None -> None."""
    if spec is None or spec == "none":
        return None
    if spec.endswith("+"):
        return int(spec[:-1]), MAX_VERSION
    if "-" in spec:
        lo, hi = spec.split("-")
        return int(lo), int(hi)
    return int(spec), int(spec)


def in_range(r: tuple[int, int] | None, v: int) -> bool:
    return r is not None and r[0] <= v <= r[1]


class Field:
    """Schema facts of one field (as generated from the JSON spec)."""

    __slots__ = (
        "name", "json_name", "type", "versions", "nullable", "tagged", "tag", "default", "ignorable",
        "flexible", "is_array", "elem", "is_struct",
    )

    def __init__(
        self,
        name: str,
        json_name: str,
        type: str,
        versions: str,
        *,
        nullable: str | None = None,
        tagged: str | None = None,
        tag: int | None = None,
        default: Any = NO_DEFAULT,
        ignorable: bool = False,
        flexible: str | None = None,
    ) -> None:
        self.name = name
        self.json_name = json_name
        self.type = type
        self.versions = parse_versions(versions)
        self.nullable = parse_versions(nullable)
        self.tagged = parse_versions(tagged)
        self.tag = tag
        self.default = default
        self.ignorable = ignorable
        self.flexible = parse_versions(flexible) if flexible is not None else None
        self.is_array = type.startswith("[]")
        self.elem = type[2:] if self.is_array else type
        self.is_struct = self.elem not in IMPLICIT_DEFAULTS

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.type!r})"

    def mutable_default(self) -> bool:
        """True when the default is a fresh list/struct per instance."""
        return self.default is NO_DEFAULT and (self.is_array or self.is_struct)

    def immutable_default(self) -> Any:
        if self.default is not NO_DEFAULT:
            return self.default
        return IMPLICIT_DEFAULTS[self.type]
