"""The finalized-feature names the broker (UpdateFeatures, the /feature znode) and the tools (kafka-features)
share: Kafka's MetadataVersion.FEATURE_NAME and KRaftVersion.FEATURE_NAME. Constants only; thread-safe.
"""

from __future__ import annotations

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
