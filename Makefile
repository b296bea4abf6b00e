# One command set for everything, the same here and in CI.
SHELL := /bin/bash
.DEFAULT_GOAL := help
# The Python the virtualenv is made with (3.11 to 3.14), and where it goes: Pulumi.yaml
# names .venv; CI makes one per Python it tests under .venvs/.
PYTHON ?= python3
VENV ?= .venv
export VENV
PY := $(VENV)/bin/python
# The virtualenv is made anew when requirements.txt changes or PYTHON is another version.
PYTHON_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
INSTALLED := $(VENV)/.installed-$(PYTHON_VERSION)
PULUMI := source scripts/pulumi-env.sh &&
STACK ?= local
# The release's version: provider/pyproject.toml's, stamped into the schema and every SDK.
RELEASE := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' provider/pyproject.toml)
BASE ?= origin/main

help:  ## List the targets.
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

# uv (tools/uv/requirements.txt) in its own virtualenv under .tools: it makes the
# virtualenvs below and installs their pins, the same pins pip would, in seconds where pip
# takes a minute; each virtualenv gets pip too (--seed), for what installs into it later.
# UV_NATIVE_TLS: uv trusts the system's certificates, as pip does. UV_COMPILE_BYTECODE:
# uv writes the installed modules' bytecode, as pip does (uv does not by default), and
# BYTECODE writes that of pip itself (--seed's) and of the editable package. Where
# PYTHONDONTWRITEBYTECODE is set (as on this project's machines) a process that finds no
# bytecode compiles what it imports: 2.6 s of CPU for google.cloud.aiplatform_v1 in each
# engine command's provider, 0.2 s for the `pip list` of each Python program's run.
UV_HOME := .tools/uv
UV := $(UV_HOME)/bin/uv
export UV_NATIVE_TLS := 1
export UV_COMPILE_BYTECODE := 1
BYTECODE = $(1)/bin/python -m compileall -q -j 0 $(2) \
  "$$($(1)/bin/python -c 'import os, pip; print(os.path.dirname(pip.__file__))')" >/dev/null
$(UV): tools/uv/requirements.txt
	$(PYTHON) -m venv --clear $(UV_HOME)
	$(UV_HOME)/bin/python -m pip install --quiet --disable-pip-version-check -r $<
	touch $@

uv: $(UV)  ## uv, which makes the virtualenvs (built once, in .tools).

$(INSTALLED): requirements.txt provider/pyproject.toml $(UV)
	@$(PYTHON) scripts/check-python.py
	$(UV) venv --quiet --clear --seed --python $(PYTHON) $(VENV)
	VIRTUAL_ENV=$(VENV) $(UV) pip install --quiet -r requirements.txt
	$(call BYTECODE,$(VENV),provider/vertex_training)
	touch $@

venv: $(INSTALLED)  ## Create the virtualenv Pulumi.yaml names, with requirements.txt.

# PyInstaller, at the pins of tools/plugin-bundle/requirements.txt, in the virtualenv: it
# bundles the plugin for `make plugin` and the tests of the bundle.
BUNDLER := $(VENV)/.bundler-$(PYTHON_VERSION)
$(BUNDLER): $(INSTALLED) tools/plugin-bundle/requirements.txt
	VIRTUAL_ENV=$(VENV) $(UV) pip install --quiet -r tools/plugin-bundle/requirements.txt
	touch $@

# What `make up` and the like need, made side by side the first time: the virtualenv
# (mostly downloads) and the CLI (a Go build when none is installed).
SETUP := $(MAKE) --no-print-directory -j2 venv tools

tools:  ## The Pulumi CLI (an installed 3.245+, else built once) and its Python host in .tools/bin: what `make up` runs.
	bash scripts/install-pulumi.sh

all-tools:  ## Also the YAML, Node.js and Go language hosts and the SDK generators: what `make test` and `make sdks` run.
	bash scripts/install-pulumi.sh all

up:  ## Run `pulumi up` on a stack (STACK=local by default).
	@$(SETUP)
	$(PULUMI) pulumi stack select --create $(STACK) && pulumi up --yes --skip-preview --stack $(STACK)

preview:  ## Show what `pulumi up` would do on STACK, with the diff.
	@$(SETUP)
	$(PULUMI) pulumi stack select --create $(STACK) && pulumi preview --diff --stack $(STACK)

render: venv  ## Print the Vertex AI requests STACK would submit (no cloud call, no engine).
	$(VENV)/bin/vertex-training render stacks/Pulumi.$(STACK).yaml

destroy:  ## Cancel and delete STACK's jobs.
	@$(SETUP)
	$(PULUMI) pulumi destroy --yes --stack $(STACK)

# pytest-xdist's workers for `make test`: most of an engine test's time is spent waiting
# for the processes it starts, so twice as many as cores keeps both busy (docs/testing.md).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
# The downloads the tests' npm, Go and Maven builds make, kept in .tools (git-ignored) and
# reused by the next run.
test: export npm_config_cache = $(CURDIR)/.tools/npm
test: export MAVEN_OPTS = -Dmaven.repo.local=$(CURDIR)/.tools/maven
test: venv all-tools policy-venv $(BUNDLER)  ## Run every test: unit, fake Vertex service, and the real Pulumi engine.
	bash scripts/install-actionlint.sh
	$(PULUMI) $(PY) -m pytest -n $(TEST_WORKERS) --maxschedchunk 1 --durations 25

lint: venv  ## Check the code: ruff (lint and format), and mypy in strict mode on provider/.
	$(VENV)/bin/ruff check provider provider.py policy tests acceptance trainer examples scripts tools/plugin-bundle actions __main__.py
	$(VENV)/bin/ruff format --check provider provider.py policy tests acceptance trainer examples scripts tools/plugin-bundle actions __main__.py
	$(VENV)/bin/mypy

schema: venv  ## Write the plugin's schema (provider/vertex_training/plugin/schema.json), docs/config-shape.md's key tables from the job's models, docs/plugin.md's resources from the schema, docs/rules.md from the rule registry.
	$(PY) -m vertex_training.stackconfig.typed_arguments provider/vertex_training/resources/arguments.py
	$(PY) -m vertex_training.plugin.schema provider/vertex_training/plugin/schema.json $(RELEASE)
	$(PY) -m vertex_training.plugin.resource_docs docs/plugin.md
	$(PY) -m vertex_training.plugin.job_keys docs/config-shape.md
	$(PY) -m vertex_training.review.rules_page docs/rules.md

sdks: schema all-tools  ## Write the SDKs under sdk/ (TypeScript, Go, Python) from the schema.
	bash scripts/gen-sdks.sh sdk

outdated: venv  ## List the pins of requirements.txt that have newer releases, and what holds them.
	$(PY) scripts/outdated.py

policy-venv: policy/.venv/.installed  ## Create policy/.venv, the policy pack's own virtualenv.

policy/.venv/.installed: policy/requirements.txt $(UV)
	@$(PYTHON) scripts/check-python.py
	$(UV) venv --quiet --clear --seed --python $(PYTHON) policy/.venv
	VIRTUAL_ENV=policy/.venv $(UV) pip install --quiet -r policy/requirements.txt
	$(call BYTECODE,policy/.venv,)
	touch $@

plan: venv  ## What the change to STACK does against BASE (a git ref): jobs, costs, rules, quotas.
	$(VENV)/bin/vertex-training plan stacks/Pulumi.$(STACK).yaml --base $(BASE) $(if $(FORMAT),--format $(FORMAT)) $(if $(QUOTAS_ENDPOINT),--quotas-endpoint $(QUOTAS_ENDPOINT))

acceptance: venv all-tools  ## The acceptance suite: on Google with VERTEX_TRAINING_ACCEPTANCE_PROJECT set, else on the fakes (docs/testing.md).
	$(PULUMI) $(PY) -m pytest acceptance -p no:cacheprovider -v --timeout 3600 $(ACCEPTANCE_ARGS)

acceptance-sweep: venv  ## Cancel and delete every acceptance run's leftover jobs in VERTEX_TRAINING_ACCEPTANCE_PROJECT.
	@test -n "$$VERTEX_TRAINING_ACCEPTANCE_PROJECT" || { echo "VERTEX_TRAINING_ACCEPTANCE_PROJECT is not set: nothing to sweep"; exit 0; }; \
	$(VENV)/bin/vertex-training jobs orphans --project "$$VERTEX_TRAINING_ACCEPTANCE_PROJECT" \
	  --region "$${VERTEX_TRAINING_ACCEPTANCE_REGION:-us-central1}" --label acceptance_run --delete --yes

bench:  ## Time 12 waited-for jobs against the fake Vertex service, and what the plugin adds to a no-change preview.
	@$(SETUP)
	$(MAKE) --no-print-directory all-tools
	$(PULUMI) $(PY) scripts/bench_wait.py
	$(PULUMI) $(PY) scripts/bench_plugin_preview.py

bench-scale:  ## Preview and first up of 50, 200, 400 jobs against as many no-op dynamic resources.
	@$(SETUP)
	$(PULUMI) $(PY) scripts/bench_scale.py

# The price catalog to read: Google's by default; PRICES_ENDPOINT=127.0.0.1:PORT for the
# fake one (python -m vertex_training.testing.fake_catalog). Machine shapes: Compute Engine's
# MachineTypes API; PRICES_COMPUTE_ENDPOINT=127.0.0.1:PORT for the fake one
# (python -m vertex_training.testing.fake_compute); PRICES_PROJECT: the project to list them in
# (default: GOOGLE_CLOUD_PROJECT or ADC's). PRICES_REGIONS: the regions to keep.
PRICES_ENDPOINT ?=
PRICES_COMPUTE_ENDPOINT ?=
PRICES_PROJECT ?=
PRICES_REGIONS ?=
prices: venv  ## Refresh prices/snapshot.json: Cloud Billing Catalog prices, Compute Engine machine shapes (needs credentials).
	$(VENV)/bin/vertex-training prices refresh $(if $(PRICES_ENDPOINT),--endpoint $(PRICES_ENDPOINT)) $(if $(PRICES_COMPUTE_ENDPOINT),--compute-endpoint $(PRICES_COMPUTE_ENDPOINT)) $(if $(PRICES_PROJECT),--project $(PRICES_PROJECT)) $(foreach region,$(PRICES_REGIONS),--region $(region))

images: venv  ## Refresh prices/images.json: Google's prebuilt training images, listed from its registry (needs credentials).
	$(VENV)/bin/vertex-training images refresh $(if $(IMAGES_ENDPOINT),--endpoint $(IMAGES_ENDPOINT))

bench-prices: venv  ## Time a refresh against a fake catalog of 50,000 SKUs, and its peak memory.
	$(PY) scripts/bench_prices.py

plugin: venv $(BUNDLER)  ## Build this machine's plugin archive (the plugin bundled with its Python) into dist/.
	bash scripts/build-plugin.sh dist $(PY)

bench-plugin: venv $(BUNDLER)  ## The plugin archive's size, its first and per-command start, beside the launcher's.
	$(PY) scripts/bench_plugin_start.py

.PHONY: help uv venv tools all-tools up preview render destroy test lint schema sdks outdated policy-venv plan bench bench-scale prices images bench-prices plugin bench-plugin

DOCS_VENV ?= .venv-docs
.PHONY: docs
docs: $(DOCS_VENV)/.installed  ## Build the docs site into site/ with mkdocs --strict: a broken link or anchor, or a page left out of mkdocs.yml's nav, fails.
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --strict --site-dir site

$(DOCS_VENV)/.installed: docs/requirements.txt $(UV)
	$(UV) venv --quiet --clear --python $(PYTHON) $(DOCS_VENV)
	VIRTUAL_ENV=$(DOCS_VENV) $(UV) pip install --quiet -r docs/requirements.txt
	touch $@
