"""Running one section of BENCHMARKS.md on its own: measure, print, save the figures."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from attrflow_bench.machine import describe
from attrflow_bench.results import Results
from attrflow_bench.rust_bench import RustBench

Figures = Callable[[RustBench, bool, Results], None]
Render = Callable[[Results], list[str]]


def run_alone(name: str, figures: Figures, render: Render, argv: list[str] | None) -> None:
    """Measures the section ``name`` alone and prints it; saves the raw figures as
    ``NAME.json`` in the data folder, and the section in ``--out`` when given."""
    parser = argparse.ArgumentParser(description=f"attrflow's {name} benchmark")
    parser.add_argument("--bench-bin", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", type=Path, help="write the section here too")
    args = parser.parse_args(argv)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    results = Results()
    results.facts["machine"] = describe()
    figures(RustBench(args.bench_bin.resolve(), args.data_dir.resolve()), args.smoke, results)
    results.save(args.data_dir / f"{name}.json")
    section = "\n".join(render(results))
    print(section)
    if args.out:
        args.out.write_text(section + "\n")
    print(json.dumps(results.series, indent=1), file=sys.stderr)
