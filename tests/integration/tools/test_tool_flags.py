"""The remaining Kafka flags of the console tools and the process-level behaviours (closed pipe, Ctrl-C)."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import time

import pytest


@pytest.fixture
def bs(kafkapy_broker) -> str:
    return kafkapy_broker.bootstrap


def create(cli, bs: str, topic: str, partitions: int = 1) -> None:
    assert cli("topics", "--create", "--topic", topic, "--partitions", str(partitions), "--bootstrap-server", bs).rc == 0


@pytest.mark.parametrize("acks", ["0", "1", "-1", "all"])
def test_producer_tuning_flags(cli, bs, unique_topic, acks):
    create(cli, bs, unique_topic)
    r = cli("console-producer", "--bootstrap-server", bs, "--topic", unique_topic, "--request-required-acks", acks,
            "--batch-size", "64", "--message-send-max-retries", "5", "--retry-backoff-ms", "50",
            "--request-timeout-ms", "5000", "--max-block-ms", "5000", "--metadata-expiry-ms", "10000",
            "--max-memory-bytes", "1048576", "--socket-buffer-size", "65536", "--linger-ms", "5",
            stdin=b"".join(b"m%d\n" % i for i in range(50)))
    assert (r.rc, r.err) == (0, "")
    r = cli("console-consumer", "--bootstrap-server", bs, "--topic", unique_topic, "--from-beginning",
            "--max-messages", "50", "--timeout-ms", "3000")
    assert r.out.splitlines() == [b"m%d" % i for i in range(50)]


def test_config_files_for_producer_reader_consumer_and_formatter(cli, bs, unique_topic, tmp_path):
    create(cli, bs, unique_topic)
    producer_cfg = tmp_path / "producer.properties"
    producer_cfg.write_text("acks=1\nlinger.ms=0\nclient.id=p-from-file\n")
    reader_cfg = tmp_path / "reader.properties"
    reader_cfg.write_text("parse.key=true\nkey.separator=,\n")
    r = cli("console-producer", "--bootstrap-server", bs, "--topic", unique_topic, "--producer.config",
            str(producer_cfg), "--reader-config", str(reader_cfg), "--command-property", "compression.type=lz4",
            stdin=b"k1,v1\nk2,v2\n")
    assert (r.rc, r.err) == (0, "")
    consumer_cfg = tmp_path / "consumer.properties"
    consumer_cfg.write_text("auto.offset.reset=earliest\nfetch.max.wait.ms=100\n")
    formatter_cfg = tmp_path / "formatter.properties"
    formatter_cfg.write_text("print.key=true\nkey.separator=\\=\n")
    r = cli("console-consumer", "--bootstrap-server", bs, "--topic", unique_topic, "--consumer.config",
            str(consumer_cfg), "--formatter-config", str(formatter_cfg), "--max-messages", "2", "--timeout-ms", "3000",
            "--isolation-level", "read_committed", "--command-property", "max.poll.records=1")
    assert r.out == b"k1=v1\nk2=v2\n"
    # --property wins over the formatter config file.
    r = cli("console-consumer", "--bootstrap-server", bs, "--topic", unique_topic, "--command-config",
            str(consumer_cfg), "--formatter-config", str(formatter_cfg), "--property", "print.key=false",
            "--max-messages", "1", "--timeout-ms", "3000")
    assert r.out == b"v1\n"


def test_deserializers_and_skip_message_on_error(cli, bs, unique_topic):
    create(cli, bs, unique_topic)
    from kafkapy.client.producer import KafkaProducer

    with KafkaProducer({"bootstrap.servers": bs, "linger.ms": 0}) as producer:
        producer.send(unique_topic, struct.pack(">i", 42), key=b"a").result(10)
        producer.send(unique_topic, b"xyz", key=b"b").result(10)  # 3 bytes: not an Integer
        producer.send(unique_topic, struct.pack(">i", -1), key=b"c").result(10)
    base = ["console-consumer", "--bootstrap-server", bs, "--topic", unique_topic, "--from-beginning",
            "--timeout-ms", "1500", "--value-deserializer", "org.apache.kafka.common.serialization.IntegerDeserializer",
            "--key-deserializer", "org.apache.kafka.common.serialization.StringDeserializer",
            "--property", "print.key=true"]
    r = cli(*base, "--skip-message-on-error", "--max-messages", "3")
    assert r.out == b"a\t42\nc\t-1\n"
    assert "Size of data received by IntegerDeserializer is not 4" in r.err
    assert r.err.endswith("Processed a total of 3 messages\n")
    r = cli(*base, "--max-messages", "3")
    assert r.rc == 1 and r.out == b"a\t42\n"
    # As Kafka: the count is reported on the way out, then the error that stopped the consumer.
    assert r.err == "Processed a total of 2 messages\nError: Size of data received by IntegerDeserializer is not 4\n"


def test_offset_reset_conflict(cli, bs, unique_topic):
    r = cli("console-consumer", "--bootstrap-server", bs, "--topic", unique_topic, "--from-beginning",
            "--consumer-property", "auto.offset.reset=latest")
    assert (r.rc, r.out) == (1, b"")
    assert r.err == ("Can't simultaneously specify --from-beginning and 'auto.offset.reset=latest', please remove one "
                     "option\n")


def _spawn(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "kafkapy.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def test_closed_stdout_and_ctrl_c_report_the_count(cli, bs, unique_topic):
    create(cli, bs, unique_topic)
    assert cli("console-producer", "--bootstrap-server", bs, "--topic", unique_topic,
               stdin=b"".join(b"line-%05d-%s\n" % (i, b"x" * 200) for i in range(3000))).rc == 0

    proc = _spawn(["console-consumer", "--bootstrap-server", bs, "--topic", unique_topic, "--from-beginning"])
    try:
        assert proc.stdout.readline() == b"line-00000-" + b"x" * 200 + b"\n"
        proc.stdout.close()  # like `| head -1`
        rc = proc.wait(30)
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert rc == 0 and "Traceback" not in err
    assert "Unable to write to standard out, closing consumer." in err
    assert "Processed a total of" in err

    proc = _spawn(["console-consumer", "--bootstrap-server", bs, "--topic", unique_topic, "--from-beginning"])
    try:
        out = b""
        deadline = time.monotonic() + 30
        while out.count(b"\n") < 3000 and time.monotonic() < deadline:
            out += proc.stdout.read1(1 << 16)
        os.kill(proc.pid, signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 130
    assert (out + rest).count(b"\n") == 3000
    assert err.decode().splitlines()[-1] == "Processed a total of 3000 messages"
