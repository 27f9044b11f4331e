# The README's two commands: `make run` (the HTTP subscriber-archive service on the embedded
# store) and `make test` (every check and test). Both install what they need.
.PHONY: run test bootstrap fmt bench

HOST ?= 127.0.0.1
PORT ?= 8080
STORE ?= data/attrflow.db

run:
	scripts/serve.sh --host $(HOST) --port $(PORT) --store $(STORE)

test:
	scripts/test.sh

bench:
	scripts/bench.sh

bootstrap:
	scripts/bootstrap.sh

fmt:
	cargo fmt --all
	.venv/bin/ruff format python examples/python
