"""Verifiable logs (issue 53): the Merkle tree's cost to an append and a proof's growth.

Measured in Rust (the ``verifiable`` command of ``attrflow-bench``): 16 threads each
registering subscribers on its own archive at ``synchronous=FULL`` with the tree off and on,
interleaved repeat by repeat; inclusion-proof and tree-head latency on archives of 10^3 and
10^6 records switched on after they were written, and how long that switch-on took.
Targets: appends with the tree at least 0.9× the appends without; a proof at 10^6 records
at most 2× one at 10^3.

Run just this section::

    python -m attrflow_bench.verifiable --bench-bin target/release/attrflow-bench \\
        --data-dir target/bench-data [--smoke] [--out section.md]
"""

from __future__ import annotations

from dataclasses import dataclass

from attrflow_bench.notes import note
from attrflow_bench.results import Results
from attrflow_bench.rust_bench import RustBench
from attrflow_bench.section import run_alone

PREFIX = "verifiable"
APPEND_TARGET = 0.9
PROOF_GROWTH_TARGET = 2.0


@dataclass(frozen=True)
class VerifiablePlan:
    """How much this section measures."""

    repeats: int
    workers: int
    appends: int
    proof_sizes: tuple[int, ...]
    proofs: int


FULL = VerifiablePlan(
    repeats=3, workers=16, appends=100, proof_sizes=(1_000, 1_000_000), proofs=200
)
SMOKE = VerifiablePlan(repeats=2, workers=2, appends=10, proof_sizes=(100, 1_000), proofs=5)


def figures(rust: RustBench, smoke: bool, results: Results) -> None:
    """Measures every figure of this section into ``results``."""
    plan = SMOKE if smoke else FULL
    report = rust.measure(
        "verifiable",
        workers=plan.workers,
        appends=plan.appends,
        proof_sizes=",".join(str(size) for size in plan.proof_sizes),
        proofs=plan.proofs,
        repeats=plan.repeats,
    )
    results.merge_rust(PREFIX, report)


def _figure(results: Results, name: str, digits: int = 1) -> str:
    summary = results.summary(name)
    return f"{summary.median:,.{digits}f} ({summary.low:,.{digits}f}–{summary.high:,.{digits}f})"


def _growth(results: Results) -> tuple[int, int, float]:
    """The smallest and largest proof sizes and the median proof latency's growth."""
    sizes = results.facts[f"{PREFIX}.config"]["proof_sizes"]
    small, large = sizes[0], sizes[-1]
    growth = (
        results.summary(f"{PREFIX}.proof_us@{large}").median
        / results.summary(f"{PREFIX}.proof_us@{small}").median
    )
    return small, large, growth


def missed(results: Results) -> list[str]:
    """The keys of this section's targets the run missed (none when it did not run)."""
    if f"{PREFIX}.on_over_off" not in results.series:
        return []
    keys = []
    if results.summary(f"{PREFIX}.on_over_off").median < APPEND_TARGET:
        keys.append("11-verifiable-appends")
    if _growth(results)[2] > PROOF_GROWTH_TARGET:
        keys.append("11-verifiable-proofs")
    return keys


def render(results: Results) -> list[str]:
    """This section of BENCHMARKS.md (empty when the run did not measure it)."""
    if f"{PREFIX}.on_over_off" not in results.series:
        return []
    config = results.facts[f"{PREFIX}.config"]
    ratio = results.summary(f"{PREFIX}.on_over_off")
    small, large, growth = _growth(results)
    lines = [
        "## 11. Verifiable logs",
        "",
        f"Appends: {config['workers']} threads, each registering {config['appends']} "
        "subscribers on its own archive, SQLite at `synchronous=FULL`, with the Merkle tree "
        "off and on (switched on while empty), interleaved repeat by repeat on fresh stores "
        "(median and min–max over repeats).",
        "",
        "| tree | appends/s |",
        "| --- | --- |",
        f"| off | {_figure(results, f'{PREFIX}.appends_per_s@off', 0)} |",
        f"| on | {_figure(results, f'{PREFIX}.appends_per_s@on', 0)} |",
        "",
        f"With the tree: **{ratio.median:.2f}×** ({ratio.low:.2f}–{ratio.high:.2f}) the appends "
        f"without (target ≥ {APPEND_TARGET}×): an append adds its leaf and the subtrees it "
        "completes to the frontier in the state it writes anyway, and one in 16 writes a tile.",
        "",
        f"Proofs: the median of {config['proofs']} inclusion proofs of records spread over the "
        "log, and as many tree heads (what a checkpoint signs), on an archive switched on "
        "after it was written.",
        "",
        "| records | inclusion proof (µs) | tree head (µs) | switch-on (s) |",
        "| --- | --- | --- | --- |",
    ]
    for size in config["proof_sizes"]:
        lines.append(
            f"| {size:,} | {_figure(results, f'{PREFIX}.proof_us@{size}')} | "
            f"{_figure(results, f'{PREFIX}.checkpoint_us@{size}')} | "
            f"{_figure(results, f'{PREFIX}.switch_on_s@{size}', 2)} |"
        )
    lines += [
        "",
        f"A proof at {large:,} records takes **{growth:.2f}×** as long as at {small:,} "
        f"(target ≤ {PROOF_GROWTH_TARGET}×): it reads the state and the O(log n) tiles its "
        "path touches. Signing a checkpoint is the client's, off the append path.",
        "",
        *note("11-verifiable"),
    ]
    return lines


def main(argv: list[str] | None = None) -> None:
    """Measures this section alone and prints it (and saves the raw figures)."""
    run_alone("verifiable", figures, render, argv)


if __name__ == "__main__":
    main()
