"""CleanedTransactionMetadata: which transactional batches and markers one cleaning pass may discard.

Follows Kafka's LogCleaner: the aborted transactions overlapping the cleaned range (from the segments'
`.txnindex`) are consumed in first-offset order as batches are read; a transactional data batch of a
producer inside an aborted transaction is discarded; a COMMIT marker may go when none of its
transaction's data was seen in this range, an ABORT marker when the pass saw none of its data (else
the marker stays, and its AbortedTxn is written to the cleaned segment's transaction index). Markers
are removed only past their batch's delete horizon (decided by the caller).

Thread-safety: none; one instance per cleaned segment group, used by one cleaner thread.
"""

from __future__ import annotations

from kafkapy.storage.transaction_index import AbortedTxn, TransactionIndex

__all__ = ["CleanedTransactionMetadata"]


class _AbortedTxnMetadata:
    __slots__ = ("aborted_txn", "last_observed_batch_offset")

    def __init__(self, aborted_txn: AbortedTxn) -> None:
        self.aborted_txn = aborted_txn
        self.last_observed_batch_offset: int | None = None


class CleanedTransactionMetadata:
    def __init__(self, aborted: list[AbortedTxn] | None = None,
                 transaction_index: TransactionIndex | None = None) -> None:
        self._aborted = sorted(aborted or (), key=lambda t: t.first_offset)
        self._next = 0
        self._ongoing_committed: set[int] = set()
        self._ongoing_aborted: dict[int, _AbortedTxnMetadata] = {}
        self.transaction_index = transaction_index

    def _consume_aborted_up_to(self, offset: int) -> None:
        aborted = self._aborted
        while self._next < len(aborted) and aborted[self._next].first_offset <= offset:
            txn = aborted[self._next]
            self._next += 1
            self._ongoing_aborted.setdefault(txn.producer_id, _AbortedTxnMetadata(txn))

    def on_control_batch_read(self, producer_id: int, last_offset: int, is_abort: bool | None) -> bool:
        """True when the marker's transaction left no data in this range (the marker may be discarded).

        `is_abort` None: a control batch that is not a transaction marker (kept)."""
        self._consume_aborted_up_to(last_offset)
        if is_abort is None:
            return False
        if is_abort:
            meta = self._ongoing_aborted.pop(producer_id, None)
            if meta is not None and meta.last_observed_batch_offset is not None:
                if self.transaction_index is not None:
                    self.transaction_index.append(meta.aborted_txn)
                return False
            return True
        if producer_id in self._ongoing_committed:
            self._ongoing_committed.discard(producer_id)
            return False
        return True

    def on_batch_read(self, producer_id: int, last_offset: int, is_transactional: bool) -> bool:
        """True when the data batch belongs to an aborted transaction (discard it)."""
        self._consume_aborted_up_to(last_offset)
        if not is_transactional:
            return False
        meta = self._ongoing_aborted.get(producer_id)
        if meta is not None:
            meta.last_observed_batch_offset = last_offset
            return True
        self._ongoing_committed.add(producer_id)
        return False
