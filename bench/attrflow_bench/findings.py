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
cProfile of `Client.invoke_rpc` reading one archived page (100 subscribers): the Rust
call itself (runtime, SQLite read, page built and serialised to JSON text) is about a
quarter of the time; the rest is Python turning that text into 100 `Subscriber`
dataclasses (`json.loads`, then the codec's checks and one constructor call per record).
The Rust-native figure decodes straight into structs. The codec resolves
each type's decoding once and builds field paths only on a mismatch (2.3–5.8× faster page
reads through Python); what is left is the per-record Python object construction. For
register (one small record in, one out) the Python share is the JSON text both ways
(`json.dumps` of the input, `json.loads` of the output) and the codec's checks; the
`AsyncClient` adds a hop to a worker thread and back per call (`asyncio.to_thread`),
which one-at-a-time awaiting pays in full. The Python and Rust-native figures run one
after the other, not at the same instant, so on a shared machine this
ratio also carries the difference in load between the two."""

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
    "4-append-full": _REDIS_APPEND,
    "4-append-normal": _REDIS_APPEND,
    "4-page": """\
With hiredis, redis-py parses the XREVRANGE reply in C and hands back 100 (id, fields)
pairs of bytes; the attrflow page arrives as JSON text from the core, which Python parses
(`json.loads`) and the codec walks into 100 checked `Subscriber` dataclasses (the same
profile as target 3's page reads: the Rust side of the call is about a quarter of it).
Without hiredis (redis-py's pure-Python parser) the same comparison came out 2.3–9.4× in
attrflow's favour on this machine; the target is judged against the faster client.""",
    "5": """\
The service keeps no page after answering it; its resident set is the interpreter, Quart
and hypercorn, SQLite's page cache (bounded per connection) and the one page in flight.""",
}

CLOSING = """\
What would close the remaining gaps, in the order of their payoff:

- Python pages (target 3): return a page to Python as objects built in Rust (PyO3 turning
  the decoded records into the flow's dataclasses, or into dicts the codec only checks)
  instead of JSON text that Python parses and walks again; and give the codec's
  dataclasses `__slots__` constructors. The JSON text round trip and the per-record
  constructor are what the profile shows.
- Appends against Redis (target 4): write less per append. An append rewrites the whole
  `current` chunk; a layout that appends the new record to the chunk row's text (SQLite
  `json_insert`, or one row per record within a chunk with the chunk assembled on read)
  would turn a ~10 KB write into a ~100 byte one, and group commit (several appenders
  sharing one fsync) would lift FULL under concurrency. Both change the stored layout, so
  they need a layout version of their own, read beside today's.
- The async client (target 3): complete the core call from a native callback onto the
  event loop instead of a `to_thread` round trip per call.
- Fixed per-call work in the Rust runtime (target 2): change `current` in place once every
  check of an append has passed (422K against 438K instructions when measured), cache each
  RPC's call plan, and read the flow's run ID once per connection instead of once per call.
- Measurement: every ratio pairs figures taken seconds apart on two shared cores; the
  min–max columns show how far that moves them.
"""
