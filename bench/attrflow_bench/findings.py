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
callgrind, one register through the Rust API: 187K instructions since an append keeps the
open chunk as JSON text (core/src/chunked_log/chunk_text.rs), against 586K before, when the
chunk was decoded into a `serde_json::Value`, copied and encoded back; the raw rusqlite
baseline doing the same read-modify-write of the same two rows measured 438K. What remains
is the runtime's fixed work per call: reading the flow's row (run ID and type) in the
transaction, building the call plan (lock and load name sets), taking the in-process locks,
splitting the open chunk's text into records, checking every stored value against
`attrflow::limits`, and decoding the output back into a typed `Subscriber`. Under FULL both
sides wait for the same WAL fsync, so the ratio there follows the disk; under NORMAL it
follows the CPU."""

_PYTHON = """\
CPU time per call, one call at a time on the archive of section 3 (`time.process_time` for
all threads, `time.thread_time` for the event loop's, 2,000 calls, a loaded machine):
`Client` archived page 86 µs (101 µs wall), register 72 µs (132 µs wall).
`AsyncClient` archived page 179 µs (197 µs wall), 66 µs of it on the loop thread (the
call's Python side, the future, and building the 100 `Subscriber` dataclasses when the
result is drained); register 158 µs (193 µs wall), 45 µs on the loop thread. The worker
thread never takes the GIL (it queues the result and wakes the loop through a socket), so
the remaining gap is the two thread hand-offs per call (waking a worker, then waking the
loop): about 50 µs of extra CPU on the worker side and 30 µs on the loop side, which
one-at-a-time awaiting pays in full and many tasks overlap (section 3b). The Python and
Rust-native figures run one after the other, not at the same instant, so on a shared
machine this ratio also carries the difference in load between the two (the same build
measured 0.61× to 1.09× for register across four repeats)."""

_ASYNC = (
    _PYTHON
    + """

perf (`perf record -g`, 4,000 registers one at a time, before the watching, load average
about 2.5): an `AsyncClient` register cost 184 µs of CPU against 85 µs through `Client`.
Beyond the call itself, the worker thread spent about 14 µs a call in glibc `malloc` and
`malloc_consolidate` (its own arena, whose blocks the loop thread frees), about 8 µs in the
`send` that wakes the loop (`sock_def_readable`, the wake-up of the loop thread), and its
futex sleep and wake-up; the loop thread spent 48 µs. Watching on both sides (section 3b)
removes the two wake-ups when a core is free. What remains on the loop thread, per call:
the RPC's arguments (`Client._rpc_call`), the asyncio future and the task's step, the
drain, and decoding the output: for the archived page, 100 `Subscriber` dataclasses (the
blocking `Client`, which pays the same decoding, reaches 0.65–0.85× on the page), so the
`AsyncClient` page stays below the blocking client's ratio until decoding itself costs less.

Since 2026-12-03 (08:10 UTC) the input is written as JSON by the native module along the
type table the output's `Decoder` uses (`Decoder.encode_json`, inside `Runtime.call_rpc`),
and each `RpcDefinition` makes its decoders once: `Client._rpc_call` went from 5.1 µs to
1.5 µs a register (`timeit`, best of 5, same machine, same minute), `codec.to_json` of a
register input from 3.2 µs to 0.35 µs. A decoded dataclass is created through its type's
`tp_new` slot and gets its fields as they are decoded, and the output's JSON tree (hundreds
of allocations made on the worker) is freed by the next worker to finish a call instead of
by the loop. Loop-thread CPU per call, one at a time (`time.thread_time`, 1,500 calls,
three rounds, the watching included): register 45–50 µs before, 33–38 µs after; archived
page 80–99 µs before, 65–66 µs after.

Two speeds on the same build (7,000 against 14,000 archived pages a second, a few minutes
apart) came from the watches' back-off and the load (counters in a throwaway build, per
2,000 page reads, load average about 3.5; section 3b's notes): a worker's watch missed the
next call about half the time (the loop's turn, drain, decode, next call, outlasting 100 µs
on a busy core), and each miss made the next 32 idle moments sleep, so 1,863–1,966 of 2,000
calls woke a sleeping worker; the slower round trip then made the loop's watches miss too.
The loop's watch also called `sched_yield` every few spins, handing its CPU to another
process for the rest of a slice (1.8 involuntary switches and 50–120 µs of run-queue wait a
call). Since 2026-12-03 (09:30 UTC) a miss backs off exponentially (1, 2, 4 … 32 skipped
chances, reset by a hit), the loop yields only while its call waits for a thread, and
neither side watches a thread running on its own CPU. What remains under load is the load
itself: with both threads on one CPU (loop 30% plus worker 70% of it), every call is two
context switches whatever the watching does.

A slow speed also comes without any load (2026-12-05, section 3b's notes): on a quiet
machine some processes read 5,700–6,500 archived pages a second and others 13,200–13,800,
with the same watching, no migrations and few switches. Both threads' own work took about
twice as long (the worker's call 48 → 110 µs, the loop's decoding 24 → 46 µs), not their
hand-offs, while the same process pinned to one CPU took 38 µs a call: the output crosses
from the worker to the loop as a tree of hundreds of allocations, and what one virtual CPU
reads of what the other just wrote costs more or less depending on where the host runs
them. Since 2026-12-05 (13:45 UTC) the built-in flows' outputs cross as JSON text, one
buffer of about 10 KB for the page, which the loop decodes into the dataclasses in one
pass: `AsyncClient` archived pages one at a time went from 10,511–11,221 to 16,804–16,921
a second (three alternating rounds with the build before; the Rust-native page, which
decodes the same text into its structs, from 16,807–17,271 to 23,296–23,625).

Since 2026-12-03 (18:00 UTC) the native module allocates with mimalloc instead of glibc's
`malloc` (bench/notes/3b-python.md): the archived page, whose output tree is hundreds of
small allocations, went from 15,408 to 19,908 `AsyncClient` calls a second (medians of five
interleaved rounds), the register did not move (23,809 and 22,558). `perf record -F 4999`
of 12,000 registers one at a time after that (NORMAL, 21,000–23,000 a second, a quiet
machine): the loop thread had 52% of the samples, 24 points of them watching for the call
(`wait_for_lone_call`) and 15 in the kernel (the watch's `poll` and the drain); the worker
47%, 12 points of them watching for the next call. Per call that is about 31 µs of the
worker's (the register itself) and at most 10 µs of the loop's own work (the interpreter,
the future, the arguments and the decoded output), with the hand-offs between them: the
Rust-native register is the call alone, about 36 µs in the same runs, and the target asks
the `AsyncClient` for at most 1.25 times that.

Since 2026-12-04 (21:15 UTC) a lone call the loop's watch sees finish returns to its task at
once instead of after two more turns of the loop, the back-off skips a watch only after two
misses in a row, and the drain reads the loop's socket only after a wake-up was written
(bench/notes/3b-python.md): in interleaved rounds `AsyncClient` registers went from
0.69–0.89× to 0.77–0.97× of the Rust-native register of the same round. Per register on
the loop thread what remains beyond the call: about 2.2 µs for its arguments and future,
1.5 µs to hand it over and 1.2 µs to drain it, and the task's and the loop's own steps;
and about 5 µs of every call's mean from the 1.5 % of registers that outlast the 200 µs
watch (while the store's checkpoint runs beside them on the two cores) and then wait
100–350 µs for the loop's wake-up from `epoll`.

On the machine of the 2026-12-05 runs (bench/notes/3b-python.md, 10:44 UTC) the archived
page is what a one-at-a-time `AsyncClient` loses most on: 12,861–13,032 pages a second,
against 24,002–24,350 through `Client` (the same decoding on the caller's thread) and
20,016–20,266 through the same `AsyncClient` with the process pinned to one CPU. So about
30 µs of each 78 µs page is the output crossing to the other CPU, not the call: mimalloc's
allocation fast path alone took 7.8 % of the samples (`perf record`), nearly all of it the
load of a free block's link, a cache miss per allocation of the page's records and output
tree. The watching stays: switching either side's off lost a third to two thirds of the
rate, since waking a sleeping thread on the other CPU costs about 45 µs there; but a
watching CPU also slows the working one by 10–25 % (`native-rates` pinned to one CPU while
the other ran a `pause` loop). A page's output written to bytes on the worker and parsed on
the loop's thread was tried and was no faster (10,190–12,240 pages a second).

Since 2026-12-06 (07:45 UTC) the page RPC passes its stored records on as their text instead
of decoding and encoding each (bench/notes/3b-python.md): every reader's page got faster,
the Rust-native one most (16,013–17,538 to 24,598–25,646 a second), as what is left of it
is the scan and its own decoding. In alternating rounds `AsyncClient` pages went from
8,176–9,083 to 8,715–13,734 a second and its ratio from 0.54–0.78× to 0.44–0.72×: what the
page target now measures is the fixed cost of the Python side (the hand-offs and decoding
100 dataclasses, about 45 µs a page) against a Rust-native page of about 40 µs."""
)

_CONCURRENT = """\
Each worker appends to its own archive, so no lock is contended and SQLite's one writer is
the shared resource: at FULL every commit waits for the WAL fsync (shared by a group of
commits), at NORMAL for the write turn. The 16 tasks' calls all run at once on the native
module's worker threads, which never take the GIL: finished calls are queued and the event
loop drains them together, decoding each output. So this ratio measures the loop thread's
per-call Python work (about 45 µs: resolving the RPC, encoding the input, the future, the
decoded output) against the Rust threads' whole per-append cost (70–150 µs per lone Rust
register at NORMAL in these runs), on two cores the loop shares with the workers.

cProfile of the loop thread (16 tasks × 200 appends, NORMAL; 30–40 µs of loop CPU per
append without the profiler): the largest items were `Runtime.call_rpc` itself (converting
the arguments and handing the call to a worker, which wakes a sleeping worker with a futex
call when none is watching: 13 µs a call under the profiler) and encoding the input
(`codec._encode`, walking the input's type with `typing.get_origin`/`get_args` per field on
every call: 15 µs under the profiler); then asyncio's own per-iteration work. The input is
now encoded natively, inside `Runtime.call_rpc`, along the type table the `Decoder` already
holds (0.35 µs for a register input against 3.2 µs), so the first and asyncio's own work
are what remain.

Measured since (2026-12-03, 08:20 UTC; 16 tasks × 200 appends, NORMAL, three rounds per
build, the builds taking turns): the loop thread's CPU per append went from 15–22 µs to
12–17 µs with the native encoding, and the appends per second did not move (13,000–19,000
on both builds). The loop's CPU is not what limits this ratio. `perf record` of the same run: the
worker threads spent 41% of all samples in the kernel (context switches and futex wake-ups:
`finish_task_switch`, `_raw_spin_unlock_irqrestore` under `try_to_wake_up`), against 17% in
the native module's own code and SQLite; the loop thread 10% in the kernel. Each finished
append is a hand-off to the loop and each new one a wake-up of a sleeping worker, twice per
append what 16 Rust threads appending in a loop pay.

Since 2026-12-03 (12:00 UTC) the native module's pool wakes fewer threads: a queued call
wakes a worker only when no awake worker will take it, calls queued together wake one
worker (which wakes the next), and a worker that finishes takes the next queued call
without sleeping. The pool stays at 16 threads for 16 tasks (46 to 152 before), and per
append the context switches fell from 2.8–3.1 to 1.7–2.2 at NORMAL (3.8–4.1 to 3.0–3.3 at
FULL) and the process's CPU from 101–122 µs to 71–85 µs (bench/notes/3b-python.md). What
is left is about one sleep in the pool per append: the loop's round trip (drain, the task's
step, the resubmission) outlasts a worker's watch, and only one worker watches. A pool
capped at 4 or 8 threads removes it (calls wait for a thread that finishes): at NORMAL
that met the ratio (0.82–1.36×), but at FULL it shrank the store's commit groups to the
cap and halved the rate, so the pool still grows with the calls in flight. A delayed extra
worker (a queued call left to the running threads for a grace of 50–150 µs) was tried next
and not adopted: at NORMAL most calls are submitted when no call is running any more (the
previous one finished while the loop was busy), so only 13–20% of them could be left to a
running thread, and the timekeeping cost what it saved. At NORMAL the event loop's own
round trip per append (its wake-up and its turn, not its CPU) is the serial path.

Since 2026-12-03 (13:40 UTC) a worker taking a queued call that takes locks, on a store that
runs a batch as one commit group (SQLite), takes every such call of the same runtime queued
at that moment and hands them to the core together (`Runtime::invoke_rpcs`): they run back
to back on that thread as members of one group, one COMMIT, and their results reach the
loop together, so the calls the tasks resubmit in one loop turn cost one wake-up each way.
Lock-free calls are not batched (they keep running in parallel). The builds before and
after taking turns, 10 rounds of 16 × 500 appends against 16 Rust threads in the same
round: NORMAL 0.69× (0.61–0.78) → 0.99× (0.83–1.18), FULL 0.74× (0.65–0.86) → 0.79×
(0.68–0.98); CPU per append 68 → 50 µs at NORMAL and 78 → 66 µs at FULL
(bench/notes/3b-python.md). At FULL the tasks already ran in two cohorts of about eight (one
group commits while the loop serves the other's results), so the wake-ups batching removes
were not on the path every append waits on: the COMMIT is, as for the Rust threads, and the
two cores the loop shares with the worker running the group make each group slower than
the Rust threads' when the loop is busy. A miss at FULL is the loop's CPU per append (about
half of the process's) competing with the group for the two cores.

Since 2026-12-05 (06:30 UTC) a worker that finishes a batch no longer spins watching for
the next call while another worker runs RPC calls: `perf record` of 16 tasks at FULL had
12 % of the process's samples in that spin, on the two cores the loop and the next
group's worker need. Three alternating turns against the build before, 16 tasks on 16
archives: 15,827–16,865 against 15,811–18,025 appends/s at FULL and 19,419–27,088 against
26,508–30,397 at NORMAL, with 10–30 % less CPU per append (bench/notes/3b-python.md).

Since 2026-12-06 (10:30 UTC) the Rust threads, the denominator, are faster: a group's
callers are woken just before its COMMIT and watch for their answers, so they are back with
their next calls sooner (16 threads of this section: FULL 15,682–18,098 appends/s before
against 20,174–22,351, NORMAL 19,778–25,065 against 24,489–25,477). The `AsyncClient`'s
batched calls are not forewarned: watching there took the CPU its event loop needs, and the
loop, not the worker, brings the tasks' next calls (bench/notes/6-concurrency.md)."""

_HTTP = """\
cProfile of the service under wrk: Quart's request handling took about 1 ms of CPU per
request, so the plain page read is answered by a small ASGI route in front of it
(`attrflow_examples/fast_page.py`). That route now sends the page as the native module
writes it (`AsyncClient.invoke_rpc_json`: the call's output checked against its type and
written as compact JSON on the worker thread), instead of building 100 `Subscriber`
dataclasses, the route's dicts and a 10 KB `json.dumps` on the event loop: 40 µs of loop
CPU per call instead of 66 µs plus about 60 µs. With the worker threads no longer taking the
GIL, the service's archived page went from 0.11× to 0.28× of the floor (p99 27 ms to 8 ms).
Register p99 under 16 connections (FULL store, one `current` chunk) stayed at 47–102 ms
with 0 errors after group commit, against a p50 of about 6 ms. It is not lock conflicts:
the service's `/metrics` counted 0 conflicts and 0 retries over a 3 s wrk run of 6,041
registers (writers queue first come, first served in the core). It is not the fsync
either: the same run on a NORMAL store gave p50 4.5 ms and p99 114 ms. Not yet profiled
further; the suspects are SQLite's WAL checkpoints (every few hundred registers, each
holding up the one writer and the 16 calls queued behind it) and wrk, the event loop and
the worker threads sharing two cores.

Checked since (2026-12-03, 05:28–05:31 UTC): a throwaway build with `PRAGMA
wal_autocheckpoint=0` (no checkpoint at all during a run), against the same build with
SQLite's automatic checkpoints, taking turns, two 3 s wrk runs each, twice (load average
about 2): p99 17.5–25.2 ms without checkpoints against 21.3–31.0 ms with them. Checkpoints
account for a few milliseconds of the tail, not for most of it, so no background
checkpointer was built (it would move the same copying and fsync onto another thread of the
same two cores). The rest moves with whatever else runs on the machine: the unchanged build
measured p99 68–89 ms in three runs and 21–31 ms in the next four, two minutes apart (load
average about 2 at both starts), with p50 5–9 ms throughout; at 16 connections on 2 cores,
wrk, the event loop, the worker threads, the group
commit's writer and other processes take turns, and a request that waits one scheduling turn
behind a busy core waits milliseconds. In the interleaved run of section 3b (load 6–8) the
p99 was 41.7 ms before the watching and 30.3 ms after, medians of eight runs, 0 errors.

Since 2026-12-03 (08:20 UTC) a plain register (no query, no `Idempotency-Key`) is answered
in front of Quart too (`attrflow_examples/fast_register.py`: the route's own body checks
and call, the subscriber's bytes written by the native module), so a register no longer
pays Quart's request handling (about 1 ms of loop CPU in the profile above) and the 16
connections no longer queue behind it: register p99 15.7 ms (12.5–27.8) before, 3.1 ms
(2.6–3.9) after, and 5,007 against 10,675 registers per second, 0 errors, the two builds
taking turns (bench/notes/3b-python.md)."""

_REDIS_APPEND = """\
Redis appends one small entry to an in-memory stream and, with `appendfsync always`,
writes about 100 bytes to its AOF and fsyncs it. An attrflow register runs an SQLite
transaction that rewrites the whole `current` chunk (about 10 KB of JSON, three or four
WAL pages) and the state row, then fsyncs the WAL (FULL). The write volume per append is
roughly 40× Redis's, but at FULL that volume is not what sets the rate: halving it (values
rewritten in place, an experiment not kept; bench/notes/6-concurrency.md) left the rate of
appends committed one at a time where it was. Each side waits for one fsync per append, so
this ratio follows the disk's fsync latency during each side's turns. Under
`everysec`/NORMAL neither side fsyncs per append, and the gap is that chunk rewrite plus
the Python client's call overhead against one RESP round trip. Until 2026-12-03 (22:50 UTC)
one NORMAL append in about 240 also ran SQLite's checkpoint, with an fsync of the whole
log, for 9–18 ms; a thread of the store's own does that now (section 4's notes), and
Redis's `everysec` fsync likewise runs on a background thread of its own.

`strace -T` of 2,000 `Client` registers at FULL (2026-12-05, 11:05 UTC): one gathered
`pwrite` of the commit's log frames (median 8 µs) and one `fsync` of the log (median 146 µs,
mean 219 µs, a tenth over 240 µs) per register; a scratch file on the same disk took 128 µs
to overwrite 16 KB (as the log's four frames are) and fsync it, and `fdatasync` took the
same as `fsync` there. So the FULL register is the disk's sync plus the call, and Redis,
whose AOF grows with each entry (183 µs to append 4 KB and fsync it on that disk), pays
its own sync plus a round trip.

Since 2026-12-06 a store's log grows ahead of its FULL commits (section 4's notes). The 300
registers of this section run on a freshly populated store, whose log each of them had
lengthened, and a sync that lengthens a file also makes its new length durable: taking
turns with the build before, in this section's shape, attrflow went from 2,180–3,815 to
3,346–5,848 registers a second and from 0.57–1.36× (median 0.94×) to 1.26–2.12× (median
1.44×) of Redis, round by round."""

_GROUP_COMMIT = """\
Section 6: 16 Rust threads at FULL against Redis driven by redis-benchmark. Redis serves its
16 writers in two cohorts, syncing its AOF once per about eight XADDs, one sync every 267 µs
(`perf stat -e syscalls:sys_enter_fdatasync` on the server); attrflow commits once per about
11 appends (the COMMITs per append column) since a group's members are forewarned of their
answers (2026-12-06, 10:30 UTC: woken just before its COMMIT, they watch for them, so the
answers wake nobody after it and the members are back in line sooner; 25–33 % more appends
a second in alternating runs). Timed from inside just before that change, a group's period
was the hand-off to the next turn holder (about 25 µs), its members (about 24 µs each under
this load, twice a lone member's 11 µs) and its COMMIT (220–270 µs on one flow, 325–380 µs
on 16 flows, whose groups write 26–28 WAL frames against 5). 2× of this Redis needs 16
appends per 235–310 µs, which the COMMIT alone all but fills: a group of all 16 writers
whose members cost only their lone 11 µs would take about 25 + 176 + 230 µs, some 37,000
appends a second, 1.1–1.4× of this Redis. The target is out of reach of this design on this
disk, whatever the grouping (bench/notes/6-concurrency.md has the measurements, and the
fsync outside the turn, the next turn holder woken before the COMMIT and another allocator,
tried without gain)."""

_GROUP_COMMIT_PYTHON = """\
Section 6: 16 `AsyncClient` tasks at FULL against 16 asyncio redis-py clients, each side's
client code on one event loop's thread. The calls the tasks submit in one turn of the loop
run as one batch on one worker thread (one group, one COMMIT), so what is left is the
loop's own CPU per append (the task's step, the future, encoding the input and decoding the
output) competing with that worker for the two cores, as in target 3-concurrent-full's
profile; this ratio has moved between 0.96× and 1.31× from one run to the next."""

_POSTGRES = """\
Section 7: a group costs about two round trips however many calls it holds (the flows its
calls need opened together, each call after the first on a flow reading what the group
holds, the writes sent with the COMMIT), and with the default two lanes a group on 16
archives holds about eight calls (0.13 COMMITs per append). What is left is CPU on the two
cores the server shares with the client: the server executes each call's statements and
writes its open chunk's value (up to 8 KB) again, the client runs the handlers. The goal is
an absolute figure set on another machine; on a quiet machine it was met with room
(8,567 appends/s on 16 archives, 2026-12-07, bench/notes/7-postgresql.md), and a loaded one
halves every figure of the section. An append that does not write the open chunk's value
again, a row per record behind a layout version and a migration, is what would cut the
server's work."""

FINDINGS: dict[str, str] = {
    "1": _GROWTH,
    "2-full": _DURABLE,
    "2-normal": _DURABLE,
    # One profile for every one-at-a-time Python target, so a run missing several shows it once.
    "3-sync-register": _ASYNC,
    "3-async-register": _ASYNC,
    "3-sync-page": _ASYNC,
    "3-async-page": _ASYNC,
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
    "6-rust-one-flow": _GROUP_COMMIT,
    "6-rust-16-flows": _GROUP_COMMIT,
    "6-async-one-flow": _GROUP_COMMIT_PYTHON,
    "6-async-16-flows": _GROUP_COMMIT_PYTHON,
    "7-pg-one-archive": _POSTGRES,
    "7-pg-16-archives": _POSTGRES,
    "5": """\
The service keeps no page after answering it; its resident set is the interpreter, Quart
and uvicorn, SQLite's page cache (bounded per connection) and the one page in flight.""",
}

CLOSING = """\
What would close the remaining gaps, in the order of their payoff:

- Python one call at a time (target 3-async-register; the archived page's output now
  crosses as JSON text, one buffer, which a register's small output gains nothing from):
  the two thread hand-offs of an `AsyncClient` call (handing it to a watching worker, the
  loop watching for its result) and about 5 µs of the loop's own work beyond the call are
  what remains of its fixed cost;
  a lone call the loop sees finish returns without further turns of the loop. The rest is
  the slow calls (about 1.5 % of registers, beside the store's checkpoint) that outlast the
  loop's 200 µs watch and then wait for its wake-up.
- Python under concurrency (targets 3-concurrent-*): the calls tasks queue together now
  run as one batch on one worker; what is left at FULL is the loop's own CPU per append
  (the task's step, the future, encoding the input and decoding the output) competing on
  two cores with the group's members and COMMIT.
- Appends against Redis one at a time (targets 4-*) and on many flows at once (section 6):
  an append still rewrites the whole open chunk (up to about 8 KB) and its WAL pages, but
  writing fewer bytes alone did not buy appends here: values padded so that SQLite
  rewrites them in place (an experiment, not kept) halved the bytes of an append committed
  on its own (17.4 KB to 8–10 KB) and cut those of 16 flows grouped by 38 %, and neither
  rate moved beyond the noise. A lone FULL append waits on the fsync itself; on many flows
  a member costs about 17 µs more CPU than on one (57 against 40 µs per append), on the
  path every member of a group waits behind (bench/notes/6-concurrency.md). Since
  2026-12-05 section 6 judges the Rust threads against Redis driven by its own C client
  (redis-py clients held Redis to about half its rate). 2× of that Redis needs 16 appends
  per 235–310 µs, about what one COMMIT's write and sync take on this disk: even a group of
  all 16 writers whose members cost only their lone 11 µs would make about 37,000 appends a
  second, and one that reached 2× would leave its members about 3 µs each.
- Measurement: every ratio pairs figures taken seconds apart on two shared cores; the
  min–max columns show how far that moves them.
"""
