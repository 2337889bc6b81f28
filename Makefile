# The two set-up commands (README.md): `make run` and `make test`.
.PHONY: run test bench lint

run:
	bash scripts/run.sh

test:
	bash scripts/test.sh $(ARGS)

bench:
	bash scripts/bench.sh $(if $(ONLY),--only $(ONLY),)

lint:
	.venv/bin/ruff check .
