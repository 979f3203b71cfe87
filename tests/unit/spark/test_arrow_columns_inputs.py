"""kafkapy/spark/_arrow_columns.c against a per-record Python model, on real record walks and on walks and batch
facts corrupted in place: the compiled build returns exactly the model's buffers, or ValueError where a kept
record's field lies outside the arena or the batch counts exceed the walked records; never a read outside its
buffers. Offsets and timestamps at the int64 bounds wrap as Arrow's add and multiply kernels do. Seeded,
bounded (a few hundred cases, well under a second). No Spark: the module is called directly."""

from __future__ import annotations

import random
from array import array

import pytest

from kafkapy.record.default_record import encode_record
from kafkapy.record.record_walker import (
    COLUMNS,
    KEY_LEN,
    KEY_POS,
    OFFSET_DELTA,
    TIMESTAMP_DELTA,
    VALUE_LEN,
    VALUE_POS,
    RecordWalk,
)

columns = pytest.importorskip("kafkapy.spark._arrow_columns").columns
FIELDS = (KEY_POS, KEY_LEN, VALUE_POS, VALUE_LEN, OFFSET_DELTA, TIMESTAMP_DELTA)
I64 = 1 << 64


def wrap(v: int) -> int:
    return (v + (1 << 63)) % I64 - (1 << 63)


def model(arena: bytes, walks: array[int], facts: array[int], start: int, end: int) -> tuple:
    """What columns() returns, record by record (raises ValueError as it must)."""
    n = len(walks) // COLUMNS
    kept: list[tuple[int, list[int]]] = []
    r = 0
    for b in range(len(facts) // 5):
        count, base = facts[5 * b], facts[5 * b + 1]
        if count < 0 or count > n - r:
            raise ValueError("batch record counts exceed the walked records")
        for rec in (walks[i * COLUMNS:(i + 1) * COLUMNS] for i in range(r, r + count)):
            off = wrap(base + rec[OFFSET_DELTA])
            if start <= off and (end < 0 or off < end):
                for pos, length in ((rec[KEY_POS], rec[KEY_LEN]), (rec[VALUE_POS], rec[VALUE_LEN])):
                    if length >= 0 and (pos < 0 or pos > len(arena) or length > len(arena) - pos):
                        raise ValueError("field outside the arena")
                kept.append((b, rec.tolist()))
        r += count
    out: list = [len(kept)]
    for pos_col, len_col in ((KEY_POS, KEY_LEN), (VALUE_POS, VALUE_LEN)):
        offsets, data, valid = [0], bytearray(), bytearray(b"\xff" * ((len(kept) + 7) // 8))
        for row, (_, rec) in enumerate(kept):
            if rec[len_col] < 0:
                valid[row >> 3] &= ~(1 << (row & 7)) & 0xFF
            else:
                data += arena[rec[pos_col]:rec[pos_col] + rec[len_col]]
            offsets.append(len(data))
        nulls = sum(1 for _, rec in kept if rec[len_col] < 0)
        out += [array("i", offsets).tobytes(), bytes(data), bytes(valid) if nulls else None, nulls]
    offs, ts, types = array("q"), array("q"), array("i")
    for b, rec in kept:
        log_append = facts[5 * b + 3] != 0
        offs.append(wrap(facts[5 * b + 1] + rec[OFFSET_DELTA]))
        ts.append(wrap((facts[5 * b + 4] if log_append else wrap(facts[5 * b + 2] + rec[TIMESTAMP_DELTA])) * 1000))
        types.append(int(log_append))
    return (*out, offs.tobytes(), ts.tobytes(), types.tobytes())


def walked(rng: random.Random) -> tuple[bytes, array[int], array[int]]:
    """Real records of a few batches, walked into one arena; facts per batch."""
    arena, walks, facts = bytearray(), array("q"), array("q")
    offset = rng.choice((0, 5, 1 << 40))
    for _ in range(rng.randint(1, 4)):
        count = rng.randint(1, 5)
        section = b"".join(
            encode_record(i, rng.randrange(-50, 50), None if rng.random() < 0.3 else rng.randbytes(rng.randrange(9)),
                          None if rng.random() < 0.2 else rng.randbytes(rng.randrange(40)))
            for i in range(count))
        pos = len(arena)
        arena += section
        RecordWalk(count, columns=walks).walk_all(arena, pos)
        facts.extend((count, offset, rng.choice((0, 1_700_000_000_000)), rng.random() < 0.3, 1_700_000_000_999))
        offset += count
    return bytes(arena), walks, facts


EXTREMES = (-1, -2, 0, 1, (1 << 63) - 1, -(1 << 63), (1 << 31) - 1, 1 << 31)


def test_compiled_columns_equal_the_model_on_walked_and_corrupted_inputs() -> None:
    rng = random.Random(3)
    outcomes = {"ok": 0, "ValueError": 0}
    for trial in range(400):
        arena, walks, facts = walked(rng)
        if trial % 4:  # corrupt: a walk column or a batch fact set to an extreme or a nearby value
            target = walks if rng.random() < 0.7 else facts
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(target))
                near = wrap(target[i] + rng.randrange(-3, 4))
                target[i] = rng.choice(EXTREMES + (len(arena), len(arena) + 1, near))
        start, end = rng.choice(((0, -1), (6, 9), (-(1 << 63), -1), (1 << 40, (1 << 40) + 3)))
        try:
            want = model(arena, walks, facts, start, end)
        except ValueError:
            with pytest.raises(ValueError):
                columns(bytearray(arena), walks, COLUMNS, FIELDS, facts, start, end)
            outcomes["ValueError"] += 1
            continue
        assert columns(bytearray(arena), walks, COLUMNS, FIELDS, facts, start, end) == want, trial
        outcomes["ok"] += 1
    assert outcomes["ok"] > 150 and outcomes["ValueError"] > 30, outcomes


@pytest.mark.parametrize("fields,ncols", [((0, 1, 2, 3, 4, 10), 10), ((-1, 1, 2, 3, 4, 5), 10), (FIELDS, 0)])
def test_column_indexes_outside_the_walk_raise(fields: tuple[int, ...], ncols: int) -> None:
    with pytest.raises(ValueError):
        columns(b"", array("q", [0] * COLUMNS), ncols, fields, array("q", [1, 0, 0, 0, 0]), 0, -1)


def test_unaligned_walks_raise() -> None:
    arena, walks, facts = walked(random.Random(1))
    unaligned = memoryview(b"\x00" + walks.tobytes())[1:]
    with pytest.raises(ValueError):
        columns(arena, unaligned, COLUMNS, FIELDS, facts, 0, -1)
