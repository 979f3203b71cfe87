"""ReplicaFetcherThread mechanics without a real leader: a leader that accepts the connection and never
answers does not hold up shutdown (the connection is closed under the waiting fetch), partitions are added
Truncating and removed at once, and Kafka's fetcher id spreads partitions."""

from __future__ import annotations

import socket
import threading
import time

from kafkapy.cluster.broker import Node
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.replica_fetcher_manager import fetcher_id_for
from kafkapy.server.replica_fetcher_thread import FetchState, InitialFetchState, ReplicaFetcherThread
from kafkapy.server.replication_quota_manager import ReplicationQuotaManager

TP = TopicPartition("t", 0)


class _Log:
    def latest_epoch(self) -> int:
        return 0


class _Partition:
    log = _Log()


def test_shutdown_does_not_wait_for_a_silent_leader() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []

    def accept() -> None:
        try:
            while True:
                accepted.append(server.accept()[0])  # and never answer
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    config = KafkaConfig({"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": "/tmp/unused"})
    leader = Node(5, "127.0.0.1", server.getsockname()[1])
    thread = ReplicaFetcherThread(0, leader, 1, config, lambda tp: _Partition(), ReplicationQuotaManager())  # type: ignore[arg-type,return-value]
    thread.add_partitions({TP: InitialFetchState(leader, 3, 0)})
    state = thread.fetch_state(TP)
    assert state is not None and state.state is FetchState.TRUNCATING and state.current_leader_epoch == 3
    thread.start()
    deadline = time.monotonic() + 10
    while not accepted and time.monotonic() < deadline:
        time.sleep(0.01)
    assert accepted, "the fetcher never connected"
    time.sleep(0.2)  # now waiting on ApiVersions or OffsetForLeaderEpoch that never comes
    start = time.monotonic()
    thread.shutdown()
    assert not thread.is_alive() and time.monotonic() - start < 5
    assert list(thread.remove_partitions([TP])) == [TP] and thread.partition_count() == 0
    server.close()
    for s in accepted:
        s.close()


def test_fetcher_id_is_kafkas() -> None:
    # abs(31 * "t".hashCode() + p) % n with "t".hashCode() == 116
    assert [fetcher_id_for(TopicPartition("t", p), 3) for p in range(4)] == [(3596 + p) % 3 for p in range(4)]
    assert fetcher_id_for(TopicPartition("t", 7), 1) == 0


def test_fetcher_client_settings_are_kafkas() -> None:
    """Kafka's fetcher NetworkClient: replica.socket.receive.buffer.bytes, replica.socket.timeout.ms, the connection
    setup timeouts, no reconnect backoff (replica.fetch.backoff.ms delays the partitions instead)."""
    config = KafkaConfig({"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": "/tmp/unused",
                          "replica.socket.receive.buffer.bytes": "131072", "replica.socket.timeout.ms": "7000",
                          "socket.connection.setup.timeout.ms": "2000"})
    thread = ReplicaFetcherThread(2, Node(5, "127.0.0.1", 1), 1, config, lambda tp: None, ReplicationQuotaManager())
    c = thread._sender.config
    assert (c.client_id, c.receive_buffer_bytes, c.send_buffer_bytes, c.request_timeout_ms) == (
        "broker-1-fetcher-2", 131072, -1, 7000)
    assert (c.connection_setup_timeout_ms, c.connection_setup_timeout_max_ms) == (2000, 30000)
    assert (c.reconnect_backoff_ms, c.reconnect_backoff_max_ms) == (0, 0)
    thread.shutdown()
