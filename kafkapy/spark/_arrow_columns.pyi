# Types of the compiled Arrow column build (kafkapy/spark/_arrow_columns.c); see RecordColumns._build_compiled.
from array import array

def columns(
    arena: bytes | bytearray | memoryview, walks: array[int] | bytes, ncols: int,
    fields: tuple[int, int, int, int, int, int], facts: array[int] | bytes, start_offset: int, end_offset: int,
) -> tuple[int, bytes, bytes, bytes | None, int, bytes, bytes, bytes | None, int, bytes, bytes, bytes]: ...
