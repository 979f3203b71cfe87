"""TransactionManager's state machine, request queue and response handling (no network: the test plays the
Sender, taking `next_request()` and handing the handler a decoded response message)."""

from __future__ import annotations

import pytest

from kafkapy.client.transaction_manager import (
    AddOffsetsToTxnHandler,
    AddPartitionsToTxnHandler,
    ConsumerGroupMetadata,
    EndTxnHandler,
    FindCoordinatorHandler,
    IllegalStateError,
    InitProducerIdHandler,
    State,
    TransactionManager,
    TxnOffsetCommitHandler,
    is_transition_valid,
)
from kafkapy.common.errors import (
    ConcurrentTransactionsError,
    ErrorCode,
    KafkaError,
    ProducerFencedError,
    TopicAuthorizationFailedError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnResponse
from kafkapy.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnResponse
from kafkapy.protocol.messages.end_txn import EndTxnResponse
from kafkapy.protocol.messages.find_coordinator import FindCoordinatorResponse
from kafkapy.protocol.messages.init_producer_id import InitProducerIdResponse
from kafkapy.protocol.messages.txn_offset_commit import TxnOffsetCommitResponse

TP0, TP1, TP2 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)


def find_coordinator_ok(node_id: int = 3) -> FindCoordinatorResponse:
    return FindCoordinatorResponse(coordinators=[FindCoordinatorResponse.Coordinator(
        key="tx", node_id=node_id, host="127.0.0.1", port=9092, error_code=0, error_message=None)])


def init_pid(code: int = 0, pid: int = 7, epoch: int = 2) -> InitProducerIdResponse:
    return InitProducerIdResponse(error_code=code, producer_id=pid, producer_epoch=epoch)


def add_partitions(errors: dict[TopicPartition, int]) -> AddPartitionsToTxnResponse:
    by_topic: dict[str, list] = {}
    for tp, code in errors.items():
        by_topic.setdefault(tp.topic, []).append(AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult(
            partition_index=tp.partition, partition_error_code=code))
    return AddPartitionsToTxnResponse(results_by_topic_v3_and_below=[
        AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult(name=t, results_by_partition=r)
        for t, r in by_topic.items()])


def initialized() -> TransactionManager:
    tm = TransactionManager("tx", 60000, 100)
    result = tm.initialize_transactions()
    assert tm.state is State.INITIALIZING
    h = tm.next_request(False)
    assert isinstance(h, InitProducerIdHandler)
    tm.lookup_coordinator(1, "tx")  # what the Sender does when no coordinator is known
    tm.retry(h)
    f = tm.next_request(False)
    assert isinstance(f, FindCoordinatorHandler) and f.key_type == 1 and f.key == "tx"
    f.handle_response(find_coordinator_ok())
    assert tm.coordinator(1) == (3, "127.0.0.1", 9092)
    h2 = tm.next_request(False)
    assert h2 is h and h.is_retry
    h.handle_response(init_pid())
    result.await_(1000)  # what init_transactions() does: the transition is acknowledged
    assert (tm.state, tm.producer_id, tm.producer_epoch) == (State.READY, 7, 2)
    return tm


def in_transaction_with(*tps: TopicPartition) -> TransactionManager:
    tm = initialized()
    tm.begin_transaction()
    for tp in tps:
        tm.maybe_add_partition(tp)
    if tps:
        h = tm.next_request(False)
        assert isinstance(h, AddPartitionsToTxnHandler)
        h.handle_response(add_partitions(dict.fromkeys(tps, 0)))
    return tm


def test_transitions_are_kafkas():
    assert is_transition_valid(State.UNINITIALIZED, State.INITIALIZING)
    assert is_transition_valid(State.READY, State.IN_TRANSACTION)
    assert is_transition_valid(State.ABORTABLE_ERROR, State.ABORTING_TRANSACTION)
    assert is_transition_valid(State.INITIALIZING, State.ABORTABLE_ERROR)
    assert is_transition_valid(State.READY, State.FATAL_ERROR)
    assert not is_transition_valid(State.ABORTABLE_ERROR, State.COMMITTING_TRANSACTION)
    assert not is_transition_valid(State.UNINITIALIZED, State.IN_TRANSACTION)
    assert not is_transition_valid(State.FATAL_ERROR, State.READY)
    tm = TransactionManager("tx")
    with pytest.raises(IllegalStateError, match="TransactionalId tx: Invalid transition attempted from state "
                       "UNINITIALIZED to state IN_TRANSACTION"):
        tm.begin_transaction()


def test_init_retries_coordinator_loading_and_concurrent_transactions():
    tm = TransactionManager("tx")
    result = tm.initialize_transactions()
    h = tm.next_request(False)
    assert isinstance(h, InitProducerIdHandler) and h.build(4).transactional_id == "tx"
    assert h.build(4).transaction_timeout_ms == 60000
    h.handle_response(init_pid(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS))
    assert tm.next_request(False) is h and not result.is_completed()
    h.handle_response(init_pid(ErrorCode.CONCURRENT_TRANSACTIONS))
    assert tm.next_request(False) is h
    h.handle_response(init_pid(ErrorCode.NOT_COORDINATOR))
    assert isinstance(tm.next_request(False), FindCoordinatorHandler)  # lookup first, then the retry
    assert tm.next_request(False) is h
    h.handle_response(init_pid())
    assert result.is_completed() and tm.state is State.READY


def test_add_partitions_batched_and_send_gated_until_added():
    tm = initialized()
    with pytest.raises(IllegalStateError, match="^Cannot call send in state READY$"):
        tm.maybe_add_partition(TP0)
    tm.begin_transaction()
    for tp in (TP0, TP1, TP0, TP2):
        tm.maybe_add_partition(tp)
    assert not tm.is_send_to_partition_allowed(TP0)
    h = tm.next_request(False)
    assert isinstance(h, AddPartitionsToTxnHandler) and h.partitions == [TP0, TP1, TP2]
    req = h.build(3)
    assert (req.v3_and_below_transactional_id, req.v3_and_below_producer_id, req.v3_and_below_producer_epoch) == (
        "tx", 7, 2)
    assert {(t.name, tuple(t.partitions)) for t in req.v3_and_below_topics} == {("t", (0, 1)), ("u", (0,))}
    tm.maybe_add_partition(TP1)  # pending: not queued again
    assert tm.next_request(False) is None
    h.handle_response(add_partitions({TP0: 0, TP1: 0, TP2: 0}))
    assert all(tm.is_send_to_partition_allowed(tp) for tp in (TP0, TP1, TP2))
    assert h.result.is_completed() and tm.transaction_started


def test_concurrent_transactions_on_first_add_retries_with_short_backoff():
    tm = initialized()
    tm.begin_transaction()
    tm.maybe_add_partition(TP0)
    h = tm.next_request(False)
    h.handle_response(add_partitions({TP0: ErrorCode.CONCURRENT_TRANSACTIONS}))
    assert tm.next_request(False) is h and h.is_retry and h.retry_backoff_ms == 20
    h.handle_response(add_partitions({TP0: 0}))
    assert tm.is_send_to_partition_allowed(TP0)


def test_commit_waits_for_batches_then_ends_transaction():
    tm = in_transaction_with(TP0)
    result = tm.begin_commit()
    assert tm.state is State.COMMITTING_TRANSACTION and tm.is_completing()
    assert tm.next_request(True) is None  # batches still incomplete: EndTxn waits
    h = tm.next_request(False)
    assert isinstance(h, EndTxnHandler) and h.committed and h.build(3).producer_epoch == 2
    h.handle_response(EndTxnResponse(error_code=ErrorCode.CONCURRENT_TRANSACTIONS))
    assert tm.next_request(False) is h
    h.handle_response(EndTxnResponse(error_code=0))
    assert result.is_completed() and result.error is None
    assert tm.state is State.READY and not tm.partitions_in_transaction and not tm.transaction_started


def test_empty_transaction_completes_without_end_txn():
    tm = in_transaction_with()
    result = tm.begin_commit()
    assert tm.next_request(False) is None
    assert result.is_completed() and tm.state is State.READY


def test_fenced_is_fatal_and_every_later_call_says_so():
    tm = in_transaction_with(TP0)
    result = tm.begin_commit()
    h = tm.next_request(False)
    h.handle_response(EndTxnResponse(error_code=ErrorCode.PRODUCER_FENCED))
    assert tm.state is State.FATAL_ERROR and isinstance(result.error, ProducerFencedError)
    assert not tm.is_send_to_partition_allowed(TP0)
    with pytest.raises(ProducerFencedError, match="There is a newer producer with the same transactionalId"):
        result.await_(0)  # commit_transaction() raises it
    with pytest.raises(ProducerFencedError, match="Producer with transactionalId 'tx' and ProducerIdAndEpoch"
                       r"\(producerId=7, epoch=2\) has been fenced by another producer"):
        tm.begin_transaction()
    with pytest.raises(ProducerFencedError):
        tm.begin_abort()


def test_invalid_producer_epoch_on_produce_is_fatal_fencing():
    from kafkapy.common.errors import InvalidProducerEpochError

    tm = in_transaction_with(TP0)
    tm.handle_failed_batch(InvalidProducerEpochError("old epoch"), True)
    assert tm.state is State.FATAL_ERROR and isinstance(tm.last_error, ProducerFencedError)


def test_failed_batch_is_abortable_then_abort_bumps_the_epoch():
    tm = in_transaction_with(TP0)
    err = KafkaError("disk full")
    tm.handle_failed_batch(err, had_sequence=True)
    assert tm.state is State.ABORTABLE_ERROR and tm.last_error is err and tm.epoch_bump_required
    with pytest.raises(KafkaError, match="Cannot execute transactional method because we are in an error state"):
        tm.begin_commit()
    result = tm.begin_abort()
    assert tm.state is State.ABORTING_TRANSACTION
    end = tm.next_request(False)
    assert isinstance(end, EndTxnHandler) and not end.committed
    end.handle_response(EndTxnResponse(error_code=0))
    assert tm.state is State.INITIALIZING  # epoch bump pending
    bump = tm.next_request(False)
    assert isinstance(bump, InitProducerIdHandler) and bump.is_epoch_bump
    assert (bump.build(4).producer_id, bump.build(4).producer_epoch) == (7, 2)
    bump.handle_response(init_pid(pid=7, epoch=3))
    assert result.is_completed() and result.error is None
    assert (tm.state, tm.producer_epoch, tm.last_error) == (State.READY, 3, None)


def test_topic_authorization_on_add_is_abortable():
    tm = initialized()
    tm.begin_transaction()
    tm.maybe_add_partition(TP0)
    tm.maybe_add_partition(TP2)
    h = tm.next_request(False)
    h.handle_response(add_partitions({TP0: ErrorCode.OPERATION_NOT_ATTEMPTED,
                                      TP2: ErrorCode.TOPIC_AUTHORIZATION_FAILED}))
    assert tm.state is State.ABORTABLE_ERROR
    assert isinstance(h.result.error, TopicAuthorizationFailedError) and "u" in str(h.result.error)
    assert not tm.pending_partitions and not tm.partitions_in_transaction


def test_send_offsets_adds_offsets_then_commits_to_group_coordinator():
    tm = in_transaction_with(TP0)
    group = ConsumerGroupMetadata("grp", 4, "member-1", None)
    result = tm.send_offsets_to_transaction({TP0: 42, TP1: 7}, group)
    add = tm.next_request(False)
    assert isinstance(add, AddOffsetsToTxnHandler) and add.build(3).group_id == "grp"
    add.handle_response(AddOffsetsToTxnResponse(error_code=0))
    assert not result.is_completed()
    commit = tm.next_request(False)
    assert isinstance(commit, TxnOffsetCommitHandler) and commit.coordinator_type == 0
    assert commit.coordinator_key == "grp"
    req = commit.build(3)
    assert (req.transactional_id, req.group_id, req.producer_id, req.producer_epoch) == ("tx", "grp", 7, 2)
    assert (req.generation_id, req.member_id) == (4, "member-1")
    assert sorted((t.name, p.partition_index, p.committed_offset) for t in req.topics for p in t.partitions) == [
        ("t", 0, 42), ("t", 1, 7)]

    def resp(codes: dict[int, int]) -> TxnOffsetCommitResponse:
        return TxnOffsetCommitResponse(topics=[TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic(
            name="t", partitions=[TxnOffsetCommitResponse.TxnOffsetCommitResponsePartition(
                partition_index=p, error_code=c) for p, c in codes.items()])])

    commit.handle_response(resp({0: 0, 1: ErrorCode.NOT_COORDINATOR}))
    assert tm.coordinator(0) is None and not result.is_completed()
    assert isinstance(tm.next_request(False), FindCoordinatorHandler)
    again = tm.next_request(False)
    assert again is commit and list(commit.pending) == [TP1]
    commit.handle_response(resp({1: 0}))
    assert result.is_completed() and result.error is None


def test_send_offsets_needs_an_open_transaction():
    tm = initialized()
    with pytest.raises(IllegalStateError, match=r"Cannot send offsets if a transaction is not in progress "
                       r"\(currentState= READY\)"):
        tm.send_offsets_to_transaction({TP0: 1}, ConsumerGroupMetadata("g"))


def test_timed_out_commit_must_be_retried_before_anything_else():
    tm = in_transaction_with(TP0)
    first = tm.begin_commit()
    with pytest.raises(KafkaError, match="Timeout expired after 0ms while awaiting commitTransaction"):
        first.await_(0)
    with pytest.raises(IllegalStateError, match="Cannot attempt operation `abortTransaction` because the previous "
                       "call to `commitTransaction` timed out and must be retried"):
        tm.begin_abort()
    assert tm.begin_commit() is first  # the retried call waits on the same request
    tm.next_request(False).handle_response(EndTxnResponse(error_code=0))
    first.await_(1000)
    tm.begin_transaction()
    assert tm.state is State.IN_TRANSACTION


def test_abortable_error_fails_queued_requests_but_not_coordinator_lookups():
    tm = in_transaction_with(TP0)
    result = tm.send_offsets_to_transaction({TP0: 1}, ConsumerGroupMetadata("g"))
    tm.transition_to_abortable_error(ConcurrentTransactionsError("x"))
    assert tm.next_request(False) is None
    assert isinstance(result.error, ConcurrentTransactionsError)
    tm.lookup_coordinator(1, "tx")
    assert isinstance(tm.next_request(False), FindCoordinatorHandler)


def test_send_before_init_transactions_is_refused():
    with pytest.raises(IllegalStateError, match="Cannot perform a 'send' before completing a call to "
                       "initTransactions when transactions are enabled."):
        TransactionManager("tx").maybe_add_partition(TP0)


def test_non_transactional_manager_refuses_transactional_calls():
    tm = TransactionManager(None)
    with pytest.raises(IllegalStateError, match="Transactional method invoked on a non-transactional producer."):
        tm.begin_transaction()
    assert tm.is_send_to_partition_allowed(TP0)
