"""Admin APIs through real clients against an in-process kafkapy broker.

confluent-kafka (librdkafka) AdminClient: create/describe/delete topics (with topic ids), create partitions,
describe configs (topic and broker, sources and synonyms), alter and incremental-alter configs read back,
describe cluster, elect leaders, delete records seen by list_offsets, and an idempotent producer (which
needs InitProducerId). kafka-python's KafkaAdminClient: create/delete topics, describe configs, describe log dirs.
"""

from __future__ import annotations

import time
import uuid

import pytest

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka import ConsumerGroupTopicPartitions, TopicCollection, TopicPartition  # noqa: E402,F401
from confluent_kafka.admin import (  # noqa: E402
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourceType,
)

TIMEOUT_S = 30


def wait_all(futures: dict) -> dict:
    return {k: f.result(TIMEOUT_S) for k, f in futures.items()}


@pytest.fixture(scope="module")
def admin(kafkapy_broker):
    return AdminClient({"bootstrap.servers": kafkapy_broker.bootstrap, "socket.timeout.ms": 10000})


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def wait_for(cond, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_create_describe_delete_topics(admin, kafkapy_broker) -> None:
    name = unique("ia-topic")
    assert wait_all(admin.create_topics([NewTopic(name, 3, 1, config={"retention.ms": "3600000"})],
                                        operation_timeout=TIMEOUT_S)) == {name: None}
    with pytest.raises(ck.KafkaException) as err:
        wait_all(admin.create_topics([NewTopic(name, 1, 1)], operation_timeout=TIMEOUT_S))
    assert err.value.args[0].code() == ck.KafkaError.TOPIC_ALREADY_EXISTS
    desc = admin.describe_topics(TopicCollection([name]))[name].result(TIMEOUT_S)
    expected_id = kafkapy_broker.server.services.metadata_cache.get_topic_id(name)
    assert desc.name == name and str(desc.topic_id) == _kafka_uuid(expected_id)
    assert [(p.id, p.leader.id, [r.id for r in p.replicas], [r.id for r in p.isr]) for p in desc.partitions] == [
        (i, 0, [0], [0]) for i in range(3)]
    assert wait_all(admin.delete_topics([name], operation_timeout=TIMEOUT_S)) == {name: None}
    wait_for(lambda: name not in admin.list_topics(timeout=TIMEOUT_S).topics, "the topic to disappear")


def _kafka_uuid(value: uuid.UUID) -> str:
    import base64

    return base64.b64encode(value.bytes).rstrip(b"=").decode()  # librdkafka's Uuid rendering


def test_create_partitions(admin) -> None:
    name = unique("ia-parts")
    wait_all(admin.create_topics([NewTopic(name, 1, 1)], operation_timeout=TIMEOUT_S))
    assert wait_all(admin.create_partitions([NewPartitions(name, 4)], operation_timeout=TIMEOUT_S)) == {name: None}
    assert len(admin.list_topics(name, timeout=TIMEOUT_S).topics[name].partitions) == 4
    with pytest.raises(ck.KafkaException) as err:
        wait_all(admin.create_partitions([NewPartitions(name, 2)], operation_timeout=TIMEOUT_S))
    assert err.value.args[0].code() == ck.KafkaError.INVALID_PARTITIONS


def describe(admin, resource_type, name: str) -> dict:
    (f,) = admin.describe_configs([ConfigResource(resource_type, name)]).values()
    return f.result(TIMEOUT_S)


def synonyms(entry) -> list[tuple[str, str | None, ConfigSource]]:
    return [(s.name, s.value, ConfigSource(s.source)) for s in entry.synonyms.values()]


def test_describe_topic_and_broker_configs(admin) -> None:
    name = unique("ia-configs")
    wait_all(admin.create_topics([NewTopic(name, 1, 1, config={"cleanup.policy": "compact"})],
                                 operation_timeout=TIMEOUT_S))
    configs = describe(admin, ResourceType.TOPIC, name)
    seg = configs["segment.bytes"]
    assert (seg.value, ConfigSource(seg.source), seg.is_default) == ("1073741824", ConfigSource.DEFAULT_CONFIG, True)
    assert synonyms(seg) == [("log.segment.bytes", "1073741824", ConfigSource.DEFAULT_CONFIG)]
    policy = configs["cleanup.policy"]
    assert (policy.value, ConfigSource(policy.source)) == ("compact", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert synonyms(policy) == [("cleanup.policy", "compact", ConfigSource.DYNAMIC_TOPIC_CONFIG),
                                ("log.cleanup.policy", "delete", ConfigSource.DEFAULT_CONFIG)]
    broker = describe(admin, ResourceType.BROKER, "0")
    assert (broker["log.segment.bytes"].value, ConfigSource(broker["log.segment.bytes"].source)) == (
        "1073741824", ConfigSource.DEFAULT_CONFIG)
    assert broker["num.io.threads"].value == "4"
    assert ConfigSource(broker["num.io.threads"].source) == ConfigSource.STATIC_BROKER_CONFIG
    assert broker["broker.id"].is_read_only and not broker["log.retention.ms"].is_read_only
    with pytest.raises(ck.KafkaException) as err:
        describe(admin, ResourceType.TOPIC, unique("ia-missing"))
    assert err.value.args[0].code() == ck.KafkaError.UNKNOWN_TOPIC_OR_PART


def test_alter_and_incremental_alter_configs(admin) -> None:
    name = unique("ia-alter")
    wait_all(admin.create_topics([NewTopic(name, 1, 1, config={"retention.ms": "1000"})],
                                 operation_timeout=TIMEOUT_S))
    resource = ConfigResource(ResourceType.TOPIC, name, set_config={"segment.ms": "60000"})
    with pytest.deprecated_call():  # librdkafka deprecates AlterConfigs; brokers still serve it
        wait_all(admin.alter_configs([resource]))
    configs = describe(admin, ResourceType.TOPIC, name)
    assert (configs["segment.ms"].value, ConfigSource(configs["segment.ms"].source)) == (
        "60000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    # AlterConfigs replaced the whole set: the retention override is gone.
    assert (configs["retention.ms"].value, ConfigSource(configs["retention.ms"].source)) == (
        "604800000", ConfigSource.DEFAULT_CONFIG)
    ops = ConfigResource(ResourceType.TOPIC, name, incremental_configs=[
        ConfigEntry("retention.ms", "7200000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
        ConfigEntry("segment.ms", None, incremental_operation=AlterConfigOpType.DELETE)])
    wait_all(admin.incremental_alter_configs([ops]))
    configs = describe(admin, ResourceType.TOPIC, name)
    assert configs["retention.ms"].value == "7200000"
    assert configs["cleanup.policy"].value == "delete,compact"
    assert ConfigSource(configs["segment.ms"].source) == ConfigSource.DEFAULT_CONFIG
    bad = ConfigResource(ResourceType.TOPIC, name, incremental_configs=[
        ConfigEntry("retention.ms", "x", incremental_operation=AlterConfigOpType.APPEND)])
    with pytest.raises(ck.KafkaException) as err:
        wait_all(admin.incremental_alter_configs([bad]))
    assert err.value.args[0].code() == ck.KafkaError.INVALID_CONFIG


def test_describe_cluster_and_elect_leaders(admin, kafkapy_broker) -> None:
    cluster = admin.describe_cluster(include_authorized_operations=True).result(TIMEOUT_S)
    assert cluster.cluster_id == kafkapy_broker.server.services.metadata_cache.get_cluster_id()
    assert cluster.controller.id == 0
    assert [(n.id, n.host, n.port) for n in cluster.nodes] == [(0, "127.0.0.1", kafkapy_broker.port)]
    assert ck.admin.AclOperation.DESCRIBE in cluster.authorized_operations
    name = unique("ia-elect")
    wait_all(admin.create_topics([NewTopic(name, 1, 1)], operation_timeout=TIMEOUT_S))
    results = admin.elect_leaders(ck.ElectionType.PREFERRED, [TopicPartition(name, 0)]).result(TIMEOUT_S)
    (error,) = results.values()
    assert error is not None and error.code() == ck.KafkaError.ELECTION_NOT_NEEDED


def test_delete_records_moves_earliest_offset(admin, kafkapy_broker) -> None:
    name = unique("ia-delrec")
    wait_all(admin.create_topics([NewTopic(name, 1, 1)], operation_timeout=TIMEOUT_S))
    producer = ck.Producer({"bootstrap.servers": kafkapy_broker.bootstrap, "linger.ms": 0})
    for i in range(10):
        producer.produce(name, b"value-%d" % i, partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    (deleted,) = wait_all(admin.delete_records([TopicPartition(name, 0, 6)])).values()
    assert deleted.low_watermark == 6
    tp = TopicPartition(name, 0)
    (earliest,) = wait_all(admin.list_offsets({tp: OffsetSpec.earliest()})).values()
    (latest,) = wait_all(admin.list_offsets({tp: OffsetSpec.latest()})).values()
    assert (earliest.offset, latest.offset) == (6, 10)


def test_idempotent_producer(kafkapy_broker, admin) -> None:
    name = unique("ia-idem")
    wait_all(admin.create_topics([NewTopic(name, 2, 1)], operation_timeout=TIMEOUT_S))
    errors: list = []
    producer = ck.Producer({"bootstrap.servers": kafkapy_broker.bootstrap, "enable.idempotence": True,
                            "linger.ms": 5, "error_cb": errors.append})
    delivered: list = []
    for i in range(100):
        producer.produce(name, b"v%d" % i, key=b"k%d" % (i % 7), partition=i % 2,
                         on_delivery=lambda err, msg: delivered.append((err, msg.partition(), msg.offset())))
    assert producer.flush(TIMEOUT_S) == 0
    assert errors == [] and all(err is None for err, _, _ in delivered)
    assert sorted(o for _, p, o in delivered if p == 0) == list(range(50))
    consumer = ck.Consumer({"bootstrap.servers": kafkapy_broker.bootstrap, "group.id": unique("g"),
                            "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(name, 1, 0)])
        got = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(got) < 50 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        assert got == [b"v%d" % i for i in range(1, 100, 2)]
    finally:
        consumer.close()


def test_kafka_python_admin_create_delete_and_describe(kafkapy_broker) -> None:
    kafka = pytest.importorskip("kafka")
    from kafka.admin import ConfigResource as KPConfigResource
    from kafka.admin import ConfigResourceType, KafkaAdminClient
    from kafka.admin import NewTopic as KPNewTopic

    client = KafkaAdminClient(bootstrap_servers=kafkapy_broker.bootstrap, request_timeout_ms=30000)
    try:
        name = unique("kp-admin")
        client.create_topics([KPNewTopic(name, 2, 1, topic_configs={"retention.ms": "5000"})])
        cache = kafkapy_broker.server.services.metadata_cache
        assert cache.num_partitions(name) == 2
        with pytest.raises(kafka.errors.TopicAlreadyExistsError):
            client.create_topics([KPNewTopic(name, 2, 1)])
        modified = client.describe_configs([KPConfigResource(ConfigResourceType.TOPIC, name)])["topic"][name]
        assert list(modified) == ["retention.ms"]
        assert (modified["retention.ms"]["value"], modified["retention.ms"]["config_source"]) == (
            "5000", "DYNAMIC_TOPIC_CONFIG")
        every = client.describe_configs([KPConfigResource(ConfigResourceType.TOPIC, name)], config_filter="all",
                                        include_synonyms=True)["topic"][name]
        assert every["segment.bytes"]["synonyms"] == [
            {"name": "log.segment.bytes", "value": "1073741824", "source": "DEFAULT_CONFIG"}]
        (dirs,) = client.describe_log_dirs()
        (log_dir,) = dirs["log_dirs"]
        hosted = {t["name"]: [p["partition_index"] for p in t["partitions"]] for t in log_dir["topics"]}
        assert log_dir["error_code"] == 0 and hosted[name] == [0, 1]
        client.delete_topics([name])
        assert not cache.contains_topic(name)
    finally:
        client.close()
