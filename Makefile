# The README's two commands: `make run` (the HTTP subscriber-archive service on the embedded
# store) and `make test` (every check and test). Both install what they need.
.PHONY: run test bootstrap fmt postgres bench

HOST ?= 127.0.0.1
PORT ?= 8080
STORE ?= data/attrflow.db

run:
	scripts/serve.sh --host $(HOST) --port $(PORT) --store $(STORE)

test:
	scripts/test.sh

# A throwaway PostgreSQL server on loopback for trying attrflow on it; prints its store URL
# (use it as `make run STORE=<url>`) and deletes everything on Ctrl-C.
postgres:
	scripts/postgres.sh run

# Benchmarks against raw rusqlite, a naive log and Redis Streams; writes BENCHMARKS.md.
bench:
	scripts/bench.sh

bootstrap:
	scripts/bootstrap.sh

fmt:
	cargo fmt --all
	.venv/bin/ruff format python examples/python
