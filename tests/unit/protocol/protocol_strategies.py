"""Hypothesis strategies that build random valid instances of any generated message, from its facts."""

from __future__ import annotations

from functools import cache

from hypothesis import strategies as st

from kafkapy.protocol.compiler import _struct_class
from kafkapy.protocol.message import Field, Struct
from kafkapy.protocol.schema import in_range as _in

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _primitive(t: str) -> st.SearchStrategy:
    if t in _INT_RANGES:
        lo, hi = _INT_RANGES[t]
        return st.integers(lo, hi)
    if t == "bool":
        return st.booleans()
    if t == "float64":
        return st.floats(allow_nan=False)
    if t == "uuid":
        return st.uuids()
    if t == "string":
        return st.text(max_size=8)
    if t in ("bytes", "records"):
        return st.binary(max_size=12)
    raise AssertionError(t)


def field_strategy(cls: type[Struct], f: Field, version: int) -> st.SearchStrategy:
    if f.is_array:
        if f.is_struct:
            elem = instances(_struct_class(cls, f), version)
        else:
            elem = _primitive(f.elem)
        s = st.lists(elem, max_size=3)
    elif f.is_struct:
        s = instances(_struct_class(cls, f), version)
    else:
        s = _primitive(f.type)
    if _in(f.nullable, version):
        s = st.none() | s
    return s


@cache
def instances(cls: type[Struct], version: int) -> st.SearchStrategy:
    kwargs = {}
    for f in cls.FIELDS:
        if _in(f.versions, version) or _in(f.tagged, version):
            kwargs[f.name] = field_strategy(cls, f, version)
    return st.builds(cls, **kwargs)
