"""DescriptorReserve in a child process whose RLIMIT_NOFILE is used up: the reserved descriptor lets an
atomic file write through (the embedded metadata store's) and is held again afterwards; while its number is
kept by what the call opened, the next call fails with EMFILE as without a reserve, and works once it is freed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = textwrap.dedent("""
    import errno, json, os, resource, sys
    from kafkapy.common.atomic_file import atomic_write
    from kafkapy.common.descriptor_reserve import DescriptorReserve

    target = sys.argv[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    reserve = DescriptorReserve()
    filler = []
    while len(filler) < 64:
        try:
            filler.append(os.open(os.devnull, os.O_RDONLY))
        except OSError as e:
            assert e.errno == errno.EMFILE
            break
    out = {"held_before": reserve.held}
    try:
        atomic_write(target + ".plain", b"x")
    except OSError as e:
        out["plain"] = e.errno
    reserve.call(lambda: atomic_write(target, b"written at the limit"))
    out["held_after"] = reserve.held
    kept = reserve.call(lambda: open(target + ".kept", "wb"))  # keeps the reserve's number: none held now
    out["held_while_kept"] = reserve.held
    try:
        reserve.call(lambda: atomic_write(target, b"lost"))
    except OSError as e:
        out["without"] = e.errno
    kept.close()
    reserve.call(lambda: atomic_write(target, b"written at the limit"))  # and held again afterwards
    out["held_again"] = reserve.held
    reserve.close()
    out["held_closed"] = reserve.held
    print(json.dumps(out))
""")


def test_a_write_at_the_descriptor_limit_uses_the_reserve(tmp_path: Path) -> None:
    target = tmp_path / "meta.json"
    done = subprocess.run([sys.executable, "-c", CHILD, str(target)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out == {"held_before": True, "plain": 24, "held_after": True, "held_while_kept": False,
                   "without": 24, "held_again": True, "held_closed": False}
    assert target.read_bytes() == b"written at the limit"
    assert not (tmp_path / "meta.json.plain").exists() and (tmp_path / "meta.json.kept").exists()
