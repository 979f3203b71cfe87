"""kafkapy.zk: Kafka's ZooKeeper data layer, shared by the controller, the broker and the ZooKeeper-era tools.

- zk_data: Kafka's znode paths, their JSON payloads and the ACLs Kafka puts on them (Kafka's ZkData);
- kafka_zk_client: the connection (SASL / digest authentication, default ACLs on every create) and the raw
  znode operations; the only module of kafkapy that imports kazoo;
- zk_client_config: the JAAS `Client` section and the ZooKeeper client system properties Kafka reads.
"""
