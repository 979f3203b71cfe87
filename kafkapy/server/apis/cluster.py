"""DescribeCluster (60) v0-1, ElectLeaders (43) v0-2, ListPartitionReassignments (46) v0,
AlterPartitionReassignments (45) v0.

DescribeCluster answers from the MetadataCache (alive brokers on the request's listener, cluster id,
controller id; cluster_authorized_operations is the principal's real bit set, 0 without DESCRIBE on the cluster). ElectLeaders goes to the
Controller (ELECTION_NOT_NEEDED when the wanted leader already leads; with a null partition list every
partition is tried and, as Kafka does, those that needed no election are left out of the answer).
Reassignments: kafkapy's controller does not move replicas yet. Listing reports partitions the store
records as being reassigned (adding/removing replicas); altering validates the target as Kafka does and
succeeds when it is the current assignment (always the case for a valid target on a single broker), answers
NO_REASSIGNMENT_IN_PROGRESS to a cancel, and INVALID_REQUEST to a real move.
Thread-safety: stateless.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import (
    ElectionNotNeededError,
    InvalidRequestError,
    KafkaError,
    MismatchedEndpointTypeError,
    NotControllerError,
    UnsupportedEndpointTypeError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_events import ElectionType
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    DescribeClusterRequest,
    DescribeClusterResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from kafkapy.server.apis.handler_support import (
    cluster_authorized_operations,
    controller_of,
    respond_after_controller,
)
from kafkapy.server.apis.registry import Deferred, api
from kafkapy.server.purgatory.delayed_controller_operation import controller_result

if TYPE_CHECKING:
    from kafkapy.controller.controller import Controller
    from kafkapy.controller.metadata_store import TopicReplicaAssignment
    from kafkapy.server.request_context import RequestContext

AUTHORIZED_OPERATIONS_OMITTED = -2147483648
ENDPOINT_TYPE_BROKER = 1
ENDPOINT_TYPE_NAMES = {1: "BROKER", 2: "CONTROLLER"}


def _active_controller(ctx: RequestContext) -> Controller:
    controller = controller_of(ctx)
    if not controller.is_active:
        raise NotControllerError(None)
    return controller


# -- DescribeCluster ---------------------------------------------------------------------------------------------

@api(ApiKey.DESCRIBE_CLUSTER, 0, 1)
def handle_describe_cluster(ctx: RequestContext, request: DescribeClusterRequest) -> DescribeClusterResponse:
    version = ctx.api_version
    endpoint_type = request.endpoint_type if version >= 1 else ENDPOINT_TYPE_BROKER
    if endpoint_type != ENDPOINT_TYPE_BROKER:
        if endpoint_type not in ENDPOINT_TYPE_NAMES:
            code = InvalidRequestError.code if version == 0 else UnsupportedEndpointTypeError.code
            message = f"Unsupported endpoint type {endpoint_type}"
        else:
            code = InvalidRequestError.code if version == 0 else MismatchedEndpointTypeError.code
            message = (f"The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
                       f"{ENDPOINT_TYPE_NAMES[endpoint_type]}")
        return DescribeClusterResponse(throttle_time_ms=0, error_code=code, error_message=message,
                                       endpoint_type=endpoint_type, cluster_id="", brokers=[])
    cache = ctx.server.metadata_cache
    snapshot = cache.snapshot()
    nodes = cache.get_alive_broker_nodes(ctx.request.listener_name)
    controller_id = snapshot.controller_id if snapshot.controller_id is not None else -1
    if controller_id not in {n.id for n in nodes}:
        controller_id = -1  # Kafka hides a controller clients could not reach
    brokers = [DescribeClusterResponse.DescribeClusterBroker(broker_id=n.id, host=n.host, port=n.port, rack=n.rack)
               for n in nodes]
    operations = cluster_authorized_operations(ctx) if request.include_cluster_authorized_operations \
        else AUTHORIZED_OPERATIONS_OMITTED
    return DescribeClusterResponse(throttle_time_ms=0, error_code=0, error_message=None,
                                   endpoint_type=ENDPOINT_TYPE_BROKER, cluster_id=snapshot.cluster_id or "",
                                   controller_id=controller_id, brokers=brokers,
                                   cluster_authorized_operations=operations)


# -- ElectLeaders ------------------------------------------------------------------------------------------------

ELResp = ElectLeadersResponse


def _election_response(results: dict[TopicPartition, tuple[int, str | None]], error_code: int = 0
                       ) -> ElectLeadersResponse:
    by_topic: dict[str, list[Any]] = defaultdict(list)
    for tp, (code, message) in sorted(results.items()):
        by_topic[tp.topic].append(ELResp.PartitionResult(partition_id=tp.partition, error_code=code,
                                                          error_message=message))
    return ELResp(throttle_time_ms=0, error_code=error_code,
                  replica_election_results=[ELResp.ReplicaElectionResult(topic=t, partition_result=p)
                                            for t, p in by_topic.items()])


def _outcome(error: KafkaError | None) -> tuple[int, str | None]:
    return (0, None) if error is None else (error.code, error.message)


def _requested_partitions(request: ElectLeadersRequest) -> list[TopicPartition] | None:
    if request.topic_partitions is None:
        return None
    return list(dict.fromkeys(TopicPartition(t.topic, p) for t in request.topic_partitions for p in t.partitions))


def _elect_leaders_error(request: ElectLeadersRequest, version: int, code: int) -> ElectLeadersResponse:
    return _election_response({tp: (code, None) for tp in _requested_partitions(request) or []},
                              code if version >= 1 else 0)


@api(ApiKey.ELECT_LEADERS, 0, 2, error_response=_elect_leaders_error)
def handle_elect_leaders(ctx: RequestContext, request: ElectLeadersRequest) -> ElectLeadersResponse | Deferred:
    ctx.require(AclOperation.ALTER, ResourceType.CLUSTER)
    partitions = _requested_partitions(request)
    election_type = request.election_type if ctx.api_version >= 1 else ElectionType.PREFERRED
    if election_type not in (ElectionType.PREFERRED, ElectionType.UNCLEAN):
        raise InvalidRequestError(f"Unknown election type {election_type}")
    try:
        future = _active_controller(ctx).elect_leaders(partitions, election_type)
    except KafkaError as e:
        return _failed_election(ctx, partitions, e)

    def build() -> ElectLeadersResponse:
        try:
            results = controller_result(future, "elect leaders")
        except KafkaError as e:
            return _failed_election(ctx, partitions, e)
        if partitions is None:
            results = {tp: e for tp, e in results.items() if not isinstance(e, ElectionNotNeededError)}
        return _election_response({tp: _outcome(e) for tp, e in results.items()})

    return respond_after_controller(ctx, request, [future], request.timeout_ms, build)


def _failed_election(ctx: RequestContext, partitions: Any, e: KafkaError) -> ElectLeadersResponse:
    return _election_response({tp: _outcome(e) for tp in partitions or []}, e.code if ctx.api_version >= 1 else 0)


# -- partition reassignments -------------------------------------------------------------------------------------

def _stored_topics(controller: Controller, names: list[str] | None) -> dict[str, TopicReplicaAssignment]:
    return controller.store.get_topics(names)


@api(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, 0)
def handle_list_partition_reassignments(ctx: RequestContext, request: ListPartitionReassignmentsRequest
                                        ) -> ListPartitionReassignmentsResponse:
    ctx.require(AclOperation.DESCRIBE, ResourceType.CLUSTER)
    Resp = ListPartitionReassignmentsResponse
    controller = _active_controller(ctx)
    wanted = None if request.topics is None else {t.name: set(t.partition_indexes) for t in request.topics}
    topics = []
    for name, stored in sorted(_stored_topics(controller, None if wanted is None else list(wanted)).items()):
        partitions = []
        for p in sorted(set(stored.adding_replicas) | set(stored.removing_replicas)):
            if wanted is not None and p not in wanted.get(name, ()):
                continue
            partitions.append(Resp.OngoingPartitionReassignment(
                partition_index=p, replicas=list(stored.assignment.get(p, ())),
                adding_replicas=list(stored.adding_replicas.get(p, ())),
                removing_replicas=list(stored.removing_replicas.get(p, ()))))
        if partitions:
            topics.append(Resp.OngoingTopicReassignment(name=name, partitions=partitions))
    return Resp(throttle_time_ms=0, error_code=0, error_message=None, topics=topics)


def _seq(values: list[int]) -> str:
    return "List(" + ", ".join(map(str, values)) + ")"


def _alter_reassignments_error(request: AlterPartitionReassignmentsRequest, version: int, code: int) -> AlterPartitionReassignmentsResponse:
    """Kafka's getErrorResponse: the error at the top and on every requested partition."""
    R = AlterPartitionReassignmentsResponse
    return R(throttle_time_ms=0, error_code=code, error_message=None, responses=[
        R.ReassignableTopicResponse(name=t.name, partitions=[
            R.ReassignablePartitionResponse(partition_index=p.partition_index, error_code=code, error_message=None)
            for p in t.partitions]) for t in request.topics])


@api(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, 0, error_response=_alter_reassignments_error)
def handle_alter_partition_reassignments(ctx: RequestContext, request: AlterPartitionReassignmentsRequest) -> AlterPartitionReassignmentsResponse | Deferred:
    """The controller validates each target (Kafka's validateReplicas) and starts or cancels the moves."""
    ctx.require(AclOperation.ALTER, ResourceType.CLUSTER)
    Resp = AlterPartitionReassignmentsResponse
    wanted = [(TopicPartition(t.name, p.partition_index), p.replicas) for t in request.topics for p in t.partitions]
    future = _active_controller(ctx).alter_partition_reassignments(wanted)

    def build() -> AlterPartitionReassignmentsResponse:
        results = iter(controller_result(future, "reassign partitions"))
        responses = []
        for t in request.topics:
            partitions = []
            for p in t.partitions:
                error = next(results)
                partitions.append(Resp.ReassignablePartitionResponse(
                    partition_index=p.partition_index, error_code=error.code if error else 0,
                    error_message=error.message if error else None))
            responses.append(Resp.ReassignableTopicResponse(name=t.name, partitions=partitions))
        return Resp(throttle_time_ms=0, error_code=0, error_message=None, responses=responses)

    return respond_after_controller(ctx, request, [future], request.timeout_ms, build)
