"""What the profiles showed for each target a run can miss, and what would close it.
BENCHMARKS.md includes a finding only when its target is missed in that run.

Profiles: callgrind instruction counts for the Rust core (deterministic on a shared,
noisy machine), cProfile for the Python client; figures are per call."""

from __future__ import annotations

_GROWTH = """\
Nothing in an append depends on the history's length: a register reads and rewrites the
state row and the `current` chunk (at most 100 records) and, once every 100 appends,
inserts one archived chunk. The only history-dependent cost is SQLite's B-tree depth over
the chunk rows (1,000 rows at 100,000 records; one more level at most). A miss here is the
shared machine's noise between the two sizes: compare the min–max columns, and rerun on a
quiet machine."""

_DURABLE = """\
callgrind, one register through the Rust API against the raw rusqlite baseline doing the
same read-modify-write of the same two rows: 570K instructions against 438K (0.77×). A
version that changed `current` in place measured 422K, but it moved the chunk out of the
snapshot before every check of the append had run; the batch-append path (every record
checked first, then staged) replaced it, so each append copies the open chunk once, and
every stored value is also measured against `attrflow::limits`. The rest is the runtime's
fixed work per call: reading the flow's row (run ID and type) in the transaction,
building the call plan (lock and load name sets), taking the in-process locks, the
snapshot map, and decoding the output back into a typed `Subscriber`. Under FULL both
sides wait for the same WAL fsync, so the ratio there follows the disk; under NORMAL it
follows the CPU."""

_PYTHON = """\
CPU time per archived-page call (100 subscribers), measured with `time.process_time` on
a loaded machine: about 80 µs for the native call that returns the page built as
`Subscriber` dataclasses (the Rust read and the native decoder, which builds each
dataclass without calling its `__init__`), about 105 µs for the same call returning JSON
text; `Client.invoke_rpc` adds about 15 µs of Python (resolving the RPC, encoding the input
with the codec, the options). `AsyncClient` runs the same work on the native module's worker
thread and adds its hop: the loop thread spends about 40 µs per call (building the call,
the future, and settling it from `call_soon_threadsafe`), the worker about 40 µs more than
the blocking call (waking, taking the GIL to settle). One-at-a-time awaiting pays that hop
in full; many tasks overlap it (section 3b). The Python and Rust-native figures run one
after the other, not at the same instant, so on a shared machine this ratio also carries
the difference in load between the two."""

_CONCURRENT = """\
Each worker appends to its own archive, so no lock is contended and SQLite's one writer is
the shared resource: at FULL every commit waits for its own WAL fsync, at NORMAL for the
write turn. The 16 tasks' calls all run at once on the native module's worker threads, so
this ratio measures the per-call Python work (encoding the input, building the future,
decoding the output on the worker with the GIL held) against the store's own commit rate;
the GIL is held only for that work, never during a store call."""

_HTTP = """\
cProfile of the service under wrk: before the page route was answered in front of Quart,
Quart's request handling (request context, routing, signals, the response object) took
most of each request's time, about 1 ms of CPU, and uvicorn instead of hypercorn gained
only about 15%. The plain page read is now answered by a small ASGI route before Quart
(`attrflow_examples/fast_page.py`); with it the server matters (uvicorn served the same app
1.4–2.3× as fast as hypercorn in the runs of section 3b). Per request, the attrflow
call (about 120 µs of CPU over both threads), turning the 100 `Subscriber`s into the
route's dicts and `json.dumps` of 10 KB (about 60 µs), and uvicorn's own work. The floor
does none of that: it sends a constant body. wrk, the service's event loop and its worker
threads share the two cores.
Register p99 under 16 connections is the FULL commits queuing behind one another on the one
`current` chunk, with the service's lock-conflict retries: group commit (one fsync for
many appenders) is what shortens that queue."""

_REDIS_APPEND = """\
Redis appends one small entry to an in-memory stream and, with `appendfsync always`,
writes about 100 bytes to its AOF and fsyncs it. An attrflow register runs an SQLite
transaction that rewrites the whole `current` chunk (about 10 KB of JSON, three or four
WAL pages) and the state row, then fsyncs the WAL (FULL). The write volume per append is
roughly 40× Redis's; under `everysec`/NORMAL neither side fsyncs per append, and the gap
is that chunk rewrite plus the Python client's call overhead against one RESP round
trip."""

FINDINGS: dict[str, str] = {
    "1": _GROWTH,
    "2-full": _DURABLE,
    "2-normal": _DURABLE,
    "3-sync-register": _PYTHON,
    "3-async-register": _PYTHON,
    "3-sync-page": _PYTHON,
    "3-async-page": _PYTHON,
    "3-concurrent-normal": _CONCURRENT,
    "3-concurrent-full": _CONCURRENT,
    "3-http-page": _HTTP,
    "3-http-register-p99": _HTTP,
    "4-append-full": _REDIS_APPEND,
    "4-append-normal": _REDIS_APPEND,
    "4-page": """\
With hiredis, redis-py parses the XREVRANGE reply in C and hands back 100 (id, fields)
pairs of bytes; the attrflow page arrives as 100 checked `Subscriber` dataclasses built by
the native decoder (the same profile as target 3's page reads).
Without hiredis (redis-py's pure-Python parser) the same comparison came out 2.3–9.4× in
attrflow's favour on this machine; the target is judged against the faster client.""",
    "5": """\
The service keeps no page after answering it; its resident set is the interpreter, Quart
and uvicorn, SQLite's page cache (bounded per connection) and the one page in flight.""",
}

CLOSING = """\
What would close the remaining gaps, in the order of their payoff:

- Python over HTTP (target 3-http-page): answer the page from the core's JSON without
  building Python objects at all (the route's body is the page's own camelCase shape), and
  encode bodies with a JSON library written in C; Quart stays for every other route.
- Appends against Redis (target 4): write less per append. An append rewrites the whole
  `current` chunk; a layout that appends the new record to the chunk row's text (SQLite
  `json_insert`, or one row per record within a chunk with the chunk assembled on read)
  would turn a ~10 KB write into a ~100 byte one, and group commit (several appenders
  sharing one fsync) would lift FULL under concurrency. Both change the stored layout, so
  they need a layout version of their own, read beside today's.
- Fixed per-call work in the Rust runtime (target 2): change `current` in place once every
  check of an append has passed (422K against 438K instructions when measured), cache each
  RPC's call plan, and read the flow's run ID once per connection instead of once per call.
- Measurement: every ratio pairs figures taken seconds apart on two shared cores; the
  min–max columns show how far that moves them.
"""
