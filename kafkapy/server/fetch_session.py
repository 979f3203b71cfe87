"""Incremental fetch sessions (KIP-227): the broker's FetchSessionCache and the client's FetchSessionHandler.

Broker side. A full fetch (session epoch 0) creates a FetchSession holding, per partition, what the fetcher
asked for (fetch offset, max bytes, its log start, leader epochs) and what it was last told (HW, last
stable offset, log start); its id goes back in the response and the fetcher's next request, an incremental
one at epoch 1, 2, ..., carries only the partitions whose fetch state changed and lists the ones to
forget. The answer to an incremental fetch carries only partitions with news: records, a moved HW / LSO /
log start, an error, a diverging epoch. Wrong id: FETCH_SESSION_ID_NOT_FOUND; wrong epoch:
INVALID_FETCH_SESSION_EPOCH; epoch -1 closes the session (a sessionless full fetch).
`max.incremental.fetch.session.cache.slots` bounds the sessions. When full, Kafka's rules decide whether a
new session may evict one: a session unused for longer than the eviction time goes first; otherwise a
follower's (privileged) session may evict the smallest consumer session, and any new session may evict a
session older than the eviction time that is smaller (by privilege, then size, then id).

To keep a fetch's work proportional to what changed, the cache indexes sessions by partition and every
session keeps a set of "touched" partitions: the ReplicaManager calls `mark_changed(tp)` when a partition
it leads is appended to, its HW or log start moves or its leadership changes; an incremental fetch reads the
partitions its request names plus the touched ones, never the whole session (except a periodic sweep,
which also refreshes the leader's view of idle followers). A new session starts with every partition
touched, so nothing changed between its full read and its creation is missed.

Client side. FetchSessionHandler builds the session id / epoch and the partitions to send and forget from
the wanted fetch states, and moves to the next epoch (or back to a full fetch) from each response.
Byte format: none (values of FetchRequest / FetchResponse).
Thread-safety: the cache's maps are guarded by its lock; a session's touched set by the session's own lock
(appends mark from handler threads while its fetch is read). A session's partition map is changed only by
the fetch that owns it (a client has one fetch in flight per session). FetchSessionHandler: one thread.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.fetch_params import FetchPartitionData, FetchPartitionInfo

if TYPE_CHECKING:
    from kafkapy.protocol.messages.fetch import FetchRequest

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
MIN_EVICTION_MS = 120_000  # Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
_MAX_EPOCH = 2**31 - 1


def next_epoch(epoch: int) -> int:
    """Kafka's FetchMetadata.nextEpoch: after a sessionless fetch stay sessionless; wrap to 1, never 0."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_EPOCH else epoch + 1


@dataclass(frozen=True, slots=True)
class SessionWatchKey:
    """The fetch purgatory key under which a session's delayed fetch waits (never equal to a TopicPartition)."""

    session_id: int


@dataclass(slots=True)
class CachedPartition:
    """One partition of a session: the fetcher's request state and the last values it was told."""

    fetch_offset: int
    max_bytes: int
    log_start_offset: int = -1
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    high_watermark: int = -1
    last_stable_offset: int = -1
    leader_log_start_offset: int = -1

    def info(self) -> FetchPartitionInfo:
        return FetchPartitionInfo(self.fetch_offset, self.max_bytes, self.log_start_offset,
                                  self.current_leader_epoch, self.last_fetched_epoch)

    def update_request(self, info: FetchPartitionInfo) -> None:
        self.fetch_offset = info.fetch_offset
        self.max_bytes = info.partition_max_bytes
        self.log_start_offset = info.log_start_offset
        self.current_leader_epoch = info.current_leader_epoch
        self.last_fetched_epoch = info.last_fetched_epoch

    def maybe_update_response(self, d: FetchPartitionData) -> bool:
        """Kafka's maybeUpdateResponseData: whether this answer must go out in an incremental response
        (and remember what it tells)."""
        must = (d.records is not None and d.records.length > 0) or d.error != ErrorCode.NONE \
            or d.diverging_epoch is not None or d.current_leader is not None or d.preferred_read_replica >= 0
        if d.high_watermark != self.high_watermark:
            self.high_watermark = d.high_watermark
            must = True
        if d.last_stable_offset != self.last_stable_offset:
            self.last_stable_offset = d.last_stable_offset
            must = True
        if d.log_start_offset != self.leader_log_start_offset:
            self.leader_log_start_offset = d.log_start_offset
            must = True
        return must


@dataclass(eq=False)
class FetchSession:
    id: int
    privileged: bool
    partitions: dict[TopicPartition, CachedPartition]
    creation_ms: int
    last_used_ms: int
    epoch: int = 1
    last_sweep_ms: int = 0
    _touched: set[TopicPartition] = field(default_factory=set)
    _recent: list[TopicPartition] = field(default_factory=list)  # marks not yet seen by a waiting fetch
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def size(self) -> int:
        return len(self.partitions)

    def mark_changed(self, tp: TopicPartition) -> None:
        with self._lock:
            self._touched.add(tp)
            self._recent.append(tp)

    def mark_all_changed(self) -> None:
        with self._lock:
            self._touched.update(self.partitions)
            self._recent.extend(self.partitions)

    def take_recent(self) -> list[TopicPartition]:
        """The marks made since the last call (a waiting fetch looks at each change once, not at every
        touched partition on every wake)."""
        with self._lock:
            recent, self._recent = self._recent, []
        return recent

    def touched(self) -> list[TopicPartition]:
        """The partitions marked since the last take (kept marked)."""
        with self._lock:
            return list(self._touched)

    def take_touched(self) -> set[TopicPartition]:
        with self._lock:
            taken, self._touched, self._recent = self._touched, set(), []
        return taken

    def eviction_key(self) -> tuple[bool, int, int]:
        return self.privileged, self.size, self.id


class FetchSessionCache:
    def __init__(self, max_entries: int, eviction_ms: int, time: Time) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self._time = time
        self._lock = threading.RLock()
        self._sessions: dict[int, FetchSession] = {}
        self._by_partition: dict[TopicPartition, set[FetchSession]] = {}
        self.evictions = 0
        self._random = random.Random()

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def total_partitions(self) -> int:
        with self._lock:
            return sum(s.size for s in self._sessions.values())

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    def sessions_with(self, tp: TopicPartition) -> tuple[FetchSession, ...]:
        sessions = self._by_partition.get(tp)
        return tuple(sessions) if sessions else ()

    def mark_changed(self, tp: TopicPartition) -> list[int]:
        """Mark tp touched in every session holding it; returns those sessions' ids."""
        sessions = self._by_partition.get(tp)
        if not sessions:
            return []
        ids = []
        for s in tuple(sessions):
            s.mark_changed(tp)
            ids.append(s.id)
        return ids

    def maybe_create_session(self, privileged: bool, partitions: dict[TopicPartition, CachedPartition]) -> int:
        """A new session for a full fetch, evicting another if Kafka's rules allow; its id, or 0 if none."""
        now = self._time.milliseconds()
        with self._lock:
            if len(self._sessions) >= self.max_entries and not self._try_evict(privileged, len(partitions), now):
                return INVALID_SESSION_ID
            session_id = self._new_session_id()
            session = FetchSession(session_id, privileged, partitions, now, now, epoch=next_epoch(INITIAL_EPOCH),
                                   last_sweep_ms=now)
            session.mark_all_changed()
            self._sessions[session_id] = session
            self._index(session, partitions)
            return session_id

    def touch(self, session: FetchSession, now_ms: int) -> None:
        session.last_used_ms = now_ms

    def update_partitions(self, session: FetchSession, added: Mapping[TopicPartition, CachedPartition],
                          removed: Iterable[TopicPartition]) -> None:
        """Add and forget partitions of a session (under the lock: an eviction may be walking its map)."""
        with self._lock:
            for tp in removed:
                if session.partitions.pop(tp, None) is not None:
                    self._unindex(session, tp)
            for tp, entry in added.items():
                session.partitions[tp] = entry
                self._by_partition.setdefault(tp, set()).add(session)

    def remove(self, session_id: int) -> FetchSession | None:
        with self._lock:
            session = self._sessions.pop(session_id, None)
            if session is not None:
                for tp in session.partitions:
                    self._unindex(session, tp)
            return session

    def _index(self, session: FetchSession, tps: Iterable[TopicPartition]) -> None:
        for tp in tps:
            self._by_partition.setdefault(tp, set()).add(session)

    def _unindex(self, session: FetchSession, tp: TopicPartition) -> None:
        holders = self._by_partition.get(tp)
        if holders is not None:
            holders.discard(session)
            if not holders:
                del self._by_partition[tp]

    def _new_session_id(self) -> int:
        while True:
            candidate = self._random.randint(1, _MAX_EPOCH)
            if candidate not in self._sessions:
                return candidate

    def _try_evict(self, privileged: bool, size: int, now: int) -> bool:
        """Kafka's tryEvict: a stale session first; else the least valuable evictable one if the new session
        is worth more (privileged may evict any consumer session; others only sessions past eviction_ms)."""
        if not self._sessions:
            return False
        oldest = min(self._sessions.values(), key=lambda s: s.last_used_ms)
        if now - oldest.last_used_ms > self.eviction_ms:
            self._evict(oldest)
            return True
        if privileged:
            candidates = [s for s in self._sessions.values() if not s.privileged]
        else:
            candidates = [s for s in self._sessions.values() if now - s.creation_ms > self.eviction_ms]
        if not candidates:
            return False
        least = min(candidates, key=FetchSession.eviction_key)
        if (privileged, size, 0) < least.eviction_key():
            return False
        self._evict(least)
        return True

    def _evict(self, session: FetchSession) -> None:
        self.remove(session.id)
        self.evictions += 1


# -- the broker's per-request view (Kafka's FetchManager.newContext) ---------------------------------------

@dataclass(slots=True)
class FetchContext:
    """What one Fetch request reads and how it is answered.
    kind: "sessionless" (full, session id 0), "full" (full, creates a session when answered),
    "incremental" (reads `read`, answers only changed partitions) or "error" (error_code, nothing read)."""

    kind: str
    read: dict[TopicPartition, FetchPartitionInfo]
    session: FetchSession | None = None
    error_code: int = ErrorCode.NONE


class FetchManager:
    """Kafka's FetchManager: turns a request's session fields into a FetchContext and its answer."""

    def __init__(self, cache: FetchSessionCache, time: Time, sweep_interval_ms: int) -> None:
        self.cache = cache
        self._time = time
        self.sweep_interval_ms = sweep_interval_ms

    def new_context(self, session_id: int, epoch: int, partitions: dict[TopicPartition, FetchPartitionInfo],
                    forgotten: Iterable[TopicPartition], privileged: bool) -> FetchContext:
        cache = self.cache
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != INVALID_SESSION_ID:
                cache.remove(session_id)
            if epoch == FINAL_EPOCH or cache.max_entries <= 0:
                return FetchContext("sessionless", partitions)
            return FetchContext("full", partitions)
        session = cache.get(session_id)
        if session is None:
            return FetchContext("error", {}, error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext("error", {}, error_code=ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        now = self._time.milliseconds()
        added = {}
        cached = session.partitions
        for tp, info in partitions.items():
            entry = cached.get(tp)
            if entry is None:
                added[tp] = CachedPartition(info.fetch_offset, info.partition_max_bytes, info.log_start_offset,
                                            info.current_leader_epoch, info.last_fetched_epoch)
            else:
                entry.update_request(info)
        forgotten = [tp for tp in forgotten if tp not in partitions]
        if added or forgotten:
            cache.update_partitions(session, added, forgotten)
        session.epoch = next_epoch(session.epoch)
        cache.touch(session, now)
        return FetchContext("incremental", self.partitions_to_read(session, partitions, now), session)

    def partitions_to_read(self, session: FetchSession, requested: Mapping[TopicPartition, FetchPartitionInfo],
                           now: int) -> dict[TopicPartition, FetchPartitionInfo]:
        """The request's partitions plus the touched ones; every partition once per sweep interval."""
        cached = session.partitions
        if now - session.last_sweep_ms >= self.sweep_interval_ms:
            session.last_sweep_ms = now
            session.take_touched()
            return {tp: entry.info() for tp, entry in cached.items()}
        read = dict(requested)
        for tp in session.take_touched():
            if tp not in read and (entry := cached.get(tp)) is not None:
                read[tp] = entry.info()
        return read

    def create_session(self, privileged: bool, partitions: Mapping[TopicPartition, FetchPartitionInfo],
                       results: Mapping[TopicPartition, FetchPartitionData]) -> int:
        cached = {}
        for tp, info in partitions.items():
            entry = CachedPartition(info.fetch_offset, info.partition_max_bytes, info.log_start_offset,
                                    info.current_leader_epoch, info.last_fetched_epoch)
            d = results.get(tp)
            if d is not None:
                entry.maybe_update_response(d)
            cached[tp] = entry
        return self.cache.maybe_create_session(privileged, cached)

    @staticmethod
    def changed(session: FetchSession, results: Mapping[TopicPartition, FetchPartitionData]
                ) -> dict[TopicPartition, FetchPartitionData]:
        """The answers an incremental response carries (partitions the session no longer holds are dropped)."""
        out = {}
        cached = session.partitions
        for tp, d in results.items():
            entry = cached.get(tp)
            if entry is None or entry.maybe_update_response(d):
                out[tp] = d
        return out


# -- client side (Kafka's FetchSessionHandler) -----------------------------------------------------------

def _fetch_state(p: FetchRequest.FetchPartition) -> tuple[int, int, int, int, int]:
    return (p.fetch_offset, p.log_start_offset, p.partition_max_bytes, p.current_leader_epoch, p.last_fetched_epoch)


@dataclass(slots=True)
class FetchRequestData:
    session_id: int
    epoch: int
    to_send: dict[TopicPartition, Any]
    to_forget: list[TopicPartition]


class FetchSessionHandler:
    """A fetcher's side of one session with one broker. `build` takes the FetchRequest.FetchPartition values
    wanted now; `handle_response` / `handle_error` move the session on."""

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH
        self._sent: dict[TopicPartition, tuple[int, int, int, int, int]] = {}

    @property
    def is_full(self) -> bool:
        return self.epoch in (INITIAL_EPOCH, FINAL_EPOCH)

    def build(self, wanted: Mapping[TopicPartition, Any]) -> FetchRequestData:
        if self.is_full:
            self._sent = {tp: _fetch_state(p) for tp, p in wanted.items()}
            return FetchRequestData(self.session_id, self.epoch, dict(wanted), [])
        sent = self._sent
        to_send = {}
        for tp, p in wanted.items():
            state = _fetch_state(p)
            if sent.get(tp) != state:
                sent[tp] = state
                to_send[tp] = p
        to_forget = [tp for tp in sent if tp not in wanted]
        for tp in to_forget:
            del sent[tp]
        return FetchRequestData(self.session_id, self.epoch, to_send, to_forget)

    def handle_response(self, error_code: int, session_id: int) -> bool:
        """False when the response is a session error (the next fetch is a full one)."""
        if error_code != ErrorCode.NONE:
            if error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND:
                self.session_id = INVALID_SESSION_ID
            self.epoch = INITIAL_EPOCH
            return False
        if self.is_full:
            if session_id == INVALID_SESSION_ID:
                self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
            else:
                self.session_id, self.epoch = session_id, next_epoch(INITIAL_EPOCH)
        elif session_id == INVALID_SESSION_ID:
            self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
        else:
            self.epoch = next_epoch(self.epoch)
        return True

    def handle_error(self) -> None:
        """A failed request: close the session at the broker with the next (full) fetch."""
        self.epoch = INITIAL_EPOCH
