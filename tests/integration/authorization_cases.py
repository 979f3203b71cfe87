"""The authorization matrix's table (tests/integration/test_authorization_matrix.py runs it), after Kafka's
AuthorizerIntegrationTest: per API key and version family, how to build the request from the generated message
classes, what of the response authorization decides (error codes per resource, or the data that must stay hidden),
and rows of (exactly these ACLs for the principal, the expected observation). Row one is always the principal with
no ACL. `Env` is the module's broker as the cases see it (connections per user, bob's ACLs, the setup's ids).
"""


from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafkapy.client.client_security import ClientSecurity
from kafkapy.client.connection import BrokerConnection
from kafkapy.common.acl import (
    CLUSTER_NAME,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafkapy.common.errors import ErrorCode as E
from kafkapy.protocol import messages as M
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.types import ZERO_UUID
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" '
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")
OMITTED = -2147483648
TOPIC, TXN_TOPIC, DOOMED_TOPIC = "t", "tp", "dtv"
SETUP_TOPICS = (TOPIC, TXN_TOPIC, "dtv0", "dtv5", "dt6", "dti")
GROUP, DELETE_OFFSETS_GROUP, TXN_GROUP = "g", "god", "gt"
TXN = "tx"

Acl = tuple[ResourceType, str, AclOperation]
T, G, C, X = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID
U = ResourceType.USER
CAROL = "User:carol"  # owns a delegation token admin creates; has no connection of her own
A = AclOperation


def op_bits(*ops: AclOperation) -> int:
    return sum(1 << int(o) for o in ops)


@dataclass
class Env:
    server: Any
    port: int
    conns: dict[str, BrokerConnection] = field(default_factory=dict)
    producer_id: int = -1
    version: int = 0  # the version the request being built is sent at (fields some versions lack)
    case_label: str = ""
    topic_id: Any = None
    doomed_id: Any = None
    carol_hmac: bytes = b""

    def connection(self, user: str) -> BrokerConnection:
        conn = self.conns.get(user)
        if conn is None or not conn.is_ready():
            sec = ClientSecurity({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                                  "sasl.username": user, "sasl.password": USERS[user]})
            conn = BrokerConnection(-1, "127.0.0.1", self.port, client_id=f"matrix-{user}", request_timeout_ms=15000,
                                    security=sec)
            conn.connect(10000)
            self.conns[user] = conn
        return conn

    def call(self, user: str, request: Any, version: int) -> Any:
        return self.connection(user).request(request, version, timeout_ms=15000)

    def grant(self, acls: list[Acl]) -> None:
        """bob's ACLs become exactly `acls`."""
        authorizer = self.server.services.authorizer
        authorizer.delete_acls([AclBindingFilter(principal="User:bob")])
        authorizer.create_acls([AclBinding(_pattern(rt, name),
                                           AccessControlEntry("User:bob", "*", op, AclPermissionType.ALLOW))
                                for rt, name, op in acls])


def _pattern(resource_type: ResourceType, name: str) -> ResourcePattern:
    """`name*` is a PREFIXED pattern (one ACL for the per-version resources of a family), else LITERAL."""
    if name.endswith("*") and len(name) > 1:
        return ResourcePattern(resource_type, name[:-1], PatternType.PREFIXED)
    return ResourcePattern(resource_type, name, PatternType.LITERAL)


@dataclass(frozen=True)
class Case:
    """One version family of one API: `build(env)` -> request, `observe(response)` -> what authorization decides,
    rows: (ACLs, expected observation); the first row is alice (no ACLs), the others bob with exactly those ACLs."""
    api: ApiKey
    family: tuple[int, int]
    version: int
    build: Callable[[Env], Any]
    observe: Callable[[Any], Any]
    rows: tuple[tuple[tuple[Acl, ...], Any], ...]
    label: str = ""

    @property
    def id(self) -> str:
        return f"{self.api.name}-v{self.family[0]}-{self.family[1]}" + (f"-{self.label}" if self.label else "")


@dataclass(frozen=True)
class Exempt:
    """An API Kafka never authorizes (authentication itself), with the reason."""
    api: ApiKey
    family: tuple[int, int]
    reason: str


# -- request builders and observers -------------------------------------------------------------------------------

def build_batch(env: Env, transactional: bool = False, producer_id: int = -1) -> bytes:
    b = MemoryRecordsBuilder(producer_id=producer_id, producer_epoch=0 if producer_id >= 0 else -1,
                             base_sequence=0 if producer_id >= 0 else -1, is_transactional=transactional)
    b.append(int(time.time() * 1000), b"k", b"v")
    return b.build()


def _produce(topic: str, transactional_id: str | None = None, transactional: bool = False, producer_id: int = -1
             ) -> Callable[[Env], Any]:
    R = M.ProduceRequest
    return lambda env: R(transactional_id=transactional_id, acks=-1, timeout_ms=10000, topic_data=[
        R.TopicProduceData(name=topic, partition_data=[R.PartitionProduceData(
            index=0, records=build_batch(env, transactional, producer_id))])])


def partition_codes(resp: Any, topics_attr: str, parts_attr: str, code_attr: str = "error_code") -> tuple:
    return tuple(getattr(p, code_attr) for t in getattr(resp, topics_attr) for p in getattr(t, parts_attr))


def produce_codes(resp: Any) -> tuple:
    return partition_codes(resp, "responses", "partition_responses")


def _fetch(env: Env) -> Any:
    R = M.FetchRequest
    follower = env.version <= 14 and env.case_label == "follower"  # v15+ carry the replica in replica_state
    return R(replica_id=1 if follower else -1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0, session_id=0,
             session_epoch=-1, topics=[R.FetchTopic(
                 topic=TOPIC if env.version < 13 else "", topic_id=env.topic_id if env.version >= 13 else ZERO_UUID,
                 partitions=[R.FetchPartition(
                 partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])], forgotten_topics_data=[], rack_id="")


def fetch_observe(resp: Any) -> tuple:
    return tuple((p.error_code, len(p.records or b"") > 0) for t in resp.responses for p in t.partitions)


def metadata_request(names: list[str] | None, cluster_ops: bool = False, topic_ops: bool = False) -> Callable[[Env], Any]:
    R = M.MetadataRequest
    def build(env: Env) -> Any:
        v = env.version
        return R(topics=[] if names is None and v == 0 else None if names is None else [
            R.MetadataRequestTopic(name=n) for n in names], allow_auto_topic_creation=v < 4,
            include_cluster_authorized_operations=cluster_ops and 8 <= v <= 10,
            include_topic_authorized_operations=topic_ops and v >= 8)
    return build


def metadata_named(resp: Any) -> tuple:
    return tuple((t.name, t.error_code, t.topic_id == ZERO_UUID, t.topic_authorized_operations) for t in resp.topics)


def metadata_all(resp: Any) -> tuple:
    return tuple(sorted(t.name for t in resp.topics if not t.name.startswith("__")))


def _by_id(env: Env) -> Any:
    R = M.MetadataRequest
    return R(topics=[R.MetadataRequestTopic(name=None, topic_id=env.topic_id)], allow_auto_topic_creation=False)


def metadata_by_id(resp: Any) -> tuple:
    return tuple((t.name, t.error_code) for t in resp.topics)


def _list_offsets(env: Env) -> Any:
    R = M.ListOffsetsRequest
    return R(replica_id=-1, isolation_level=0, topics=[R.ListOffsetsTopic(name=TOPIC, partitions=[
        R.ListOffsetsPartition(partition_index=0, timestamp=-1)])])


def offset_commit_request(group: str) -> Callable[[Env], Any]:
    R = M.OffsetCommitRequest
    return lambda env: R(group_id=group, generation_id_or_member_epoch=-1, member_id="", topics=[
        R.OffsetCommitRequestTopic(name=TOPIC, partitions=[R.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=1, committed_metadata="m")])])


def _offset_fetch_v7(topics: list[str] | None) -> Callable[[Env], Any]:
    R = M.OffsetFetchRequest
    return lambda env: R(group_id=GROUP, topics=None if topics is None else [
        R.OffsetFetchRequestTopic(name=n, partition_indexes=[0]) for n in topics])


def offset_fetch_v7(resp: Any) -> tuple:
    return resp.error_code, tuple((t.name, p.committed_offset, p.error_code) for t in resp.topics
                                  for p in t.partitions)


def _offset_fetch_v8(topics: list[str] | None) -> Callable[[Env], Any]:
    R = M.OffsetFetchRequest
    return lambda env: R(groups=[R.OffsetFetchRequestGroup(group_id=GROUP, topics=None if topics is None else [
        R.OffsetFetchRequestTopics(name=n, partition_indexes=[0]) for n in topics])])


def offset_fetch_v8(resp: Any) -> tuple:
    return tuple((g.error_code, tuple((t.name, p.committed_offset, p.error_code) for t in g.topics
                                      for p in t.partitions)) for g in resp.groups)


def _find_coordinator_v3(env: Env) -> Any:
    return M.FindCoordinatorRequest(key=GROUP, key_type=0)


def _find_coordinator_v4(env: Env) -> Any:
    return M.FindCoordinatorRequest(key_type=0, coordinator_keys=[GROUP])


def top_code(resp: Any) -> int:
    return resp.error_code


def _join(env: Env) -> Any:
    R = M.JoinGroupRequest
    return R(group_id=f"gj{env.version}", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
             protocol_type="consumer", protocols=[R.JoinGroupRequestProtocol(name="range", metadata=b"")])


def _describe_groups(env: Env) -> Any:
    return M.DescribeGroupsRequest(groups=[GROUP], include_authorized_operations=env.version >= 3)


def describe_groups(resp: Any) -> tuple:
    return tuple((g.error_code, g.group_state, g.authorized_operations) for g in resp.groups)


def list_groups(resp: Any) -> tuple:
    return resp.error_code, tuple(sorted(g.group_id for g in resp.groups))


def _create_topics(env: Env) -> Any:
    R = M.CreateTopicsRequest
    v0 = env.version == 0
    return R(topics=[R.CreatableTopic(name="ct0" if v0 else "ct", num_partitions=1, replication_factor=1,
                                      assignments=[], configs=[])], timeout_ms=10000, validate_only=not v0)


def names_codes(resp: Any, attr: str = "topics") -> tuple:
    return tuple((t.name, t.error_code) for t in getattr(resp, attr))


def create_topics_v5(resp: Any) -> tuple:
    return tuple((t.name, t.error_code, t.topic_config_error_code, t.num_partitions, int(any(
        c.name == "cleanup.policy" and c.value == "delete" for c in t.configs))) for t in resp.topics)


def _delete_topics(env: Env) -> Any:
    return M.DeleteTopicsRequest(topic_names=[f"{DOOMED_TOPIC}{env.version}"], timeout_ms=10000)


def _delete_topics_v6(env: Env) -> Any:
    R = M.DeleteTopicsRequest
    return R(topics=[R.DeleteTopicState(name="dt6")], timeout_ms=10000)


def _delete_topics_by_id(env: Env) -> Any:
    R = M.DeleteTopicsRequest
    return R(topics=[R.DeleteTopicState(name=None, topic_id=env.doomed_id)], timeout_ms=10000)


def _delete_records(env: Env) -> Any:
    R = M.DeleteRecordsRequest
    return R(topics=[R.DeleteRecordsTopic(name=TOPIC, partitions=[R.DeleteRecordsPartition(
        partition_index=0, offset=0)])], timeout_ms=10000)


def init_pid_request(transactional_id: str | None) -> Callable[[Env], Any]:
    return lambda env: M.InitProducerIdRequest(transactional_id=transactional_id, transaction_timeout_ms=60000,
                                               producer_id=-1, producer_epoch=-1)


def _epoch_end(env: Env) -> Any:
    R = M.OffsetForLeaderEpochRequest
    return R(replica_id=-1, topics=[R.OffsetForLeaderTopic(topic=TOPIC, partitions=[R.OffsetForLeaderPartition(
        partition=0, current_leader_epoch=-1, leader_epoch=0)])])


def epoch_end(resp: Any) -> tuple:
    return tuple((p.error_code, p.end_offset) for t in resp.topics for p in t.partitions)


def _add_partitions_v3(env: Env) -> Any:
    R = M.AddPartitionsToTxnRequest
    return R(v3_and_below_transactional_id=TXN, v3_and_below_producer_id=999999, v3_and_below_producer_epoch=0,
             v3_and_below_topics=[R.AddPartitionsToTxnTopic(name=TOPIC, partitions=[0])])


def add_partitions_v3(resp: Any) -> tuple:
    return partition_codes(resp, "results_by_topic_v3_and_below", "results_by_partition", "partition_error_code")


def _add_partitions_v4(verify_only: bool) -> Callable[[Env], Any]:
    R = M.AddPartitionsToTxnRequest
    return lambda env: R(transactions=[R.AddPartitionsToTxnTransaction(
        transactional_id=TXN, producer_id=999999, producer_epoch=0, verify_only=verify_only,
        topics=[R.AddPartitionsToTxnTopic(name=TOPIC, partitions=[0])])])


def add_partitions_v4(resp: Any) -> tuple:
    return resp.error_code, tuple(p.partition_error_code for r in resp.results_by_transaction
                                  for t in r.topic_results for p in t.results_by_partition)


def _add_offsets(env: Env) -> Any:
    return M.AddOffsetsToTxnRequest(transactional_id=TXN, producer_id=999999, producer_epoch=0, group_id=GROUP)


def _end_txn(env: Env) -> Any:
    return M.EndTxnRequest(transactional_id=TXN, producer_id=999999, producer_epoch=0, committed=False)


def markers_request(env: Env) -> Any:
    R = M.WriteTxnMarkersRequest
    return R(markers=[R.WritableTxnMarker(producer_id=999999, producer_epoch=0, transaction_result=False,
                                          topics=[R.WritableTxnMarkerTopic(name="nosuch", partition_indexes=[0])],
                                          coordinator_epoch=0)])


def markers(resp: Any) -> tuple:
    return tuple(p.error_code for m in resp.markers for t in m.topics for p in t.partitions)


def _txn_offset_commit(env: Env) -> Any:
    R = M.TxnOffsetCommitRequest
    return R(transactional_id=TXN, group_id=TXN_GROUP, producer_id=999999, producer_epoch=0, generation_id=-1,
             member_id="", topics=[R.TxnOffsetCommitRequestTopic(name=TOPIC, partitions=[
                 R.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=1)])])


def txn_offset_commit(resp: Any) -> tuple:
    return partition_codes(resp, "topics", "partitions")


def _describe_acls(env: Env) -> Any:
    return M.DescribeAclsRequest(resource_type_filter=1, resource_name_filter=None,
                                 pattern_type_filter=1 if env.version >= 1 else 3,
                                 principal_filter="User:carol", host_filter=None, operation=1, permission_type=1)


def _create_acls(env: Env) -> Any:
    R = M.CreateAclsRequest
    return R(creations=[R.AclCreation(resource_type=2, resource_name="zz", resource_pattern_type=3,
                                      principal="User:carol", host="*", operation=3, permission_type=3)])


def _delete_acls(env: Env) -> Any:
    R = M.DeleteAclsRequest
    return R(filters=[R.DeleteAclsFilter(resource_type_filter=2, resource_name_filter="zz", pattern_type_filter=3,
                                         principal_filter="User:carol", host_filter=None, operation=1,
                                         permission_type=1)])


def _describe_configs(resource_type: int, name: str) -> Callable[[Env], Any]:
    R = M.DescribeConfigsRequest
    return lambda env: R(resources=[R.DescribeConfigsResource(resource_type=resource_type, resource_name=name,
                                                              configuration_keys=["cleanup.policy"])])


def results_codes(resp: Any, attr: str = "results") -> tuple:
    return tuple(r.error_code for r in getattr(resp, attr))


def _alter_configs(env: Env) -> Any:
    R = M.AlterConfigsRequest
    return R(resources=[R.AlterConfigsResource(resource_type=2, resource_name=TOPIC, configs=[
        R.AlterableConfig(name="retention.ms", value="86400000")])], validate_only=True)


def responses_codes(resp: Any) -> tuple:
    return tuple(r.error_code for r in resp.responses)


def _incremental_alter(env: Env) -> Any:
    R = M.IncrementalAlterConfigsRequest
    return R(resources=[R.AlterConfigsResource(resource_type=2, resource_name=TOPIC, configs=[
        R.AlterableConfig(name="retention.ms", config_operation=0, value="86400000")])], validate_only=True)


def _describe_log_dirs(env: Env) -> Any:
    return M.DescribeLogDirsRequest(topics=None)


def describe_log_dirs(resp: Any) -> tuple:
    return resp.error_code, len(resp.results) > 0


def _create_partitions(env: Env) -> Any:
    R = M.CreatePartitionsRequest
    return R(topics=[R.CreatePartitionsTopic(name=TOPIC, count=2, assignments=None)], timeout_ms=10000,
             validate_only=True)


def _delete_groups(env: Env) -> Any:
    return M.DeleteGroupsRequest(groups_names=["gd"])


def group_results(resp: Any) -> tuple:
    return tuple((r.group_id, r.error_code) for r in resp.results)


def _elect(env: Env) -> Any:
    R = M.ElectLeadersRequest
    return R(election_type=0, topic_partitions=[R.TopicPartitions(topic=TOPIC, partitions=[0])], timeout_ms=10000)


def elect(resp: Any) -> tuple:
    return resp.error_code, tuple(p.error_code for t in resp.replica_election_results for p in t.partition_result)


def _alter_reassignments(env: Env) -> Any:
    R = M.AlterPartitionReassignmentsRequest
    return R(timeout_ms=10000, topics=[R.ReassignableTopic(name=TOPIC, partitions=[R.ReassignablePartition(
        partition_index=0, replicas=None)])])


def alter_reassignments(resp: Any) -> tuple:
    return resp.error_code, tuple(p.error_code for t in resp.responses for p in t.partitions)


def _list_reassignments(env: Env) -> Any:
    return M.ListPartitionReassignmentsRequest(timeout_ms=10000, topics=None)


def _offset_delete(env: Env) -> Any:
    R = M.OffsetDeleteRequest
    return R(group_id=DELETE_OFFSETS_GROUP, topics=[R.OffsetDeleteRequestTopic(name=TOPIC, partitions=[
        R.OffsetDeleteRequestPartition(partition_index=0)])])


def offset_delete(resp: Any) -> tuple:
    return resp.error_code, partition_codes(resp, "topics", "partitions")


def _describe_quotas(env: Env) -> Any:
    return M.DescribeClientQuotasRequest(components=[], strict=False)


def _alter_quotas(env: Env) -> Any:
    R = M.AlterClientQuotasRequest
    return R(entries=[R.EntryData(entity=[R.EntityData(entity_type="user", entity_name="carol")], ops=[
        R.OpData(key="producer_byte_rate", value=1024.0, remove=False)])], validate_only=True)


def alter_quotas(resp: Any) -> tuple:
    return tuple((e.error_code, e.error_message, tuple((d.entity_type, d.entity_name) for d in e.entity))
                 for e in resp.entries)


def _describe_scram(env: Env) -> Any:
    return M.DescribeUserScramCredentialsRequest(users=None)


def _alter_scram(env: Env) -> Any:
    R = M.AlterUserScramCredentialsRequest
    return R(deletions=[R.ScramCredentialDeletion(name="nobody", mechanism=1)], upsertions=[])


def alter_scram(resp: Any) -> tuple:
    return tuple((r.user, r.error_code) for r in resp.results)


def _describe_cluster(env: Env) -> Any:
    return M.DescribeClusterRequest(include_cluster_authorized_operations=True)


def describe_cluster(resp: Any) -> tuple:
    return resp.error_code, resp.cluster_authorized_operations


def _describe_producers(env: Env) -> Any:
    R = M.DescribeProducersRequest
    return R(topics=[R.TopicRequest(name=TOPIC, partition_indexes=[0])])


def describe_producers(env_pid: list[int]) -> Callable[[Any], Any]:
    return lambda resp: tuple((p.error_code, tuple(s.producer_id == env_pid[0] for s in p.active_producers))
                              for t in resp.topics for p in t.partitions)


def _describe_txns(env: Env) -> Any:
    return M.DescribeTransactionsRequest(transactional_ids=[TXN])


def describe_txns(resp: Any) -> tuple:
    return tuple((s.transactional_id, s.error_code) for s in resp.transaction_states)


def _list_txns(env: Env) -> Any:
    return M.ListTransactionsRequest(state_filters=[], producer_id_filters=[])


def list_txns(resp: Any) -> tuple:
    return resp.error_code, tuple(sorted(s.transactional_id for s in resp.transaction_states))


# Inter-broker requests from a stale controller epoch (0) and an unknown broker: granted, they are refused for that,
# never for authorization, and change nothing.
def _leader_and_isr(env: Env) -> Any:
    return M.LeaderAndIsrRequest(controller_id=0, controller_epoch=0, broker_epoch=-1, topic_states=[],
                                 live_leaders=[])


def _stop_replica(env: Env) -> Any:
    return M.StopReplicaRequest(controller_id=0, controller_epoch=0, broker_epoch=-1, topic_states=[])


def _update_metadata(env: Env) -> Any:
    return M.UpdateMetadataRequest(controller_id=0, controller_epoch=0, broker_epoch=-1, topic_states=[],
                                   live_brokers=[])


def _controlled_shutdown(env: Env) -> Any:
    return M.ControlledShutdownRequest(broker_id=99, broker_epoch=1)


def _alter_partition(env: Env) -> Any:
    return M.AlterPartitionRequest(broker_id=99, broker_epoch=1, topics=[])


def create_token_request(env: Env) -> Any:
    R = M.CreateDelegationTokenRequest
    if env.version < 3:
        return R(renewers=[], max_lifetime_ms=-1)
    return R(owner_principal_type="User", owner_principal_name="carol", renewers=[], max_lifetime_ms=-1)


def _describe_tokens(env: Env) -> Any:
    R = M.DescribeDelegationTokenRequest
    return R(owners=[R.DescribeDelegationTokenOwner(principal_type="User", principal_name="carol")])


def described_tokens(resp: Any) -> tuple:
    owners = {f"{t.principal_type}:{t.principal_name}" for t in resp.tokens}
    return resp.error_code, tuple(sorted(owners))


PIDS: list[int] = [-1]  # the producer id admin wrote to TOPIC with (known once the broker is up)

CASES: tuple[Case, ...] = (
    Case(ApiKey.PRODUCE, (0, 12), 9, _produce(TXN_TOPIC), produce_codes, (
        ((), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((T, TXN_TOPIC, A.WRITE),), (0,)))),
    # A transactional batch without a transactional id can never be authorized (issue 15 finding 3).
    Case(ApiKey.PRODUCE, (0, 12), 9, _produce(TXN_TOPIC, None, True, 777), produce_codes, (
        ((), (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,)),
        (((T, TXN_TOPIC, A.WRITE),), (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,))), label="txn-null-id"),
    Case(ApiKey.PRODUCE, (3, 12), 9, _produce(TXN_TOPIC, "tx-other", True, 778), produce_codes, (
        ((), (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,)),
        (((T, TXN_TOPIC, A.WRITE),), (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,))), label="txn-foreign-id"),
    Case(ApiKey.FETCH, (4, 17), 12, _fetch, fetch_observe, (  # v13+ name the topic by id
        ((), ((E.TOPIC_AUTHORIZATION_FAILED, False),)),
        (((T, TOPIC, A.READ),), ((0, True),)))),
    # A follower's fetch (replica_id >= 0) needs CLUSTER_ACTION, whatever its topic ACLs; granted, broker 1 is then
    # told it is no replica of the partition.
    Case(ApiKey.FETCH, (4, 14), 12, _fetch, lambda r: tuple(p.error_code for t in r.responses for p in t.partitions), (
        ((), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((T, TOPIC, A.READ),), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((C, CLUSTER_NAME, A.CLUSTER_ACTION),), (E.NOT_LEADER_OR_FOLLOWER,))), label="follower"),
    Case(ApiKey.LIST_OFFSETS, (0, 10), 7, _list_offsets, lambda r: partition_codes(r, "topics", "partitions"), (
        ((), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((T, TOPIC, A.DESCRIBE),), (0,)))),
    Case(ApiKey.METADATA, (0, 7), 7, metadata_request([TOPIC]), metadata_named, (
        ((), ((TOPIC, E.TOPIC_AUTHORIZATION_FAILED, True, OMITTED),)),
        (((T, TOPIC, A.DESCRIBE),), ((TOPIC, 0, True, OMITTED),)))),
    Case(ApiKey.METADATA, (8, 9), 9, metadata_request([TOPIC], topic_ops=True), metadata_named, (
        ((), ((TOPIC, E.TOPIC_AUTHORIZATION_FAILED, True, OMITTED),)),
        (((T, TOPIC, A.DESCRIBE),), ((TOPIC, 0, True, op_bits(A.DESCRIBE)),)))),
    # v10+ carry topic ids: a topic one may not describe answers the zero id (issue 15 finding 7).
    Case(ApiKey.METADATA, (10, 11), 10, metadata_request([TOPIC], topic_ops=True), metadata_named, (
        ((), ((TOPIC, E.TOPIC_AUTHORIZATION_FAILED, True, OMITTED),)),
        (((T, TOPIC, A.READ),), ((TOPIC, 0, False, op_bits(A.READ, A.DESCRIBE)),)))),
    Case(ApiKey.METADATA, (12, 13), 12, _by_id, metadata_by_id, (
        ((), ((None, E.TOPIC_AUTHORIZATION_FAILED),)),
        (((T, TOPIC, A.DESCRIBE),), ((TOPIC, 0),)))),
    Case(ApiKey.METADATA, (0, 13), 12, metadata_request(None), metadata_all, (
        ((), ()),
        (((T, TOPIC, A.DESCRIBE),), (TOPIC,))), label="all-topics"),
    Case(ApiKey.METADATA, (8, 10), 10, metadata_request([], cluster_ops=True), lambda r: r.cluster_authorized_operations, (
        ((), 0),
        (((C, CLUSTER_NAME, A.ALTER),), op_bits(A.ALTER, A.DESCRIBE))), label="cluster-ops"),
    Case(ApiKey.LEADER_AND_ISR, (0, 7), 7, _leader_and_isr, top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.CLUSTER_ACTION),), E.STALE_CONTROLLER_EPOCH))),
    Case(ApiKey.STOP_REPLICA, (0, 4), 4, _stop_replica, top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.CLUSTER_ACTION),), E.STALE_CONTROLLER_EPOCH))),
    Case(ApiKey.UPDATE_METADATA, (0, 8), 8, _update_metadata, top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.CLUSTER_ACTION),), E.STALE_CONTROLLER_EPOCH))),
    Case(ApiKey.CONTROLLED_SHUTDOWN, (1, 3), 3, _controlled_shutdown, top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.CLUSTER_ACTION),), E.BROKER_NOT_AVAILABLE))),
    Case(ApiKey.OFFSET_COMMIT, (0, 9), 8, offset_commit_request(GROUP), lambda r: partition_codes(r, "topics", "partitions"),
         (((), (E.GROUP_AUTHORIZATION_FAILED,)),
          (((G, GROUP, A.READ),), (E.TOPIC_AUTHORIZATION_FAILED,)),
          (((G, GROUP, A.READ), (T, TOPIC, A.READ)), (0,)))),
    # v0-1 have no group-level error field: the refusal is on every requested partition.
    Case(ApiKey.OFFSET_FETCH, (0, 1), 1, _offset_fetch_v7([TOPIC]), offset_fetch_v7, (
        ((), (0, ((TOPIC, -1, E.GROUP_AUTHORIZATION_FAILED),))),
        (((G, GROUP, A.DESCRIBE),), (0, ((TOPIC, -1, E.TOPIC_AUTHORIZATION_FAILED),))),
        (((G, GROUP, A.DESCRIBE), (T, TOPIC, A.DESCRIBE)), (0, ((TOPIC, 1, 0),)))), label="v1"),
    Case(ApiKey.OFFSET_FETCH, (2, 7), 7, _offset_fetch_v7([TOPIC]), offset_fetch_v7, (
        ((), (E.GROUP_AUTHORIZATION_FAILED, ())),
        (((G, GROUP, A.DESCRIBE),), (0, ((TOPIC, -1, E.TOPIC_AUTHORIZATION_FAILED),))),
        (((G, GROUP, A.DESCRIBE), (T, TOPIC, A.DESCRIBE)), (0, ((TOPIC, 1, 0),))))),
    # All offsets of a group: topics one may not describe are left out (issue 15 finding 7).
    Case(ApiKey.OFFSET_FETCH, (2, 7), 7, _offset_fetch_v7(None), offset_fetch_v7, (
        ((), (E.GROUP_AUTHORIZATION_FAILED, ())),
        (((G, GROUP, A.DESCRIBE),), (0, ())),
        (((G, GROUP, A.DESCRIBE), (T, TOPIC, A.DESCRIBE)), (0, ((TOPIC, 1, 0),)))), label="all"),
    Case(ApiKey.OFFSET_FETCH, (8, 9), 9, _offset_fetch_v8([TOPIC]), offset_fetch_v8, (
        ((), ((E.GROUP_AUTHORIZATION_FAILED, ()),)),
        (((G, GROUP, A.DESCRIBE),), ((0, ((TOPIC, -1, E.TOPIC_AUTHORIZATION_FAILED),)),)),
        (((G, GROUP, A.DESCRIBE), (T, TOPIC, A.DESCRIBE)), ((0, ((TOPIC, 1, 0),)),)))),
    Case(ApiKey.OFFSET_FETCH, (8, 9), 9, _offset_fetch_v8(None), offset_fetch_v8, (
        ((), ((E.GROUP_AUTHORIZATION_FAILED, ()),)),
        (((G, GROUP, A.DESCRIBE),), ((0, ()),)),
        (((G, GROUP, A.DESCRIBE), (T, TOPIC, A.DESCRIBE)), ((0, ((TOPIC, 1, 0),)),))), label="all"),
    Case(ApiKey.FIND_COORDINATOR, (0, 3), 3, _find_coordinator_v3, top_code, (
        ((), E.GROUP_AUTHORIZATION_FAILED),
        (((G, GROUP, A.DESCRIBE),), 0))),
    Case(ApiKey.FIND_COORDINATOR, (4, 6), 4, _find_coordinator_v4, lambda r: tuple(c.error_code for c in r.coordinators),
         (((), (E.GROUP_AUTHORIZATION_FAILED,)),
          (((G, GROUP, A.DESCRIBE),), (0,)))),
    # v0-3 join at once (a group per version); v4+ first answer MEMBER_ID_REQUIRED (KIP-394).
    Case(ApiKey.JOIN_GROUP, (0, 3), 1, _join, top_code, (
        ((), E.GROUP_AUTHORIZATION_FAILED),
        (((G, "gj*", A.READ),), 0))),
    Case(ApiKey.JOIN_GROUP, (4, 9), 9, _join, top_code, (
        ((), E.GROUP_AUTHORIZATION_FAILED),
        (((G, "gj*", A.READ),), E.MEMBER_ID_REQUIRED))),
    Case(ApiKey.HEARTBEAT, (0, 4), 4, lambda env: M.HeartbeatRequest(group_id=GROUP, generation_id=1, member_id="m"),
         top_code, (((), E.GROUP_AUTHORIZATION_FAILED), (((G, GROUP, A.READ),), E.UNKNOWN_MEMBER_ID))),
    Case(ApiKey.LEAVE_GROUP, (0, 2), 2, lambda env: M.LeaveGroupRequest(group_id=GROUP, member_id="m"),
         top_code, (((), E.GROUP_AUTHORIZATION_FAILED), (((G, GROUP, A.READ),), E.UNKNOWN_MEMBER_ID))),
    Case(ApiKey.LEAVE_GROUP, (3, 5), 5, lambda env: M.LeaveGroupRequest(group_id=GROUP, members=[
        M.LeaveGroupRequest.MemberIdentity(member_id="m")]),
         lambda r: (r.error_code, tuple(m.error_code for m in r.members)), (
             ((), (E.GROUP_AUTHORIZATION_FAILED, ())),
             (((G, GROUP, A.READ),), (0, (E.UNKNOWN_MEMBER_ID,))))),
    Case(ApiKey.SYNC_GROUP, (0, 5), 3, lambda env: M.SyncGroupRequest(
        group_id=GROUP, generation_id=1, member_id="m", assignments=[],
        protocol_type="consumer" if env.version >= 5 else None, protocol_name="range" if env.version >= 5 else None),
         top_code, (((), E.GROUP_AUTHORIZATION_FAILED), (((G, GROUP, A.READ),), E.UNKNOWN_MEMBER_ID))),
    # Authorized operations are the principal's own (issue 15 finding 8), omitted where the group is refused.
    Case(ApiKey.DESCRIBE_GROUPS, (0, 2), 2, _describe_groups, describe_groups, (
        ((), ((E.GROUP_AUTHORIZATION_FAILED, "", OMITTED),)),
        (((G, GROUP, A.DESCRIBE),), ((0, "Empty", OMITTED),)))),
    Case(ApiKey.DESCRIBE_GROUPS, (3, 6), 5, _describe_groups, describe_groups, (
        ((), ((E.GROUP_AUTHORIZATION_FAILED, "", OMITTED),)),
        (((G, GROUP, A.DESCRIBE),), ((0, "Empty", op_bits(A.DESCRIBE)),)),
        (((G, GROUP, A.READ),), ((0, "Empty", op_bits(A.READ, A.DESCRIBE)),)))),
    Case(ApiKey.LIST_GROUPS, (0, 5), 4, lambda env: M.ListGroupsRequest(states_filter=[]), list_groups, (
        ((), (0, ())),
        (((G, GROUP, A.DESCRIBE),), (0, (GROUP,))))),
    Case(ApiKey.API_VERSIONS, (0, 4), 3, lambda env: M.ApiVersionsRequest(client_software_name="matrix",
                                                                          client_software_version="1"),
         top_code, (((), 0),)),
    Case(ApiKey.CREATE_TOPICS, (0, 0), 0, _create_topics, names_codes, (  # no validate_only: really created
        ((), (("ct0", E.TOPIC_AUTHORIZATION_FAILED),)),
        (((T, "ct0", A.CREATE),), (("ct0", 0),)))),
    Case(ApiKey.CREATE_TOPICS, (1, 4), 4, _create_topics, names_codes, (
        ((), (("ct", E.TOPIC_AUTHORIZATION_FAILED),)),
        (((T, "ct", A.CREATE),), (("ct", 0),)),
        (((C, CLUSTER_NAME, A.CREATE),), (("ct", 0),)))),
    # v5+ also answer the created topic's configs: only with DESCRIBE_CONFIGS on it.
    Case(ApiKey.CREATE_TOPICS, (5, 7), 7, _create_topics, create_topics_v5, (
        ((), (("ct", E.TOPIC_AUTHORIZATION_FAILED, E.TOPIC_AUTHORIZATION_FAILED, -1, 0),)),
        (((T, "ct", A.CREATE),), (("ct", 0, E.TOPIC_AUTHORIZATION_FAILED, -1, 0),)),
        (((T, "ct", A.CREATE), (T, "ct", A.DESCRIBE_CONFIGS)), (("ct", 0, 0, 1, 1),)))),
    Case(ApiKey.DELETE_TOPICS, (0, 5), 5, _delete_topics, lambda r: tuple(t.error_code for t in r.responses), (
        ((), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((T, f"{DOOMED_TOPIC}*", A.DELETE),), (0,)))),  # a topic per version
    Case(ApiKey.DELETE_TOPICS, (6, 6), 6, _delete_topics_v6, lambda r: names_codes(r, "responses"), (
        ((), (("dt6", E.TOPIC_AUTHORIZATION_FAILED),)),
        (((T, "dt6", A.DELETE),), (("dt6", 0),)))),
    # Asked by id, a topic one may not describe keeps its name hidden.
    Case(ApiKey.DELETE_TOPICS, (6, 6), 6, _delete_topics_by_id, lambda r: names_codes(r, "responses"), (
        ((), ((None, E.TOPIC_AUTHORIZATION_FAILED),)),
        (((T, "dti", A.DESCRIBE),), (("dti", E.TOPIC_AUTHORIZATION_FAILED),)),
        (((T, "dti", A.DELETE),), (("dti", 0),))), label="by-id"),
    Case(ApiKey.DELETE_RECORDS, (0, 2), 2, _delete_records, lambda r: partition_codes(r, "topics", "partitions"), (
        ((), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((T, TOPIC, A.DELETE),), (0,)))),
    Case(ApiKey.INIT_PRODUCER_ID, (0, 5), 4, init_pid_request(None), top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.IDEMPOTENT_WRITE),), 0),
        (((T, TOPIC, A.WRITE),), 0))),
    Case(ApiKey.INIT_PRODUCER_ID, (0, 5), 4, init_pid_request("tx-init"), top_code, (
        ((), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        (((X, "tx-init", A.WRITE),), 0)), label="transactional"),
    Case(ApiKey.OFFSET_FOR_LEADER_EPOCH, (0, 4), 4, _epoch_end, epoch_end, (
        ((), ((E.TOPIC_AUTHORIZATION_FAILED, -1),)),
        (((T, TOPIC, A.DESCRIBE),), ((0, 2),)),
        (((C, CLUSTER_NAME, A.CLUSTER_ACTION),), ((0, 2),)))),
    Case(ApiKey.ADD_PARTITIONS_TO_TXN, (0, 3), 3, _add_partitions_v3, add_partitions_v3, (
        ((), (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,)),
        (((X, TXN, A.WRITE),), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((X, TXN, A.WRITE), (T, TOPIC, A.WRITE)), (E.INVALID_PRODUCER_ID_MAPPING,)))),
    # The brokers' batched form: a client may not drive another principal's transaction (issue 15 finding 2).
    Case(ApiKey.ADD_PARTITIONS_TO_TXN, (4, 5), 4, _add_partitions_v4(verify_only=True), add_partitions_v4, (
        ((), (E.CLUSTER_AUTHORIZATION_FAILED, ())),
        (((X, TXN, A.WRITE), (T, TOPIC, A.WRITE)), (E.CLUSTER_AUTHORIZATION_FAILED, ())),
        (((C, CLUSTER_NAME, A.CLUSTER_ACTION),), (0, (E.INVALID_PRODUCER_ID_MAPPING,))))),
    Case(ApiKey.ADD_PARTITIONS_TO_TXN, (4, 5), 5, _add_partitions_v4(verify_only=False), add_partitions_v4, (
        ((), (E.CLUSTER_AUTHORIZATION_FAILED, ())),
        (((X, TXN, A.WRITE), (T, TOPIC, A.WRITE)), (E.CLUSTER_AUTHORIZATION_FAILED, ())),
        (((C, CLUSTER_NAME, A.CLUSTER_ACTION),), (0, (E.INVALID_PRODUCER_ID_MAPPING,)))), label="add"),
    Case(ApiKey.ADD_OFFSETS_TO_TXN, (0, 4), 3, _add_offsets, top_code, (
        ((), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        (((X, TXN, A.WRITE),), E.GROUP_AUTHORIZATION_FAILED),
        (((X, TXN, A.WRITE), (G, GROUP, A.READ)), E.INVALID_PRODUCER_ID_MAPPING))),
    Case(ApiKey.END_TXN, (0, 4), 3, _end_txn, top_code, (
        ((), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        (((X, TXN, A.WRITE),), E.INVALID_PRODUCER_ID_MAPPING))),
    Case(ApiKey.WRITE_TXN_MARKERS, (0, 1), 1, markers_request, markers, (
        ((), (E.CLUSTER_AUTHORIZATION_FAILED,)),
        (((C, CLUSTER_NAME, A.CLUSTER_ACTION),), (E.UNKNOWN_TOPIC_OR_PARTITION,)),
        (((C, CLUSTER_NAME, A.ALTER),), (E.UNKNOWN_TOPIC_OR_PARTITION,)))),
    # Authorized, the pending offset is stored: the broker does not verify the producer with the transaction
    # coordinator (Kafka 3.9's KIP-890 verification would answer INVALID_TXN_STATE); a group of its own.
    Case(ApiKey.TXN_OFFSET_COMMIT, (0, 4), 3, _txn_offset_commit, txn_offset_commit, (
        ((), (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,)),
        (((X, TXN, A.WRITE),), (E.GROUP_AUTHORIZATION_FAILED,)),
        (((X, TXN, A.WRITE), (G, TXN_GROUP, A.READ)), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((X, TXN, A.WRITE), (G, TXN_GROUP, A.READ), (T, TOPIC, A.READ)), (0,)))),
    Case(ApiKey.DESCRIBE_ACLS, (0, 3), 2, _describe_acls, top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.DESCRIBE),), 0))),
    Case(ApiKey.CREATE_ACLS, (0, 3), 2, _create_acls, lambda r: tuple(x.error_code for x in r.results), (
        ((), (E.CLUSTER_AUTHORIZATION_FAILED,)),
        (((C, CLUSTER_NAME, A.ALTER),), (0,)))),
    Case(ApiKey.DELETE_ACLS, (0, 3), 2, _delete_acls, lambda r: tuple(x.error_code for x in r.filter_results), (
        ((), (E.CLUSTER_AUTHORIZATION_FAILED,)),
        (((C, CLUSTER_NAME, A.ALTER),), (0,)))),
    Case(ApiKey.DESCRIBE_CONFIGS, (0, 4), 4, _describe_configs(2, TOPIC), results_codes, (
        ((), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((T, TOPIC, A.DESCRIBE_CONFIGS),), (0,)))),
    Case(ApiKey.DESCRIBE_CONFIGS, (0, 4), 4, _describe_configs(4, "0"), results_codes, (
        ((), (E.CLUSTER_AUTHORIZATION_FAILED,)),
        (((C, CLUSTER_NAME, A.DESCRIBE_CONFIGS),), (0,))), label="broker"),
    Case(ApiKey.ALTER_CONFIGS, (0, 2), 1, _alter_configs, responses_codes, (
        ((), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((T, TOPIC, A.ALTER_CONFIGS),), (0,)))),
    Case(ApiKey.INCREMENTAL_ALTER_CONFIGS, (0, 1), 1, _incremental_alter, responses_codes, (
        ((), (E.TOPIC_AUTHORIZATION_FAILED,)),
        (((T, TOPIC, A.ALTER_CONFIGS),), (0,)))),
    # Moving a replica between log dirs (JBOD) needs ALTER on the cluster; granted, an unknown dir is refused.
    Case(ApiKey.ALTER_REPLICA_LOG_DIRS, (0, 2), 2, lambda env: M.AlterReplicaLogDirsRequest(dirs=[
        M.AlterReplicaLogDirsRequest.AlterReplicaLogDir(path="/nonexistent/matrix", topics=[
            M.AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic(name=TOPIC, partitions=[0])])]),
         lambda r: tuple(p.error_code for t in r.results for p in t.partitions), (
             ((), (E.CLUSTER_AUTHORIZATION_FAILED,)),
             (((C, CLUSTER_NAME, A.ALTER),), (E.LOG_DIR_NOT_FOUND,)))),
    Case(ApiKey.DESCRIBE_LOG_DIRS, (0, 2), 2, _describe_log_dirs, describe_log_dirs, (  # no error field yet
        ((), (0, False)),
        (((C, CLUSTER_NAME, A.DESCRIBE),), (0, True)))),
    Case(ApiKey.DESCRIBE_LOG_DIRS, (3, 4), 4, _describe_log_dirs, describe_log_dirs, (
        ((), (E.CLUSTER_AUTHORIZATION_FAILED, False)),
        (((C, CLUSTER_NAME, A.DESCRIBE),), (0, True)))),
    Case(ApiKey.CREATE_PARTITIONS, (0, 3), 3, _create_partitions, lambda r: names_codes(r, "results"), (
        ((), ((TOPIC, E.TOPIC_AUTHORIZATION_FAILED),)),
        (((T, TOPIC, A.ALTER),), ((TOPIC, 0),)))),
    Case(ApiKey.DELETE_GROUPS, (0, 2), 2, _delete_groups, group_results, (
        ((), (("gd", E.GROUP_AUTHORIZATION_FAILED),)),
        (((G, "gd", A.DELETE),), (("gd", E.GROUP_ID_NOT_FOUND),)))),
    Case(ApiKey.ELECT_LEADERS, (0, 0), 0, _elect, elect, (  # no top-level error field yet
        ((), (0, (E.CLUSTER_AUTHORIZATION_FAILED,))),
        (((C, CLUSTER_NAME, A.ALTER),), (0, (E.ELECTION_NOT_NEEDED,))))),
    Case(ApiKey.ELECT_LEADERS, (1, 2), 2, _elect, elect, (
        ((), (E.CLUSTER_AUTHORIZATION_FAILED, (E.CLUSTER_AUTHORIZATION_FAILED,))),
        (((C, CLUSTER_NAME, A.ALTER),), (0, (E.ELECTION_NOT_NEEDED,))))),
    Case(ApiKey.ALTER_PARTITION_REASSIGNMENTS, (0, 0), 0, _alter_reassignments, alter_reassignments, (
        ((), (E.CLUSTER_AUTHORIZATION_FAILED, (E.CLUSTER_AUTHORIZATION_FAILED,))),
        (((C, CLUSTER_NAME, A.ALTER),), (0, (E.NO_REASSIGNMENT_IN_PROGRESS,))))),
    Case(ApiKey.LIST_PARTITION_REASSIGNMENTS, (0, 0), 0, _list_reassignments, top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.DESCRIBE),), 0))),
    Case(ApiKey.OFFSET_DELETE, (0, 0), 0, _offset_delete, offset_delete, (
        ((), (E.GROUP_AUTHORIZATION_FAILED, ())),
        (((G, DELETE_OFFSETS_GROUP, A.DELETE),), (0, (E.TOPIC_AUTHORIZATION_FAILED,))),
        (((G, DELETE_OFFSETS_GROUP, A.DELETE), (T, TOPIC, A.READ)), (0, (0,))))),
    Case(ApiKey.DESCRIBE_CLIENT_QUOTAS, (0, 1), 1, _describe_quotas, top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.DESCRIBE_CONFIGS),), 0))),
    # Refused alterations answer per entry, never an empty success (issue 15 finding 8).
    Case(ApiKey.ALTER_CLIENT_QUOTAS, (0, 1), 1, _alter_quotas, alter_quotas, (
        ((), ((E.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.", (("user", "carol"),)),)),
        (((C, CLUSTER_NAME, A.ALTER_CONFIGS),), ((0, None, (("user", "carol"),)),)))),
    Case(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, (0, 0), 0, _describe_scram, top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.DESCRIBE),), 0))),
    Case(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, (0, 0), 0,
         lambda env: M.DescribeUserScramCredentialsRequest(users=[
             M.DescribeUserScramCredentialsRequest.UserName(name="carol")]),
         lambda r: (r.error_code, tuple((x.user, x.error_code) for x in r.results)), (
             ((), (E.CLUSTER_AUTHORIZATION_FAILED, (("", E.CLUSTER_AUTHORIZATION_FAILED),))),
             (((C, CLUSTER_NAME, A.DESCRIBE),), (0, (("carol", E.RESOURCE_NOT_FOUND),)))), label="named"),
    Case(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, (0, 0), 0, _alter_scram, alter_scram, (
        ((), (("nobody", E.CLUSTER_AUTHORIZATION_FAILED),)),
        (((C, CLUSTER_NAME, A.ALTER),), (("nobody", E.RESOURCE_NOT_FOUND),)))),
    Case(ApiKey.ALTER_PARTITION, (0, 1), 1, _alter_partition, top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.CLUSTER_ACTION),), E.STALE_BROKER_EPOCH))),
    # v1 validate_only: the check without a write to the finalized features (v0 upgrades kraft.version)
    Case(ApiKey.UPDATE_FEATURES, (0, 1), 1, lambda env: M.UpdateFeaturesRequest(
        timeout_ms=5000, validate_only=env.version >= 1, feature_updates=[M.UpdateFeaturesRequest.FeatureUpdateKey(
            feature="kraft.version", max_version_level=1, upgrade_type=1)]), top_code, (
        ((), E.CLUSTER_AUTHORIZATION_FAILED),
        (((C, CLUSTER_NAME, A.ALTER),), 0))),
    # The cluster's operations never include the token operations (issue 17 item 6).
    Case(ApiKey.DESCRIBE_CLUSTER, (0, 1), 1, _describe_cluster, describe_cluster, (
        ((), (0, 0)),
        (((C, CLUSTER_NAME, A.DESCRIBE),), (0, op_bits(A.DESCRIBE))),
        (((C, CLUSTER_NAME, A.ALL),), (0, op_bits(A.CREATE, A.ALTER, A.DESCRIBE, A.CLUSTER_ACTION,
                                                  A.DESCRIBE_CONFIGS, A.ALTER_CONFIGS, A.IDEMPOTENT_WRITE))))),
    # Delegation tokens: one's own token needs no ACL; another owner's needs CREATE_TOKENS / DESCRIBE_TOKENS on
    # that USER (issue 17 item 6: these are USER operations); renew/expire belong to the owner and renewers only.
    Case(ApiKey.CREATE_DELEGATION_TOKEN, (0, 2), 2, create_token_request, top_code, (((), 0),), label="own"),
    Case(ApiKey.CREATE_DELEGATION_TOKEN, (3, 3), 3, create_token_request, top_code, (
        ((), E.DELEGATION_TOKEN_AUTHORIZATION_FAILED),
        (((U, CAROL, A.CREATE_TOKENS),), 0)), label="for-another-owner"),
    Case(ApiKey.DESCRIBE_DELEGATION_TOKEN, (0, 3), 3, _describe_tokens, described_tokens, (
        ((), (0, ())),
        (((U, CAROL, A.DESCRIBE_TOKENS),), (0, (CAROL,))))),
    Case(ApiKey.RENEW_DELEGATION_TOKEN, (0, 2), 2,
         lambda env: M.RenewDelegationTokenRequest(hmac=env.carol_hmac, renew_period_ms=-1), top_code, (
             ((), E.DELEGATION_TOKEN_OWNER_MISMATCH),
             (((U, CAROL, A.CREATE_TOKENS), (U, CAROL, A.DESCRIBE_TOKENS)), E.DELEGATION_TOKEN_OWNER_MISMATCH))),
    Case(ApiKey.EXPIRE_DELEGATION_TOKEN, (0, 2), 2,
         lambda env: M.ExpireDelegationTokenRequest(hmac=env.carol_hmac, expiry_time_period_ms=-1), top_code, (
             ((), E.DELEGATION_TOKEN_OWNER_MISMATCH),
             (((U, CAROL, A.CREATE_TOKENS), (U, CAROL, A.DESCRIBE_TOKENS)), E.DELEGATION_TOKEN_OWNER_MISMATCH))),
    Case(ApiKey.DESCRIBE_PRODUCERS, (0, 0), 0, _describe_producers, describe_producers(PIDS), (
        ((), ((E.TOPIC_AUTHORIZATION_FAILED, ()),)),
        (((T, TOPIC, A.DESCRIBE),), ((E.TOPIC_AUTHORIZATION_FAILED, ()),)),
        (((T, TOPIC, A.READ),), ((0, (True,)),)))),
    Case(ApiKey.DESCRIBE_TRANSACTIONS, (0, 0), 0, _describe_txns, describe_txns, (
        ((), ((TXN, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),)),
        (((X, TXN, A.DESCRIBE),), ((TXN, 0),)))),
    Case(ApiKey.LIST_TRANSACTIONS, (0, 1), 1, _list_txns, list_txns, (
        ((), (0, ())),
        (((X, TXN, A.DESCRIBE),), (0, (TXN,))))),
)

EXEMPT: tuple[Exempt, ...] = (
    Exempt(ApiKey.SASL_HANDSHAKE, (0, 1), "authentication itself: every connection of this module performs it"),
    Exempt(ApiKey.SASL_AUTHENTICATE, (0, 2), "authentication itself: every connection of this module performs it"),
)
