# fluxpack — run `make help` for the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

# The fluxcd modules need Go >= 1.27; go.mod pins the toolchain and "auto"
# fetches it through the module proxy on a machine with an older Go.
export GOTOOLCHAIN := auto
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.DEFAULT_GOAL := help

##@ Main

demo: ## Run the demo on an embedded default: an in-process registry, no cluster
	@echo "demo: compiling the demo into bin/demo, a line per package compiled (a first run takes minutes; later ones seconds)"
	$(GO) build -v -o bin/demo ./examples/demo 2>&1 | sed -u 's/^/demo: compiled /'
	bin/demo

# The binaries tests run are built here, never inside a test: a cold build of
# the CLI takes minutes on a busy machine, longer than go test's timeout. They
# are built with -race, so they reuse the packages `make test` compiled first.
TEST_BIN := $(CURDIR)/bin/test
PREBUILT_ENV := FLUXPACK_TEST_BIN=$(TEST_BIN)

test-bins: ## Build the binaries the tests run into bin/test: the CLI (and its release archive) and the test KMS plugin
	@echo "test-bins: building bin/test/fluxpack and bin/test/sigstore-kms-testkms with -race, and the CLI's release archive"
	$(GO) build -race -ldflags "-s -w" -o $(TEST_BIN)/ ./cmd/fluxpack ./internal/testutil/sigstore-kms-testkms
	$(GO) build -o $(TEST_BIN)/ ./hack/testprogress
	$(GO) run ./hack/release -archive $(TEST_BIN)/fluxpack -o $(TEST_BIN)/flux-pack.tar.gz

test: tools chromium ## Run every unit and integration test (real registry server), with -race
	@echo "test: compiling with -race first, a line per package compiled (a first run takes several minutes; cached packages are silent)"
	$(GO) build -race -v ./... 2>&1 | sed -u 's/^/test: compiled /'
	@$(MAKE) --no-print-directory test-bins
	@echo "test: running the tests: a line per package as it finishes, and every minute the ones still running"
	FLUXPACK_REQUIRE_REAL=1 $(PREBUILT_ENV) $(GO) test -race -count=1 -json ./... | $(TEST_BIN)/testprogress
	@echo "test: go install …/cmd/fluxpack@VERSION from a module proxy directory serving HEAD (compiles the CLI again, a few minutes)"
	FLUXPACK_REQUIRE_REAL=1 $(GO) test -tags moduletest -count=1 -timeout 20m -run TestGoInstallAtVersion ./internal/modtest

FUZZTIME ?= 30s
FUZZFLAGS ?=

fuzz: ## Run every fuzz target (func Fuzz* in a _test.go) for FUZZTIME each, all even if one fails; make test runs their seed corpora
	@failed=""; \
	for pkg in $$(grep -rl --include='*_test.go' --exclude-dir=.git --exclude-dir=.cache '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz: $$pkg $$target for $(FUZZTIME)"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) || failed="$$failed $$pkg:$$target"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: crashers (see testdata/fuzz):$$failed"; exit 1; fi

BENCHFLAGS ?= -count 5

bench: tools flux-tool flate-tool ## Benchmark fluxpack beside Flux's own code and the flux CLI; print the ratio table (minutes)
	FLUXPACK_REQUIRE_REAL=1 $(GO) run ./bench/ratios $(BENCHFLAGS)

##@ Development

# Built as the release builds (internal/release): no local paths, no symbol
# table or DWARF, no cgo. With cgo the binary is 112 MiB, not 70: kustomize
# imports package plugin, which makes the linker export every symbol.
BUILDFLAGS ?= -trimpath -ldflags "-s -w -X main.version=$(VERSION)"

build: ## Build bin/fluxpack with the version stamped in (-trimpath, stripped, no cgo, as make release)
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o bin/fluxpack ./cmd/fluxpack

flux-pack: ## Build bin/flux-pack: fluxpack as the Flux CLI plugin `flux pack` (copy it to ~/.fluxcd/plugins)
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o bin/flux-pack ./cmd/fluxpack

# Where the release archives are downloaded from; the plugin manifest's urls.
RELEASE_URL ?= https://github.com/fluxpack/fluxpack/releases/download/$(VERSION)/

release: ## Build dist/: flux-pack archives for linux and darwin (amd64, arm64), checksums.txt, the plugin manifest pack.yaml, catalog.yaml
	rm -rf dist
	$(GO) run ./hack/release -version $(VERSION) -base-url $(RELEASE_URL) -d dist

tools: ## Build the real third-party servers the tests use into .cache (once)
	hack/tools.sh registry

e2e-tools: ## Build etcd, Kubernetes, kwok, the Flux controllers and the flux CLI into .cache (once)
	hack/tools.sh registry e2e

# E2E_RUN selects cases, e.g. make e2e E2E_RUN=S0 (a go test -run pattern).
# Every case (S0's two layouts apart) runs its own cluster, all at once.
E2E_RUN ?= .
E2E_PARALLEL ?= 5
E2E_SUMMARY := $(CURDIR)/.cache/e2e-summary.txt

e2e: e2e-tools test-bins chromium ## Run the seed systems in real Flux (control plane on loopback); prints a summary per case
	$(GO) vet -tags e2e ./e2e/
	rm -f $(E2E_SUMMARY)
	FLUXPACK_REQUIRE_REAL=1 $(PREBUILT_ENV) FLUXPACK_E2E_SUMMARY=$(E2E_SUMMARY) $(GO) test -tags e2e -count=1 -timeout 40m -parallel $(E2E_PARALLEL) -run '$(E2E_RUN)' ./e2e/
	@cat $(E2E_SUMMARY)

# RUNS fresh clusters per layout (S0, S0 Helm, S1, S1 Helm, S3, S4, R0), stock
# and fast flags; BOOTSTRAP_PARALLEL clusters at once. Not a test: it prints a table.
RUNS ?= 10
BOOTSTRAP_PARALLEL ?= 2

bootstrap-bench: e2e-tools test-bins ## Bootstrap every e2e layout on RUNS fresh clusters (default 10); print wall times, critical path, ratios, load
	RUNS=$(RUNS) PARALLEL=$(BOOTSTRAP_PARALLEL) FLUXPACK_TEST_BIN=$(TEST_BIN) hack/bootstrap-bench.sh

CHROMIUM ?= /usr/bin/chromium

chromium: ## Install Debian's chromium (apt-get, once), which the timeline page's browser test opens headless
	@if [ -x "$(CHROMIUM)" ]; then echo "chromium: $(CHROMIUM) is installed"; \
	else echo "chromium: installing Debian's chromium with apt-get"; \
	  SUDO=; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium; fi

browser-test: chromium ## Open the timeline page in headless chromium: a screenshot that is not blank, one bar per layer, no request leaving the page
	FLUXPACK_REQUIRE_REAL=1 FLUXPACK_CHROMIUM=$(CHROMIUM) $(GO) test -count=1 -run TestTimelineInChromium ./status

lint: lint-tools ## Check formatting, go vet, golangci-lint (importas, errorlint, unparam, revive's exported, ...)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/
	$(GO) vet -tags moduletest ./internal/modtest/
	.cache/bin/golangci-lint run ./...

lint-tools: ## Build golangci-lint into .cache (once)
	hack/tools.sh golangci-lint

flux-tool: ## Build the real flux CLI into .cache (once; make e2e-tools includes it)
	hack/tools.sh flux

flate-tool: ## Build flate, the peer make bench times review against, into .cache (once)
	hack/tools.sh flate

fmt: ## Format the Go sources
	gofmt -w $$(git ls-files '*.go')

tidy: ## Tidy go.mod and go.sum
	$(GO) mod tidy

# Packages with golden files (go test -update fails in packages without them).
GOLDEN_PKGS ?= ./oci/... ./substitute/... ./outputs/... ./fluxbuild/... ./fluxrepo/... ./argocd/... ./layering/... ./stackfile/... ./fleet/... ./fluxpatch/... ./internal/api/... ./internal/cli/... ./internal/preview/... ./examples/... ./bench/...

golden: ## Rewrite the golden files under testdata/ (review the diff!)
	$(GO) test $(GOLDEN_PKGS) -run . -update

docs: ## Regenerate the CLI reference in docs/cli and the Stack and Fleet file reference docs/stack.md
	rm -rf docs/cli && $(GO) run ./hack/docgen docs/cli
	$(GO) test ./fleet -run '^TestFileReferenceIsCurrent$$' -count=1 -update

all: lint test ## Lint and test

help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  %-12s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

.PHONY: demo test test-bins fuzz bench bootstrap-bench build flux-pack release flux-tool flate-tool tools e2e-tools e2e chromium browser-test lint lint-tools fmt tidy golden docs all help
