"""ControllerRequestSender: pushes one BrokerRequestBatch of controller decisions to the brokers, in Kafka's order
(ControllerBrokerRequestBatch.sendRequestsToBrokers): LeaderAndIsr first (so a broker hosts a partition before
clients can see it), then UpdateMetadata (this broker's MetadataCache at once, every live broker by request),
then StopReplica.

Every mode hands the requests to a ControllerChannel: the network in ZooKeeper mode, the broker in-process
when embedded (server/local_controller_channel.py), plain functions in tests (CallbackControllerChannel);
each LeaderAndIsr answer ({TopicPartition: error code}) comes back through the channel's
on_leader_and_isr_response.
Reads and writes no bytes itself. Thread-safety: none; only the controller's event thread sends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.controller.controller_channel import ControllerChannel
from kafkapy.controller.partition_state_machine import BrokerRequestBatch, ControllerContext

log = logging.getLogger("kafka.controller.KafkaController")

def call_safely(fn: Callable[..., Any], *args: Any) -> Any:
    """A broker callback's result, or None when it raised: a broker failing to apply a decision must not stop
    the controller."""
    try:
        return fn(*args)
    except Exception:
        log.exception("Controller callback %s failed", getattr(fn, "__name__", fn))
        return None


class ControllerRequestSender:
    def __init__(self, ctx: ControllerContext, broker_id: int, metadata_cache: MetadataCache,
                 channel: ControllerChannel) -> None:
        self.ctx = ctx
        self.broker_id = broker_id
        self.metadata_cache = metadata_cache
        self.channel = channel

    def send(self, batch: BrokerRequestBatch) -> None:
        self._send_to_brokers(batch, self.channel)

    def _send_to_brokers(self, batch: BrokerRequestBatch, channel: ControllerChannel) -> None:
        """The decisions as requests to every live broker, in Kafka's order."""
        ctx = self.ctx
        live = ctx.live_brokers
        channel.set_live_brokers(live)
        for broker_id, states in sorted(batch.leader_and_isr.items()):
            if broker_id not in live:
                continue
            leaders = {s.leader for s in states.values()}
            channel.send_leader_and_isr(broker_id, self.broker_id, ctx.epoch, list(states.values()),
                                        [live[b] for b in sorted(leaders) if b in live])
        if batch.update_metadata or batch.update_metadata_brokers:
            # This broker's cache at once (handlers here answer with it), every broker by UpdateMetadata.
            self.metadata_cache.update_metadata(self.broker_id, ctx.epoch, live.values(),
                                                list(batch.update_metadata.values()), ctx.topic_ids)
            channel.send_update_metadata(sorted(live), self.broker_id, ctx.epoch, list(live.values()),
                                         list(batch.update_metadata.values()), dict(ctx.topic_ids))
        for broker_id, parts in sorted(batch.stop_replica.items()):
            if broker_id in live:
                channel.send_stop_replica(broker_id, self.broker_id, ctx.epoch, list(parts.values()))

    def reset(self) -> None:
        """This broker stopped being the controller: drop queued requests."""
        self.channel.reset()

    def shutdown(self) -> None:
        self.channel.shutdown()
