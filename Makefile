# Rappel — build, test and run. `make run` serves the API from the embedded
# bundle; `make test` runs every test. Both work on a fresh clone.

GO       ?= go
SEED     ?= 1
DATE     ?= $(shell date -u +%F)
ADDR     ?= 127.0.0.1:8080
DATA_DIR ?= build/data
DEV_KEY  ?= rappel-dev-key

PLUGINS  := hcdump vrdb detail
WASM     := $(PLUGINS:%=bundle/data/plugins/%.wasm)
CORPUS   := build/corpus-$(SEED)-$(DATE)
DOMAIN   := $(wildcard *.go)
PLUGSRC  := $(shell find plugins -name '*.go' -not -name '*_test.go')
SYNTHSRC := $(shell find bundle/synth cmd/rappel-synth -name '*.go' -not -name '*_test.go' 2>/dev/null)
ALLSRC   := $(shell find . -name '*.go' -not -path './build/*')
# The Swagger UI files the page at /docs embeds (see the docs target).
DOCS_NPM   := edge/docs/node_modules/swagger-ui-dist
DOCS_FILES := swagger-ui-bundle.js swagger-ui.css favicon-32x32.png LICENSE NOTICE
DOCS       := $(DOCS_FILES:%=edge/docs/assets/%)
# Embedded files written by hand, which the binary must be rebuilt for too.
EMBEDDED   := edge/openapi.json edge/docs/index.html edge/docs/docs.js

.PHONY: all build bundle plugins corpus docs run test fuzz bench clean

all: build

build: bin/rappel

bin/rappel: bundle/data/manifest.json $(DOCS) $(EMBEDDED) $(ALLSRC) go.mod go.sum
	$(GO) build -trimpath -o $@ ./cmd/rappel

plugins: $(WASM)

# A plugin's SHA-256 names its code (the bundle records which plugin made
# each record, and a new SHA means normalizing everything again), so the
# build must not stamp the commit into it: -buildvcs=false. plugintest.Build
# uses the same flags.
bundle/data/plugins/%.wasm: $(DOMAIN) $(PLUGSRC)
	@mkdir -p $(@D)
	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -o $@ ./plugins/$*/wasm

corpus: $(CORPUS)/manifest.json

$(CORPUS)/manifest.json: $(DOMAIN) $(SYNTHSRC)
	$(GO) run ./cmd/rappel-synth -out $(CORPUS) -seed $(SEED) -date $(DATE)

bundle: bundle/data/manifest.json

# The page at /docs embeds Swagger UI from the npm package pinned in
# edge/docs/package-lock.json: `npm ci` installs exactly that version (its
# install scripts, which only phone home, are not run) and the files the page
# uses are copied into edge/docs/assets, which go:embed picks up.
docs: $(DOCS)

$(DOCS_NPM)/package.json: edge/docs/package.json edge/docs/package-lock.json
	cd edge/docs && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

edge/docs/assets/%: $(DOCS_NPM)/package.json
	@mkdir -p $(@D)
	cp $(DOCS_NPM)/$* $@

# The bundle is normalized through the Wasm plugins by the rappel binary
# itself, via wazero: the same path the live feeds take.
bundle/data/manifest.json: $(WASM) $(CORPUS)/manifest.json $(DOMAIN) bundle/bundle.go cmd/rappel/bundle.go $(wildcard feeds/*.go)
	$(GO) run ./cmd/rappel bundle -corpus $(CORPUS) -plugins bundle/data/plugins -out bundle/data -cache-dir build/wazero-cache

run: build
	@echo "Serving on http://$(ADDR) — development API key: $(DEV_KEY)"
	@echo "  curl -H 'x-gateway-key: $(DEV_KEY)' http://$(ADDR)/recall/tc-2019123"
	bin/rappel serve --addr $(ADDR) --data-dir $(DATA_DIR) --api-keys $(DEV_KEY)

# Redocly CLI, pinned in tools/redocly/package-lock.json, lints
# edge/openapi.json with the rules of redocly.yaml; `npm ci` installs exactly
# that version, without install scripts. It needs no network once installed:
# its telemetry and update check are off.
REDOCLY := tools/redocly/node_modules/.bin/redocly

$(REDOCLY): tools/redocly/package.json tools/redocly/package-lock.json
	cd tools/redocly && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

test: bundle docs $(REDOCLY)
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true $(REDOCLY) lint
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	RAPPEL_TEST_BUNDLE=1 $(GO) test -count=1 ./...

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParseGTIN -fuzztime=30s .

# `make bench` runs the Go benchmarks, then the side-by-side comparison of
# cmd/rappel-bench (rappel, a bare net/http handler, PostgreSQL, Bleve; wrk
# and PostgreSQL come from Debian, installed when missing), and rewrites the
# section of BENCHMARKS.md between its bench markers. The Go benchmarks'
# output is kept whole in build/bench/go-bench.txt. BENCH_FLAGS=-quick makes
# a short indicative run.
BENCH_FLAGS ?=

bench: bundle docs
	@mkdir -p build/bench
	$(GO) test -run='^$$' -bench=. -benchmem ./... > build/bench/go-bench.txt 2>&1; \
	status=$$?; cat build/bench/go-bench.txt; exit $$status
	$(GO) run ./cmd/rappel-bench run -go-bench build/bench/go-bench.txt $(BENCH_FLAGS)

clean:
	rm -rf bin build edge/docs/node_modules tools/redocly/node_modules $(DOCS) bundle/data/records.ndjson.zst bundle/data/manifest.json bundle/data/plugins bundle/data/partials bundle/data/raw
