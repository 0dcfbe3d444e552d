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

.PHONY: all build bundle plugins corpus run test fuzz bench clean

all: build

build: bin/rappel

bin/rappel: bundle/data/manifest.json $(ALLSRC) go.mod go.sum
	$(GO) build -trimpath -o $@ ./cmd/rappel

plugins: $(WASM)

bundle/data/plugins/%.wasm: $(DOMAIN) $(PLUGSRC)
	@mkdir -p $(@D)
	GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -o $@ ./plugins/$*/wasm

corpus: $(CORPUS)/manifest.json

$(CORPUS)/manifest.json: $(DOMAIN) $(SYNTHSRC)
	$(GO) run ./cmd/rappel-synth -out $(CORPUS) -seed $(SEED) -date $(DATE)

bundle: bundle/data/manifest.json

# The bundle is normalized through the Wasm plugins by the rappel binary
# itself, via wazero: the same path the live feeds take.
bundle/data/manifest.json: $(WASM) $(CORPUS)/manifest.json $(DOMAIN) bundle/bundle.go cmd/rappel/bundle.go $(wildcard feeds/*.go)
	$(GO) run ./cmd/rappel bundle -corpus $(CORPUS) -plugins bundle/data/plugins -out bundle/data -cache-dir build/wazero-cache

run: build
	@echo "Serving on http://$(ADDR) — development API key: $(DEV_KEY)"
	@echo "  curl -H 'x-gateway-key: $(DEV_KEY)' http://$(ADDR)/recall/tc-2019123"
	bin/rappel serve --addr $(ADDR) --data-dir $(DATA_DIR) --api-keys $(DEV_KEY)

test: bundle
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	RAPPEL_TEST_BUNDLE=1 $(GO) test -count=1 ./...

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParseGTIN -fuzztime=30s .

bench: bundle
	$(GO) test -run='^$$' -bench=. -benchmem ./...

clean:
	rm -rf bin build bundle/data/records.ndjson.zst bundle/data/manifest.json bundle/data/plugins bundle/data/partials bundle/data/raw
