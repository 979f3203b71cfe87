# Types of the compiled validation walk (kafkapy/record/_record_walk.c); see record_walker.RecordWalk.walk.
def walk(
    data: bytes | bytearray | memoryview, pos: int, index: int, count: int, check_offsets: bool, partial: bool,
    min_ts: int, max_ts: int, null_keys: list[int], columns: bool,
) -> tuple[int, int, int, int, int, int, int, int, str | None, bytes | None]: ...
