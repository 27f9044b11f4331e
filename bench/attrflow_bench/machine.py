"""What the run ran on: date, cores, memory, CPU model, disk."""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path


def _proc_field(path: str, name: str) -> str:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(name):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def describe() -> dict[str, str]:
    """The machine's facts, as text."""
    memory_kib = _proc_field("/proc/meminfo", "MemTotal").split()[0]
    memory = f"{int(memory_kib) / 1024 / 1024:.1f} GiB" if memory_kib.isdigit() else "unknown"
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": str(os.cpu_count() or 0),
        "cpu": _proc_field("/proc/cpuinfo", "model name"),
        "memory": memory,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "load_at_start": " ".join(f"{value:.2f}" for value in load),
    }
