# wshub developer / CI entry points. `make test` is what CI runs.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

GO       ?= go
FUZZTIME ?= 4s

# Use $DATABASE_URL if set, else start/reuse the local cluster (scripts/pg.sh).
# Plain assignment (not `export X=$(...)`) so a pg.sh failure fails the recipe.
# The URL is printed without its password (it is in .data/pg/password).
WITH_DB = DATABASE_URL="$${DATABASE_URL:-$$(bash scripts/pg.sh)}"; export DATABASE_URL; \
	echo "DATABASE_URL=$$(sed -E 's|(://[^:/@]*:)[^@]*@|\1****@|' <<<"$$DATABASE_URL") (password: .data/pg/password)" >&2;

# Every Fuzz* target of every package for $(FUZZTIME) each (scripts/fuzz.sh says how).
FUZZ_ALL = GO=$(GO) FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

.PHONY: build run test lint fuzz bench soak pg-stop fmt vet dist screenshots

# The version and commit, stamped into the binary (wshub version), for builds where Go
# cannot read them from .git itself (-buildvcs=false; the Docker build passes them as
# build arguments).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  = -X main.buildVersion=$(VERSION) -X main.buildCommit=$(COMMIT)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/wshub ./cmd/wshub

# dist: the binary for each system and architecture below, stamped with the version and
# commit (wshub version), without cgo (no C toolchain per target): dist/wshub-<os>-<arch>,
# .exe on Windows. On macOS and Windows the binary is the CLI and, on macOS, a hub for the
# kubernetes provider; the local provider needs Linux (README, "On macOS or Windows").
DIST_TARGETS = linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

dist:
	for t in $(DIST_TARGETS); do \
		os=$${t%/*} arch=$${t#*/}; out=dist/wshub-$$os-$$arch$$([ $$os = windows ] && echo .exe || true); \
		echo "==> $$out" >&2; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $$out ./cmd/wshub; \
	done

# run: the pinned Claude Code and Codex CLIs are installed as for the tests (the hub runs
# each one whose key, ANTHROPIC_API_KEY or OPENAI_API_KEY, is set; without either it binds
# the demo agent), and the hub is compiled before it starts: minutes the first time, with
# nothing printed by the compiler meanwhile, so it says so.
AGENT_PATHS = echo "==> the agent CLIs (scripts/agents.sh: about 20 s the first time)" >&2; \
	paths=$$(bash scripts/agents.sh) || { echo "==> scripts/agents.sh failed (above): only agents on PATH, or the demo agent, will run" >&2; paths=; }; \
	eval "$$(sed -n 's/^CLAUDE=\(.*\)/export WSHUB_CLAUDE_PATH="$${WSHUB_CLAUDE_PATH:-\1}"/p; s/^CODEX=\(.*\)/export WSHUB_CODEX_PATH="$${WSHUB_CODEX_PATH:-\1}"/p' <<<"$$paths")";

run:
	bash scripts/sandbox.sh
	@echo "==> compiling wshub (the first time on a machine: about 75 s on two cores, plus downloading its modules; then seconds)" >&2
	$(GO) build -o bin/wshub ./cmd/wshub
	$(WITH_DB) $(AGENT_PATHS) \
	WSHUB_DEMO_AGENT="$${WSHUB_DEMO_AGENT:-$(CURDIR)/examples/demo-agent.sh}" bin/wshub dev

# The test engines, each built or installed once and cached per user outside the clone
# (~/.cache/wshub), side by side in the background while the lint and the cross-compile
# run (scripts/engines.sh; their logs in .data/phases/engines/). Without one, its tests
# skip and say why:
#   scripts/kube.sh      etcd and kube-apiserver from the module proxy (the kubernetes provider)
#   scripts/s3.sh        versitygw from the module proxy (the S3 blob store)
#   scripts/gitea.sh     Gitea from the module proxy (the Gitea forge), the longest build
#   scripts/agents.sh    the Claude Code and Codex CLIs pinned in scripts/agents.versions, from npm
#   scripts/chromium.sh  Debian's chromium (as root), and scripts/axe.sh axe-core from npm (the app)

# PHASE marks where each phase of `make test` starts; the last line prints their times
# (scripts/phases.sh; go test's output is kept in .data/phases/go-test.log).
PHASE = bash scripts/phases.sh
# TEST_PARALLEL: many packages' tests mostly wait (on agents, git, PostgreSQL), so more
# packages (-p, which also bounds builds) and more tests in each run at once than there
# are cores (docs/testing.md has the measures).
TEST_PARALLEL ?= -p 4 -parallel 4

test:
	$(PHASE) sandbox && bash scripts/sandbox.sh
	$(PHASE) "engines, lint, cross-compile" && GO=$(GO) bash scripts/engines.sh || { $(PHASE) failed; exit 1; }
	$(WITH_DB) \
	$(PHASE) "go test" && $(GO) test -race -count=1 -timeout 30m $(TEST_PARALLEL) ./... 2>&1 | tee "$$($(PHASE) log)" || { $(PHASE) failed; exit 1; }; \
	$(PHASE) fuzz && $(FUZZ_ALL) || { $(PHASE) failed; exit 1; }; \
	$(PHASE) end

fuzz:
	$(WITH_DB) \
	$(FUZZ_ALL)

# bench: the API measured against a real `wshub serve` and a pgbench baseline of the same
# statements (cmd/wshub-bench writes docs/benchmarks.md), then the package benchmarks.
# PIN=1 pins the hub to CPU 0 and PostgreSQL, pgbench and the load to CPU 1 (taskset), so
# the table's hub CPU per request reads alone.
# ONLY=API runs B1', B2 and B3 alone and prints them (docs/benchmarks.md untouched), and
# skips the package benchmarks: a change to the API path read in minutes.
# `go run ./cmd/wshub-bench -only B8` reruns the event-stream measurement alone and
# replaces only its part of docs/benchmarks.md. ONLY=Scale does the same for the scale
# run (1,000 then 100,000 workspaces generated by SQL; about 6 minutes).
bench:
	bash scripts/sandbox.sh
	$(GO) build -o bin/wshub ./cmd/wshub
	$(WITH_DB) \
	$(GO) run ./cmd/wshub-bench -hub bin/wshub -out docs/benchmarks.md -pglog "$${WSHUB_PG_LOG:-.data/pg/log}" $(if $(PIN),-pin) $(if $(ONLY),-only $(ONLY)) && \
	$(if $(ONLY),true,$(GO) test -run='^$$' -bench=. -benchmem -benchtime=20x ./...)

# soak: steady load on a real `wshub serve` that is SIGKILLed several times (and, on the
# local cluster of scripts/pg.sh, PostgreSQL restarted once), then checks that nothing
# was lost or duplicated and a run of malformed requests; writes docs/soak.md.
# HUBS=2: the same against two hubs that share only the database, behind a balancer,
# workspaces on the process provider, the kills taking the hubs in turn; writes its own
# section of docs/soak.md (each mode keeps the other's).
HUBS ?= 1
soak:
	bash scripts/sandbox.sh
	$(GO) build -o bin/wshub ./cmd/wshub
	restart=""; [ -n "$${DATABASE_URL:-}" ] || restart=scripts/pg.sh; \
	$(WITH_DB) \
	$(GO) run ./cmd/wshub-bench -soak -hubs $(HUBS) -hub bin/wshub -out docs/soak.md -pg-restart "$$restart"

# screenshots: the app's pictures in docs/app, made afresh by the browser tests (each
# page light and dark, at 1280 and 390 px: name-1280.png, name-dark-390.png), so the
# README shows the app as it is. Needs Chromium and axe-core (scripts/chromium.sh,
# scripts/axe.sh): a test that skips would leave the pictures missing, which fails here.
screenshots:
	rm -f docs/app/*.png
	$(WITH_DB) \
	WSHUB_APP_SCREENSHOTS="$(CURDIR)/docs/app" $(GO) test -count=1 -run 'TestInABrowser' ./web
	@ls docs/app/*.png >/dev/null 2>&1 || { echo "screenshots: no picture was made (is Chromium installed?)" >&2; exit 1; }
	@echo "screenshots: $$(ls docs/app/*.png | wc -l) pictures in docs/app"

pg-stop:
	bash scripts/pg.sh stop

fmt:
	$(GO) fmt ./...

vet:
	$(GO) vet ./...

# lint: gofmt, go vet and staticcheck (built from the module proxy, cached per user);
# make test runs it first.
lint:
	GO=$(GO) bash scripts/lint.sh
