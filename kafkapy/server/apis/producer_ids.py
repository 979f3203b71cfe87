"""InitProducerId (22) v0-5: producer ids for idempotent producers; transactional ids go to the
TransactionCoordinator when the broker has one.

Kafka's rules (KafkaApis.handleInitProducerIdRequest, TransactionCoordinator.handleInitProducerId):
producer_id and producer_epoch (v3+) are both -1 or both set, else INVALID_REQUEST; a null transactional id
always gets a fresh producer id with epoch 0 (an idempotent producer that wants a new epoch asks again);
an empty one is INVALID_REQUEST; a non-empty one is delegated to `ctx.server.transaction_coordinator`
(`handle_init_producer_id(transactional_id, transaction_timeout_ms, producer_id, producer_epoch,
callback(error_code, producer_id, producer_epoch))`), or answered COORDINATOR_NOT_AVAILABLE without one.

The ProducerIdManager lives in `ctx.server.producer_id_manager` (created on first use when the
server did not make one), reserving blocks in the controller's MetadataStore under Kafka's
/latest_producer_id_block path, so ids survive restarts.
Thread-safety: the manager is created once under a lock; it is thread-safe itself.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import (
    ClusterAuthorizationFailedError,
    CoordinatorNotAvailableError,
    InvalidRequestError,
)
from kafkapy.coordinator.producer_id_manager import (
    InMemoryProducerIdBlockStore,
    ProducerIdBlockStore,
    ProducerIdManager,
)
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import InitProducerIdRequest, InitProducerIdResponse
from kafkapy.server.apis.registry import DEFERRED, Deferred, api

if TYPE_CHECKING:
    from kafkapy.server.broker_services import BrokerServices
    from kafkapy.server.request_context import RequestContext

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1

_manager_lock = threading.Lock()


def _block_store(services: BrokerServices) -> ProducerIdBlockStore:
    controller = services.controller
    if controller is not None:
        return controller.store  # every MetadataStore keeps Kafka's /latest_producer_id_block record
    return InMemoryProducerIdBlockStore()


def producer_id_manager(services: BrokerServices) -> ProducerIdManager:
    """The broker's ProducerIdManager (shared with the TransactionCoordinator)."""
    manager = services.producer_id_manager
    if manager is None:
        with _manager_lock:
            manager = services.producer_id_manager
            if manager is None:
                manager = ProducerIdManager(services.config.broker_id, _block_store(services))
                services.producer_id_manager = manager
    return manager


def _may_write_idempotently(ctx: RequestContext) -> bool:
    """Kafka: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic."""
    authorizer = ctx.server.authorizer
    return authorizer is None or ctx.authorize(AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER) or \
        authorizer.authorize_any(ctx.principal, ctx.client_host, AclOperation.WRITE, ResourceType.TOPIC)


def _init_error(request: InitProducerIdRequest, version: int, code: int) -> InitProducerIdResponse:
    return InitProducerIdResponse(throttle_time_ms=0, error_code=code, producer_id=NO_PRODUCER_ID,
                                  producer_epoch=NO_PRODUCER_EPOCH)


@api(ApiKey.INIT_PRODUCER_ID, 0, 5, error_response=_init_error)
def handle_init_producer_id(ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse | Deferred:
    producer_id, producer_epoch = request.producer_id, request.producer_epoch
    if ctx.api_version < 3:
        producer_id, producer_epoch = NO_PRODUCER_ID, NO_PRODUCER_EPOCH
    if (producer_id == NO_PRODUCER_ID) != (producer_epoch == NO_PRODUCER_EPOCH):
        raise InvalidRequestError("producerId and producerEpoch must both be set or both be -1")
    transactional_id = request.transactional_id
    if transactional_id is not None:
        ctx.require(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id)
    elif not _may_write_idempotently(ctx):
        raise ClusterAuthorizationFailedError("Cluster authorization failed.")
    if transactional_id is None:
        new_id = producer_id_manager(ctx.server).generate_producer_id()
        return InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=new_id, producer_epoch=0)
    if transactional_id == "":
        raise InvalidRequestError("The transactional id must not be empty")
    coordinator = ctx.server.transaction_coordinator
    if coordinator is None:
        raise CoordinatorNotAvailableError("This broker has no transaction coordinator.")

    def respond(error_code: int, new_id: int, new_epoch: int) -> None:
        ctx.respond(InitProducerIdResponse(throttle_time_ms=0, error_code=error_code, producer_id=new_id,
                                           producer_epoch=new_epoch))

    coordinator.handle_init_producer_id(transactional_id, request.transaction_timeout_ms, producer_id,
                                        producer_epoch, respond)
    return DEFERRED
