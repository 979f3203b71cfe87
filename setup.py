"""setuptools hook: the project is configured in pyproject.toml; this file only makes the in-place copy of the
built C extensions atomic.

An editable install (`pip install -e .`, `make deps`) builds each ext-module and copies it next to its sources.
setuptools' copy unlinks the old file and writes the new one at its final name in chunks, so a process that
imports the extension meanwhile (another test run's broker, a tool started by a test) maps a file still being
written and dies with SIGBUS ("Fatal Python error: Bus error" and the loaded extension modules: reproduced by
importing kafkapy.metrics._recorders while it was rewritten that way: 14 of 100 imports; 0 of 100 with the
rename below). Here the new file is
written under a temporary name in the same directory and renamed over the old one (rename(2) is atomic): an
importer maps either the old file or the new one, complete.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext


class AtomicInplaceBuildExt(build_ext):
    """build_ext whose copies (the in-place copy of an editable or --inplace build) land by rename."""

    def copy_file(self, infile: str, outfile: str, *args: Any, **kwargs: Any) -> tuple[str, bool]:
        if os.path.isdir(outfile):
            outfile = os.path.join(outfile, os.path.basename(infile))
        tmp = f"{outfile}.{os.getpid()}.tmp"
        try:
            _, copied = super().copy_file(infile, tmp, *args, **kwargs)
            if not self.dry_run:
                os.replace(tmp, outfile)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return outfile, copied


setup(cmdclass={"build_ext": AtomicInplaceBuildExt})
