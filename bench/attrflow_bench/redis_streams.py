"""Redis Streams at matched durability against the attrflow Python client: appends per
second (XADD against register) and the newest 100-record page (XREVRANGE COUNT 100
against the ``current`` page); and the latency of a tailer waiting in XREAD BLOCK."""

from __future__ import annotations

import csv
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import redis

from attrflow_bench.service import HOST, free_port, stop

STREAM = "subscribers"
READY_TIMEOUT_SECONDS = 30.0

APPENDFSYNC = {"full": "always", "normal": "everysec"}
"""The Redis AOF setting that matches each attrflow ``synchronous`` setting."""


class RedisServer:
    """redis-server on loopback with an append-only file in a throwaway folder."""

    def __init__(self, appendfsync: str, parent: Path) -> None:
        self.appendfsync = appendfsync
        self.folder = Path(tempfile.mkdtemp(prefix="redis-", dir=parent))
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> redis.Redis:
        argv = ["redis-server", "--bind", HOST, "--port", str(self.port)]
        argv += ["--dir", str(self.folder), "--save", "", "--appendonly", "yes"]
        argv += ["--appendfsync", self.appendfsync, "--daemonize", "no"]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        client = redis.Redis(host=HOST, port=self.port)
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("redis-server exited at start-up")
            try:
                client.ping()
                return client
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer within {READY_TIMEOUT_SECONDS}s")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.process is not None:
            stop(self.process)
        shutil.rmtree(self.folder, ignore_errors=True)


def client_description() -> str:
    """Which redis-py runs, and whether it parses replies with hiredis."""
    parser = "hiredis" if redis.utils.HIREDIS_AVAILABLE else "its pure-Python parser"
    return f"redis-py {redis.__version__} with {parser}"


def xadd_rate(client: redis.Redis, first: int, calls: int) -> float:
    """XADD calls per second, back to back."""
    started = time.perf_counter()
    for sequence in range(first, first + calls):
        client.xadd(
            STREAM,
            {
                "subscriberId": f"subscriber-{sequence:07}",
                "deliveryAddress": f"subscriber-{sequence:07}@example.com",
            },
        )
    return calls / (time.perf_counter() - started)


BENCHMARK_RATE_GUESS = 30_000
"""XADDs a second redis-benchmark is asked for per second of a run: about what Redis with
``appendfsync always`` reaches with 16 connections on a 2-core machine, so a run lasts about
as long as asked."""


def benchmark_xadd_rate(port: int, clients: int, streams: int, seconds: float) -> float:
    """XADDs per second from Redis's own C load generator, ``redis-benchmark``, with
    ``clients`` connections on one stream or, with ``streams`` > 1, each XADD on one of
    ``streams`` streams picked at random; the records as :func:`xadd_rate` writes them.

    redis-benchmark drives all its connections from one thread with an event loop, so the
    load generator costs far less CPU than ``clients`` Python clients on the same cores:
    what it measures is Redis, not the client."""
    key = STREAM if streams == 1 else f"{STREAM}-__rand_int__"
    argv = ["redis-benchmark", "-h", HOST, "-p", str(port), "-c", str(clients)]
    argv += ["-n", str(max(1_000, round(seconds * BENCHMARK_RATE_GUESS))), "--csv"]
    if streams > 1:
        argv += ["-r", str(streams)]
    argv += ["XADD", key, "*", "subscriberId", "subscriber-0000001"]
    argv += ["deliveryAddress", "subscriber-0000001@example.com"]
    finished = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=600)
    rows = list(csv.DictReader(finished.stdout.splitlines()))
    if len(rows) != 1 or not rows[0].get("rps"):
        raise RuntimeError(f"redis-benchmark printed no rate: {finished.stdout!r}")
    return float(rows[0]["rps"])


def xrevrange_latency_us(client: redis.Redis, calls: int) -> float:
    """Median latency of XREVRANGE + - COUNT 100, in microseconds."""
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        entries = client.xrevrange(STREAM, count=100) or []
        samples.append((time.perf_counter() - started) * 1e6)
        if len(entries) != 100:
            raise RuntimeError(f"XREVRANGE returned {len(entries)} entries, not 100")
    samples.sort()
    return samples[len(samples) // 2]


TAIL_STREAM = "events"
TAIL_BLOCK_MS = 5000


def xread_block_latencies_us(client: redis.Redis, records: int, interval_s: float) -> list[float]:
    """A writer thread (its own connection) XADDs ``records`` entries, one every
    ``interval_s``, each stamped with the time just before its XADD; this thread waits in
    ``XREAD BLOCK`` for each. Returns every entry's latency from stamp to receipt, in
    microseconds, checking that none is missed."""
    client.delete(TAIL_STREAM)
    address = client.connection_pool.connection_kwargs
    writer_client = redis.Redis(host=address["host"], port=address["port"])
    failures: list[BaseException] = []

    def write() -> None:
        try:
            started = time.monotonic()
            for index in range(records):
                pause = started + index * interval_s - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                writer_client.xadd(TAIL_STREAM, {"sentNs": str(time.time_ns())})
        except BaseException as error:  # handed to the reading thread
            failures.append(error)

    writer = threading.Thread(target=write)
    writer.start()
    latencies: list[float] = []
    last_id: bytes | str = "0-0"
    try:
        while len(latencies) < records and not failures:
            # [[stream, [(id, {field: value}), ...]]] as redis-py parses it (RESP2).
            reply: Any = client.xread({TAIL_STREAM: last_id}, count=100, block=TAIL_BLOCK_MS)
            received = time.time_ns()
            if not reply:
                raise RuntimeError(f"XREAD BLOCK returned nothing within {TAIL_BLOCK_MS} ms")
            for entry_id, fields in reply[0][1]:
                last_id = entry_id
                latencies.append((received - int(fields[b"sentNs"])) / 1e3)
    finally:
        writer.join()
        writer_client.close()
    if failures:
        raise failures[0]
    if len(latencies) != records:
        raise RuntimeError(f"XREAD delivered {len(latencies)} entries, not {records}")
    return latencies
