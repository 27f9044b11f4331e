"""HTTP latency and throughput of the service under wrk, on loopback."""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from attrflow_bench.service import ROUTES, Service

SUMMARY_MARK = "WRK-SUMMARY "

# wrk's Lua hooks: a fixed request, and a JSON line with the figures at the end.
_SCRIPT = """
wrk.method = %(method)s
wrk.body = %(body)s
wrk.headers["Content-Type"] = "application/json"
done = function(summary, latency, requests)
  local bad = summary.errors.status + summary.errors.connect + summary.errors.read
      + summary.errors.write + summary.errors.timeout
  io.write(string.format(
    '%(mark)s{"requests": %%d, "seconds": %%f, "p50_us": %%d, "p99_us": %%d, "errors": %%d}\\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99), bad))
end
"""

REGISTER_BODY = json.dumps(
    {"subscriberId": "subscriber-http", "deliveryAddress": "subscriber-http@example.com"}
)


@dataclass(frozen=True)
class LoadResult:
    """One wrk run: requests per second, latency percentiles, failed requests."""

    requests_per_second: float
    p50_ms: float
    p99_ms: float
    errors: int


def _lua_string(text: str | None) -> str:
    return "nil" if text is None else json.dumps(text)


def run_wrk(url: str, method: str, body: str | None, connections: int, seconds: int) -> LoadResult:
    """Runs wrk against ``url`` with ``connections`` open connections for ``seconds``."""
    script = _SCRIPT % {
        "method": _lua_string(method),
        "body": _lua_string(body),
        "mark": SUMMARY_MARK,
    }
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as lua:
        lua.write(script)
        lua.flush()
        threads = min(connections, 2)
        argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "-s", lua.name, url]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed: {done.stderr.strip() or done.stdout.strip()}")
    for line in done.stdout.splitlines():
        if line.startswith(SUMMARY_MARK):
            figures = json.loads(line[len(SUMMARY_MARK) :])
            return LoadResult(
                requests_per_second=figures["requests"] / figures["seconds"],
                p50_ms=figures["p50_us"] / 1000,
                p99_ms=figures["p99_us"] / 1000,
                errors=figures["errors"],
            )
    raise RuntimeError(f"wrk printed no summary: {done.stdout}")


def register_load(service: Service, connections: int, seconds: int) -> LoadResult:
    """POST .../register under load."""
    url = f"{service.base_url}{ROUTES}/register"
    return run_wrk(url, "POST", REGISTER_BODY, connections, seconds)


def page_load(service: Service, token: str, connections: int, seconds: int) -> LoadResult:
    """GET .../subscribers?pageToken=<token> under load."""
    url = f"{service.base_url}{ROUTES}/subscribers?pageToken={token}"
    return run_wrk(url, "GET", None, connections, seconds)


def wrk_available() -> bool:
    """Whether wrk is installed."""
    try:
        subprocess.run(["wrk", "--version"], capture_output=True, check=False)
    except FileNotFoundError:
        return False
    return True


def store_path(folder: Path) -> Path:
    """Where the HTTP run keeps its store."""
    return folder / "http.db"
