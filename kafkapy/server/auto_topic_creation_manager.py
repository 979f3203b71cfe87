"""AutoTopicCreationManager: Kafka's automatic topic creation, one per broker (on BrokerServices).

Metadata asks it for the topics a client named that do not exist (auto.create.topics.enable), FindCoordinator
for __consumer_offsets / __transaction_state. It picks Kafka's partitions, replication factor and configs for
each (offsets.topic.*, transaction.state.log.*, num.partitions / default.replication.factor), refuses an
internal topic while fewer brokers are alive than its replication factor (COORDINATOR_NOT_AVAILABLE), and sends
the creation to the controller without waiting (the caller answers LEADER_NOT_AVAILABLE meanwhile). Internal
topic requests are spaced at least a second apart per topic: the controller answers duplicates with
TOPIC_ALREADY_EXISTS; the spacing only spares it bursts of identical requests.

No byte format. Thread-safety: called from any request handler thread; the spacing state is under a lock.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

from kafkapy.common.errors import ErrorCode, InvalidTopicExceptionError
from kafkapy.common.internal_topics import (
    GROUP_METADATA_TOPIC_NAME,
    INTERNAL_TOPICS,
    TRANSACTION_STATE_TOPIC_NAME,
)
from kafkapy.common.time import Time
from kafkapy.controller import topic as topic_rules

log = logging.getLogger("kafka.server.DefaultAutoTopicCreationManager")

INTERNAL_TOPIC_REQUEST_SPACING_MS = 1000
_SERVICES_LOCK = threading.Lock()


def auto_create_spec(config: Any, name: str, live_brokers: int) -> tuple[int, int, dict[str, str]]:
    """(partitions, replication factor, configs) Kafka's AutoTopicCreationManager uses for `name`."""
    if name == GROUP_METADATA_TOPIC_NAME:
        return (config.get_int("offsets.topic.num.partitions"),
                config.internal_topic_replication_factor("offsets.topic.replication.factor", live_brokers),
                {"cleanup.policy": "compact", "compression.type": "producer",
                 "segment.bytes": str(config.get_int("offsets.topic.segment.bytes"))})
    if name == TRANSACTION_STATE_TOPIC_NAME:
        rf = config.internal_topic_replication_factor("transaction.state.log.replication.factor", live_brokers)
        # The replication factor is capped by the live brokers (zero-setup single broker); min.isr likewise, or
        # every acks=-1 coordinator write would fail with NOT_ENOUGH_REPLICAS.
        min_isr = min(config.get_int("transaction.state.log.min.isr"), rf)
        return (config.get_int("transaction.state.log.num.partitions"), rf,
                {"cleanup.policy": "compact", "compression.type": "uncompressed", "unclean.leader.election.enable":
                 "false", "min.insync.replicas": str(min_isr),
                 "segment.bytes": str(config.get_int("transaction.state.log.segment.bytes"))})
    return config.get_int("num.partitions"), config.get_int("default.replication.factor"), {}


class AutoTopicCreationManager:
    def __init__(self, config: Any, metadata_cache: Any, controller: Any, time: Time) -> None:
        """config: the KafkaConfig; metadata_cache: alive brokers; controller: create_topics(tuples)."""
        self.config = config
        self.metadata_cache = metadata_cache
        self.controller = controller
        self.time = time
        self._lock = threading.Lock()
        self._last_internal_request_ms: dict[str, int] = {}

    def create_topics(self, names: list[str]) -> dict[str, int]:
        """Ask the controller to create `names` (not waiting); the error code each topic is answered with."""
        out: dict[str, int] = {}
        creatable = []
        live = max(1, len(self.metadata_cache.get_alive_brokers()))
        for name in names:
            try:
                topic_rules.validate(name)
            except InvalidTopicExceptionError:
                out[name] = ErrorCode.INVALID_TOPIC_EXCEPTION
                continue
            partitions, rf, configs = auto_create_spec(self.config, name, live)
            if rf > live and name in INTERNAL_TOPICS:
                # Cluster mode only (embedded caps the factor): an internal topic created with fewer replicas than
                # configured would stay that way, so Kafka refuses until enough brokers are up.
                key = ("offsets.topic.replication.factor" if name == GROUP_METADATA_TOPIC_NAME
                       else "transaction.state.log.replication.factor")
                log.error("Number of alive brokers '%d' does not meet the required replication factor '%d' for the "
                          "%s topic (configured via '%s'). This error can be ignored if the cluster is starting up "
                          "and not all brokers are up yet.", live, rf,
                          "offsets" if name == GROUP_METADATA_TOPIC_NAME else "transactions state", key)
                out[name] = ErrorCode.COORDINATOR_NOT_AVAILABLE
                continue
            creatable.append((name, partitions, rf, None, configs))
            out[name] = ErrorCode.LEADER_NOT_AVAILABLE
        controller = self.controller
        if creatable and controller is not None:
            future = controller.create_topics(creatable)

            def logged(f: Any) -> None:
                try:
                    for name, result in f.result().items():
                        if result.error is not None and result.error.code != ErrorCode.TOPIC_ALREADY_EXISTS:
                            log.info("Auto-creation of topic %s failed: %s", name, result.error)
                        elif result.error is None:
                            log.info("Auto-created topic %s with %d partitions", name, result.num_partitions)
                except Exception as e:  # noqa: BLE001 - the answer was already sent; only log
                    log.info("Auto-creation of topics %s failed: %s", [c[0] for c in creatable], e)

            future.add_done_callback(logged)
        return out

    def create_internal_topic(self, topic: str) -> None:
        """Ask for an internal topic, at most once a second per topic."""
        now = self.time.hi_res_clock_ms()
        with self._lock:
            last = self._last_internal_request_ms.get(topic, -10 * INTERNAL_TOPIC_REQUEST_SPACING_MS)
            if 0 <= now - last < INTERNAL_TOPIC_REQUEST_SPACING_MS:  # another broker's clock may be ahead
                return
            self._last_internal_request_ms[topic] = now
        self.create_topics([topic])


class _Services(Protocol):
    """What the manager is built from: BrokerServices (not imported: it refers to this module)."""

    config: Any
    metadata_cache: Any
    controller: Any
    time: Time
    auto_topic_creation_manager: AutoTopicCreationManager | None


def auto_topic_creation_manager(services: _Services) -> AutoTopicCreationManager:
    """The broker's manager (KafkaServer sets it; a BrokerServices built elsewhere gets one on first use)."""
    manager = services.auto_topic_creation_manager
    if manager is None:
        with _SERVICES_LOCK:
            manager = services.auto_topic_creation_manager
            if manager is None:
                manager = AutoTopicCreationManager(services.config, services.metadata_cache, services.controller,
                                                   services.time)
                services.auto_topic_creation_manager = manager
    return manager
