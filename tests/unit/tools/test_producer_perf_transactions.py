"""producer-perf-test's transactional mode without a broker: which flags turn transactions on (Kafka 4.x's
rules) and the send loop's begin / commit-every-duration / final commit, driven by a scripted clock."""

from __future__ import annotations

import argparse

import pytest

from kafkapy.cli.producer_perf_test import DEFAULT_TRANSACTIONAL_ID, transaction_settings
from kafkapy.client.record_accumulator import RecordMetadata
from kafkapy.tools.producer_perf_test import ProducerPerfOptions, run_producer_perf


def args(tid: str | None = None, duration: int | None = None) -> argparse.Namespace:
    return argparse.Namespace(transactional_id=tid, transaction_duration_ms=duration)


@pytest.mark.parametrize("tid,duration,props,expected_ms,expected_id", [
    (None, None, {}, 0, None),
    ("tx", None, {}, 3000, "tx"),
    (None, 250, {}, 250, DEFAULT_TRANSACTIONAL_ID),
    (None, None, {"transactional.id": "from-props"}, 3000, "from-props"),
    ("flag", 100, {"transactional.id": "from-props"}, 100, "flag"),
])
def test_transaction_settings(tid, duration, props, expected_ms, expected_id):
    props = dict(props)
    assert transaction_settings(args(tid, duration), props) == expected_ms
    assert props.get("transactional.id") == expected_id


class ScriptedProducer:
    """Records the transactional calls and the sends between them; completes every send at once."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.now_ms = 0  # the test's clock: each send moves it 10 ms on

    def init_transactions(self) -> None:
        self.calls.append("init")

    def begin_transaction(self) -> None:
        self.calls.append("begin")

    def commit_transaction(self) -> None:
        self.calls.append("commit")

    def send(self, topic, value, timestamp=None, callback=None):
        self.calls.append("send")
        self.now_ms += 10
        callback(RecordMetadata("t", 0, len(self.calls), timestamp, -1, len(value)), None)

    def close(self) -> None:
        self.calls.append("close")

    def metrics(self) -> dict:
        return {}


def test_loop_commits_every_duration_then_the_rest():
    producer = ScriptedProducer()
    opts = ProducerPerfOptions("t", 7, record_size=3, transaction_duration_ms=25)
    result = run_producer_perf(producer, opts, on_window=lambda r: None, on_error=lambda e: None,
                               clock=lambda: producer.now_ms)
    assert result.errors == 0 and result.total.records == 7
    # ProducerPerformance: a transaction is committed after the send starting >= 25 ms after its begin (sends
    # start at 0, 10, 20, 30 ms: commit; the next begins at 40 and the last send starts at 60: final commit).
    assert producer.calls == ["init", "begin", "send", "send", "send", "send", "commit",
                              "begin", "send", "send", "send", "commit", "close"]


def test_no_transactions_without_a_duration():
    producer = ScriptedProducer()
    run_producer_perf(producer, ProducerPerfOptions("t", 3, record_size=1), on_window=lambda r: None,
                      on_error=lambda e: None)
    assert producer.calls == ["send", "send", "send", "close"]
