"""Runs the Rust benchmark binary and reads its JSON."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


class RustBench:
    """The ``attrflow-bench`` binary, writing its stores under ``data_dir``."""

    def __init__(self, binary: Path, data_dir: Path) -> None:
        self.binary = binary
        self.data_dir = data_dir

    def run(self, command: str, **options: object) -> dict[str, Any]:
        """Runs ``command`` with ``--name value`` options (``_`` in names becomes ``-``)."""
        argv = [str(self.binary), command]
        for name, value in options.items():
            argv += [f"--{name.replace('_', '-')}", str(value)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
        report: dict[str, Any] = json.loads(done.stdout)
        return report

    def measure(self, command: str, **options: object) -> dict[str, Any]:
        """Runs a measuring command with its stores in the data folder."""
        return self.run(command, dir=self.data_dir, **options)

    def populate(self, store: Path, records: int) -> None:
        """Writes a fresh store holding ``records`` subscribers."""
        self.run("populate", store=store, records=records)
