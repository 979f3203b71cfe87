"""MetadataTopicCache: the Metadata response's per-topic parts, built once per change of the topic.

A Metadata request for all topics used to rebuild every partition's entry (leader, replicas, ISR, the
endpoint checks) from the MetadataCache on each request: 330 ms for 10,000 partitions. The MetadataCache's
snapshots are copy-on-write per topic (an update replaces only the changed topics' partition maps and,
when brokers change, the broker map), so a topic's MetadataResponseTopic stays valid while its partition
map, the alive-broker map and its topic id are the same objects; it is kept per (topic, listener, the
version's endpoint rules) and rebuilt when any of them changes. Entries of deleted topics are dropped
when the cache has grown past twice the topics that exist.

The cached MetadataResponseTopic objects are shared by concurrent requests: callers must not mutate them
(copy one before setting per-principal fields such as topic_authorized_operations). `encoded_list` also
keeps each cached topic's encoding per version (built on first use), so an unchanged topic is encoded once.

Thread-safety: lookups and inserts are single dict operations (atomic under the GIL); two requests may
build the same topic at once, the last insert wins and both answers are correct.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.protocol.messages import MetadataResponse
from kafkapy.protocol.pre_encoded import PreEncodedList
from kafkapy.protocol.types import ZERO_UUID

Resp = MetadataResponse


def response_topic(error: int, name: str | None, topic_id: Any, is_internal: bool, partitions: list) -> Any:
    return Resp.MetadataResponseTopic(error_code=int(error), name=name, topic_id=topic_id or ZERO_UUID,
                                      is_internal=is_internal, partitions=partitions)


class MetadataTopicCache:
    __slots__ = ("_metadata_cache", "_entries", "_encodings")

    def __init__(self, metadata_cache: MetadataCache) -> None:
        self._metadata_cache = metadata_cache
        # id(cached response topic) -> (that topic, {version: its encoded bytes}); the topic is held so its
        # id is not reused while the entry exists. Dropped when the topic's entry is replaced or pruned.
        self._encodings: dict[int, tuple[Any, dict[int, bytes]]] = {}
        # (topic, listener, drop replicas without endpoint, LISTENER_NOT_FOUND) ->
        #   (its partition map, alive-broker map, topic id: the objects it was built from; the response topic)
        self._entries: dict[tuple[str, str | None, bool, bool], tuple[Any, Any, Any, Any]] = {}

    def topics(self, names: Iterable[str] | None, listener: str | None, error_unavailable_endpoints: bool,
               error_unavailable_listeners: bool) -> list[Any]:
        """The MetadataResponseTopic of each named topic that exists (all topics, sorted, for None), in order."""
        snap = self._metadata_cache.snapshot()
        states, brokers, ids = snap.partition_states, snap.alive_brokers, snap.topic_ids
        wanted = sorted(states) if names is None else [n for n in dict.fromkeys(names) if n in states]
        entries = self._entries
        out: list[Any] = []
        missing: list[int] = []
        for name in wanted:
            entry = entries.get((name, listener, error_unavailable_endpoints, error_unavailable_listeners))
            if entry is not None and entry[0] is states[name] and entry[1] is brokers and entry[2] == ids.get(name):
                out.append(entry[3])
            else:
                missing.append(len(out))
                out.append(None)
        if missing:
            built = self._metadata_cache.get_topic_metadata([wanted[i] for i in missing], listener,
                                                            error_unavailable_endpoints, error_unavailable_listeners)
            by_name = {tm.name: tm for tm in built}
            for i in missing:
                name = wanted[i]
                tm = by_name.get(name)
                if tm is None:  # deleted between the snapshot and the build
                    continue
                parts = [Resp.MetadataResponsePartition(
                    error_code=int(p.error_code), partition_index=p.partition, leader_id=p.leader,
                    leader_epoch=p.leader_epoch, replica_nodes=list(p.replicas), isr_nodes=list(p.isr),
                    offline_replicas=list(p.offline_replicas)) for p in tm.partitions]
                topic = response_topic(tm.error_code, tm.name, tm.topic_id, tm.is_internal, parts)
                out[i] = topic
                key = (name, listener, error_unavailable_endpoints, error_unavailable_listeners)
                old = entries.get(key)
                entries[key] = (states[name], brokers, ids.get(name), topic)
                self._encodings[id(topic)] = (topic, {})
                if old is not None:
                    self._encodings.pop(id(old[3]), None)
            if len(entries) > 2 * len(states) + 64:
                for key in [k for k in list(entries) if k[0] not in states]:
                    dropped = entries.pop(key, None)
                    if dropped is not None:
                        self._encodings.pop(id(dropped[3]), None)
        return [t for t in out if t is not None]

    def encoded_list(self, topics: list[Any]) -> list[Any]:
        """`topics` as a PreEncodedList: an encoder writes each cached topic's bytes, encoded once per
        version, when every element is a topic this cache built (else it encodes them as usual)."""
        encodings = self._encodings

        def encoded(version: int) -> bytes | None:
            parts = []
            for topic in topics:
                held = encodings.get(id(topic))
                if held is None or held[0] is not topic:
                    return None
                data = held[1].get(version)
                if data is None:
                    data = held[1][version] = topic.encode(version)
                parts.append(data)
            return b"".join(parts)

        return PreEncodedList(topics, encoded)
