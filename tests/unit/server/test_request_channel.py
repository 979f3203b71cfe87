"""RequestChannel: bounded hand-off, interrupts, response routing (no sockets)."""

from __future__ import annotations

import threading

from kafkapy.server.network.request_channel import CLOSE, NOOP, SEND, Request, RequestChannel, Response


def make_request(corr: int, processor_id: int = 0) -> Request:
    frame = memoryview(b"\x00\x12\x00\x03" + corr.to_bytes(4, "big"))
    return Request(processor_id, f"c-{corr}", 18, 3, corr, frame, ("127.0.0.1", 5000), 0)


class Sink:
    def __init__(self) -> None:
        self.responses: list[Response] = []

    def enqueue_response(self, response: Response) -> None:
        self.responses.append(response)


def test_fifo_and_timeout() -> None:
    channel = RequestChannel(10)
    for i in range(3):
        assert channel.send_request(make_request(i))
    assert channel.request_queue_size == 3
    assert [channel.receive_request(0).correlation_id for _ in range(3)] == [0, 1, 2]
    assert channel.receive_request(0) is None
    assert channel.receive_request(0.01) is None


def test_full_queue_blocks_sender_until_a_receive() -> None:
    channel = RequestChannel(1)
    assert channel.send_request(make_request(1))
    assert channel.send_request(make_request(2), timeout=0.01) is False
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(channel.send_request(make_request(3), timeout=5)))
    t.start()
    assert channel.receive_request(5).correlation_id == 1
    t.join(5)
    assert result == [True]
    assert channel.receive_request(0).correlation_id == 3


def test_interrupt_wakes_blocked_receivers() -> None:
    channel = RequestChannel(5)
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(channel.receive_request(None))) for _ in range(3)]
    for t in threads:
        t.start()
    # Interrupt until every receiver has returned (a receiver that had not started waiting yet
    # would miss an earlier interrupt; bounded loop).
    for _ in range(500):
        channel.interrupt_receivers()
        if len(results) == 3:
            break
        threading.Event().wait(0.01)
    for t in threads:
        t.join(5)
    assert results == [None, None, None]


def test_responses_routed_to_owning_processor() -> None:
    channel = RequestChannel(5)
    sinks = [Sink(), Sink()]
    for i, sink in enumerate(sinks):
        channel.add_processor(i, sink)
    r0, r1 = make_request(1, 0), make_request(2, 1)
    channel.send_response(r1, [b"\x00\x00\x00\x04", b"\x00\x00\x00\x02"])
    channel.send_response(r0, None)
    channel.close_connection(r1)
    assert [(r.request, r.action) for r in sinks[0].responses] == [(r0, NOOP)]
    assert [(r.request, r.action) for r in sinks[1].responses] == [(r1, SEND), (r1, CLOSE)]
    assert sinks[1].responses[0].chunks == [b"\x00\x00\x00\x04", b"\x00\x00\x00\x02"]
    channel.remove_processor(1)
    channel.send_response(r1, [b"x"])  # processor gone: dropped silently
    assert len(sinks[1].responses) == 2


def test_clear_drops_queued_requests() -> None:
    channel = RequestChannel(2)
    channel.send_request(make_request(1))
    channel.send_request(make_request(2))
    assert [r.correlation_id for r in channel.clear()] == [1, 2]
    assert channel.send_request(make_request(3), timeout=0)


def test_parked_receiver_is_woken_by_a_request() -> None:
    channel = RequestChannel(5)
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(channel.receive_request(5)))
    t.start()
    threading.Event().wait(0.05)  # let it park
    assert channel.send_request(make_request(7))
    t.join(5)
    assert [r.correlation_id for r in got] == [7]  # type: ignore[union-attr]
    assert channel.request_queue_size == 0


def test_many_senders_and_receivers_deliver_each_request_once() -> None:
    # Small queue and short receive timeouts: parked receivers time out while requests arrive,
    # senders block on the bound; nothing may be lost or duplicated.
    channel = RequestChannel(4)
    senders, per_sender = 4, 300
    received: list[int] = []
    lock = threading.Lock()
    stop = threading.Event()

    def receive() -> None:
        while not stop.is_set():
            request = channel.receive_request(0.002)
            if request is not None:
                with lock:
                    received.append(request.correlation_id)

    def send(base: int) -> None:
        for i in range(per_sender):
            assert channel.send_request(make_request(base + i), timeout=5)

    receivers = [threading.Thread(target=receive) for _ in range(4)]
    producers = [threading.Thread(target=send, args=(s * 10_000,)) for s in range(senders)]
    for t in receivers + producers:
        t.start()
    for t in producers:
        t.join(30)
    for _ in range(3000):  # bounded: at most ~30 s
        with lock:
            if len(received) == senders * per_sender:
                break
        threading.Event().wait(0.01)
    stop.set()
    channel.interrupt_receivers()
    for t in receivers:
        t.join(5)
    assert sorted(received) == sorted(s * 10_000 + i for s in range(senders) for i in range(per_sender))


def test_interrupt_does_not_eat_later_requests() -> None:
    channel = RequestChannel(5)
    channel.interrupt_receivers()  # nobody waiting
    assert channel.send_request(make_request(1))
    assert channel.receive_request(0).correlation_id == 1
    assert channel.request_queue_size == 0


def test_request_queued_without_waking_is_taken_by_a_parked_receiver_after_its_timeout() -> None:
    channel = RequestChannel(5)
    got: list[object] = []

    def receive() -> None:
        assert channel.in_receiver_thread() is False
        for _ in range(100):  # a handler's loop: short timeouts, bounded
            request = channel.receive_request(0.02)
            if request is not None:
                got.append(request)
                assert channel.in_receiver_thread() is True
                return

    t = threading.Thread(target=receive)
    t.start()
    threading.Event().wait(0.05)  # parked
    assert channel.in_receiver_thread() is False  # this thread never received
    assert channel.send_request(make_request(9), wake_receiver=False)
    t.join(5)
    assert [r.correlation_id for r in got] == [9]  # type: ignore[union-attr]


def test_receiver_that_queues_without_waking_takes_the_request_itself() -> None:
    channel = RequestChannel(5)
    assert channel.send_request(make_request(1))
    first = channel.receive_request(0)
    assert first is not None and channel.in_receiver_thread()
    assert channel.send_request(make_request(2), timeout=0, wake_receiver=False)
    assert channel.receive_request(0).correlation_id == 2
