# gifq-webhooks. The two commands a new machine needs: `make dev` and `make test`.
SHELL := bash
GO    ?= go

EMU_DIR   := localstack/_emulators
EMU_STAMP := $(EMU_DIR)/node_modules/.installed
DYNOXIDE_CRATE := dynoxide-rs@2.0.1
DYNOXIDE_BIN   := $(EMU_DIR)/cargo/bin/dynoxide
KMS_BIN        := $(EMU_DIR)/bin/local-kms

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.DEFAULT_GOAL := help
.PHONY: help dev test unit lint fmt emulators invoke account load chaos bench sim sim-all clean

help:
	@echo "make dev        run the whole system locally (emulators, API on 127.0.0.1:8080, demo receiver)"
	@echo "make test       every test: lint, unit, integration and end to end against the emulators, CDK stack"
	@echo "make invoke FN=redrive EVENT=events/redrive.json   invoke one function with a sample event (needs make dev)"
	@echo "make account NAME=acme [TABLE=<deployed table>]     create an account and print its API key"
	@echo "make load [ARGS='-events 2000 -rate 0']             a load run against the running make dev (docs/performance.md)"
	@echo "make first-webhook-time [COLD=build|all|0]          a fresh clone to its first webhook, timed (docs/local.md)"
	@echo "make dynoxide-fast                                  build the faster dynoxide from its crate (opt-in, ~4 min of cargo)"
	@echo "make bench-cpu [BENCH_CPU_ARGS='-count 6']          our CPU per delivery against an in-process fake of AWS (docs/performance.md)"
	@echo "make soak [SOAK_DURATION=1m SOAK_RATE=4 SOAK_FAULTS=1 SOAK_SEED=0]  the system under traffic and injected faults, then its invariants (docs/testing.md)"
	@echo "make sim [SIM_ONLY='BC iso 10x'] [SIM_ARGS=...]      the simulation of a day at AWS scale (docs/scale.md)"
	@echo "make sdk-test                                       the TypeScript and Python receiver libraries and clients (docs/receivers.md)"
	@echo "make build / synth / deploy / localstack-*          see docs/deploy.md"

# The DynamoDB and SQS emulators (npm; pinned in localstack/_emulators/package-lock.json).
# The KMS emulator (local-kms, a Go module pinned in localstack/kms/go.mod) is
# built from the Go module proxy. A fresh clone reaches its first webhook in
# about 35 s on 2 idle cores (docs/local.md).
emulators: $(EMU_STAMP) $(if $(filter 1,$(DYNOXIDE_BUILD)),$(DYNOXIDE_BIN)) $(KMS_BIN)
$(KMS_BIN): localstack/kms/go.mod localstack/kms/main.go
	cd localstack/kms && CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -gcflags='$(DEV_GCFLAGS)' -o ../../$(KMS_BIN) .
$(EMU_STAMP): $(EMU_DIR)/package.json $(EMU_DIR)/package-lock.json
	cd $(EMU_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Opt-in, for load runs: dynoxide built for this machine from its crate.
# dynoxide-rs 2.0.1 is the same dynoxide 1.2.1 as the npm package, built with
# glibc's allocator and opt-level 3 instead of the npm binary's static musl,
# size-optimized build, and costs a third less CPU a call
# (docs/performance.md). About 4 minutes of cargo on 2 cores, once; the
# emulators use it whenever it is there. `make dynoxide-fast` or
# DYNOXIDE_BUILD=1 with any target that needs the emulators builds it;
# make load-targets does.
.PHONY: dynoxide-fast
dynoxide-fast: $(DYNOXIDE_BIN)
$(DYNOXIDE_BIN):
	@if command -v cargo >/dev/null; then \
	  echo "building dynoxide from its crate $(DYNOXIDE_CRATE) into $(EMU_DIR)/cargo (once, about 4 minutes on 2 cores; cargo's progress follows)"; \
	  CARGO_PROFILE_RELEASE_OPT_LEVEL=3 CARGO_PROFILE_RELEASE_LTO=thin CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
	    cargo install $(DYNOXIDE_CRATE) --locked --no-default-features --features native-sqlite,http-server --root $(EMU_DIR)/cargo; \
	else echo "no cargo: the emulators use the npm build of dynoxide"; fi

# Built, then run (not `go run`, which exits 1 after any Ctrl-C): a clean
# Ctrl-C ends make dev with status 0. The build runs while the emulators
# install: on a fresh clone npm ci is mostly download and unpacking, the
# build mostly CPU.
# The dev binary is built as Lambda's are (no cgo, no RPC shim, no symbol
# tables): less compiling on a cold build cache, the newcomer's first
# minute (docs/local.md). The KMS emulator is built once npm ci is done,
# with the same flags, so it reuses the standard library the dev build has
# compiled by then: two builds started together on an empty cache each
# compile it (about 35 CPU seconds more).
# DEV_GCFLAGS compiles everything without inlining: a third less compiling
# (74 against 111 CPU seconds on an empty cache; only the AWS SDKs: 98), for a
# process that mostly waits on the emulators. `DEV_GCFLAGS= make dev` builds
# as Lambda does, for make load's CPU figures (make load-targets always does).
DEV_GCFLAGS ?= all=-l
comma := ,
# DEV_TAGS=awsdest adds the AWS destinations (delivered to a LocalStack at
# LOCALSTACK_ENDPOINT): the SDK's config loader and the SNS and EventBridge
# clients, a tenth of a cold build, left out unless asked for.
DEV_TAGS ?=
DEV_BUILD := CGO_ENABLED=0 $(GO) build -tags lambda.norpc$(if $(DEV_TAGS),$(comma)$(DEV_TAGS)) -trimpath -ldflags='-s -w' -gcflags='$(DEV_GCFLAGS)'
dev:
	@$(DEV_BUILD) -o .cache/bin/dev ./localstack/dev & build=$$!; \
	  $(MAKE) --no-print-directory $(EMU_STAMP) $(if $(filter 1,$(DYNOXIDE_BUILD)),$(DYNOXIDE_BIN)) && \
	  $(MAKE) --no-print-directory $(KMS_BIN); installed=$$?; \
	  wait $$build && [ $$installed = 0 ]
	.cache/bin/dev

# A newcomer's first minute, timed: a fresh clone of HEAD in a temporary
# folder, make dev there on free ports, the banner's first event, and the
# seconds to the demo receiver's first webhook (docs/local.md). COLD=all also
# empties the Go module and npm caches; COLD=0 keeps every cache.
.PHONY: first-webhook-time
first-webhook-time:
	localstack/dev/firstwebhook.sh

invoke:
	@test -n "$(FN)" -a -n "$(EVENT)" || { echo "usage: make invoke FN=<api|deliver|sweeper|redrive|ops> EVENT=events/<file>.json"; exit 2; }
	$(GO) run ./localstack/dev invoke $(FN) $(EVENT)

# Local (make dev must be running; its DynamoDB is found in the dev.json it
# keeps in its data folder) unless TABLE names a deployed stack's table.
DEV_JSON     = $(or $(DATA_DIR),localstack/.data)/dev.json
DEV_DYNAMODB = $(shell sed -n 's/.*"dynamodb": *"\([^"]*\)".*/\1/p' $(DEV_JSON) 2>/dev/null)
account:
	@test -n "$(NAME)" || { echo "usage: make account NAME=acme [TABLE=<TableName output>]"; exit 2; }
ifeq ($(TABLE),)
	AWS_ENDPOINT_URL_DYNAMODB=http://$${DYNAMODB_ADDR:-$(or $(DEV_DYNAMODB),127.0.0.1:8000)} AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_REGION=us-east-1 \
	  $(GO) run ./infra/ops -table gifq-webhooks-dev account create -name "$(NAME)"
else
	$(GO) run ./infra/ops -table "$(TABLE)" account create -name "$(NAME)"
endif

# Every test. Integration packages start their own emulators (localstack/testenv).
# The end-to-end suite runs alone, after the rest: its burst tests measure what
# a receiver sees per second, which other packages' load on two cores would
# blur. The rest compile and run side by side (with -p 1 for all, their
# compiling and linking ran one package at a time). Its parallel tests mostly
# wait on retry schedules and leases: six at a time, not GOMAXPROCS's two.
E2E_PKG := ./localstack/e2e/
test: emulators lint portal-test sdk-deps
	$(GO) test -count=1 -timeout 20m $$($(GO) list ./... | grep -v '/localstack/e2e$$')
	$(GO) test -count=1 -timeout 20m -parallel 6 $(E2E_PKG)

# The fast tests, in seconds: every package whose tests need neither the
# emulators nor the CDK (no test file imports localstack/testenv or
# aws-cdk-go), found by go list, not by a list kept by hand. Benchmarks that
# need the emulators carry the build tag `emulators` (make bench sets it).
UNIT_PKGS = $(shell $(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}{{end}}' ./... \
	| grep -v -e /localstack/testenv -e /aws-cdk-go/ | cut -d' ' -f1)
unit:
	$(GO) test -count=1 -short $(UNIT_PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags emulators ./...
	$(GO) vet -tags awsdest ./localstack/dev
	$(GO) run $(STATICCHECK) -tags emulators ./...
	$(GO) run $(STATICCHECK) -tags awsdest ./localstack/dev

fmt:
	gofmt -w $$(git ls-files '*.go')

# Against a running make dev: sustained rate, ingest-to-first-attempt latency, and the ceiling.
load:
	$(GO) run ./localstack/load $(ARGS)

# The three throughput targets, each against its own fresh make dev,
# one table at the end (docs/performance.md); PPROF=1 adds CPU profiles.
.PHONY: load-targets
load-targets: emulators dynoxide-fast
	GO=$(GO) localstack/load/targets.sh

# The chaos run at full size (make test runs it with 300 events and 3 kills).
CHAOS_EVENTS ?= 3000
CHAOS_KILLS  ?= 6
chaos: emulators
	CHAOS_EVENTS=$(CHAOS_EVENTS) CHAOS_KILLS=$(CHAOS_KILLS) $(GO) test -count=1 -v -timeout 30m -run '^TestChaos$$' ./localstack/e2e/

# The soak (docs/testing.md): make dev's runner against the emulators under
# continuous traffic from several accounts to healthy, slow, hanging,
# refusing, flapping, recovering, gone and throttling endpoints, with faults
# injected at its DynamoDB, SQS and clock ports from a seed; then the
# invariant checker reads the table and the receivers and fails on a broken
# invariant. SOAK_DURATION is the traffic's (a drain of about 3 minutes
# follows); SOAK_RATE requests a second; SOAK_FAULTS scales every fault rate
# (0: none); SOAK_SEED replays a run (0: a new seed, printed).
SOAK_DURATION ?= 1m
SOAK_RATE     ?= 4
SOAK_FAULTS   ?= 1
SOAK_SEED     ?= 0
SOAK_ARGS     ?=
.PHONY: soak
soak: emulators
	$(GO) build -o .cache/bin/soak ./localstack/soak
	.cache/bin/soak -duration $(SOAK_DURATION) -rate $(SOAK_RATE) -faults $(SOAK_FAULTS) -seed $(SOAK_SEED) $(SOAK_ARGS)

bench:
	$(GO) test -tags emulators -run '^$$' -bench . -benchmem ./shared/...

# Our CPU per delivery and per SDK call (at most 1 ms), against the
# in-process fake of AWS (localstack/fakeaws), not the emulators
# (docs/performance.md "Our CPU per delivery"). Not part of make test.
# BENCH_CPU_ARGS passes more flags ('-count 6'); a profile needs one package:
# BENCH_CPU_PKGS=./shared/delivery/ BENCH_CPU_ARGS='-cpuprofile cpu.out'.
BENCH_CPU_PKGS ?= ./shared/delivery/ ./localstack/fakeaws/
BENCH_CPU_ARGS ?=
.PHONY: bench-cpu
bench-cpu:
	$(GO) test -run '^$$' -bench '^Benchmark(Delivery|FakeCall)$$' -benchtime 2000x $(BENCH_CPU_ARGS) $(BENCH_CPU_PKGS)

# The discrete-event simulation of a day of 100 M deliveries, one row per
# option (docs/scale.md). `make sim` runs today's shipped stack (under a
# minute); SIM_ONLY='BC iso dead1%' or 'BC iso 10x' the other rows of
# "Results: today's design" (minutes each); `make sim-all` every row;
# SIM_ARGS='-scale 10' for ten times the load of every row.
SIM_ONLY ?= BC iso today
sim:
	$(GO) run ./localstack/sim -only "$(SIM_ONLY)" $(SIM_ARGS)
sim-all:
	$(GO) run ./localstack/sim $(SIM_ARGS)

clean:
	rm -rf bin cdk.out .cache

include infra/cdk.mk

# Fuzzing, kept out of `make test`: each fuzz target in turn for FUZZTIME
# (CI runs it after make test). A failing input is written to the package's
# testdata/fuzz/<Target>/ and the full output is printed.
FUZZTIME ?= 10s
FUZZ_TARGETS := ./shared/signing:FuzzParse ./shared/signing:FuzzVerify ./shared/signing:FuzzSignVerify \
	./shared/signing:FuzzStandardSignVerify ./shared/ingest:FuzzValidate ./shared/netguard:FuzzCheckURL
.PHONY: fuzz
fuzz:
	@set -e; out=$$(mktemp); trap 'rm -f $$out' EXIT; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  if $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg >$$out 2>&1; then \
	    grep 'fuzz: elapsed' $$out | tail -n 1 | tr -d ',()' | awk -v fn=$$fn -v pkg=$$pkg \
	      '{ s = $$3 + 0; printf "%-16s %-18s %10d execs in %3ds: %7.0f execs/s, corpus %s\n", fn, pkg, $$5, s, $$5 / (s ? s : 1), $$NF }'; \
	  else cat $$out; echo "fuzz: $$fn failed"; exit 1; fi; \
	done

# govulncheck with a vulnerability database built from the Go module proxy
# (infra/vulndb/build.sh: the OSV entries of the module golang.org/x/vulndb,
# indexed by its own cmd/indexdb), since vuln.go.dev cannot be reached here.
# Fails on any vulnerability the code reaches. VULNDB_VERSION pins the
# database (default: the newest the proxy has); VULNDB=https://vuln.go.dev
# uses the public database instead where it is reachable.
GOVULNCHECK    := golang.org/x/vuln/cmd/govulncheck@v1.9.0
VULNDB_DIR     ?= .cache/vulndb
VULNDB_VERSION ?= latest
VULNDB         ?= file://$(abspath $(VULNDB_DIR))
.PHONY: vuln
vuln:
ifneq ($(filter file://%,$(VULNDB)),)
	infra/vulndb/build.sh $(patsubst file://%,%,$(VULNDB)) $(VULNDB_VERSION)
endif
	@echo "govulncheck ./... with $$($(GO) env GOVERSION), database $(VULNDB)"
	$(GO) run $(GOVULNCHECK) -db $(VULNDB) ./...

# The Go toolchain of every target, the Lambda binaries included. The
# machines' own go1.26.8 has ten standard-library vulnerabilities this code
# reaches (net/http, crypto/tls, crypto/x509; `GOTOOLCHAIN=local make vuln`
# lists them), fixed in go1.26.10 and go1.27.3; go1.27.3 is the newer Go the
# module proxy serves here, and the go command fetches it on first use
# (~76 MB). go.mod still says go 1.26.8: the language version is unchanged.
export GOTOOLCHAIN ?= go1.27.3

# Benchmarks: the deliver handler's benchmark (shared/delivery) runs against
# the emulators, so `make bench` needs them installed.
bench: emulators

# Binary sizes and each function's init time (process start to ready) and
# cold first invocation, against the emulators and under the Lambda Runtime
# Interface Emulator; slow-ish (~1 min), not part of make test.
RIE := github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d
INITTIME_RUNS ?= 10
.PHONY: inittime
inittime: emulators
	GOBIN=$(abspath .cache/bin) $(GO) install $(RIE)
	$(GO) run ./localstack/inittime -runs $(INITTIME_RUNS) -rie $(abspath .cache/bin)/aws-lambda-rie

# The customer portal end to end in headless Chromium: Debian's chromium
# (apt-get when missing; CI runs as root) driven by playwright-core (npm,
# pinned in localstack/_browser/package-lock.json; never `playwright
# install`), against make dev's runner built here and started by the test on
# free ports. Its screenshots go to .cache/portal-screenshots/;
# `make portal-screenshots` writes them to docs/ (commit them when the UI changes).
BROWSER_DIR   := localstack/_browser
BROWSER_STAMP := $(BROWSER_DIR)/node_modules/.installed
CHROMIUM      ?= /usr/bin/chromium
.PHONY: browser portal-test
browser: $(BROWSER_STAMP)
	@test -x $(CHROMIUM) || { echo "installing Debian's chromium"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
$(BROWSER_STAMP): $(BROWSER_DIR)/package.json $(BROWSER_DIR)/package-lock.json
	cd $(BROWSER_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
SCREENSHOTS   ?= .cache/portal-screenshots
.PHONY: portal-screenshots
portal-test: emulators browser
	$(GO) build -o .cache/bin/dev ./localstack/dev
	cd $(BROWSER_DIR) && CHROMIUM=$(CHROMIUM) DEV_BIN=$(abspath .cache/bin/dev) SCREENSHOTS=$(abspath $(SCREENSHOTS)) \
	  node --test --test-reporter=spec portal.test.mjs
portal-screenshots:
	$(MAKE) portal-test SCREENSHOTS=docs

# An AWS endpoint in the portal, delivered to LocalStack (which must be up:
# make localstack-up; .ci/run runs this in its LocalStack phase).
portal-test-aws: emulators browser
	$(GO) build -tags awsdest -o .cache/bin/dev ./localstack/dev
	$(GO) build -o .cache/bin/awscustomer ./localstack/awscustomer
	cd $(BROWSER_DIR) && CHROMIUM=$(CHROMIUM) DEV_BIN=$(abspath .cache/bin/dev) CUSTOMER_BIN=$(abspath .cache/bin/awscustomer) \
	  SCREENSHOTS=$(abspath $(SCREENSHOTS)) LOCALSTACK_ENDPOINT=$(or $(LOCALSTACK_ENDPOINT),http://127.0.0.1:4566) \
	  node --test --test-reporter=spec portal-aws.test.mjs

# Schemathesis against the api function (docs/apifuzz.md): every operation of
# docs/openapi.yaml, examples, coverage, fuzzing and the stateful links, with
# every check but positive_data_acceptance. Installs the pinned Schemathesis
# from PyPI into .cache/schemathesis on first use; localstack/apifuzz starts
# the emulators and the api on free loopback ports and stops them after.
# APIFUZZ_EXAMPLES bounds the cases per operation (CI: the default, ~1 min).
SCHEMATHESIS_VENV := .cache/schemathesis
SCHEMATHESIS      := $(SCHEMATHESIS_VENV)/bin/schemathesis
# Python 3.12 or newer when there is one: under 3.11, compile() and ast.parse
# in Schemathesis' worker threads fail at random ("AST constructor recursion
# depth mismatch": anyio's importer, then Hypothesis describing a filter's
# lambda once the document gained GET /v1/account), a runtime error, not a
# finding. 3.11 still works for the rest (localstack/apifuzz/requirements.txt).
# The first that runs (a pyenv shim of a version not selected does not), as localstack/host.sh picks.
SCHEMATHESIS_PYTHON ?= $(or $(shell for c in python3.13 python3.12 $(wildcard /root/.pyenv/versions/3.13*/bin/python3.13 /root/.pyenv/versions/3.12*/bin/python3.12); do \
	"$$c" -c '' >/dev/null 2>&1 && { echo "$$c"; break; }; done),python3)
APIFUZZ_EXAMPLES  ?= 50
APIFUZZ_SEED      ?= 1
APIFUZZ_CHECKS    ?= --checks all --exclude-checks positive_data_acceptance
APIFUZZ_ARGS      ?=
.PHONY: apifuzz
apifuzz: emulators $(SCHEMATHESIS_VENV)/.installed
	$(GO) run ./localstack/apifuzz -- $(SCHEMATHESIS) --config-file localstack/apifuzz/schemathesis.toml run '{url}/v1/openapi.json' -H 'Authorization: Bearer {key}' \
	  $(APIFUZZ_CHECKS) --max-examples $(APIFUZZ_EXAMPLES) --seed $(APIFUZZ_SEED) \
	  --workers 2 --report junit --report-dir .cache/apifuzz-report $(APIFUZZ_ARGS)
$(SCHEMATHESIS_VENV)/.installed: localstack/apifuzz/requirements.txt
	$(SCHEMATHESIS_PYTHON) -m venv $(SCHEMATHESIS_VENV)
	$(SCHEMATHESIS_VENV)/bin/pip install --quiet --disable-pip-version-check -r localstack/apifuzz/requirements.txt
	@touch $@

# The receiver libraries (sdk/, docs/receivers.md): the conformance fixtures
# in Go, TypeScript and Python, the types, and the Node and Python receivers
# of docs/receivers.md against real deliveries. sdk-deps installs what they
# need: npm ci (typescript, @types/node, openapi-typescript: dev only) and a
# venv with the pinned cryptography (v1a), mypy and openapi-python-client.
SDK_VENV := .cache/sdk/venv
SDK_PY   := $(SDK_VENV)/bin/python
SDK_TS_STAMP := sdk/typescript/node_modules/.installed
.PHONY: sdk-deps sdk-test
sdk-deps: $(SDK_TS_STAMP) $(SDK_VENV)/.installed
$(SDK_TS_STAMP): sdk/typescript/package.json sdk/typescript/package-lock.json
	cd sdk/typescript && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
$(SDK_VENV)/.installed: sdk/python/requirements-dev.txt
	python3 -m venv $(SDK_VENV)
	$(SDK_PY) -m pip install --quiet --disable-pip-version-check -r sdk/python/requirements-dev.txt
	@touch $@
sdk-test: sdk-deps emulators sdk-clients-check
	$(GO) test -count=1 ./sdk/conformance/
	cd sdk/typescript && npm test --silent
	cd sdk/python && PYTHONPATH=src:tests ../../$(SDK_PY) -m unittest discover -s tests
	cd sdk/python && ../../$(SDK_PY) -m mypy --strict src/gifq_webhooks tests/typing_check.py
	$(GO) test -count=1 -run '^TestReceiversFromTheDocs$$|^TestProducerClients$$' $(E2E_PKG)

# The producer clients generated from docs/openapi.yaml: sdk/typescript/openapi.d.ts
# (openapi-typescript; client.mjs is the hand-written fetch wrapper it types) and
# sdk/python-client (openapi-python-client, formatted by its pinned ruff).
# sdk-clients-check (CI, in sdk-test) fails when the committed ones are not what
# the document generates.
SDK_TS_GEN = cd sdk/typescript && npx --no-install openapi-typescript ../../docs/openapi.yaml --empty-objects-unknown --silent -o
SDK_PY_GEN = RUFF_NO_CACHE=true PATH=$(CURDIR)/$(SDK_VENV)/bin:$$PATH openapi-python-client generate --path docs/openapi.yaml --config sdk/python/client-config.yaml --output-path
.PHONY: sdk-clients sdk-clients-check
sdk-clients: sdk-deps
	$(SDK_TS_GEN) openapi.d.ts
	rm -rf sdk/python-client && $(SDK_PY_GEN) sdk/python-client
sdk-clients-check: sdk-deps
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	( $(SDK_TS_GEN) $$tmp/openapi.d.ts ) && $(SDK_PY_GEN) $$tmp/python-client >/dev/null && \
	if ! diff -u sdk/typescript/openapi.d.ts $$tmp/openapi.d.ts > $$tmp/diff || ! diff -ru sdk/python-client $$tmp/python-client >> $$tmp/diff; then \
	  head -n 40 $$tmp/diff; echo "the SDK clients are not what docs/openapi.yaml generates: run make sdk-clients"; exit 1; fi; \
	echo "sdk/typescript/openapi.d.ts and sdk/python-client match docs/openapi.yaml"

# The Go client generated from docs/openapi.yaml (shared/apiclient, oapi-codegen
# v2.8.2 from the module proxy), and with it the TypeScript and Python clients
# (sdk-clients). apiclient-check (CI) fails when the committed client is not
# what the document generates.
OAPI_CODEGEN := github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
.PHONY: apiclient apiclient-check
apiclient:
	cd shared/apiclient && $(GO) run $(OAPI_CODEGEN) -config oapi-codegen.yaml ../../docs/openapi.yaml
	$(MAKE) --no-print-directory sdk-clients
apiclient-check:
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	sed "s|^output:.*|output: $$tmp/apiclient.gen.go|" shared/apiclient/oapi-codegen.yaml > $$tmp/config.yaml && \
	cd shared/apiclient && $(GO) run $(OAPI_CODEGEN) -config $$tmp/config.yaml ../../docs/openapi.yaml && \
	if ! diff -u apiclient.gen.go $$tmp/apiclient.gen.go > $$tmp/diff; then head -n 40 $$tmp/diff; \
	  echo "shared/apiclient/apiclient.gen.go is not what docs/openapi.yaml generates: run make apiclient"; exit 1; fi; \
	echo "shared/apiclient matches docs/openapi.yaml"
