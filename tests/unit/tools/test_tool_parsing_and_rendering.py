"""Tool logic without a broker: flag value parsing, Kafka's text lines, describe filters over a fake admin."""

from __future__ import annotations

import uuid

import pytest

from kafkapy.cli import broker_api_versions as cli_bav
from kafkapy.cli import configs as cli_configs
from kafkapy.cli import topics as cli_topics
from kafkapy.client.admin_types import (
    ClusterDescription,
    Config,
    ConfigEntry,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
    ConfigSynonym,
    PartitionReassignment,
    TopicDescription,
    TopicListing,
    TopicPartitionInfo,
)
from kafkapy.client.metadata import Node
from kafkapy.tools import configs, delete_records, get_offsets, log_dirs, topics
from kafkapy.tools.broker_api_versions import ApiVersionInfo, BrokerApiVersions, node_api_versions

# --- parsing --------------------------------------------------------------------------------------------


def test_replica_assignment():
    assert topics.parse_replica_assignment("1:2, 2:3 ,3:1") == {0: [1, 2], 1: [2, 3], 2: [3, 1]}
    with pytest.raises(topics.TopicCommandError, match="may not contain duplicate entries: 1"):
        topics.parse_replica_assignment("1:1")
    with pytest.raises(topics.TopicCommandError, match=r"Partition 1 has different replication factor: \[2\]"):
        topics.parse_replica_assignment("1:2,2")


def test_topic_configs():
    assert topics.parse_topic_configs(["a=1", "b = x "]) == {"a": "1", "b": "x"}
    for bad in (["a"], ["a=1=2"], ["a="]):
        with pytest.raises(topics.TopicArgumentError, match='must be in the format "key=val"'):
            topics.parse_topic_configs(bad)


def test_add_config_brackets_and_empty_values():
    assert configs.parse_add_config("k1=v1,k2=[a,b,c],k3=,k4 = x") == {"k1": "v1", "k2": "a,b,c", "k3": "", "k4": "x"}
    assert configs.parse_add_config("a=1,") == {"a": "1"}
    with pytest.raises(configs.ConfigArgumentError, match=r'"key=val" or  "key=\[val1,val2\]"'):
        configs.parse_add_config("a=1=2")
    with pytest.raises(configs.ConfigArgumentError, match="Invalid character found for config key: a b"):
        configs.validate_keys(["a b"])
    assert configs.parse_delete_config(["a,b", " c "]) == ["a", "b", "c"]


def test_get_offsets_specs():
    assert get_offsets.parse_time("earliest") == -2 and get_offsets.parse_time("-3") == -3
    assert get_offsets.parse_time("1700000000000") == 1700000000000
    with pytest.raises(get_offsets.GetOffsetsError, match="Malformed time argument soon"):
        get_offsets.parse_time("soon")
    rules = get_offsets.parse_topic_partitions("t1:1,t2:0-3,t3,t4:5-,:-2")
    allowed = [(r.topics.regex, [p for p in range(8) if r.allows_partition(p)]) for r in rules]
    assert allowed == [("t1", [1]), ("t2", [0, 1, 2]), ("t3", list(range(8))), ("t4", [5, 6, 7]), (".*", [0, 1])]
    with pytest.raises(get_offsets.GetOffsetsError, match="Invalid rule specification: t:x"):
        get_offsets.parse_topic_partitions("t:x")
    with pytest.raises(get_offsets.GetOffsetsError, match="--partitions expects a comma separated list"):
        get_offsets.parse_partitions("1,a")


def test_delete_records_json():
    assert delete_records.parse_offset_json('{"partitions":[{"topic":"a","partition":0,"offset":3}]}') == [("a", 0, 3)]
    with pytest.raises(delete_records.DeleteRecordsError, match="duplicate topic partitions: a-0"):
        delete_records.parse_offset_json(
            '{"partitions":[{"topic":"a","partition":0,"offset":3},{"topic":"a","partition":0,"offset":4}],"version":1}')
    with pytest.raises(delete_records.DeleteRecordsError, match="The input string is not a valid JSON"):
        delete_records.parse_offset_json("{")
    with pytest.raises(delete_records.DeleteRecordsError, match="Missing partitions field"):
        delete_records.parse_offset_json("{}")
    with pytest.raises(delete_records.DeleteRecordsError, match="Not supported version field value 2"):
        delete_records.parse_offset_json('{"version":2,"partitions":[]}')


# --- Kafka's text lines ---------------------------------------------------------------------------------


def test_topic_describe_lines():
    t = topics.TopicDescription("foo", "AAAAAAAAAAAAAAAAAAAAAQ", 2, 2, [("retention.ms", "1000"), ("x", None)], [
        topics.PartitionDescription("foo", 0, 1, [1, 2], [1, 2]),
        topics.PartitionDescription("foo", 1, None, [2, 3], [], [3], [1], [2], []),
    ])
    assert cli_topics.describe_lines([t]) == [
        "Topic: foo\tTopicId: AAAAAAAAAAAAAAAAAAAAAQ\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: "
        "retention.ms=1000,x=null",
        "\tTopic: foo\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tElr: N/A\tLastKnownElr: N/A",
        "\tTopic: foo\tPartition: 1\tLeader: none\tReplicas: 2,3\tIsr: \tAdding Replicas: 3\tRemoving Replicas: 1"
        "\tElr: 2\tLastKnownElr: ",
    ]
    no_id = topics.TopicDescription("bar", None, 1, 1, [], [], True)
    assert cli_topics.describe_lines([no_id]) == ["Topic: bar\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: "]


def test_config_entry_line():
    e = configs.ConfigLine("retention.ms", "1000", False, [("DYNAMIC_TOPIC_CONFIG", "retention.ms", "1000"),
                                                            ("DEFAULT_CONFIG", "log.retention.hours", "168")])
    assert cli_configs.entry_line(e) == ("  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
                                         "retention.ms=1000, DEFAULT_CONFIG:log.retention.hours=168}")
    assert cli_configs.entry_line(configs.ConfigLine("ssl.key.password", None, True)) == (
        "  ssl.key.password=null sensitive=true synonyms={}")
    lines = cli_configs.describe_lines([
        configs.Notice("The topic 'x' doesn't exist and doesn't have dynamic config."),
        configs.QuotaConfigs("user-principal 'alice'", [("producer_byte_rate", 1024.0), ("request_percentage", 5e7)]),
        configs.ScramConfigs("alice", [("SCRAM-SHA-256", 4096), ("SCRAM-SHA-512", 8192)]),
    ])
    assert lines == [
        "The topic 'x' doesn't exist and doesn't have dynamic config.",
        "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0, request_percentage=5.0E7",
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096, "
        "SCRAM-SHA-512=iterations=8192",
    ]


def test_broker_api_versions_text():
    versions = node_api_versions({0: (0, 12), 18: (0, 4), 45: (0, 0), 1000: (1, 2), 1: (40, 41)})
    by_key = {a.api_key: a for a in versions}
    assert by_key[0].text() == "Produce(0): 0 to 12 [usable: 12]"
    assert by_key[45].text() == "AlterPartitionReassignments(45): 0 [usable: 0]"
    assert by_key[1].text() == "Fetch(1): 40 to 41 [unusable: node too new]"
    assert by_key[1000].text() == "UNKNOWN(1000): 1 to 2"
    assert by_key[2].text() == "ListOffsets(2): UNSUPPORTED"
    assert 4 not in by_key  # LeaderAndIsr is not a 'broker' listener API
    b = BrokerApiVersions(0, "127.0.0.1", 9092, None, [ApiVersionInfo(0, "Produce", 3, 12, 12),
                                                       ApiVersionInfo(2, "ListOffsets", None, None)])
    assert cli_bav.broker_text(b) == ("127.0.0.1:9092 (id: 0 rack: null) -> (\n\tProduce(0): 3 to 12 [usable: 12],"
                                      "\n\tListOffsets(2): UNSUPPORTED\n)")
    err = BrokerApiVersions(1, "h", 1, "r1", [], "boom")
    assert cli_bav.broker_text(err) == "h:1 (id: 1 rack: r1) -> ERROR: boom"


def test_log_dirs_json_is_kafkas_byte_for_byte():
    result = log_dirs.LogDirsResult([0], [log_dirs.BrokerLogDirs(0, [log_dirs.LogDirEntry("/data", None, [
        log_dirs.ReplicaEntry("foo", 0, 123, 0, False)])])])
    assert log_dirs.to_json(result) == ('{"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":"foo-0",'
                                        '"size":123,"offsetLag":0,"isFuture":false}],"error":null,"logDir":"/data"}]}],'
                                        '"version":1}')


# --- describe logic over a fake admin -------------------------------------------------------------------


class FakeAdmin:
    def __init__(self, partitions, min_isr="2", live=(1, 2, 3), configs=(), reassignments=None):
        self.partitions = partitions
        self.min_isr = min_isr
        self.live = live
        self.configs = list(configs)
        self.reassignments = reassignments or {}

    def list_topics(self, include_internal=False):
        names = ["foo", "__consumer_offsets"] if include_internal else ["foo"]
        return {n: TopicListing(n, uuid.UUID(int=7), n.startswith("__")) for n in names}

    def describe_topics(self, names, raise_errors=True):
        return {n: TopicDescription(n, False, self.partitions, uuid.UUID(int=7)) for n in names}

    def describe_configs(self, resources, include_synonyms=False):
        entries = {"min.insync.replicas": ConfigEntry("min.insync.replicas", self.min_isr, ConfigSource.DEFAULT_CONFIG)}
        for name, value, source in self.configs:
            entries[name] = ConfigEntry(name, value, source, synonyms=[ConfigSynonym(name, value, source)])
        return {r: Config(r, dict(entries)) for r in resources}

    def describe_cluster(self):
        return ClusterDescription("c", None, [Node(i, "h", 9092) for i in self.live])

    def list_partition_reassignments(self, tps):
        return self.reassignments


def part(p, leader, replicas, isr):
    node = {i: Node(i, "h", 9092) for i in range(1, 5)}
    return TopicPartitionInfo(p, node.get(leader), [node[r] for r in replicas], [node[r] for r in isr])


PARTS = [part(0, 1, [1, 2, 3], [1, 2, 3]), part(1, 2, [2, 3, 1], [2, 3]), part(2, None, [3, 1, 2], [3]),
         part(3, 4, [4, 1, 2], [4, 1, 2])]


def describe(admin, **flags):
    return topics.describe_topics(admin, topics.DescribeOptions(topic="foo", **flags))


def test_describe_filters():
    admin = FakeAdmin(PARTS)
    full = describe(admin)
    assert len(full) == 1 and full[0].print_header and [p.partition for p in full[0].partitions] == [0, 1, 2, 3]
    assert full[0].replication_factor == 3 and full[0].topic_id == "AAAAAAAAAAAAAAAAAAAABw"

    def shown(**flags):
        res = describe(admin, **flags)
        assert all(not t.print_header for t in res)
        return [p.partition for t in res for p in t.partitions]

    assert shown(under_replicated_partitions=True) == [1, 2]
    assert shown(unavailable_partitions=True) == [2, 3]  # no leader, leader 4 not live
    assert shown(under_min_isr_partitions=True) == [2]
    assert shown(at_min_isr_partitions=True) == [1]
    assert describe(admin, topics_with_overrides=True) == []


def test_topics_with_overrides_prints_headers_only_and_configs_in_java_order():
    admin = FakeAdmin(PARTS[:1], configs=[("segment.bytes", "100", ConfigSource.DYNAMIC_TOPIC_CONFIG),
                                          ("cleanup.policy", "compact", ConfigSource.DYNAMIC_TOPIC_CONFIG),
                                          ("retention.ms", "5", ConfigSource.STATIC_BROKER_CONFIG)])
    [t] = describe(admin, topics_with_overrides=True)
    assert t.print_header and t.partitions == []
    # Java HashMap buckets (16): cleanup.policy 2, segment.bytes 11, retention.ms 11 (inserted later).
    assert [k for k, _ in t.configs] == ["cleanup.policy", "segment.bytes", "retention.ms"]


def test_replication_factor_during_reassignment():
    from kafkapy.common.topic_partition import TopicPartition

    admin = FakeAdmin([part(0, 1, [1, 2, 3, 4], [1, 2, 3, 4])],
                      reassignments={TopicPartition("foo", 0): PartitionReassignment([1, 2, 3, 4], [4], [3])})
    [t] = describe(admin)
    assert t.replication_factor == 3
    assert (t.partitions[0].adding_replicas, t.partitions[0].removing_replicas) == ([4], [3])


def test_missing_topic_and_if_exists():
    admin = FakeAdmin(PARTS)
    with pytest.raises(topics.TopicArgumentError, match="^Topic 'nope' does not exist as expected$"):
        topics.describe_topics(admin, topics.DescribeOptions(topic="nope"))
    assert topics.describe_topics(admin, topics.DescribeOptions(topic="nope", if_exists=True)) == []
    assert topics.list_topics(admin) == ["__consumer_offsets", "foo"]
    assert topics.list_topics(admin, exclude_internal=True) == ["foo"]


def test_configs_describe_filters_dynamic_entries_and_sorts():
    admin = FakeAdmin(PARTS, configs=[("segment.bytes", "100", ConfigSource.DYNAMIC_TOPIC_CONFIG),
                                      ("cleanup.policy", "compact", ConfigSource.DYNAMIC_TOPIC_CONFIG),
                                      ("retention.ms", "5", ConfigSource.STATIC_BROKER_CONFIG)])
    [r] = configs.describe(admin, ["topics"], ["foo"])
    assert r.header == "Dynamic configs for topic foo are:"
    assert [e.name for e in r.entries] == ["cleanup.policy", "segment.bytes"]
    [r] = configs.describe(admin, ["topics"], ["foo"], describe_all=True)
    assert r.header == "All configs for topic foo are:"
    assert [e.name for e in r.entries] == ["cleanup.policy", "min.insync.replicas", "retention.ms", "segment.bytes"]
    assert configs.describe(admin, ["topics"], ["nope"])[0].text == (
        "The topic 'nope' doesn't exist and doesn't have dynamic config.")


def test_config_resource_type_for_each_entity():
    assert ConfigResource(ConfigResourceType(configs._RESOURCE_TYPES["broker-loggers"]), "0").type.name == "BROKER_LOGGER"
