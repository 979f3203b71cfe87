"""reassign-partitions' live Rich view on a terminal (kafkapy/tools/reassign_progress.py does the sums):
one row per moving partition (target replicas, bytes copied / to copy, a bar), then the total, rate and ETA,
redrawn every second until the partitions' reassignments finish or Ctrl-C stops the watching (the
reassignment itself carries on). Only on a terminal stdout: piped output stays Kafka's text.
Thread-safety: main thread.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kafkapy.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafkapy.client.admin_api import ReplicaLogDirsApi

REFRESH_S = 1.0
MAX_WATCH_S = 24 * 3600.0  # a bound on the loop; a reassignment this long is watched again with --verify


def _render(progress: dict[TopicPartition, Any], targets: dict[TopicPartition, list[int]], tracker: Any) -> Any:
    from rich import box
    from rich.progress_bar import ProgressBar
    from rich.table import Table

    from kafkapy.tools.reassign_progress import human_bytes, human_eta

    table = Table(box=box.ROUNDED, header_style="bold cyan", border_style="dim", title="Partition reassignment")
    for name in ("Partition", "Replicas", "Moved", "Total", "Progress", "%"):
        table.add_column(name, justify="right" if name in ("Moved", "Total", "%") else "left")
    for tp in sorted(progress, key=lambda t: (t.topic, t.partition)):
        p = progress[tp]
        table.add_row(str(tp), ",".join(map(str, targets.get(tp, []))), human_bytes(p.moved), human_bytes(p.total),
                      ProgressBar(total=1.0, completed=p.fraction, width=30), f"{p.fraction * 100:.0f}%")
    moved = sum(p.moved for p in progress.values())
    total = sum(p.total for p in progress.values())
    table.caption = (f"{human_bytes(moved)} of {human_bytes(total)} moved · {human_bytes(tracker.rate)}/s · "
                     f"ETA {human_eta(tracker.eta_s(progress))} · Ctrl-C stops watching")
    return table


def watch_progress(admin: ReplicaLogDirsApi, partitions: Iterable[TopicPartition], out: Any) -> bool:
    """Show the live view until none of `partitions` is reassigning; False if the user stopped watching."""
    from rich.live import Live

    from kafkapy.tools.reassign_progress import ProgressTracker, completed, replica_sizes, sample

    wanted = list(dict.fromkeys(partitions))
    tracker = ProgressTracker()
    finished: dict[TopicPartition, Any] = {}
    targets: dict[TopicPartition, list[int]] = {}
    last_seen: dict[TopicPartition, Any] = {}  # each partition's latest sampled progress
    deadline = time.monotonic() + MAX_WATCH_S
    try:
        with Live(console=out.console(), refresh_per_second=4, transient=False) as live:
            while time.monotonic() < deadline:
                ongoing = admin.list_partition_reassignments(wanted)
                progress = sample(admin, ongoing)
                for tp, r in ongoing.items():
                    targets[tp] = [b for b in r.replicas if b not in r.removing_replicas]
                just_done = [tp for tp in wanted if tp not in progress and tp in targets and tp not in finished]
                unseen = {tp: targets[tp] for tp in just_done if tp not in last_seen}
                final = replica_sizes(admin, unseen) if unseen else {}
                for tp in just_done:  # a finished partition stays on screen at 100% of what it copied
                    finished[tp] = completed(last_seen.get(tp), final.get(tp))
                for tp in progress:
                    finished.pop(tp, None)
                last_seen.update(progress)
                shown = {**finished, **progress}
                tracker.update(time.monotonic(), shown)
                live.update(_render(shown, targets, tracker))
                if not ongoing:
                    return True
                time.sleep(REFRESH_S)
    except KeyboardInterrupt:
        return False
    return False
