"""Console tools without a broker: LineMessageReader parsing, DefaultMessageFormatter bytes, properties."""

from __future__ import annotations

import io
import struct
from types import SimpleNamespace

import pytest

from kafkapy.tools.console_consumer import (
    DefaultMessageFormatter,
    FormatterError,
    NoOpMessageFormatter,
    OffsetResetConflict,
    build_formatter,
    consumer_props,
)
from kafkapy.tools.console_producer import (
    LineMessageReader,
    LineReaderError,
    LineRecord,
    error_logging_text,
    producer_props,
    read_lines,
)


def rec(key=b"k", value=b"v", headers=(), ts=1700000000000, ts_type=0, partition=0, offset=5):
    return SimpleNamespace(topic="t", partition=partition, offset=offset, timestamp=ts, timestamp_type=ts_type,
                           key=key, value=value, headers=list(headers))


# --- LineMessageReader --------------------------------------------------------------------------------


def test_default_reader_takes_the_whole_line_as_value():
    r = LineMessageReader({})
    assert r.parse_line("a\tb") == LineRecord(None, b"a\tb", [])
    assert r.parse_line("") == LineRecord(None, b"", [])


def test_parse_key_with_default_and_custom_separators():
    assert LineMessageReader({"parse.key": "true"}).parse_line("k\tv\tw") == LineRecord(b"k", b"v\tw", [])
    assert LineMessageReader({"parse.key": "TRUE ", "key.separator": "::"}).parse_line("k::v") == LineRecord(
        b"k", b"v", [])


def test_headers_key_and_value_with_null_marker():
    r = LineMessageReader({"parse.key": "true", "parse.headers": "true", "null.marker": "NULL"})
    assert r.parse_line("h1:v1,h2:NULL\tNULL\tval") == LineRecord(None, b"val", [("h1", b"v1"), ("h2", None)])
    assert r.parse_line("NULL\tk\tNULL") == LineRecord(b"k", None, [])
    assert r.parse_line("h:x\tk\tv:with,commas") == LineRecord(b"k", b"v:with,commas", [("h", b"x")])


def test_headers_separator_is_a_regex_and_values_keep_extra_key_separators():
    r = LineMessageReader({"parse.headers": "true", "headers.separator": "[;|]", "headers.delimiter": "#"})
    assert r.parse_line("a:1;b:2|c:3:4#value") == LineRecord(None, b"value", [("a", b"1"), ("b", b"2"),
                                                                             ("c", b"3:4")])


def test_missing_separators_are_errors_with_kafkas_message():
    r = LineMessageReader({"parse.key": "true"})
    r.parse_line("k\tv")
    with pytest.raises(LineReaderError, match=r"^No key separator found on line number 2: 'novalue'$"):
        r.parse_line("novalue")
    h = LineMessageReader({"parse.headers": "true"})
    with pytest.raises(LineReaderError, match=r"^No headers delimiter found on line number 1: 'x'$"):
        h.parse_line("x")
    with pytest.raises(LineReaderError, match=r"No header key separator found in pair 'bad' on line number 1"):
        LineMessageReader({"parse.headers": "true"}).parse_line("bad\tv")
    with pytest.raises(LineReaderError, match="Header keys should not be equal to the null marker 'N'"):
        LineMessageReader({"parse.headers": "true", "null.marker": "N"}).parse_line("N:x\tv")


def test_ignore_error_keeps_going():
    r = LineMessageReader({"parse.key": "true", "parse.headers": "true", "ignore.error": "true"})
    assert r.parse_line("just a value") == LineRecord(None, b"just a value", [])
    assert r.parse_line("nokey\tv") == LineRecord(None, b"v", [("nokey", None)])


@pytest.mark.parametrize(
    "props, message",
    [
        ({"headers.delimiter": ",", "headers.separator": ","}, "headers.delimiter and headers.separator may not be equal"),
        ({"headers.key.separator": "\t"}, "headers.delimiter and headers.key.separator may not be equal"),
        ({"headers.separator": ":"}, "headers.separator and headers.key.separator may not be equal"),
        ({"null.marker": "\t"}, "null.marker and key.separator may not be equal"),
        ({"null.marker": ","}, "null.marker and headers.separator may not be equal"),
        ({"null.marker": ":"}, "null.marker and headers.key.separator may not be equal"),
    ],
)
def test_reader_config_conflicts(props, message):
    with pytest.raises(LineReaderError, match=message):
        LineMessageReader(props)


def test_read_lines_splits_like_java_readline():
    raw = io.BytesIO(b"a\nb\r\nc\rd\n\ne\xff\nf\x0cg\xc2\x85h\x1ci\nlast")
    stream = io.TextIOWrapper(raw)
    assert list(read_lines(stream)) == ["a", "b", "c", "d", "", "e\ufffd", "f\x0cg\x85h\x1ci", "last"]
    assert not raw.closed and not stream.closed  # the caller's stdin stays usable
    assert list(read_lines(io.StringIO("x\r\ny\n\x0c\n"))) == ["x", "y", "\x0c"]


def test_producer_props_precedence():
    props = producer_props(
        {"linger.ms": "7", "acks": "1", "client.id": "mine", "key.serializer": "x"},
        {"batch.size": "100"},
        "h:1",
        "lz4",
        {"request_timeout_ms": 999, "timeout": None, "request_required_acks": None},
    )
    assert props["bootstrap.servers"] == "h:1" and props["compression.type"] == "lz4"
    assert props["linger.ms"] == "7"  # set in the file, flag not given: the file wins
    assert props["acks"] == "1"
    assert props["request.timeout.ms"] == "999"  # flag given: wins
    assert props["retries"] == "3" and props["max.block.ms"] == "60000"  # flag defaults fill the gaps
    assert props["batch.size"] == "100"
    assert props["client.id"] == "mine" and "key.serializer" not in props
    assert producer_props({}, {}, "h:1", "none", {})["client.id"] == "console-producer"
    assert producer_props({}, {}, "h:1", "none", {})["linger.ms"] == "1000"


def test_error_logging_line():
    from kafkapy.common.errors import MessageTooLargeError

    text = error_logging_text("t", LineRecord(None, b"12345"), MessageTooLargeError("too big"))
    assert text == ("ERROR Error when sending message to topic t with key: null, value: 5 bytes with error: "
                    "org.apache.kafka.common.errors.RecordTooLargeException: too big")


# --- DefaultMessageFormatter -------------------------------------------------------------------------


def test_default_formatter_prints_the_value_only():
    assert DefaultMessageFormatter().format(rec()) == b"v\n"
    assert DefaultMessageFormatter().format(rec(value=None)) == b"null\n"


def test_all_fields_in_kafkas_order():
    f = DefaultMessageFormatter({"print.timestamp": "true", "print.partition": "true", "print.offset": "true",
                                 "print.headers": "true", "print.key": "true"})
    assert f.format(rec(headers=[("h1", b"a"), ("h2", None)])) == (
        b"CreateTime:1700000000000\tPartition:0\tOffset:5\th1:a,h2:null\tk\tv\n")
    assert f.format(rec(ts_type=1, key=None)) == b"LogAppendTime:1700000000000\tPartition:0\tOffset:5\tNO_HEADERS\tnull\tv\n"
    assert f.format(rec(ts_type=-1)) == b"NO_TIMESTAMP\tPartition:0\tOffset:5\tNO_HEADERS\tk\tv\n"


def test_separators_and_null_literal():
    f = DefaultMessageFormatter({"print.key": "true", "key.separator": " => ", "line.separator": "|",
                                 "null.literal": "<nil>", "print.headers": "true", "headers.separator": ";"})
    assert f.format(rec(key=None, headers=[("a", b"1"), ("b", b"2")])) == b"a:1;b:2 => <nil> => v|"


def test_without_value_the_last_field_ends_the_line():
    f = DefaultMessageFormatter({"print.value": "false", "print.key": "true", "print.offset": "true"})
    assert f.format(rec()) == b"Offset:5\tk\n"
    assert DefaultMessageFormatter({"print.value": "false", "print.timestamp": "true"}).format(rec()) == (
        b"CreateTime:1700000000000\n")
    assert DefaultMessageFormatter({"print.value": "false"}).format(rec()) == b""
    assert DefaultMessageFormatter({"print.delivery": "true"}).format(rec()) == b"Delivery:NONE\tv\n"


def test_print_epoch_prints_the_leader_epoch_after_offset_and_delivery():
    # DefaultMessageFormatter (KAFKA-17373): `Epoch:<leaderEpoch>`, or NOT_PRESENT when the batch has none.
    f = DefaultMessageFormatter({"print.epoch": "true", "print.offset": "true", "print.headers": "true"})
    assert f.format(SimpleNamespace(**vars(rec(headers=[("h", b"1")])), leader_epoch=3)) == b"Offset:5\tEpoch:3\th:1\tv\n"
    assert f.format(SimpleNamespace(**vars(rec()), leader_epoch=None)) == b"Offset:5\tEpoch:NOT_PRESENT\tNO_HEADERS\tv\n"
    only = DefaultMessageFormatter({"print.epoch": "true", "print.value": "false", "print.delivery": "true"})
    assert only.format(SimpleNamespace(**vars(rec()), leader_epoch=0)) == b"Delivery:NONE\tEpoch:0\n"


def test_deserializers_print_java_tostring():
    f = DefaultMessageFormatter({
        "print.key": "true",
        "key.deserializer": "org.apache.kafka.common.serialization.IntegerDeserializer",
        "value.deserializer": "org.apache.kafka.common.serialization.LongDeserializer",
    })
    assert f.format(rec(key=struct.pack(">i", -7), value=struct.pack(">q", 2**40))) == b"-7\t1099511627776\n"
    d = DefaultMessageFormatter({"value.deserializer": "org.apache.kafka.common.serialization.DoubleDeserializer"})
    assert d.format(rec(value=struct.pack(">d", 1e7))) == b"1.0E7\n"
    s = DefaultMessageFormatter({"value.deserializer": "org.apache.kafka.common.serialization.StringDeserializer"})
    assert s.format(rec(value="h\u00e9".encode())) == "h\u00e9\n".encode()
    with pytest.raises(FormatterError, match="Size of data received by IntegerDeserializer is not 4"):
        f.format(rec(key=b"abc"))
    with pytest.raises(FormatterError, match="Unable to instantiate a deserializer from com.example.Nope"):
        DefaultMessageFormatter({"key.deserializer": "com.example.Nope"})


def test_formatter_classes():
    assert isinstance(build_formatter("kafka.tools.DefaultMessageFormatter", {}), DefaultMessageFormatter)
    assert isinstance(build_formatter("org.apache.kafka.tools.consumer.NoOpMessageFormatter", {}), NoOpMessageFormatter)
    with pytest.raises(FormatterError):
        build_formatter("com.example.Custom", {})


# --- consumer properties -----------------------------------------------------------------------------


def test_consumer_props_defaults_and_throwaway_group():
    props, has_group = consumer_props({}, {}, "h:1", False, None, None)
    assert not has_group
    assert props["auto.offset.reset"] == "latest" and props["client.id"] == "console-consumer"
    assert props["group.id"].startswith("console-consumer-") and props["enable.auto.commit"] == "false"
    assert props["isolation.level"] == "read_uncommitted"
    props, _ = consumer_props({"isolation.level": "read_committed"}, {}, "h:1", True, None, None)
    assert props["auto.offset.reset"] == "earliest" and props["isolation.level"] == "read_committed"
    props, _ = consumer_props({"isolation.level": "read_committed"}, {}, "h:1", True, "read_uncommitted", None)
    assert props["isolation.level"] == "read_uncommitted"


def test_consumer_props_group_and_reset_conflict():
    props, has_group = consumer_props({}, {"group.id": "g"}, "h:1", False, None, None)
    assert has_group and props["group.id"] == "g" and "enable.auto.commit" not in props
    with pytest.raises(OffsetResetConflict, match="Can't simultaneously specify --from-beginning and "
                       "'auto.offset.reset=latest', please remove one option"):
        consumer_props({}, {"auto.offset.reset": "latest"}, "h:1", True, None, None)
