"""AttrflowSaver beside LangGraph's own SqliteSaver, in one run, on SQLite files of the same
folder: a thread of a ``StateGraph`` whose ``add_messages`` channel gains one message a
step, run to 1,000 steps through each saver. Reported: the store's bytes after the run,
``get_tuple`` of the latest checkpoint at the last step, and ``put`` at the last step
against ``put`` at step 10 (each ``put`` the graph makes is timed as it runs).

    python -m attrflow_bench.langgraph_saver [--smoke] [--steps N] [--data-dir DIR]

With a PostgreSQL server (``--postgres-url``, or in ``make bench`` a throwaway durable one
when PostgreSQL's binaries are installed), the same thread also runs through AttrflowSaver
on PostgreSQL and LangGraph's PostgresSaver, each in a schema of its own; their storage is
the schema's tables, indexes and TOAST after ``VACUUM FULL``.

Alone it prints its figures as JSON; ``make bench`` runs it as section 10 (:func:`figures`,
:func:`render`).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

from attrflow.integrations.langgraph import AttrflowSaver
from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from attrflow_bench.results import Results

PREFIX = "langgraph"
FULL_STEPS = 1_000
SMOKE_STEPS = 40
EARLY_STEP = 10
"""The step whose ``put`` the last step's is compared with."""
WINDOW = 5
"""``put`` at step N is the median of the puts of steps N - WINDOW to N + WINDOW (the last
2 × WINDOW + 1 at the last step)."""
READS = 100
SAVERS = ("AttrflowSaver", "SqliteSaver")
PG_SAVERS = ("AttrflowSaver-pg", "PostgresSaver")
FIGURES = ("stored_bytes", "get_tuple_us", "put_last_us", "put_early_us", "put_growth")
THREAD = "bench-thread"


class ChatState(TypedDict):
    """The graph's state: the message list, merged by ``add_messages``."""

    messages: Annotated[list[AnyMessage], add_messages]


_VOCABULARY = (
    "the of and to in is that for it as with was on be by this are from or at an not have "
    "which but all were when we there can more if will one about been has their do would "
    "so what up out into only time than them some could other then its over also new these "
    "model tool call result answer thread step message agent user state graph node value"
)
WORDS = tuple(_VOCABULARY.split(" "))


def message(number: int) -> AIMessage:
    """Step ``number``'s message: about 250 bytes of words drawn by a generator seeded with
    ``number`` (text that compresses as prose does, not a repeated phrase that PostgreSQL's
    TOAST compression would shrink to nothing), as a short assistant turn."""
    words = random.Random(number).choices(WORDS, k=45)
    return AIMessage(content=f"step {number}: " + " ".join(words), id=f"m-{number}")


def build_graph(saver: BaseCheckpointSaver[Any], steps: int) -> Any:
    """A graph whose one node adds one message a step until there are ``steps``."""

    def step(state: ChatState) -> dict[str, Any]:
        return {"messages": [message(len(state["messages"]) + 1)]}

    def more(state: ChatState) -> str:
        return "step" if len(state["messages"]) < steps else END

    graph = StateGraph(ChatState)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", more)
    return graph.compile(checkpointer=saver)


def sqlite_live_bytes(path: Path) -> int:
    """Bytes an SQLite file holds in live pages (the file less its free pages), after
    checkpointing its WAL."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
    return int((pages - free) * page_size)


@contextmanager
def timed_puts(saver: BaseCheckpointSaver[Any]) -> Iterator[list[float]]:
    """Times every ``put`` made on ``saver`` while open, in seconds, in call order."""
    durations: list[float] = []
    put: Callable[..., Any] = saver.put

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return put(*args, **kwargs)
        finally:
            durations.append(time.perf_counter() - start)

    saver.put = timed  # type: ignore[method-assign]
    try:
        yield durations
    finally:
        del saver.put


def measure(saver: BaseCheckpointSaver[Any], steps: int) -> dict[str, float]:
    """Runs the thread to ``steps`` messages through ``saver`` and times its calls."""
    config: RunnableConfig = {
        "configurable": {"thread_id": THREAD},
        "recursion_limit": 2 * steps + 10,
    }
    with timed_puts(saver) as puts:
        state = build_graph(saver, steps).invoke({"messages": []}, config)
    assert len(state["messages"]) == steps
    # The graph's first put is its input step (-1), then one put per step.
    by_step = puts[1:]
    early = by_step[max(0, EARLY_STEP - 1 - WINDOW) : EARLY_STEP + WINDOW]
    last = by_step[-(2 * WINDOW + 1) :]
    reads = []
    read_config: RunnableConfig = {"configurable": {"thread_id": THREAD}}
    for _ in range(READS):
        start = time.perf_counter()
        latest = saver.get_tuple(read_config)
        reads.append(time.perf_counter() - start)
    assert latest is not None
    assert len(latest.checkpoint["channel_values"]["messages"]) == steps
    figures = {
        "get_tuple_us": statistics.median(reads) * 1e6,
        "put_last_us": statistics.median(last) * 1e6,
        "put_early_us": statistics.median(early) * 1e6,
    }
    figures["put_growth"] = figures["put_last_us"] / figures["put_early_us"]
    return figures


def run(steps: int, folder: Path) -> dict[str, Any]:
    """Both savers, one after the other, each on its own SQLite file in ``folder``."""
    for leftover in folder.glob("langgraph-*.db*"):
        leftover.unlink()
    result: dict[str, Any] = {"steps": steps}
    ours_path = folder / "langgraph-attrflow.db"
    with AttrflowSaver.from_store(str(ours_path)) as ours:
        result["AttrflowSaver"] = measure(ours, steps)
    result["AttrflowSaver"]["stored_bytes"] = sqlite_live_bytes(ours_path)
    theirs_path = folder / "langgraph-sqlitesaver.db"
    connection = sqlite3.connect(theirs_path, check_same_thread=False)
    try:
        result["SqliteSaver"] = measure(SqliteSaver(connection), steps)
    finally:
        connection.close()
    result["SqliteSaver"]["stored_bytes"] = sqlite_live_bytes(theirs_path)
    result["ratios"] = {
        key: result["AttrflowSaver"][key] / result["SqliteSaver"][key] for key in FIGURES
    }
    return result


def postgres_schema_bytes(url: str, schema: str) -> int:
    """Bytes of every table of ``schema`` with its indexes and TOAST, after a VACUUM FULL
    (so live rows only: the space of rewritten rows, which an SQLite file's free pages hold
    and are not counted there, is not counted here either)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        tables = db.execute(
            "SELECT format('%%I.%%I', schemaname, tablename) FROM pg_tables WHERE schemaname = %s",
            (schema,),
        ).fetchall()
        total = 0
        for (table,) in tables:
            db.execute(f"VACUUM FULL {table}")
            row = db.execute("SELECT pg_total_relation_size(%s::regclass)", (table,)).fetchone()
            total += int(row[0]) if row else 0
    return total


def run_postgres(steps: int, url: str) -> dict[str, Any]:
    """AttrflowSaver and PostgresSaver on the PostgreSQL server ``url``, a fresh schema
    each."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    result: dict[str, Any] = {}
    ours_schema = f"bench_lg_{uuid.uuid4().hex[:12]}"
    separator = "&" if "?" in url else "?"
    with AttrflowSaver.from_store(f"{url}{separator}schema={ours_schema}") as ours:
        result["AttrflowSaver-pg"] = measure(ours, steps)
    result["AttrflowSaver-pg"]["stored_bytes"] = postgres_schema_bytes(url, ours_schema)
    theirs_schema = f"bench_lg_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {theirs_schema}")
    options = f"-c search_path={theirs_schema}"
    with psycopg.connect(url, autocommit=True, prepare_threshold=0, options=options) as conn:
        theirs = PostgresSaver(conn)  # type: ignore[arg-type]
        theirs.setup()
        result["PostgresSaver"] = measure(theirs, steps)
    result["PostgresSaver"]["stored_bytes"] = postgres_schema_bytes(url, theirs_schema)
    return result


def figures(smoke: bool, data_dir: Path, results: Results) -> None:
    """Measures this section (one repeat) into ``results``: on SQLite, and at full size on
    a throwaway PostgreSQL server too when PostgreSQL's binaries are installed."""
    from attrflow_bench import pg_concurrency

    steps = SMOKE_STEPS if smoke else FULL_STEPS
    folder = data_dir / "langgraph-saver"
    folder.mkdir(parents=True, exist_ok=True)
    measured = run(steps, folder)
    savers: tuple[str, ...] = SAVERS
    if not smoke and pg_concurrency.postgres_available():
        with pg_concurrency.PostgresServer() as url:
            measured.update(run_postgres(steps, url))
        savers = SAVERS + PG_SAVERS
    results.facts[f"{PREFIX}.steps"] = steps
    for who in savers:
        for key, value in measured[who].items():
            unit = {"stored_bytes": "B", "put_growth": "x"}.get(key, "us")
            results.add(f"{PREFIX}.{who}.{key}", unit, value)


TARGETS = {"stored_bytes": "≤ 0.1×", "get_tuple_us": "≤ 1.5×", "put_growth": "≤ 1.5 (ours)"}


def render(results: Results) -> list[str]:
    """This section of BENCHMARKS.md (empty when the run did not measure it)."""
    if f"{PREFIX}.AttrflowSaver.stored_bytes" not in results.series:
        return []
    steps = results.facts[f"{PREFIX}.steps"]
    lines = [
        "## 10. LangGraph: `AttrflowSaver` against LangGraph's `SqliteSaver`",
        "",
        "One thread of a `StateGraph` whose `add_messages` channel gains one message (about "
        f"250 bytes of words) a step, run to {steps:,} steps through each saver on an SQLite file "
        "each, in one process and one run. `stored_bytes`: the file's live pages after the "
        f"run; `get_tuple_us`: the latest checkpoint at step {steps:,} (median of {READS}); "
        f"`put_last_us` and `put_early_us`: median `put` at the last steps and around step "
        f"{EARLY_STEP}, as the graph made them; `put_growth`: their ratio.",
        "",
        "| figure | AttrflowSaver | SqliteSaver | ratio | target |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += _rows(results, "AttrflowSaver", "SqliteSaver")
    if f"{PREFIX}.PostgresSaver.stored_bytes" in results.series:
        lines += [
            "",
            "The same thread on PostgreSQL (a throwaway durable server, a schema each; "
            "`stored_bytes`: the schema's tables with their indexes and TOAST after "
            "`VACUUM FULL`):",
            "",
            "| figure | AttrflowSaver | PostgresSaver | ratio | target |",
            "| --- | --- | --- | --- | --- |",
            *_rows(results, "AttrflowSaver-pg", "PostgresSaver"),
        ]
    return [*lines, ""]


def _rows(results: Results, ours_name: str, theirs_name: str) -> list[str]:
    rows = []
    for key in FIGURES:
        ours = results.values(f"{PREFIX}.{ours_name}.{key}")[-1]
        theirs = results.values(f"{PREFIX}.{theirs_name}.{key}")[-1]
        number = "{:,.0f}" if key == "stored_bytes" else "{:,.2f}"
        rows.append(
            f"| `{key}` | {number.format(ours)} | {number.format(theirs)} | "
            f"{ours / theirs:.3f}× | {TARGETS.get(key, '')} |"
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help=f"{SMOKE_STEPS} steps")
    parser.add_argument("--steps", type=int, default=FULL_STEPS)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--postgres-url", help="also run both PostgreSQL savers on it")
    args = parser.parse_args(argv)
    steps = SMOKE_STEPS if args.smoke else args.steps
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.data_dir or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        measured = run(steps, folder)
        if args.postgres_url:
            pg = run_postgres(steps, args.postgres_url)
            measured.update(pg)
            measured["ratios-pg"] = {
                key: pg["AttrflowSaver-pg"][key] / pg["PostgresSaver"][key] for key in FIGURES
            }
        print(json.dumps(measured, indent=1))


if __name__ == "__main__":
    main()
