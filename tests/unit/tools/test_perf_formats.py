"""Exact text of the perf and verifiable tools from fixed inputs: Java's number formatting, Kafka's
ProducerPerformance Stats/ThroughputThrottler, ConsumerPerformance lines and SimpleDateFormat, the
verifiable tools' JSON events, and the tools' usage errors."""

from __future__ import annotations

import datetime as dt
import json
import math
import threading
from typing import Any, NamedTuple

import pytest
from typer.testing import CliRunner

from kafkapy.cli.main import app
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools import ToolFailure
from kafkapy.tools.consumer_perf_test import (
    ConsumerPerfProgress,
    ConsumerPerfRebListener,
    ConsumerPerfTotal,
    SimpleDateFormat,
    header_line,
    timeout_warning,
)
from kafkapy.tools.producer_perf_test import (
    Stats,
    ThroughputThrottler,
    TotalReport,
    WindowReport,
    format_metrics,
    java_fixed,
    java_scanner_tokens,
    percentiles,
    read_payload_file,
)
from kafkapy.tools.verifiable_consumer import VerifiableConsumer
from kafkapy.tools.verifiable_producer import (
    EventPrinter,
    VerifiableProducer,
    VerifiableProducerOptions,
    java_double_str,
    json_line,
)


class Clock:
    def __init__(self, ms: int = 1_700_000_000_000) -> None:
        self.ms = ms

    def __call__(self) -> int:
        return self.ms


class Meta(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int
    serialized_key_size: int
    serialized_value_size: int


# --- Java number formatting ---------------------------------------------------------------------


@pytest.mark.parametrize("value,digits,text", [
    (0.125, 2, "0.13"),          # Java rounds half-up where Python's "%.2f" gives 0.12
    (1.005, 2, "1.01"),          # ... on Double.toString's digits (Python: 1.00)
    (2.5, 0, "3"),
    (0.05, 1, "0.1"),
    (9993.337775, 6, "9993.337775"),
    (1 / 3, 4, "0.3333"),
    (1e-7, 4, "0.0000"),
    (123456789.0, 1, "123456789.0"),
    (math.nan, 2, "NaN"),
    (math.inf, 6, "Infinity"),
    (-math.inf, 1, "-Infinity"),
])
def test_java_fixed_rounds_like_javas_formatter(value, digits, text):
    assert java_fixed(value, digits) == text


@pytest.mark.parametrize("value,text", [
    (34.602076124567475, "34.602076124567475"), (20.0, "20.0"), (1e7, "1.0E7"), (12345678.9, "1.23456789E7"),
    (0.001, "0.001"), (0.00015, "1.5E-4"), (0.0, "0.0"), (-2.5, "-2.5"), (100.0, "100.0"), (math.nan, "NaN"),
    (math.inf, "Infinity"),
])
def test_java_double_to_string(value, text):
    assert java_double_str(value) == text


def test_json_line_keeps_key_order_and_java_doubles():
    line = json_line([("timestamp", 5), ("name", "tool_data"), ("key", None), ("v", "é\"x"), ("avg", 20.0),
                      ("nan", math.nan), ("parts", [{"topic": "t", "partition": 0}]), ("ok", True)])
    assert line == ('{"timestamp":5,"name":"tool_data","key":null,"v":"é\\"x","avg":20.0,"nan":"NaN",'
                    '"parts":[{"topic":"t","partition":0}],"ok":true}')


def test_format_metrics_is_kafkas_layout():
    lines = format_metrics({"producer-metrics:record-send-total:{client-id=c}": 5.0,
                            "producer-metrics:a:{client-id=c}": 0.0005, "x:y:{}": "text"})
    width = len("producer-metrics:record-send-total:{client-id=c}")  # Kafka: "%-<longest>s : %.3f"
    assert width == 48
    assert lines == [
        "",
        "Metric Name" + " " * 37 + "   Value",
        "producer-metrics:a:{client-id=c}" + " " * 16 + " : 0.001",
        "producer-metrics:record-send-total:{client-id=c} : 5.000",
        "x:y:{}" + " " * 42 + " : text",
    ]
    assert format_metrics({}) == []


# --- ProducerPerformance ------------------------------------------------------------------------


def test_window_and_total_lines_are_kafkas_format():
    w = WindowReport(42117, 8423.4, 8423.4 * 100 / (1024 * 1024), 3.254, 41.0)
    assert w.text() == "42117 records sent, 8423.4 records/sec (0.80 MB/sec), 3.3 ms avg latency, 41.0 ms max latency."
    t = TotalReport(50000, 9993.337775, 9.53, 3.175, 40.0, 3, 6, 19, 37)
    assert t.text() == ("50000 records sent, 9993.337775 records/sec (9.53 MB/sec), 3.18 ms avg latency, 40.00 ms max "
                        "latency, 3 ms 50th, 6 ms 95th, 19 ms 99th, 37 ms 99.9th.")
    steady = TotalReport(20000, 1.0 / 3, 0.004, 2.0, 8.0, 1, 2, 3, 4, steady_state=True)
    assert steady.text().startswith("20000 steady state records sent, 0.333333 records/sec (0.00 MB/sec), ")
    assert json.loads(json.dumps(steady.__json__()))["type"] == "steadyStateTotal"


def test_stats_windows_totals_and_percentiles_with_a_fixed_clock():
    clock = Clock()
    windows: list[WindowReport] = []
    stats = Stats(10, reporting_interval_ms=5000, on_window=windows.append, clock=clock)
    start = clock.ms
    for i, latency in enumerate([5, 1, 9, 3, 7]):  # 5 acks within the first window
        clock.ms = start + 100 * i
        stats.record(latency, 100, clock.ms)
    clock.ms = start + 5000
    stats.record(2, 100, clock.ms)  # closes the window (Kafka checks after counting the record)
    assert [w.text() for w in windows] == [
        "6 records sent, 1.2 records/sec (0.00 MB/sec), 4.5 ms avg latency, 9.0 ms max latency."]
    clock.ms = start + 6000
    stats.record(4, 100, clock.ms)
    total = stats.total_report()
    # sorted samples [1,2,3,4,5,7,9]: index int(p*7) -> 50th 4, 95th 9, 99th 9, 99.9th 9
    assert total.text() == ("7 records sent, 1.166667 records/sec (0.00 MB/sec), 4.43 ms avg latency, 9.00 ms max "
                            "latency, 4 ms 50th, 9 ms 95th, 9 ms 99th, 9 ms 99.9th.")


def test_stats_shared_callback_uses_create_time_and_skips_failures():
    clock = Clock()
    stats = Stats(3, clock=clock)
    errors: list[BaseException] = []
    stats.on_error = errors.append
    stats.on_completion(Meta("t", 0, 0, clock.ms - 12, -1, 100), None)
    stats.completion_since(clock.ms - 3, Meta("t", 0, 1, 0, -1, 50), None)
    stats.on_completion(None, RuntimeError("boom"))
    assert (stats.count, stats.bytes, stats.latencies) == (2, 150, [12, 3])
    assert [str(e) for e in errors] == ["boom"]


def test_stats_with_nothing_acknowledged_prints_javas_nan():
    clock = Clock()
    assert Stats(5, clock=clock).total_report().text() == (
        "0 records sent, NaN records/sec (NaN MB/sec), NaN ms avg latency, 0.00 ms max latency, 0 ms 50th, "
        "0 ms 95th, 0 ms 99th, 0 ms 99.9th.")


def test_latency_sampling_keeps_at_most_500000_samples():
    assert Stats(500_000).sampling == 1
    assert Stats(1_000_001).sampling == 2
    assert percentiles([], 0, 0.5) == [0]
    assert percentiles([3, 1, 2, 4], 4, 0.5, 0.999) == [3, 4]


def test_steady_state_stats_announce_their_first_window():
    clock = Clock()
    windows: list[WindowReport] = []
    steady = Stats(10, is_steady_state=True, reporting_interval_ms=10, on_window=windows.append, clock=clock)
    clock.ms += 10
    steady.record(1, 1, clock.ms)
    clock.ms += 10
    steady.record(1, 1, clock.ms)
    assert [w.in_steady_state for w in windows] == [True, False]


def test_throughput_throttler_is_kafkas():
    t = ThroughputThrottler(-1, 0)
    assert not t.should_throttle(10**9, 1)
    t = ThroughputThrottler(100, 1000)
    assert not t.should_throttle(5, 1000)        # no time elapsed yet: never throttle
    assert not t.should_throttle(10, 1100)       # exactly 100/s
    assert t.should_throttle(11, 1100)
    t = ThroughputThrottler(1000, 0)             # 1 ms per record; sleeps once 2 ms of deficit piled up
    t.throttle()
    assert t.sleep_deficit_ns == 1_000_000
    t.throttle()
    assert t.sleep_deficit_ns == 0
    t = ThroughputThrottler(0, 0)
    t.wakeup()
    t.throttle()                                 # throughput 0 blocks until woken up


@pytest.mark.parametrize("text,delimiter,tokens", [
    ("a\nb\n", "\n", ["a", "b"]),
    ("a\n\nb", "\n", ["a", "", "b"]),
    ("\nfirst\nsecond", "\n", ["first", "second"]),
    ("x, y,z", r",\s*", ["x", "y", "z"]),
    ("single", "\n", ["single"]),
])
def test_payload_file_uses_scanner_tokens(text, delimiter, tokens):
    assert java_scanner_tokens(text, delimiter) == tokens


def test_payload_file_errors(tmp_path):
    with pytest.raises(ToolFailure, match=r"^File does not exist or empty file provided\.$"):
        read_payload_file(str(tmp_path / "missing.txt"))
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(ToolFailure, match="File does not exist or empty file provided."):
        read_payload_file(str(tmp_path / "empty.txt"))
    (tmp_path / "p.txt").write_text("héllo|world|")
    assert read_payload_file(str(tmp_path / "p.txt"), r"\|") == ["héllo".encode(), b"world"]


def test_producer_props_follow_kafkas_read_props():
    from kafkapy.cli.command import ToolError
    from kafkapy.cli.producer_perf_test import producer_props

    props = producer_props({"acks": "0", "bootstrap.servers": "file:1"}, ["acks=1", "linger.ms=5"], "flag:2")
    assert props == {"acks": "1", "linger.ms": "5", "bootstrap.servers": "flag:2", "client.id": "perf-producer-client",
                     "key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
                     "value.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer"}
    assert producer_props({"client.id": "mine"}, None, None)["client.id"] == "mine"
    for bad in ("a=b=c", "novalue", "k="):
        with pytest.raises(ToolError, match=f"^Invalid property: {bad}$"):
            producer_props({}, [bad], None)


# --- ConsumerPerformance ------------------------------------------------------------------------

UTC_FMT = SimpleDateFormat("yyyy-MM-dd HH:mm:ss:SSS", tz=dt.UTC)
T0 = 1_700_000_000_007  # 2023-11-14 22:13:20.007 UTC


def test_simple_date_format_letters_and_quotes():
    assert UTC_FMT.format(T0) == "2023-11-14 22:13:20:007"
    fmt = SimpleDateFormat("EEE, d MMM yy hh:mm a 'at' Z X ''S''", tz=dt.UTC)
    assert fmt.format(T0) == "Tue, 14 Nov 23 10:13 PM at +0000 Z '7'"
    tz = dt.timezone(dt.timedelta(hours=-5, minutes=-30))
    assert SimpleDateFormat("HH:mm XXX Z EEEE MMMM", tz=tz).format(T0) == "16:43 -05:30 -0530 Tuesday November"
    with pytest.raises(ToolFailure, match="^Illegal pattern character 'q'$"):
        SimpleDateFormat("yyyy qq")
    local = SimpleDateFormat("yyyy-MM-dd HH:mm:ss:SSS").format(T0)
    assert local == dt.datetime.fromtimestamp(T0 / 1000).strftime("%Y-%m-%d %H:%M:%S:007")


def test_consumer_perf_header_values_and_warning_lines():
    assert header_line(False) == ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
                                  "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
    assert header_line(True).startswith("time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
                                        "rebalance.time.ms")
    total = ConsumerPerfTotal(T0, T0 + 3344, 5_000_000, 50_000, 3042, 302)
    assert total.line(UTC_FMT) == ("2023-11-14 22:13:20:007, 2023-11-14 22:13:23:351, 4.7684, 1.4259, 50000, "
                                   "14952.1531, 3042, 302, 15.7893, 165562.9139")
    nothing = ConsumerPerfTotal(T0, T0, 0, 0, 0, 0)
    assert nothing.line(UTC_FMT).endswith(", 0.0000, NaN, 0, NaN, 0, 0, NaN, NaN")
    assert timeout_warning(10000) == ("WARNING: Exiting before consuming the expected number of messages: timeout "
                                      "(10000 ms) exceeded. You can use the --timeout option to increase the timeout.")


def test_consumer_perf_progress_line():
    p = ConsumerPerfProgress(T0 + 5000, 2 * 1048576, 1048576, 20000, 10000, T0, 1000)
    assert p.line(UTC_FMT) == "2023-11-14 22:13:25:007, 0, 2.0000, 0.2000, 20000, 2000.0000, 1000, 4000, 0.2500, 2500.0000"
    p0 = ConsumerPerfProgress(T0 + 10, 10, 0, 1, 0, T0, 10)  # all rebalance: Kafka prints 0.0 fetch rates
    assert p0.line(UTC_FMT).endswith(", 10, 0, 0.0000, 0.0000")


def test_rebalance_listener_counts_join_time_until_first_assignment():
    clock = Clock(1000)
    listener = ConsumerPerfRebListener(1000, clock)
    clock.ms = 1300
    listener.on_partitions_assigned([TopicPartition("t", 0)])
    clock.ms = 1400
    listener.on_partitions_assigned([TopicPartition("t", 1)])  # already had partitions: no join time
    assert (listener.join_time_ms, listener.join_time_ms_in_single_round) == (300, 300)
    clock.ms = 2000
    listener.on_partitions_revoked([TopicPartition("t", 0), TopicPartition("t", 1)])
    clock.ms = 2050
    listener.on_partitions_assigned([TopicPartition("t", 0)])
    assert listener.join_time_ms == 350


# --- verifiable tools ---------------------------------------------------------------------------


class FakeProducer:
    def __init__(self, fail_on: int | None = None) -> None:
        self.sent: list[tuple[Any, ...]] = []
        self.pending: list[Any] = []
        self.fail_on = fail_on
        self.closed = False

    def send(self, topic, value, key=None, timestamp=None, callback=None):
        if self.fail_on is not None and len(self.sent) == self.fail_on:
            from kafkapy.client.errors import KafkaTimeoutError

            self.sent.append(("failed", value))
            raise KafkaTimeoutError("Topic t not present in metadata after 60000 ms.")
        offset = len(self.sent)
        self.sent.append((topic, key, value, timestamp))
        self.pending.append(lambda: callback(Meta(topic, 0, offset, 0, -1, len(value)), None))

    def close(self, timeout=None):
        for complete in self.pending:
            complete()
        self.closed = True


def test_verifiable_producer_events():
    clock = Clock(1000)
    lines: list[str] = []
    printer = EventPrinter(lines.append, clock)
    producer = FakeProducer(fail_on=2)
    tool = VerifiableProducer(producer, VerifiableProducerOptions("t", max_messages=4, value_prefix=7, create_time=50,
                                                                  repeating_keys=2), printer, clock)
    tool.run(threading.Event(), 1000)
    clock.ms = 1500
    summary = tool.close(1000)
    assert lines == [
        '{"timestamp":1000,"name":"startup_complete"}',
        '{"timestamp":1000,"name":"producer_send_error","topic":"t","key":"0","value":"7.2","exception":'
        '"class org.apache.kafka.common.errors.TimeoutException","message":"Topic t not present in metadata after '
        '60000 ms."}',
        '{"timestamp":1500,"name":"producer_send_success","key":"0","value":"7.0","topic":"t","partition":0,"offset":0}',
        '{"timestamp":1500,"name":"producer_send_success","key":"1","value":"7.1","topic":"t","partition":0,"offset":1}',
        '{"timestamp":1500,"name":"producer_send_success","key":"1","value":"7.3","topic":"t","partition":0,"offset":3}',
        '{"timestamp":1500,"name":"shutdown_complete"}',
        '{"timestamp":1500,"name":"tool_data","sent":4,"acked":3,"target_throughput":-1,"avg_throughput":6.0}',
    ]
    assert producer.sent[0] == ("t", b"0", b"7.0", 50)
    assert (summary.sent, summary.acked, summary.errors) == (4, 3, 1)


class Rec(NamedTuple):
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


class FakeConsumer:
    def __init__(self, polls: list[list[Rec]], commit_error: Exception | None = None) -> None:
        self.polls = polls
        self.commits: list[dict[Any, int]] = []
        self.commit_error = commit_error
        self.listener: Any = None

    def subscribe(self, topics, listener=None):
        self.listener = listener

    def poll(self, timeout_ms):
        if self.polls:
            if self.listener is not None and len(self.commits) == 0 and not hasattr(self, "_assigned"):
                self._assigned = True
                self.listener.on_partitions_assigned([TopicPartition("t", 0), TopicPartition("t", 1)])
            return self.polls.pop(0)
        return []

    def commit_sync(self, offsets):
        if self.commit_error is not None:
            raise self.commit_error
        self.commits.append(dict(offsets))

    def close(self):
        self.listener.on_partitions_revoked([TopicPartition("t", 0), TopicPartition("t", 1)])


def test_verifiable_consumer_events_and_max_messages():
    lines: list[str] = []
    polls = [[], [Rec("t", 1, 5, None, b"a"), Rec("t", 0, 7, b"k", b"b"), Rec("t", 1, 6, None, b"c")],
             [Rec("t", 0, 8, None, b"d"), Rec("t", 0, 9, None, b"e")]]
    consumer = FakeConsumer(polls)
    tool = VerifiableConsumer(consumer, "t", EventPrinter(lines.append, Clock(9)), max_messages=4, verbose=True)
    tool.run(threading.Event())
    assert lines == [
        '{"timestamp":9,"name":"startup_complete"}',
        '{"timestamp":9,"name":"partitions_assigned","partitions":[{"topic":"t","partition":0},'
        '{"topic":"t","partition":1}]}',
        '{"timestamp":9,"name":"record_data","key":null,"value":"a","topic":"t","partition":1,"offset":5}',
        '{"timestamp":9,"name":"record_data","key":null,"value":"c","topic":"t","partition":1,"offset":6}',
        '{"timestamp":9,"name":"record_data","key":"k","value":"b","topic":"t","partition":0,"offset":7}',
        '{"timestamp":9,"name":"records_consumed","count":3,"partitions":[{"topic":"t","partition":1,"count":2,'
        '"minOffset":5,"maxOffset":6},{"topic":"t","partition":0,"count":1,"minOffset":7,"maxOffset":7}]}',
        # Java HashMap order: TopicPartition hash 31*(31+p)+"t".hashCode() puts t-1 in bucket 4, t-0 in bucket 5
        '{"timestamp":9,"name":"offsets_committed","offsets":[{"topic":"t","partition":1,"offset":7},'
        '{"topic":"t","partition":0,"offset":8}],"success":true}',
        '{"timestamp":9,"name":"record_data","key":null,"value":"d","topic":"t","partition":0,"offset":8}',
        '{"timestamp":9,"name":"records_consumed","count":2,"partitions":[{"topic":"t","partition":0,"count":1,'
        '"minOffset":8,"maxOffset":8}]}',
        '{"timestamp":9,"name":"offsets_committed","offsets":[{"topic":"t","partition":0,"offset":9}],"success":true}',
        '{"timestamp":9,"name":"partitions_revoked","partitions":[{"topic":"t","partition":0},'
        '{"topic":"t","partition":1}]}',
        '{"timestamp":9,"name":"shutdown_complete"}',
    ]


def test_verifiable_consumer_reports_failed_commits():
    from kafkapy.common.errors import RebalanceInProgressError

    lines: list[str] = []
    consumer = FakeConsumer([[Rec("t", 0, 0, None, b"a")]], commit_error=RebalanceInProgressError("rebalancing"))
    VerifiableConsumer(consumer, "t", EventPrinter(lines.append, Clock(1)), max_messages=1).run(threading.Event())
    assert ('{"timestamp":1,"name":"offsets_committed","offsets":[{"topic":"t","partition":0,"offset":1}],'
            '"error":"rebalancing","success":false}') in lines


# --- usage errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("argv,message", [
    (["producer-perf-test", "--topic", "t", "--num-records", "5", "--throughput", "-1"],
     "one of the arguments --record-size --payload-file --payload-monotonic is required"),
    (["producer-perf-test", "--topic", "t", "--num-records", "5", "--throughput", "-1", "--record-size", "1",
      "--payload-monotonic", "--bootstrap-server", "x:1"],
     "argument --payload-monotonic: not allowed with argument --record-size"),
    (["producer-perf-test", "--topic", "t", "--num-records", "0", "--throughput", "-1", "--record-size", "1",
      "--bootstrap-server", "x:1"], "--num-records should be greater than zero"),
    (["producer-perf-test", "--topic", "t", "--num-records", "5", "--throughput", "-1", "--record-size", "0",
      "--bootstrap-server", "x:1"], "--record-size should be greater than zero"),
    (["producer-perf-test", "--topic", "t", "--num-records", "5", "--throughput", "-1", "--record-size", "1",
      "--warmup-records", "5", "--bootstrap-server", "x:1"],
     "The value for --warmup-records must be strictly fewer than the number of records in the test, --num-records."),
    (["producer-perf-test", "--topic", "t", "--num-records", "5", "--throughput", "-1", "--record-size", "1"],
     "Either --bootstrap-server, --producer-props or --producer.config must be specified."),
    (["producer-perf-test", "--topic", "t", "--num-records", "5", "--throughput", "-1", "--record-size", "1",
      "--transaction-duration-ms", "0", "--bootstrap-server", "x:1"],
     "--transaction-duration-ms should be greater than zero"),
    (["consumer-perf-test", "--bootstrap-server", "x:1", "--messages", "5"],
     "Exactly one of the following arguments is required: --topic, --include"),
    (["consumer-perf-test", "--topic", "t", "--messages", "5"], 'Missing required argument "[bootstrap-server]"'),
    (["consumer-perf-test", "--bootstrap-server", "x:1", "--topic", "t"], "the following arguments are required: "
     "--messages"),
    (["consumer-perf-test", "--bootstrap-server", "x:1", "--topic", "t", "--messages", "5", "--reporting-interval",
      "0"], "Reporting interval must be greater than 0."),
    (["consumer-perf-test", "--bootstrap-server", "x:1", "--topic", "t", "--messages", "5", "--date-format", "yyyy qq"],
     "Illegal pattern character 'q'"),
    (["verifiable-producer", "--topic", "t"], "one of the arguments --bootstrap-server --broker-list is required"),
    (["verifiable-producer", "--topic", "t", "--bootstrap-server", "x:1", "--producer.config", "a", "--command-config",
      "b"], "Options --producer.config and --command-config are mutually exclusive."),
    (["verifiable-producer", "--topic", "t", "--bootstrap-server", "x:1", "--acks", "2"],
     "argument --acks: invalid choice: 2 (choose from 0, 1, -1)"),
    (["verifiable-consumer", "--topic", "t", "--bootstrap-server", "x:1"],
     "the following arguments are required: --group-id"),
    (["verifiable-consumer", "--topic", "t", "--group-id", "g", "--bootstrap-server", "x:1", "--reset-policy", "oops"],
     "Invalid value oops for --reset-policy (must be either 'earliest', 'latest', or 'none')"),
])
def test_usage_errors(argv, message):
    r = kafkapy(*argv)
    assert (r.exit_code, r.stderr) == (2, f"kafkapy {argv[0]}: error: {message}\n")


@pytest.mark.parametrize("argv,message", [
    (["producer-perf-test", "--topic", "t", "--num-records", "5", "--throughput", "-1", "--record-size", "1",
      "--producer-props", "acks=1"], 'Error: Missing required configuration "bootstrap.servers" which has no default '
     'value.'),
    (["producer-perf-test", "--topic", "t", "--num-records", "5", "--throughput", "-1", "--record-size", "1",
      "--producer-props", "a=b=c"], "Error: Invalid property: a=b=c"),
    (["verifiable-consumer", "--topic", "t", "--group-id", "g", "--bootstrap-server", "x:1", "--group-protocol",
      "CONSUMER"], "Error: kafkapy's consumer supports only the classic group protocol (--group-protocol classic)"),
])
def test_runtime_refusals(argv, message):
    r = kafkapy(*argv)
    assert (r.exit_code, r.stderr) == (1, message + "\n")


def kafkapy(*argv: str):
    """`kafkapy <argv>` in-process through the Typer app (typer.testing.CliRunner)."""
    return CliRunner().invoke(app, list(argv), catch_exceptions=False, prog_name="kafkapy")


def test_payload_file_without_payloads_is_refused(tmp_path):
    only_delimiters = tmp_path / "blank.txt"
    only_delimiters.write_text("\n")
    captured = kafkapy("producer-perf-test", "--topic", "t", "--num-records", "5", "--throughput", "-1",
                       "--payload-file", str(only_delimiters), "--bootstrap-server", "127.0.0.1:1")
    assert captured.exit_code == 1
    assert captured.stdout == f"Reading payloads from: {only_delimiters}\nNumber of messages read: 0\n"
    assert captured.stderr == f"Error: No payloads in {only_delimiters}: every token between delimiters was empty\n"


def test_missing_payload_file_is_one_line(tmp_path):
    missing = tmp_path / "none.txt"
    captured = kafkapy("producer-perf-test", "--topic", "t", "--num-records", "5", "--throughput", "-1",
                       "--payload-file", str(missing), "--bootstrap-server", "127.0.0.1:1")
    assert captured.exit_code == 1
    assert captured.stdout == f"Reading payloads from: {missing}\n"
    assert captured.stderr == "Error: File does not exist or empty file provided.\n"
