"""Fuzz: the compiled record walk (kafkapy/record/_record_walk.c) and the pure-Python reference walk agree on
mutated record sections: the same result, or both a CorruptRecordError (any other exception fails the test).

The cases are built field by field (a record's length varint, attributes, timestampDelta varlong, offsetDelta,
key length, key, value length, value, header count, headers), then mutated: random bytes overwritten,
truncated or inserted; one varint field set to an extreme (int32/int64 bounds, -1, -2, past the buffer),
with or without the record's length fixed up to match; a varint written over-long (non-canonical, too many
bytes, a 10th byte past 64 bits); the declared record count off by one. Each case is walked whole (with and
without columns), partially (the chunked walk's step) and as random chunks, from bytes, a bytearray and a
memoryview at an offset (a bytearray's buffer is its own allocation, so an AddressSanitizer build of the
extension sees any read past it).

Seeded and bounded (KAFKAPY_FUZZ_CASES cases, default 1500, well under 5 s); KAFKAPY_FUZZ_SEED picks another
seed, for longer runs under a sanitizer build.
"""

from __future__ import annotations

import os
import random
from array import array
from collections.abc import Callable
from typing import Any

import pytest

from kafkapy.record import record_walker
from kafkapy.record.errors import CorruptRecordError
from kafkapy.record.record_walker import RecordWalk

pytestmark = pytest.mark.skipif(record_walker._compiled_walk is None,
                                reason="kafkapy.record._record_walk is not built (nothing to compare)")

CASES = int(os.environ.get("KAFKAPY_FUZZ_CASES", "1500"))
SEED = int(os.environ.get("KAFKAPY_FUZZ_SEED", "20261127"))

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


def raw_varint(u: int, pad_to: int = 0) -> bytes:
    """Base-128 bytes of the unsigned u, padded with continuation groups to pad_to bytes (non-canonical)."""
    out = bytearray()
    while True:
        out.append(u & 0x7F)
        u >>= 7
        if not u:
            break
    while len(out) < pad_to:
        out.append(0)
    for i in range(len(out) - 1):
        out[i] |= 0x80
    return bytes(out)


def zigzag(v: int) -> int:
    return (v << 1) ^ (v >> 63)


# A record as segments [kind, value]: kind "v" a value written as a zigzag varint, else raw bytes ("b" a field's
# bytes, "r" a varint written by hand); segment 0 is the record's length.
Segments = list[list[Any]]


def record_segments(rng: random.Random, index: int) -> Segments:
    key = None if rng.random() < 0.25 else rng.randbytes(rng.choice((0, 1, 3, 20, 130)))
    value = None if rng.random() < 0.1 else rng.randbytes(rng.choice((0, 1, 7, 64, 300)))
    ts = rng.choice((0, index, -5, 1 << 40, -(1 << 40), I64_MAX, I64_MIN, rng.randrange(-1000, 1000)))
    od = index if rng.random() < 0.9 else rng.randrange(-3, 10)
    headers = [(rng.randbytes(rng.randrange(0, 6)), None if rng.random() < 0.3 else rng.randbytes(rng.randrange(0, 9)))
               for _ in range(rng.choice((0, 0, 0, 1, 2, 5)))]
    return segments_of(ts, od, key, value, headers)


def segments_of(ts: int, od: int, key: bytes | None, value: bytes | None,
                headers: list[tuple[bytes, bytes | None]]) -> Segments:
    segs: Segments = [["v", 0], ["b", b"\x00"], ["v", ts], ["v", od]]
    segs += [["v", -1]] if key is None else [["v", len(key)], ["b", key]]
    segs += [["v", -1]] if value is None else [["v", len(value)], ["b", value]]
    segs.append(["v", len(headers)])
    for hk, hv in headers:
        segs += [["v", len(hk)], ["b", hk]]
        segs += [["v", -1]] if hv is None else [["v", len(hv)], ["b", hv]]
    fix_length(segs)
    return segs


def encode_segments(segs: Segments, start: int = 0) -> bytes:
    return b"".join(raw_varint(zigzag(v)) if kind == "v" else v for kind, v in segs[start:])


def fix_length(segs: Segments) -> None:
    segs[0] = ["v", len(encode_segments(segs, 1))]


EXTREMES = (0, 1, -1, -2, I32_MIN, I32_MAX, I32_MAX + 1, I32_MIN - 1, I64_MIN, I64_MAX, 1 << 20, 127, 128, -64,
            -65)


def mutate(rng: random.Random, records: list[Segments], count: int) -> tuple[bytes, int]:
    """One mutated records section and the record count to declare."""
    kind = rng.randrange(8)
    if kind == 0 and records:  # a varint field set to an extreme, the record's length fixed up or not
        segs = rng.choice(records)
        varints = [i for i, s in enumerate(segs) if s[0] == "v"]
        i = rng.choice(varints)
        segs[i] = ["v", rng.choice(EXTREMES + (rng.randrange(-300, 300), len(encode_segments(segs))))]
        if i != 0 and rng.random() < 0.6:
            fix_length(segs)
    elif kind == 1 and records:  # a varint written non-canonically: padded, too long, or past 64 bits
        segs = rng.choice(records)
        i = rng.choice([i for i, s in enumerate(segs) if s[0] == "v"])
        u = zigzag(segs[i][1])
        width = rng.choice((2, 4, 5, 6, 9, 10, 11))
        top = rng.choice((0, 1, 2, 0x7F))
        enc = raw_varint(u, width) if rng.random() < 0.7 else raw_varint(u | (top << 63), width)
        segs[i] = ["r", enc]
        if i != 0 and rng.random() < 0.6:
            fix_length(segs)
    elif kind == 2:
        count += rng.choice((-1, 1, -count, 1 << 20))
    data = bytearray(b"".join(encode_segments(s) for s in records))
    if kind >= 3 or rng.random() < 0.2:
        op = rng.randrange(4)
        for _ in range(rng.randint(1, 4)):
            if not data:
                break
            p = rng.randrange(len(data))
            if op == 0:
                data[p] = rng.randrange(256)
            elif op == 1:
                data[p] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF))
            elif op == 2:
                del data[p:]
            else:
                data[p:p] = rng.randbytes(rng.randint(1, 6))
    return bytes(data), max(count, 0)


def outcome(walk_fn: Callable[[RecordWalk], Any], count: int, columns: bool, check_offsets: bool) -> tuple:
    cols: array[int] | None = array("q") if columns else None
    walk = RecordWalk(count, check_offsets=check_offsets, columns=cols)
    try:
        result = walk_fn(walk)
    except CorruptRecordError:
        return ("CorruptRecordError",)
    return ("ok", result, walk.index, walk.min_ts, walk.max_ts, walk.min_ts_index, walk.max_ts_index,
            walk.null_keys, walk.offset_gap, None if cols is None else cols.tolist())


def both(walk_fn: Callable[[RecordWalk], Any], count: int, columns: bool, check_offsets: bool) -> tuple[tuple, tuple]:
    record_walker.use_compiled = True
    compiled = outcome(walk_fn, count, columns, check_offsets)
    record_walker.use_compiled = False
    try:
        reference = outcome(walk_fn, count, columns, check_offsets)
    finally:
        record_walker.use_compiled = True
    return compiled, reference


def chunked(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(0, 6)))) if len(data) > 1 else []
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def check_case(data: bytes, count: int, rng: random.Random) -> str:
    """Walk one case every way; returns the whole walk's outcome kind."""
    prefix = rng.randbytes(rng.randint(1, 9))
    ways: list[tuple[str, Callable[[RecordWalk], Any], bool]] = [
        ("whole", lambda w: w.walk_all(bytearray(data)), False),
        ("whole+columns", lambda w: w.walk_all(bytearray(data)), True),
        ("offset memoryview", lambda w: w.walk_all(memoryview(prefix + data), len(prefix)), True),
        ("partial", lambda w: w.walk(bytearray(data), 0, partial=True), True),
    ]
    pieces = chunked(data, rng)
    ways.append(("chunks", lambda w: w.walk_chunks(iter(pieces)), False))
    ways.append(("chunk columns", lambda w: [(bytes(b), c.tolist()) for b, c in w.walk_chunk_columns(iter(pieces))],
                 False))
    first = ""
    check_offsets = rng.random() < 0.8
    for name, fn, columns in ways:
        compiled, reference = both(fn, count, columns, check_offsets)
        assert compiled == reference, (name, count, data.hex())
        first = first or compiled[0]
    return first


def test_compiled_and_python_walks_agree_on_mutated_records() -> None:
    rng = random.Random(SEED)
    seen: dict[str, int] = {}
    for _ in range(CASES):
        # now and then more than 64 records: the compiled walk's column buffer grows
        n = rng.choice((1, 1, 2, 3, 5)) if rng.random() < 0.98 else rng.randint(65, 200)
        records = [record_segments(rng, i) for i in range(n)]
        data, count = mutate(rng, records, len(records))
        kind = check_case(data, count, rng)
        seen[kind] = seen.get(kind, 0) + 1
    # The mutations reach both outcomes in quantity: the fuzz is not all rejects, nor all accepted.
    assert seen.get("ok", 0) > CASES // 20 and seen.get("CorruptRecordError", 0) > CASES // 2, seen


def test_varint_extremes_in_every_field_agree() -> None:
    """Deterministic sweep: each varint field of a two-record section set to each extreme value, with the
    record length left as it was and fixed up."""
    rng = random.Random(SEED + 1)
    template = [segments_of(7, 0, b"key", b"value", [(b"h", b"1"), (b"g", None)]), segments_of(-3, 1, None, b"", [])]
    for r in range(2):
        for i, seg in enumerate(template[r]):
            if seg[0] != "v":
                continue
            for value in EXTREMES:
                for fix in (False, True):
                    records = [list(map(list, s)) for s in template]
                    records[r][i] = ["v", value]
                    if fix and i:
                        fix_length(records[r])
                    data = b"".join(encode_segments(s) for s in records)
                    check_case(data, 2, rng)


@pytest.mark.parametrize("pos", [-1, -100])
def test_compiled_walk_refuses_a_negative_start(pos: int) -> None:
    """A start before the buffer is a caller's error (ValueError), never a read before the buffer."""
    assert record_walker._compiled_walk is not None
    with pytest.raises(ValueError):
        record_walker._compiled_walk(bytearray(b"\x0c\x00\x00\x00\x02k\x02v\x00"), pos, 0, 1, False, False,
                                     0, 0, [], False)
