"""Out of file descriptors is the process's limit, not the disk's: a one-dir LogManager whose high-watermark
checkpoint hits EMFILE logs it and keeps the dir online (no halt, the log still served); the next checkpoint,
with a descriptor free, writes the file. An EIO still halts. Run in a child process whose RLIMIT_NOFILE is
used up for real (the halt procedure swapped for a recorder, as Kafka's Exit.setHaltProcedure)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = textwrap.dedent("""
    import errno, json, os, resource, sys
    from kafkapy.common import exit as kafka_exit
    from kafkapy.common.time import MockTime
    from kafkapy.common.topic_partition import TopicPartition
    from kafkapy.storage.log_manager import LogManager

    only = sys.argv[1]
    halts = []
    kafka_exit.set_halt_procedure(halts.append)
    mgr = LogManager([only], {}, MockTime(1_700_000_000_000))
    mgr.startup()
    tp = TopicPartition("t", 0)
    lg = mgr.get_or_create_log(tp)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    filler = []
    while len(filler) < 256:
        try:
            filler.append(os.open(os.devnull, os.O_RDONLY))
        except OSError as e:
            assert e.errno == errno.EMFILE
            break
    mgr.checkpoint_high_watermarks({tp: 7})
    out = {"halts": list(halts), "offline": sorted(mgr._offline_dirs), "served": mgr.get_log(tp) is lg,
           "written": os.path.exists(os.path.join(only, "replication-offset-checkpoint"))}
    for fd in filler:
        os.close(fd)
    mgr.checkpoint_high_watermarks({tp: 7})
    with open(os.path.join(only, "replication-offset-checkpoint")) as f:
        out["file"] = f.read()
    mgr.log_dir_failed(only, OSError(errno.EIO, "Input/output error"))
    out["halts_after_eio"] = list(halts)
    mgr.shutdown()
    print(json.dumps(out))
""")


def test_a_checkpoint_out_of_descriptors_leaves_the_only_dir_online(tmp_path: Path) -> None:
    only = str(tmp_path / "only")
    done = subprocess.run([sys.executable, "-c", CHILD, only], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"halts": [], "offline": [], "served": True, "written": False, "file": "0\n1\nt 0 7\n",
                   "halts_after_eio": [1]}
    assert "not taken offline (out of file descriptors): [Errno 24]" in done.stderr
