"""Compiles per-(class, version) encode/decode plans from `Field` facts (source generation + exec).

Each plan is one specialised Python function: consecutive fixed-width fields use a single
struct.Struct, lengths/counts use Kafka's classic (int16/int32, -1 = null) or compact (unsigned
varint N+1, 0 = null) forms, flexible structs end with a tagged-field section, nullable struct
fields carry an int8 presence prefix, `records` decode to zero-copy memoryview slices and encode from
bytes, memoryview or FileRegion; a struct array given as a PreEncodedList (pre_encoded.py) is written from
its elements' known bytes.  Plans are cached on the class (`_enc_cache` / `_dec_cache`); a race
only compiles an equivalent plan twice, so this is thread-safe.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any, ClassVar, Protocol

from kafkapy.common.file_region import FileRegion
from kafkapy.protocol.pre_encoded import PreEncodedList
from kafkapy.protocol.schema import (
    FIXED_TYPES,
    MISSING,
    Field,
    ProtocolEncodeError,
    in_range,
)
from kafkapy.protocol.types import UVARINT1, ProtocolDecodeError, read_uvarint, write_uvarint


class GeneratedStruct(Protocol):
    """What the compiler reads of a generated struct class (message.Struct and its metaclass provide it);
    a protocol, so that this module does not import message.py, which imports it."""

    FIELDS: ClassVar[tuple[Field, ...]]
    _enc_cache: ClassVar[dict[int, Any]]
    _dec_cache: ClassVar[dict[int, Any]]
    _root: ClassVar[Any]


# ----------------------------------------------------------------------------------------------
# ----------------------------------------------------------------------------------------------


def _struct_class(cls: type[GeneratedStruct], f: Field) -> type[GeneratedStruct]:
    sub = getattr(cls._root, f.elem, None)
    if not isinstance(sub, type) or getattr(sub, "FIELDS", None) is None:
        raise TypeError(f"{cls.__qualname__}.{f.name}: unknown struct type {f.elem}")
    return sub


def _check_version(cls: type[GeneratedStruct], version: int, err: type[ValueError]) -> bool:
    """Validates the version against the root's range; returns whether it is flexible."""
    root = cls._root
    lo, hi = root.VALID_VERSIONS
    if not lo <= version <= hi:
        raise err(f"{root.__qualname__} has no version {version} (valid {lo}-{hi})")
    fmin = root.FLEXIBLE_MIN
    return fmin is not None and version >= fmin


def _fresh_factory(cls: type[GeneratedStruct]) -> Any:
    """A compiled zero-argument constructor of a default instance (no kwargs parsing)."""
    fn = cls.__dict__.get("_fresh_cache")
    if fn is not None:
        return fn
    ns: dict[str, Any] = {"_new": object.__new__, "_C": cls}
    body = ["    o = _new(_C)"]
    for i, f in enumerate(cls.FIELDS):
        if f.mutable_default():
            if f.is_array:
                body.append(f"    o.{f.name} = []")
            else:
                ns[f"F{i}"] = _fresh_factory(_struct_class(cls, f))
                body.append(f"    o.{f.name} = F{i}()")
        else:
            ns[f"D{i}"] = f.immutable_default()
            body.append(f"    o.{f.name} = D{i}")
    body += ["    o._unknown_tagged_fields = None", "    return o"]
    exec(compile("def _fresh():\n" + "\n".join(body) + "\n", f"<{cls.__qualname__}._fresh>", "exec"), ns)
    fn = ns["_fresh"]
    type.__setattr__(cls, "_fresh_cache", fn)
    return fn


def _is_default_fn(cls: type[GeneratedStruct]) -> Any:
    """A compiled predicate: does a struct instance hold the default in every field?"""
    fn = cls.__dict__.get("_isdef_cache")
    if fn is not None:
        return fn
    g = _Gen(cls, 0, False)
    conds = [_nondefault_cond(g, f, f"o.{f.name}") for f in cls.FIELDS]
    g.emit(1, "return not (" + (" or ".join(conds) if conds else "False") + ")")
    fn = g.build("_isdef", "o")
    type.__setattr__(cls, "_isdef_cache", fn)
    return fn


def compile_init(cls: type[GeneratedStruct]) -> Any:
    ns: dict[str, Any] = {"_M": MISSING}
    params, body = [], []
    for i, f in enumerate(cls.FIELDS):
        if f.mutable_default():
            params.append(f"{f.name}=_M")
            if f.is_array:
                body.append(f"    self.{f.name} = [] if {f.name} is _M else {f.name}")
            else:
                ns[f"C{i}"] = _fresh_factory(_struct_class(cls, f))
                body.append(f"    self.{f.name} = C{i}() if {f.name} is _M else {f.name}")
        else:
            ns[f"D{i}"] = f.immutable_default()
            params.append(f"{f.name}=D{i}")
            body.append(f"    self.{f.name} = {f.name}")
    body.append("    self._unknown_tagged_fields = None")
    sig = ", ".join(["self", "*"] + params) if params else "self"
    src = f"def __init__({sig}):\n" + "\n".join(body) + "\n"
    exec(compile(src, f"<{cls.__qualname__}.__init__>", "exec"), ns)
    fn = ns["__init__"]
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    return fn


class _Gen:
    """Source builder shared by the encoder and decoder compilers."""

    def __init__(self, cls: type[GeneratedStruct], version: int, flexible: bool) -> None:
        self.cls = cls
        self.version = version
        self.flexible = flexible
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {
            "_ruv": read_uvarint, "_wuv": write_uvarint, "_UV": UVARINT1, "_PDE": ProtocolDecodeError,
            "_PEE": ProtocolEncodeError, "_str": str, "_bytes": bytes, "_UUID": uuid.UUID,
            "_unpack": struct.unpack_from, "_pack": struct.pack, "_FR": FileRegion, "_new": object.__new__,
            "_join": b"".join, "_len": len, "_PEL": PreEncodedList,
        }
        self.counter = 0

    def var(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, value: Any, prefix: str = "K") -> str:
        name = self.var(prefix)
        self.ns[name] = value
        return name

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def field_flexible(self, f: Field) -> bool:
        if f.flexible is not None:
            return in_range(f.flexible, self.version)
        return self.flexible

    def build(self, name: str, header: str) -> Any:
        src = f"def {name}({header}):\n" + "\n".join(self.lines) + "\n"
        try:
            exec(compile(src, f"<{self.cls.__qualname__} v{self.version} {name}>", "exec"), self.ns)
        except SyntaxError as e:  # pragma: no cover - a generator bug
            raise RuntimeError(f"bad generated code for {self.cls.__qualname__}:\n{src}") from e
        fn = self.ns[name]
        fn._source = src
        return fn


def _split_fields(cls: type[GeneratedStruct], version: int) -> tuple[list[Field], list[Field], list[Field]]:
    regular, tagged, absent = [], [], []
    for f in cls.FIELDS:
        if in_range(f.tagged, version):
            tagged.append(f)
        elif in_range(f.versions, version):
            regular.append(f)
        else:
            absent.append(f)
    tagged.sort(key=lambda f: -1 if f.tag is None else f.tag)  # tagged fields always carry a tag
    return regular, tagged, absent


# ---------------------------------------------------------------------------------------- decode


def compile_decoder(cls: type[GeneratedStruct], version: int) -> Any:
    flexible = _check_version(cls, version, ProtocolDecodeError)
    g = _Gen(cls, version, flexible)
    regular, tagged, absent = _split_fields(cls, version)
    g.ns["_C"] = cls
    g.emit(1, "o = _new(_C)")
    i = 0
    while i < len(regular):
        f = regular[i]
        if f.type in FIXED_TYPES:
            j = i
            while j < len(regular) and regular[j].type in FIXED_TYPES:
                j += 1
            _dec_fixed_group(g, regular[i:j])
            i = j
        else:
            _dec_value(g, 1, f, f"o.{f.name}", "end")
            i += 1
    for f in absent + tagged:
        _dec_default(g, 1, f, f"o.{f.name}")
    if flexible:
        _dec_tag_section(g, tagged)
    else:
        g.emit(1, "o._unknown_tagged_fields = None")
    g.emit(1, "return o, pos")
    dec = g.build("_decode", "data, pos, end")
    cls._dec_cache[version] = dec
    return dec


def _dec_fixed_group(g: _Gen, fields: list[Field]) -> None:
    fmt = ">" + "".join(FIXED_TYPES[f.type][0] for f in fields)
    s = struct.Struct(fmt)
    sname = g.const(s.unpack_from, "S")
    targets = []
    post = []
    for f in fields:
        if f.type == "uuid":
            tmp = g.var("u")
            targets.append(tmp)
            post.append(f"o.{f.name} = _UUID(bytes={tmp})")
        else:
            targets.append(f"o.{f.name}")
    lhs = ", ".join(targets) + ("," if len(targets) == 1 else "")
    g.emit(1, f"{lhs} = {sname}(data, pos)")
    g.emit(1, f"pos += {s.size}")
    for line in post:
        g.emit(1, line)


def _dec_len(g: _Gen, ind: int, var: str, compact: bool, classic: str) -> None:
    """Reads a length/count into `var`: N-1 of an unsigned varint, or int16/int32 (classic)."""
    if compact:
        g.emit(ind, f"{var} = data[pos]")
        g.emit(ind, f"if {var} < 128: pos += 1")
        g.emit(ind, f"else: {var}, pos = _ruv(data, pos)")
        g.emit(ind, f"{var} -= 1")
    else:
        s = g.const(struct.Struct(">" + classic).unpack_from, "S")
        g.emit(ind, f"{var} = {s}(data, pos)[0]")
        g.emit(ind, f"pos += {2 if classic == 'h' else 4}")


def _dec_null(g: _Gen, ind: int, f: Field, target: str, what: str) -> None:
    if in_range(f.nullable, g.version):
        g.emit(ind, f"{target} = None")
    else:
        g.emit(ind, f"raise _PDE('null {what} for non-nullable {g.cls.__qualname__}.{f.name}')")


def _dec_value(g: _Gen, ind: int, f: Field, target: str, end: str) -> None:
    """Emit code reading field `f`'s value (array, struct or primitive) into `target`."""
    compact = g.field_flexible(f)
    if f.is_array:
        n = g.var("n")
        _dec_len(g, ind, n, compact, "i")
        g.emit(ind, f"if {n} < 0:")
        _dec_null(g, ind + 1, f, target, "array")
        g.emit(ind, "else:")
        _dec_array_body(g, ind + 1, f, target, n, end, compact)
    elif f.is_struct:
        sub = _struct_class(g.cls, f)
        dname = g.const(sub._dec_cache.get(g.version) or compile_decoder(sub, g.version), "D")
        if in_range(f.nullable, g.version):
            g.emit(ind, "if data[pos] >= 128:")
            g.emit(ind + 1, "pos += 1")
            g.emit(ind + 1, f"{target} = None")
            g.emit(ind, "else:")
            g.emit(ind + 1, f"{target}, pos = {dname}(data, pos + 1, {end})")
        else:
            g.emit(ind, f"{target}, pos = {dname}(data, pos, {end})")
    else:
        _dec_primitive(g, ind, f, f.type, target, end, compact)


def _dec_primitive(g: _Gen, ind: int, f: Field, t: str, target: str, end: str, compact: bool) -> None:
    if t in FIXED_TYPES:
        fmt, size = FIXED_TYPES[t]
        s = g.const(struct.Struct(">" + fmt).unpack_from, "S")
        if t == "uuid":
            g.emit(ind, f"{target} = _UUID(bytes={s}(data, pos)[0])")
        else:
            g.emit(ind, f"{target} = {s}(data, pos)[0]")
        g.emit(ind, f"pos += {size}")
        return
    n = g.var("n")
    _dec_len(g, ind, n, compact, "h" if t == "string" else "i")
    g.emit(ind, f"if {n} < 0:")
    _dec_null(g, ind + 1, f, target, t)
    g.emit(ind, "else:")
    p2 = g.var("p")
    g.emit(ind + 1, f"{p2} = pos + {n}")
    g.emit(ind + 1, f"if {p2} > {end}: raise _PDE('{t} of ' + str({n}) + ' bytes overruns the input')")
    if t == "string":
        g.emit(ind + 1, f"{target} = _str(data[pos:{p2}], 'utf-8')")
    elif t == "bytes":
        g.emit(ind + 1, f"{target} = _bytes(data[pos:{p2}])")
    else:  # records: zero-copy slice
        g.emit(ind + 1, f"{target} = data[pos:{p2}]")
    g.emit(ind + 1, f"pos = {p2}")


def _min_size(cls: type[GeneratedStruct], version: int, flexible: bool) -> int:
    regular, _tagged, _absent = _split_fields(cls, version)
    total = 1 if flexible else 0
    for f in regular:
        compact = in_range(f.flexible, version) if f.flexible is not None else flexible
        if f.is_array or f.type in ("bytes", "records"):
            total += 1 if compact else 4
        elif f.is_struct:
            total += 1 if in_range(f.nullable, version) else _min_size(_struct_class(cls, f), version, flexible)
        elif f.type == "string":
            total += 1 if compact else 2
        else:
            total += FIXED_TYPES[f.type][1]
    return total


def _dec_array_body(g: _Gen, ind: int, f: Field, target: str, n: str, end: str, compact: bool) -> None:
    e = f.elem
    if f.is_struct:
        min_size = _min_size(_struct_class(g.cls, f), g.version, g.flexible)
    elif e in FIXED_TYPES:
        min_size = FIXED_TYPES[e][1]
    else:
        min_size = 1 if compact else (2 if e == "string" else 4)
    min_size = max(1, min_size)
    check = n if min_size == 1 else f"{n} * {min_size}"
    g.emit(ind, f"if {check} > {end} - pos: raise _PDE('array of ' + str({n}) + ' elements overruns the input')")
    if e in FIXED_TYPES and e != "uuid":
        fmt, size = FIXED_TYPES[e]
        g.emit(ind, f"{target} = list(_unpack('>%d{fmt}' % {n}, data, pos))")
        g.emit(ind, f"pos += {n} * {size}")
        return
    lst, ap, tmp = g.var("l"), g.var("a"), g.var("e")
    g.emit(ind, f"{lst} = []")
    g.emit(ind, f"{ap} = {lst}.append")
    g.emit(ind, f"for _ in range({n}):")
    if f.is_struct:
        sub = _struct_class(g.cls, f)
        dname = g.const(sub._dec_cache.get(g.version) or compile_decoder(sub, g.version), "D")
        g.emit(ind + 1, f"{tmp}, pos = {dname}(data, pos, {end})")
    else:
        # array elements are never null
        elem_field = Field(f.name, f.json_name, e, "0+")
        _dec_primitive(g, ind + 1, elem_field, e, tmp, end, compact)
    g.emit(ind + 1, f"{ap}({tmp})")
    g.emit(ind, f"{target} = {lst}")


def _dec_default(g: _Gen, ind: int, f: Field, target: str) -> None:
    if f.mutable_default():
        if f.is_array:
            g.emit(ind, f"{target} = []")
        else:
            c = g.const(_fresh_factory(_struct_class(g.cls, f)), "F")
            g.emit(ind, f"{target} = {c}()")
    else:
        g.emit(ind, f"{target} = {g.const(f.immutable_default())}")


def _dec_tag_section(g: _Gen, tagged: list[Field]) -> None:
    nt, tag, size, tend = g.var("nt"), g.var("tg"), g.var("sz"), g.var("te")
    g.emit(1, "unk = None")
    g.emit(1, f"{nt} = data[pos]")
    g.emit(1, "pos += 1")
    g.emit(1, f"if {nt} >= 128: {nt}, pos = _ruv(data, pos - 1)")
    g.emit(1, f"for _ in range({nt}):")
    g.emit(2, f"{tag}, pos = _ruv(data, pos)")
    g.emit(2, f"{size}, pos = _ruv(data, pos)")
    g.emit(2, f"{tend} = pos + {size}")
    g.emit(2, f"if {tend} > end: raise _PDE('tagged field overruns the input')")
    kw = "if"
    for f in tagged:
        g.emit(2, f"{kw} {tag} == {f.tag}:")
        _dec_value(g, 3, f, f"o.{f.name}", tend)
        kw = "elif"
    if tagged:
        g.emit(2, "else:")
        ind = 3
    else:
        ind = 2
    g.emit(ind, "if unk is None: unk = []")
    g.emit(ind, f"unk.append(({tag}, _bytes(data[pos:{tend}])))")
    g.emit(2, f"pos = {tend}")
    g.emit(1, "o._unknown_tagged_fields = unk")


# ---------------------------------------------------------------------------------------- encode


def compile_encoder(cls: type[GeneratedStruct], version: int) -> Any:
    flexible = _check_version(cls, version, ProtocolEncodeError)
    g = _Gen(cls, version, flexible)
    regular, tagged, absent = _split_fields(cls, version)
    g.emit(1, "w = out.append")
    for f in absent:
        if not f.ignorable:
            cond = _nondefault_cond(g, f, f"o.{f.name}")
            g.emit(1, f"if {cond}:")
            g.emit(2, f"raise _PEE('{cls.__qualname__}.{f.name} is not supported in version {version}: ' "
                      f"+ repr(o.{f.name})[:80])")
    i = 0
    while i < len(regular):
        f = regular[i]
        if f.type in FIXED_TYPES:
            j = i
            while j < len(regular) and regular[j].type in FIXED_TYPES:
                j += 1
            _enc_fixed_group(g, regular[i:j])
            i = j
        else:
            _enc_value(g, 1, f, f"o.{f.name}", "w", "out")
            i += 1
    if flexible:
        _enc_tag_section(g, tagged)
    g.emit(1, "return None")
    enc = g.build("_encode", "o, out")
    cls._enc_cache[version] = enc
    return enc


def _nondefault_cond(g: _Gen, f: Field, expr: str) -> str:
    """A python condition that is true when `expr` differs from the field's default."""
    if f.default is None:
        return f"{expr} is not None"
    if f.mutable_default():
        if f.is_array:
            return f"{expr}"  # non-empty list
        isdef = g.const(_is_default_fn(_struct_class(g.cls, f)), "ISDEF")
        return f"({expr} is None or not {isdef}({expr}))"
    k = g.const(f.immutable_default())
    if f.type == "records":
        return f"{expr} is not None"
    return f"{expr} != {k}"


def _enc_fixed_group(g: _Gen, fields: list[Field]) -> None:
    fmt = ">" + "".join(FIXED_TYPES[f.type][0] for f in fields)
    pname = g.const(struct.Struct(fmt).pack, "P")
    args = [f"o.{f.name}.bytes" if f.type == "uuid" else f"o.{f.name}" for f in fields]
    g.emit(1, f"w({pname}({', '.join(args)}))")


def _enc_len(g: _Gen, ind: int, w: str, expr: str, compact: bool, classic: str) -> None:
    if compact:
        n = g.var("n")
        g.emit(ind, f"{n} = {expr} + 1")
        g.emit(ind, f"{w}(_UV[{n}] if {n} < 128 else _wuv({n}))")
    else:
        p = g.const(struct.Struct(">" + classic).pack, "P")
        g.emit(ind, f"{w}({p}({expr}))")


def _enc_null(g: _Gen, ind: int, f: Field, w: str, compact: bool, classic_null: bytes, what: str) -> None:
    if in_range(f.nullable, g.version):
        null = b"\x00" if compact else classic_null
        g.emit(ind, f"{w}({null!r})")
    elif f.type == "records":
        empty = b"\x01" if compact else b"\x00\x00\x00\x00"  # None = empty records
        g.emit(ind, f"{w}({empty!r})")
    else:
        g.emit(ind, f"raise _PEE('{g.cls.__qualname__}.{f.name}: null {what} in a non-nullable field')")


def _enc_value(g: _Gen, ind: int, f: Field, expr: str, w: str, out: str) -> None:
    compact = g.field_flexible(f)
    v = g.var("v")
    g.emit(ind, f"{v} = {expr}")
    if f.is_array:
        g.emit(ind, f"if {v} is None:")
        _enc_null(g, ind + 1, f, w, compact, b"\xff\xff\xff\xff", "array")
        g.emit(ind, "else:")
        _enc_len(g, ind + 1, w, f"_len({v})", compact, "i")
        e = f.elem
        if f.is_struct:
            sub = _struct_class(g.cls, f)
            ename = g.const(sub._enc_cache.get(g.version) or compile_encoder(sub, g.version), "E")
            x, pre = g.var("x"), g.var("pre")
            # A PreEncodedList carries its elements' bytes: one type check per array, not per element.
            g.emit(ind + 1, f"if type({v}) is _PEL and ({pre} := {v}.encoded({g.version})) is not None:")
            g.emit(ind + 2, f"{w}({pre})")
            g.emit(ind + 1, "else:")
            g.emit(ind + 2, f"for {x} in {v}:")
            g.emit(ind + 3, f"{ename}({x}, {out})")
        elif e in FIXED_TYPES and e != "uuid":
            g.emit(ind + 1, f"{w}(_pack('>%d{FIXED_TYPES[e][0]}' % _len({v}), *{v}))")
        else:
            x = g.var("x")
            g.emit(ind + 1, f"for {x} in {v}:")
            elem_field = Field(f.name, f.json_name, e, "0+")
            _enc_primitive(g, ind + 2, elem_field, x, w, out, compact)
    elif f.is_struct:
        sub = _struct_class(g.cls, f)
        ename = g.const(sub._enc_cache.get(g.version) or compile_encoder(sub, g.version), "E")
        if in_range(f.nullable, g.version):
            g.emit(ind, f"if {v} is None:")
            g.emit(ind + 1, f"{w}(b'\\xff')")
            g.emit(ind, "else:")
            g.emit(ind + 1, f"{w}(b'\\x01')")
            g.emit(ind + 1, f"{ename}({v}, {out})")
        else:
            g.emit(ind, f"if {v} is None: raise _PEE('{g.cls.__qualname__}.{f.name}: null struct "
                        "in a non-nullable field')")
            g.emit(ind, f"{ename}({v}, {out})")
    else:
        _enc_primitive(g, ind, f, v, w, out, compact)


def _enc_primitive(g: _Gen, ind: int, f: Field, v: str, w: str, out: str, compact: bool) -> None:
    t = f.type
    if t in FIXED_TYPES:
        p = g.const(struct.Struct(">" + FIXED_TYPES[t][0]).pack, "P")
        g.emit(ind, f"{w}({p}({v}.bytes if {v} is not None else None))" if t == "uuid" else f"{w}({p}({v}))")
        return
    g.emit(ind, f"if {v} is None:")
    _enc_null(g, ind + 1, f, w, compact, b"\xff\xff" if t == "string" else b"\xff\xff\xff\xff", t)
    if t == "string":
        b = g.var("b")
        g.emit(ind, "else:")
        g.emit(ind + 1, f"{b} = {v}.encode('utf-8')")
        _enc_len(g, ind + 1, w, f"_len({b})", compact, "h")
        g.emit(ind + 1, f"{w}({b})")
    elif t == "records":
        g.emit(ind, f"elif {v}.__class__ is _FR:")
        _enc_len(g, ind + 1, w, f"{v}.length", compact, "i")
        g.emit(ind + 1, f"{w}({v})")
        g.emit(ind, "else:")
        _enc_len(g, ind + 1, w, f"_len({v})", compact, "i")
        g.emit(ind + 1, f"{w}({v})")
    else:  # bytes
        g.emit(ind, "else:")
        _enc_len(g, ind + 1, w, f"_len({v})", compact, "i")
        g.emit(ind + 1, f"{w}({v})")


def _enc_tag_section(g: _Gen, tagged: list[Field]) -> None:
    if not tagged:
        g.emit(1, "w(b'\\x00')")
        return
    g.emit(1, "tg = None")
    for f in tagged:
        cond = _nondefault_cond(g, f, f"o.{f.name}")
        g.emit(1, f"if {cond}:")
        g.emit(2, "sub = []")
        g.emit(2, "sw = sub.append")
        _enc_value(g, 2, f, f"o.{f.name}", "sw", "sub")
        g.emit(2, "if tg is None: tg = []")
        g.emit(2, f"tg.append(({f.tag}, _join(sub)))")
    g.emit(1, "if tg is None:")
    g.emit(2, "w(b'\\x00')")
    g.emit(1, "else:")
    g.emit(2, "n = _len(tg)")
    g.emit(2, "w(_UV[n] if n < 128 else _wuv(n))")
    g.emit(2, "for t, b in tg:")
    g.emit(3, "w(_UV[t] if t < 128 else _wuv(t))")
    g.emit(3, "n = _len(b)")
    g.emit(3, "w(_UV[n] if n < 128 else _wuv(n))")
    g.emit(3, "w(b)")
