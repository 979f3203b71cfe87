"""BrokerServices: the bundle of broker components an API handler reaches through `ctx.server`.

KafkaServer builds one at startup and hands it to KafkaApis; handlers read what they need
(`ctx.server.replica_manager`, `ctx.server.metadata_cache`, `ctx.server.controller`, ...) and never
hold on to the bundle beyond the request. No byte format.
Thread-safety: the bundle is written once before the first request and only read afterwards; each
component is itself thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.common.time import SYSTEM, Time

if TYPE_CHECKING:
    from kafkapy.cluster.metadata_cache import MetadataCache
    from kafkapy.controller.controller import Controller
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.replica_manager import ReplicaManager


@dataclass(eq=False)
class BrokerServices:
    config: KafkaConfig
    time: Time = SYSTEM
    replica_manager: ReplicaManager | None = None
    metadata_cache: MetadataCache | None = None
    controller: Controller | None = None
    log_manager: Any = None
    group_coordinator: Any = None
    transaction_coordinator: Any = None
    # Kafka's "topic" purgatory: admin requests waiting for the controller (DelayedControllerOperation).
    topic_purgatory: Any = None
    broker_id: int = 0
    # Kafka's broker epoch: the czxid of this broker's /brokers/ids registration (cluster mode; -1 embedded).
    broker_epoch: int = -1
    # Listener name -> the (host, port) this broker advertises on it, resolved after binding.
    advertised: dict[str, tuple[str, int]] = field(default_factory=dict)
    # Anything else a later component wants to publish to handlers (kept open on purpose).
    extras: dict[str, Any] = field(default_factory=dict)
