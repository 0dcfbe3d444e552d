# Rappel — build, test and run. `make run` serves the API from the embedded
# bundle; `make test` runs every test. Both work on a fresh clone.

GO       ?= go
SEED     ?= 1
# The synthetic corpus's reference date: recalls are dated up to this day.
# It is pinned here, not taken from the calendar, so that the bundle (and
# every golden file derived from it) changes only when someone moves it.
DATE     ?= 2026-11-25
ADDR     ?= 127.0.0.1:8080
# The same data dir as every rappel command's default, so that a key issued
# with `bin/rappel keys add` is the one `make run` serves.
DATA_DIR ?= data
DEV_KEY  ?= rappel-dev-key
# Development e-mails (confirmations and alerts) are written here as .eml
# files instead of being sent.
MAIL_DIR ?= build/mail
# What the bundle is built from: synthetic, the generated corpus (offline,
# reproducible), or agencies, the agencies' feeds fetched at every make
# that builds the bundle (docs/feeds.md, "A bundle from the agencies").
BUNDLE   ?= synthetic
# With BUNDLE=agencies: the feeds' URLs and the detail documents' time
# budget and rate; empty, rappel's own defaults, those of rappel serve.
FEED_HC_EN    ?=
FEED_HC_FR    ?=
FEED_TC_VRDB  ?=
FEED_DETAIL   ?=
FEED_PAGE     ?=
FEED_PAGE_FROM ?=
DETAIL_BUDGET ?=
DETAIL_RATE   ?=
# What building needs; `make prereqs` checks it first and says what is missing.
GO_MIN   := 1.26.8

PLUGINS  := hcdump vrdb detail
# The plugins are built here; the bundle carries them packed.
WASM     := $(PLUGINS:%=build/plugins/%.wasm)
CORPUS   := build/corpus-$(SEED)-$(DATE)
DOMAIN   := $(wildcard *.go)
PLUGSRC  := $(shell find plugins -name '*.go' -not -name '*_test.go')
# The libraries beside the domain that the plugins and the generator
# compile in, and so the bundle's content depends on: the dump's
# vocabulary, the generator's JSON strings.
LIBSRC   := $(filter-out %_test.go,$(wildcard internal/hcvocab/*.go internal/jsonstr/*.go))
SYNTHSRC := $(shell find bundle/synth cmd/rappel-synth -name '*.go' -not -name '*_test.go' 2>/dev/null)
# Not clients/: the generated clients' module, which the binary does not link.
ALLSRC   := $(shell find . -name '*.go' -not -path './build/*' -not -path './clients/*')
# The Swagger UI files the page at /docs embeds (see the docs target).
DOCS_NPM   := edge/docs/node_modules/swagger-ui-dist
DOCS_FILES := swagger-ui-bundle.js swagger-ui.css favicon-32x32.png LICENSE NOTICE
DOCS       := $(DOCS_FILES:%=edge/docs/assets/%.gz)
# Embedded files written by hand, which the binary must be rebuilt for too.
EMBEDDED   := edge/openapi.json edge/docs/index.html edge/docs/docs.js

# What `rappel version`, GET /health and rappel_build_info report, stamped
# into internal/buildinfo at link time. A checkout without git history (a
# source archive) takes its version from a VERSION file, or says dev;
# override any of them: make build VERSION=v1.4.0. Stamping needs no
# version control data of the toolchain, so it works under
# GOFLAGS=-buildvcs=false too.
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || cat VERSION 2>/dev/null || echo dev)
COMMIT     ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
BUILDINFO  := github.com/rappel-ca/rappel/internal/buildinfo
# -s -w leave out the symbol table and DWARF, a fifth of the binary: stack
# traces and profiles name functions from the runtime's own tables, which
# stay.
LDFLAGS     = -s -w -X '$(BUILDINFO).version=$(VERSION)' -X '$(BUILDINFO).commit=$(COMMIT)' -X '$(BUILDINFO).date=$(BUILD_DATE)'

.PHONY: all build bundle plugins corpus docs run test clients-test fuzz bench bench-refresh clean prereqs FORCE

ifeq ($(filter $(BUNDLE),synthetic agencies),)
$(error BUNDLE is '$(BUNDLE)': give synthetic (the generated corpus, the default) or agencies (fetched from the agencies' feeds))
endif

# The steps of a build that need not wait for each other run side by side,
# one per core: the plugins, the corpus, the bundle step's compile and npm.
# On a fresh clone, the modules one step downloads are compiled while
# another waits on the network. `make -j1` runs them one after the other.
MAKEFLAGS += --jobs=$(shell nproc 2>/dev/null || echo 2)

all: build

# prereqs fails at once, with a sentence, when a tool the build needs is
# missing or too old, instead of minutes later in the middle of a step.
prereqs:
	@command -v $(GO) >/dev/null || { echo "make: Go $(GO_MIN) or newer is needed and '$(GO)' is not on PATH; install it from https://go.dev/dl/"; exit 1; }
	@v=$$($(GO) env GOVERSION | sed 's/^go//'); \
	if [ "$$(printf '%s\n%s\n' "$(GO_MIN)" "$$v" | sort -V | head -1)" != "$(GO_MIN)" ]; then \
		echo "make: Go $(GO_MIN) or newer is needed; '$(GO)' is $$v"; exit 1; fi
	@command -v npm >/dev/null || { echo "make: npm is needed (it installs the pinned Swagger UI files the /docs page embeds); install Node.js and npm, e.g. apt-get install npm"; exit 1; }

build: prereqs bin/rappel

# Without cgo, as the container image is built: no C compiler is needed,
# the binary runs on a system without a C library, and nothing on its
# paths uses C (the bundle is unpacked by a Go zstd decoder; the store's
# blocks are Snappy, the bundle's uncompressed). The bundle step is built
# alike, so that the two share the build cache.
NOCGO := CGO_ENABLED=0

bin/rappel: bundle/data/manifest.json $(DOCS) $(EMBEDDED) $(ALLSRC) go.mod go.sum
	@echo "make: building bin/rappel (the modules were compiled for the bundle step; this compiles what embeds the bundle, and links)"
	$(NOCGO) $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $@ ./cmd/rappel

plugins: $(WASM)

# A plugin's SHA-256 names its code (the bundle records which plugin made
# each record, and a new SHA means normalizing everything again), so the
# build must not stamp anything but the code into it: no commit
# (-buildvcs=false) and no build ID (-ldflags=-buildid=, which hashes
# every source compiled, used or not). plugintest.Build uses the same
# flags. Like the generator's, a plugin is keyed by its bytes: compiled
# when a source changed, replaced only when it differs, so that an edit of
# the domain that the plugins do not link (or that compiles to the same
# code) leaves the plugins, and so the bundle, as they are.
build/plugins/%.wasm.stamp: $(DOMAIN) $(PLUGSRC) $(LIBSRC) | prereqs
	@mkdir -p $(@D)
	@echo "make: compiling the $* plugin to WebAssembly"
	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags=-buildid= -o build/plugins/$*.wasm.new ./plugins/$*/wasm
	@if cmp -s build/plugins/$*.wasm.new build/plugins/$*.wasm; then rm build/plugins/$*.wasm.new; else mv build/plugins/$*.wasm.new build/plugins/$*.wasm; fi
	@touch $@

# Made by the stamp's recipe; make looks at its time again afterwards.
build/plugins/%.wasm: build/plugins/%.wasm.stamp
	@:

# The stamps are made by a pattern rule, so make would take them for
# intermediate files and delete them after the build.
.SECONDARY: $(WASM:=.stamp)

corpus: $(CORPUS)/manifest.json

# The corpus is a function of the generator's code, SEED and DATE, so it is
# keyed by the generator's binary, not by its sources' times: the binary
# is linked without a build ID (which hashes every source, used or not)
# and replaced only when it differs, so a change to the domain that the
# generator does not link leaves the corpus as it is. Writing its 100,000
# files again takes up to half a minute on a busy disk.
SYNTH := build/rappel-synth

$(SYNTH).stamp: $(DOMAIN) $(SYNTHSRC) $(LIBSRC) go.mod go.sum | prereqs
	@mkdir -p $(@D)
	$(GO) build -trimpath -buildvcs=false -ldflags=-buildid= -o $(SYNTH).new ./cmd/rappel-synth
	@if cmp -s $(SYNTH).new $(SYNTH); then rm $(SYNTH).new; else mv $(SYNTH).new $(SYNTH); fi
	@touch $@

# Made by the stamp's recipe; make looks at its time again afterwards.
$(SYNTH): $(SYNTH).stamp
	@:

# Corpora of other seeds or dates are removed, so that they don't pile up.
$(CORPUS)/manifest.json: $(SYNTH)
	@for d in build/corpus-*; do [ "$$d" = "$(CORPUS)" ] || rm -rf "$$d"; done
	@echo "make: generating the synthetic corpus into $(CORPUS)"
	$(SYNTH) -out $(CORPUS) -seed $(SEED) -date $(DATE)

bundle: prereqs bundle/data/manifest.json

# The page at /docs embeds Swagger UI from the npm package pinned in
# edge/docs/package-lock.json: `npm ci` installs exactly that version (its
# install scripts, which only phone home, are not run) and the files the page
# uses are copied into edge/docs/assets, gzipped (1.9 MB of Swagger UI is
# 0.5 MB so, in a binary with a size budget; the page decompresses them once,
# on its first request), which go:embed picks up.
docs: $(DOCS)

$(DOCS_NPM)/package.json: edge/docs/package.json edge/docs/package-lock.json | prereqs
	@echo "make: installing the pinned Swagger UI with npm ci"
	cd edge/docs && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

edge/docs/assets/%.gz: $(DOCS_NPM)/package.json
	@mkdir -p $(@D)
	rm -f $(@:.gz=)
	gzip -9nc $(DOCS_NPM)/$* > $@.tmp && mv $@.tmp $@

# The bundle is normalized with the plugins' own Go code, compiled into
# rappel, by the same plugin host the live feeds use: the Wasm modules are
# built from that code and bundled, and the manifest names them as the
# records' makers, but running them through wazero took 88 s of CPU where
# the native code takes a few (README, "Two commands"; a test compares the two
# on a corpus). The bundle step's rappel is compiled as a step of its own,
# while the plugins and the corpus are made, and only when a source the
# bundle depends on changed: the domain, the plugins, bundle, feeds, kv and
# the command. It is compiled with -trimpath and without cgo, as bin/rappel
# is, so that the two share the build cache: the packages compile once.
# The bundle's sstables (bundle/data/sst) hold keys laid out by kv, so kv's
# sources count too. Its times come from the corpus's reference date
# (DATE), or SOURCE_DATE_EPOCH when set, so that the same DATE and sources
# give the same bytes.
BUNDLER   := build/rappel-bundle
BUNDLESRC := $(DOMAIN) $(PLUGSRC) $(LIBSRC) bundle/bundle.go bundle/load.go bundle/index.go bundle/pack.go cmd/rappel/bundle.go cmd/rappel/feeds.go $(wildcard feeds/*.go) $(filter-out %_test.go,$(wildcard kv/*.go kv/index/*.go kv/segment/*.go))

#
# The bundle step's rappel is keyed by its bytes too: linked without a
# build ID or version control stamp (the bundle does not record them) and
# without the bundle it writes (the nobundle tag: embedded, each bundle
# would make it differ from the last), and replaced only when it differs, so that a change to a source it compiles
# but whose code does not move (a comment, a function nothing calls, a
# test helper) does not make the bundle again. With the plugins keyed
# alike, such an edit of the domain rebuilds only bin/rappel.
$(BUNDLER).stamp: $(BUNDLESRC) go.mod go.sum | prereqs
	@mkdir -p $(@D)
	@echo "make: compiling rappel for the bundle step (on a fresh clone Go downloads and compiles the modules first, a few minutes without output)"
	$(NOCGO) $(GO) build -trimpath -buildvcs=false -ldflags=-buildid= -tags nobundle -o $(BUNDLER).new ./cmd/rappel
	@if cmp -s $(BUNDLER).new $(BUNDLER); then rm $(BUNDLER).new; else mv $(BUNDLER).new $(BUNDLER); fi
	@touch $@

# Made by the stamp's recipe; make looks at its time again afterwards.
$(BUNDLER): $(BUNDLER).stamp
	@:

# Which kind of bundle bundle/data holds, rewritten only when BUNDLE
# changes (make looks at its time again afterwards), so that a plain make
# after a make BUNDLE=agencies builds the generated bundle again.
build/bundle-kind: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = "$(BUNDLE)" ] || echo "$(BUNDLE)" > $@

ifeq ($(BUNDLE),agencies)
# The feeds are fetched whenever the bundle is asked for: they change
# daily. The bundle's time is the fetch's. The command is not echoed,
# since a feed URL may hold a key.
AGENCIES_CORPUS := build/agencies-corpus
FETCH_FLAGS = $(if $(FEED_HC_EN),-feed-hc-en '$(FEED_HC_EN)') $(if $(FEED_HC_FR),-feed-hc-fr '$(FEED_HC_FR)') \
	$(if $(FEED_TC_VRDB),-feed-tc-vrdb '$(FEED_TC_VRDB)') $(if $(FEED_DETAIL),-feed-detail '$(FEED_DETAIL)') \
	$(if $(FEED_PAGE),-feed-page '$(FEED_PAGE)') $(if $(FEED_PAGE_FROM),-feed-page-from $(FEED_PAGE_FROM)) \
	$(if $(DETAIL_BUDGET),-detail-budget $(DETAIL_BUDGET)) $(if $(DETAIL_RATE),-detail-rate $(DETAIL_RATE))

bundle/data/manifest.json: $(BUNDLER) $(WASM) build/bundle-kind FORCE
	@echo "make: fetching the agencies' feeds into $(AGENCIES_CORPUS), then building the data bundle from them"
	@$(BUNDLER) bundle -fetch -corpus $(AGENCIES_CORPUS) -plugins build/plugins -out bundle/data $(FETCH_FLAGS)
else
bundle/data/manifest.json: $(BUNDLER) $(WASM) $(CORPUS)/manifest.json build/bundle-kind
	@echo "make: building the data bundle from the corpus (a line per source as each ends)"
	$(BUNDLER) bundle -corpus $(CORPUS) -plugins build/plugins -out bundle/data
endif

# The server logs "serving" once it answers; e-mails land in $(MAIL_DIR).
run: build
	@echo "Starting on http://$(ADDR) with the development API key $(DEV_KEY); e-mails go to $(MAIL_DIR)/"
	bin/rappel serve --addr $(ADDR) --data-dir $(DATA_DIR) --api-keys $(DEV_KEY) --mail-dir $(MAIL_DIR) --public-url http://$(ADDR)

# Redocly CLI, pinned in tools/redocly/package-lock.json, lints
# edge/openapi.json with the rules of redocly.yaml; `npm ci` installs exactly
# that version, without install scripts. It needs no network once installed:
# its telemetry and update check are off.
REDOCLY := tools/redocly/node_modules/.bin/redocly

$(REDOCLY): tools/redocly/package.json tools/redocly/package-lock.json
	cd tools/redocly && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

test: prereqs bundle docs $(REDOCLY) clients-test
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true $(REDOCLY) lint
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	RAPPEL_TEST_BUNDLE=1 $(GO) test -count=1 -timeout 20m ./...
	cd cmd/rappel-bench && $(GO) vet ./... && $(GO) test -count=1 ./...

# `make api-diff` prints, for a person, what changed between the last
# released API description (edge/openapi-released.json, the baseline) and
# edge/openapi.json, in oasdiff's words, breaking changes first. The check
# that fails a build on a break is a test, `go test ./internal/apicompat`
# (docs/api.md, "Versioning and deprecation"); oasdiff is pinned in go.mod
# as a tool.
.PHONY: api-diff
api-diff:
	$(GO) tool oasdiff changelog edge/openapi-released.json edge/openapi.json

# The clients generated from edge/openapi.json, each run against a live
# node (docs/testing.md, "Generated clients"): a TypeScript one
# (openapi-typescript and openapi-fetch, pinned in clients/ts/package-lock.json,
# compiled by tsc --strict) and a Go one (oapi-codegen, a tool of the
# clients/go module). Nothing generated is committed; each step runs again
# only when its inputs changed, and the live run when the binary, the
# document or a client did.
CLIENTS_TSC := clients/ts/node_modules/.bin/tsc
CLIENTS_TS  := clients/ts/out/live.js
CLIENTS_GO  := clients/go/rappelclient/client.gen.go

$(CLIENTS_TSC): clients/ts/package.json clients/ts/package-lock.json
	cd clients/ts && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

$(CLIENTS_TS): edge/openapi.json clients/ts/live.ts clients/ts/tsconfig.json $(CLIENTS_TSC)
	cd clients/ts && node_modules/.bin/openapi-typescript ../../edge/openapi.json -o gen/schema.d.ts && node_modules/.bin/tsc -p .

$(CLIENTS_GO): edge/openapi.json clients/go/oapi-codegen.yaml clients/go/overlay.yaml clients/go/go.mod clients/go/go.sum | prereqs
	@mkdir -p $(@D)
	cd clients/go && $(GO) tool oapi-codegen -config oapi-codegen.yaml ../../edge/openapi.json

build/clients-test.stamp: bin/rappel $(CLIENTS_TS) $(CLIENTS_GO) $(wildcard clients/go/*_test.go)
	cd clients/go && $(GO) vet ./... && CLIENTS_RAPPEL_BIN=$(abspath bin/rappel) $(GO) test -count=1 ./...
	@touch $@

clients-test: build/clients-test.stamp

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParseGTIN -fuzztime=30s .

# `make bench` runs the Go benchmarks, then the side-by-side comparison of
# cmd/rappel-bench (rappel, a bare net/http handler, PostgreSQL, Bleve), and
# rewrites the section of BENCHMARKS.md between its bench markers. The
# harness is a Go module of its own, run from its directory; it needs wrk and
# PostgreSQL from Debian, which are installed here when missing and make runs
# as root (the harness itself only says what to install). The Go benchmarks'
# output is kept whole in build/bench/go-bench.txt. BENCH_FLAGS=-quick makes
# a short indicative run; paths in BENCH_FLAGS are relative to
# cmd/rappel-bench.
BENCH_FLAGS ?=

bench: prereqs bundle docs
	cd cmd/rappel-bench && { $(GO) run . check $(BENCH_FLAGS) || { [ "$$(id -u)" = 0 ] \
		&& apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends wrk postgresql; }; }
	@mkdir -p build/bench
	$(GO) test -run='^$$' -bench=. -benchmem ./... > build/bench/go-bench.txt 2>&1; \
	status=$$?; cat build/bench/go-bench.txt; exit $$status
	cd cmd/rappel-bench && $(GO) run . run -go-bench ../../build/bench/go-bench.txt $(BENCH_FLAGS)

# `make bench-refresh` measures a node's first live refresh of a vehicle
# file the size of Transport Canada's monthly full file (VRDB_SIZE) beside
# the corpus's dumps: its wall time and the peak resident memory of the
# server and its plugin processes (BENCHMARKS.md, "A full-size vehicle
# file"). VRDB_ROWS names an agency file whose rows are copied, renumbered,
# instead of drawn ones; BENCH_BINARY a rappel binary measured instead, for
# a baseline. It is a Go benchmark, so `make test` does not run it.
VRDB_SIZE    ?= 207MB
VRDB_ROWS    ?=
BENCH_BINARY ?=

bench-refresh: prereqs bundle $(CORPUS)/manifest.json
	cd cmd/rappel && RAPPEL_BENCH_VRDB_SIZE=$(VRDB_SIZE) RAPPEL_BENCH_VRDB_ROWS=$(VRDB_ROWS) \
		RAPPEL_BENCH_BINARY=$(BENCH_BINARY) RAPPEL_BENCH_CORPUS=$(abspath $(CORPUS)) \
		$(GO) test -run='^$$' -bench=Refresh_FullSizeVehicleFile -benchtime=1x -v .

clean:
	rm -rf bin build edge/docs/node_modules tools/redocly/node_modules clients/ts/node_modules clients/ts/gen clients/ts/out clients/go/rappelclient $(DOCS) bundle/data/records.ndjson.zst bundle/data/manifest.json bundle/data/plugins bundle/data/_partials bundle/data/_raw bundle/data/sst bundle/data/index.seg bundle/data/index.seg.zst
