"""The benchmark driver behind ``make bench``: runs the Rust benchmark binary, the Python
clients, the HTTP service under wrk, Redis Streams and the memory run, and renders
BENCHMARKS.md from one run's figures."""
