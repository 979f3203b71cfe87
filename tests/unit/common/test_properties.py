"""kafkapy.common.properties: the one Java .properties loader (server.properties, --command-config)."""

from __future__ import annotations

import pytest

from kafkapy.common.properties import (
    NotAPropertiesFileError,
    first_bad_line,
    load_properties,
    parse_properties,
)


def test_properties_format() -> None:
    text = (
        "# comment\n"
        "! also a comment\n"
        "\n"
        "bootstrap.servers=localhost:9092\n"
        "client.id : my-client\n"
        "linger.ms 7\n"
        "  batch.size=  1000\n"
        "sasl.jaas.config=a \\\n"
        "    b \\\n"
        "    c\n"
        "key\\=with\\:seps=v\n"
        "unicode=caf\\u00e9\n"
        "empty=\n"
        "tab=a\\tb\n"
    )
    props = parse_properties(text)
    assert props == {
        "bootstrap.servers": "localhost:9092",
        "client.id": "my-client",
        "linger.ms": "7",
        "batch.size": "1000",
        "sasl.jaas.config": "a b c",
        "key=with:seps": "v",
        "unicode": "café",
        "empty": "",
        "tab": "a\tb",
    }


def test_load_properties_file(tmp_path) -> None:
    p = tmp_path / "client.properties"
    p.write_text("acks=1\ncompression.type=lz4\n")
    assert load_properties(p) == {"acks": "1", "compression.type": "lz4"}


def test_load_refuses_a_file_that_is_not_a_properties_file(tmp_path) -> None:
    script = tmp_path / "server.properties"
    script.write_text("#!/bin/sh\nbroker.id=0\nexec kafka-server-start.sh config/server.properties\n")
    with pytest.raises(NotAPropertiesFileError) as e:
        load_properties(script)
    assert (e.value.path, e.value.line_number) == (str(script), 3)
    assert str(e.value) == (f"{script} is not a properties file: line 3: "
                            "'exec kafka-server-start.sh config/ser...' (expected key=value)")
    elf = tmp_path / "kafka.bin"
    elf.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    with pytest.raises(NotAPropertiesFileError, match=r"kafka.bin is not a properties file: line 1: "):
        load_properties(elf)


def test_first_bad_line_accepts_kafka_server_properties() -> None:
    text = ("############################# Server Basics #############################\n"
            "broker.id=0\n"
            "listeners=PLAINTEXT://:9092\n"
            "  log.dirs = /tmp/kafka-logs\n"
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
            "   username=\"a\" password=\"b\";\n"
            "zookeeper.connect:localhost:2181\n"
            "\n! comment\n")
    assert first_bad_line(text) is None
    assert first_bad_line('{"broker.id": 0}\n') == (1, '{"broker.id": 0}')


def test_first_bad_line_accepts_java_separators_and_escaped_keys() -> None:
    assert first_bad_line("num.io.threads 4\nweird\\ key=tab\\tvalue\nlisteners = PLAINTEXT://:9092\n") is None
    assert first_bad_line("broker.id=0\nthis is not a properties file\n") == (2, "this is not a properties file")
