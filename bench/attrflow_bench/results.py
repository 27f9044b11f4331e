"""The figures of one run: named series of per-repeat values, with their units."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attrflow_bench.stats import Summary


@dataclass
class Results:
    """Every series of one run, the machine it ran on and the settings used."""

    series: dict[str, list[float]] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)

    def add(self, name: str, unit: str, value: float) -> None:
        """Appends one repeat's value to the series ``name``."""
        self.series.setdefault(name, []).append(value)
        self.units[name] = unit

    def merge_rust(self, prefix: str, report: dict[str, Any]) -> None:
        """Adds the series of one ``attrflow-bench`` report under ``prefix``."""
        for name, entry in report["series"].items():
            for value in entry["repeats"]:
                self.add(f"{prefix}.{name}", entry["unit"], float(value))
        self.facts[f"{prefix}.config"] = report.get("config", {})

    def values(self, name: str) -> list[float]:
        """The per-repeat values of ``name``; a missing series is an error naming it."""
        try:
            return self.series[name]
        except KeyError:
            raise KeyError(f"no series {name!r} in this run") from None

    def summary(self, name: str) -> Summary:
        """The median and spread of ``name``."""
        return Summary.of(self.values(name))

    def save(self, path: Path) -> None:
        """Writes the run as JSON."""
        data = {"series": self.series, "units": self.units, "facts": self.facts}
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: Path) -> Results:
        """Reads a run written by :meth:`save`."""
        data = json.loads(path.read_text())
        return cls(series=data["series"], units=data["units"], facts=data["facts"])
