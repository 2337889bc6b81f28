# The two set-up commands (README.md): `make run` and `make test`.
.PHONY: run test bench lint messages

run:
	bash scripts/run.sh

test:
	bash scripts/test.sh $(ARGS)

bench:
	bash scripts/bench.sh $(if $(ONLY),--only $(ONLY),)

lint:
	.venv/bin/ruff check .

# Regenerate the translation catalogues (locale/) from the code and compile them; needs GNU gettext.
messages:
	bash scripts/i18n_update.sh
