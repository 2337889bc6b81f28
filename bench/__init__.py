"""Benchmarks: `make bench` runs bench.run, which fills a database with bench.datagen and measures figures."""
