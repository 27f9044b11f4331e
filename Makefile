# The README's two commands: `make run` (the HTTP subscriber-archive service on the embedded
# store) and `make test` (every check and test). Both install what they need.
.PHONY: run test bootstrap fmt postgres bench dist

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

# The Python wheel (abi3, manylinux) and sdist into dist/; the Kotlin JAR into the local Maven
# repository (io.attrflow:attrflow); see the README's Install section.
dist:
	scripts/dist.sh
	scripts/kotlin-dist.sh

bootstrap:
	scripts/bootstrap.sh

fmt:
	cargo fmt --all
	.venv/bin/ruff format python examples/python
