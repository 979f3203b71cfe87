"""BrokerServices: the bundle of broker components an API handler reaches through `ctx.server`.

KafkaServer builds one at startup and hands it to KafkaApis; handlers read what they need
(`ctx.server.replica_manager`, `ctx.server.metadata_cache`, `ctx.server.controller`, ...) and never
hold on to the bundle beyond the request. Every component has its own typed field: there is no
open-ended dictionary, so a component a handler needs is added here with its type. No byte format.
Thread-safety: the bundle is written once before the first request (the coordinators right after it is
built) and only read afterwards; each component is itself thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafkapy.common.time import SYSTEM, Time

if TYPE_CHECKING:
    from kafkapy.cluster.metadata_cache import MetadataCache
    from kafkapy.controller.controller import Controller
    from kafkapy.coordinator.group_coordinator import GroupCoordinator
    from kafkapy.coordinator.producer_id_manager import ProducerIdManager
    from kafkapy.coordinator.transaction_coordinator import TransactionCoordinator
    from kafkapy.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager
    from kafkapy.server.auth.acl_authorizer import AclAuthorizer
    from kafkapy.server.auto_topic_creation_manager import AutoTopicCreationManager
    from kafkapy.server.broker_metrics import BrokerMetrics
    from kafkapy.server.feature_control import FinalizedFeatureCache
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.network.socket_server import SocketServer
    from kafkapy.server.purgatory.delayed_controller_operation import DelayedControllerOperation
    from kafkapy.server.purgatory.delayed_operation_purgatory import DelayedOperationPurgatory
    from kafkapy.server.quota.quota_managers import QuotaManagers
    from kafkapy.server.replica_manager import ReplicaManager
    from kafkapy.server.security.delegation_token_manager import DelegationTokenManager
    from kafkapy.storage.log_manager import LogManager


@dataclass(eq=False)
class BrokerServices:
    config: KafkaConfig
    replica_manager: ReplicaManager
    metadata_cache: MetadataCache
    # The controller of this broker's metadata store (embedded: its own; cluster mode: active or not).
    controller: Controller
    log_manager: LogManager
    # Kafka's "topic" purgatory: admin requests waiting for the controller (DelayedControllerOperation).
    topic_purgatory: DelayedOperationPurgatory[DelayedControllerOperation]
    time: Time = SYSTEM
    group_coordinator: GroupCoordinator | None = None
    transaction_coordinator: TransactionCoordinator | None = None
    # Asks another broker's transaction coordinator to verify transactional produce (KIP-890); None: not asked.
    add_partitions_to_txn_manager: AddPartitionsToTxnManager | None = None
    # Producer ids for InitProducerId (shared with the transaction coordinator); made on first use when
    # the server did not set one (apis/producer_ids.producer_id_manager).
    producer_id_manager: ProducerIdManager | None = None
    # Automatic topic creation (Metadata, FindCoordinator) and its per-broker state; made on first use when the
    # server did not set one (auto_topic_creation_manager.auto_topic_creation_manager).
    auto_topic_creation_manager: AutoTopicCreationManager | None = None
    socket_server: SocketServer | None = None
    # Finalized features from the store's /feature node (apis/handler_support.feature_cache makes it on first use).
    feature_cache: FinalizedFeatureCache | None = None
    # Delegation tokens (apis/handler_support.delegation_token_manager makes it on first use).
    delegation_token_manager: DelegationTokenManager | None = None
    # Client quotas (produce / fetch bytes, request time); None until the broker has built them.
    quotas: QuotaManagers | None = None
    # authorizer.class.name's authorizer; None: every request is authorized (Kafka without an authorizer).
    authorizer: AclAuthorizer | None = None
    # The broker's metrics (broker_metrics.py): request metrics and BrokerTopicMetrics recorders.
    metrics: BrokerMetrics | None = None
    broker_id: int = 0
    # Kafka's broker epoch: the czxid of this broker's /brokers/ids registration (cluster mode; -1 embedded).
    broker_epoch: int = -1
    # Listener name -> the (host, port) this broker advertises on it, resolved after binding.
    advertised: dict[str, tuple[str, int]] = field(default_factory=dict)
