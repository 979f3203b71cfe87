"""UpdateMetadata (controller -> every broker, cluster mode): the broker's MetadataCache takes the controller's
view of brokers and partitions. A request from an older controller epoch is refused with
STALE_CONTROLLER_EPOCH (a zombie controller), one addressed to an older registration of this broker with
STALE_BROKER_EPOCH. Layouts: brokers v0 host/port, v1+ endpoints (v3+ with listener names), v2+ racks;
partition states ungrouped (v0-4) or by topic (v5+, v7+ with topic ids).
Thread-safety: the cache swaps immutable snapshots.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kafkapy.cluster.broker import Broker, EndPoint
from kafkapy.cluster.leader_and_isr import UpdateMetadataPartitionState
from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode, StaleBrokerEpochError, StaleControllerEpochError
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages.update_metadata import UpdateMetadataRequest, UpdateMetadataResponse
from kafkapy.server.apis.registry import api

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

SECURITY_PROTOCOL_NAMES = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
ZERO_UUID = uuid.UUID(int=0)


# -- UpdateMetadata ------------------------------------------------------------------------------------------

def _brokers(request: UpdateMetadataRequest, version: int) -> list[Broker]:
    out = []
    for b in request.live_brokers:
        if version == 0:
            endpoints: tuple[EndPoint, ...] = (EndPoint("PLAINTEXT", b.v0_host, b.v0_port, "PLAINTEXT"),)
        else:
            endpoints = tuple(EndPoint(
                e.listener or SECURITY_PROTOCOL_NAMES.get(e.security_protocol, "PLAINTEXT"), e.host, e.port,
                SECURITY_PROTOCOL_NAMES.get(e.security_protocol, "PLAINTEXT")) for e in b.endpoints)
        out.append(Broker(b.id, endpoints, b.rack))
    return out


def _partition_states(request: UpdateMetadataRequest, version: int) -> list[UpdateMetadataPartitionState]:
    pairs = [(p.topic_name, p) for p in request.ungrouped_partition_states] if version < 5 else \
        [(t.topic_name, p) for t in request.topic_states for p in t.partition_states]
    return [UpdateMetadataPartitionState(topic, p.partition_index, p.controller_epoch, p.leader, p.leader_epoch,
                                         tuple(p.isr), p.zk_version, tuple(p.replicas), tuple(p.offline_replicas))
            for topic, p in pairs]


@api(ApiKey.UPDATE_METADATA, 0, 8)
def handle_update_metadata(ctx: RequestContext, request: UpdateMetadataRequest) -> UpdateMetadataResponse:
    ctx.require(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
    cache = ctx.server.metadata_cache
    known_epoch = cache.snapshot().controller_epoch
    if request.controller_epoch < known_epoch:
        raise StaleControllerEpochError(f"Received UpdateMetadata from controller {request.controller_id} with "
                                        f"epoch {request.controller_epoch}, older than {known_epoch}.")
    broker_epoch = int(ctx.server.broker_epoch)
    if request.broker_epoch != -1 and request.broker_epoch < broker_epoch:
        raise StaleBrokerEpochError(f"Received UpdateMetadata for broker epoch {request.broker_epoch}, older "
                                    f"than the current {broker_epoch}.")
    version = ctx.api_version
    topic_ids = {t.topic_name: t.topic_id for t in request.topic_states if t.topic_id != ZERO_UUID}
    cache.update_metadata(request.controller_id, request.controller_epoch, _brokers(request, version),
                          _partition_states(request, version), topic_ids)
    return UpdateMetadataResponse(error_code=ErrorCode.NONE)
