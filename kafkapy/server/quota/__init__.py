"""Client quotas: Kafka's windowed rate, the quota entities in the metadata store, ClientQuotaManager."""
