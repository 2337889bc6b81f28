# The two set-up commands (README.md): `make run` and `make test`.
.PHONY: run test bench lint messages lmms-eval-check

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

# Opt-in (lmms-eval needs torch): lmms-eval itself on the demo release's task folder, against the fake
# OpenAI server. LMMS_EVAL=<its executable> or LMMS_EVAL_VENV=<folder to install it in>; see
# docs/evaluation_lmms_eval.md.
lmms-eval-check:
	LMMS_EVAL="$(LMMS_EVAL)" LMMS_EVAL_VENV="$(LMMS_EVAL_VENV)" bash scripts/lmms_eval_check.sh
