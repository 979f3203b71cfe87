import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkapy.record.varint import (
    VarintError,
    decode_unsigned_varint,
    decode_varint,
    decode_varlong,
    encode_unsigned_varint,
    encode_varint,
    encode_varlong,
    size_of_unsigned_varint,
    size_of_varint,
    size_of_varlong,
    write_varint,
)

INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@pytest.mark.parametrize(
    "value, encoded",
    [
        (0, b"\x00"),
        (-1, b"\x01"),
        (1, b"\x02"),
        (63, b"\x7e"),
        (-64, b"\x7f"),
        (64, b"\x80\x01"),
        (-65, b"\x81\x01"),
        (8191, b"\xfe\x7f"),
        (8192, b"\x80\x80\x01"),
        (2**31 - 1, b"\xfe\xff\xff\xff\x0f"),
        (-(2**31), b"\xff\xff\xff\xff\x0f"),
    ],
)
def test_known_varints(value, encoded):
    assert encode_varint(value) == encoded
    assert decode_varint(encoded) == (value, len(encoded))
    assert decode_varint(b"zz" + encoded + b"yy", 2) == (value, 2 + len(encoded))
    assert size_of_varint(value) == len(encoded)
    out = bytearray(b"a")
    write_varint(out, value)
    assert bytes(out) == b"a" + encoded


def test_known_varlongs():
    assert encode_varlong(2**63 - 1) == b"\xfe" + b"\xff" * 8 + b"\x01"
    assert encode_varlong(-(2**63)) == b"\xff" * 9 + b"\x01"
    assert decode_varlong(b"\xff" * 9 + b"\x01") == (-(2**63), 10)
    assert size_of_varlong(-(2**63)) == 10


def test_known_unsigned():
    assert encode_unsigned_varint(0) == b"\x00"
    assert encode_unsigned_varint(127) == b"\x7f"
    assert encode_unsigned_varint(128) == b"\x80\x01"
    assert encode_unsigned_varint(300) == b"\xac\x02"
    assert decode_unsigned_varint(b"\xac\x02") == (300, 2)
    assert size_of_unsigned_varint(0) == 1
    assert size_of_unsigned_varint(2**32 - 1) == 5
    with pytest.raises(ValueError):
        encode_unsigned_varint(-1)


def test_malformed():
    with pytest.raises(VarintError, match="truncated"):
        decode_varint(b"\x80")
    with pytest.raises(VarintError, match="truncated"):
        decode_varint(b"")
    with pytest.raises(VarintError, match="longer"):
        decode_varint(b"\xff\xff\xff\xff\xff\x01")
    with pytest.raises(VarintError, match="longer"):
        decode_varlong(b"\xff" * 10 + b"\x01")


@given(INT32)
def test_varint_round_trip(v):
    enc = encode_varint(v)
    assert len(enc) <= 5 and len(enc) == size_of_varint(v)
    assert decode_varint(enc) == (v, len(enc))


@given(INT64)
def test_varlong_round_trip(v):
    enc = encode_varlong(v)
    assert len(enc) <= 10 and len(enc) == size_of_varlong(v)
    assert decode_varlong(enc) == (v, len(enc))


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_unsigned_round_trip(v):
    enc = encode_unsigned_varint(v)
    assert decode_unsigned_varint(enc) == (v, len(enc)) and len(enc) == size_of_unsigned_varint(v)
