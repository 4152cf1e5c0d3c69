# kubetidb — build, test and verify entry points. Every target is a thin wrapper
# around a Go command or a script in hack/, so CI and developers run the same thing.

GO        ?= go
OUTPUT    ?= _output
BIN_DIR   ?= $(OUTPUT)/bin
GOFLAGS_BUILD ?= -trimpath
LDFLAGS   ?= -s -w
UNIT_PKGS ?= ./pkg/... ./cmd/... ./hack/archcheck/... ./hack/fieldcheck/...

.PHONY: all build tools test test-unit test-integration verify fmt vet lint codegen crds \
        verify-codegen verify-crds local-up local-down local-status bench clean

all: build

VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
VERSION_PKG := github.com/kubetidb/tidb-operator/pkg/version
LDFLAGS   += -X $(VERSION_PKG).gitVersion=$(VERSION) -X $(VERSION_PKG).gitCommit=$(shell git rev-parse HEAD 2>/dev/null) -X $(VERSION_PKG).buildDate=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

## build: static binaries tidb-controller-manager, tidb-discovery, tidb-simulator and backup-manager in $(BIN_DIR)
build:
	@mkdir -p $(BIN_DIR)
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/tidb-controller-manager ./cmd/controller-manager
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/tidb-discovery ./cmd/discovery
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/tidb-simulator ./cmd/tidb-simulator
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/backup-manager ./cmd/backup-manager

## tools: install or build, once, what the tests need besides Go (Debian packages incl. MariaDB and
## Prometheus, the control plane, helm, versitygw, Azurite; hack/ensure-tools.sh). The test targets
## run it first unless SKIP_TOOLS=1
tools:
	hack/ensure-tools.sh

TOOLS_PREREQ := $(if $(filter 1,$(SKIP_TOOLS)),,tools)

## test: unit tests, then integration tests against a real local control plane
test: $(TOOLS_PREREQ) test-unit test-integration

## test-unit: tests that need no cluster (client-go fakes, seeded indexers, httptest, a private MariaDB)
test-unit: $(TOOLS_PREREQ)
	$(GO) test -count=1 $(UNIT_PKGS)
	$(GO) test -count=1 -tags bench ./tests/bench

## test-integration: starts a private local control plane, runs ./tests/... against it, stops it
## (tests/faults runs its representative subset there; `make faults` runs every scenario)
test-integration: $(TOOLS_PREREQ)
	hack/test-integration.sh

## test-cluster-rbac: the integration suite with every operator holding the credentials of a
## cluster-scoped install (the chart's ClusterRole; KUBETIDB_TEST_RBAC=cluster-scoped), each still
## watching only its test's namespace
.PHONY: test-cluster-rbac
test-cluster-rbac: $(TOOLS_PREREQ)
	KUBETIDB_TEST_RBAC=cluster-scoped hack/test-integration.sh

## faults: every scenario of the fault suite (FAULTS=all, docs/reliability.md) on a private control
## plane; prints the figures table, also kept in $(OUTPUT)/faults/figures.md
.PHONY: faults
faults: build
	@rm -f $(OUTPUT)/faults/figures.md
	@FAULTS=$${FAULTS:-all} TEST_PKGS=./tests/faults GO_TEST_FLAGS="-timeout 45m $${GO_TEST_FLAGS:-}" hack/test-integration.sh; \
	status=$$?; cat $(OUTPUT)/faults/figures.md 2>/dev/null || echo "no figures written"; exit $$status

## chaos: chaos mode of the fault suite (FAULTS=chaos, docs/reliability.md): a seeded random sequence of
## user actions and faults on CHAOS_CLUSTERS (default 3) clusters at once, planned for DURATION (default
## 10m); SEED (default: from the clock) is printed, and the same SEED and DURATION replay the same
## sequence. Prints the figures and the plan, also kept in $(OUTPUT)/faults/chaos.md
DURATION ?= 10m
.PHONY: chaos
chaos: $(TOOLS_PREREQ)
	@rm -f $(OUTPUT)/faults/chaos.md
	@seed=$${SEED:-$$(date +%s)}; echo "chaos: SEED=$$seed DURATION=$(DURATION) CHAOS_CLUSTERS=$${CHAOS_CLUSTERS:-3}"; \
	FAULTS=chaos CHAOS_SEED=$$seed CHAOS_DURATION=$(DURATION) CHAOS_CLUSTERS=$${CHAOS_CLUSTERS:-3} TEST_PKGS=./tests/faults \
	  GO_TEST_FLAGS="-run ^TestChaos$$ -timeout $${CHAOS_TIMEOUT:-6h} $${GO_TEST_FLAGS:-}" hack/test-integration.sh; \
	status=$$?; cat $(OUTPUT)/faults/chaos.md 2>/dev/null || echo "no chaos figures written"; \
	echo "replay: make chaos SEED=$$seed DURATION=$(DURATION) CHAOS_CLUSTERS=$${CHAOS_CLUSTERS:-3}"; exit $$status

## fuzz: each Go fuzz target for FUZZTIME (default 2m): decoding, defaulting, validation, the pd/tikv/
## tidb/discovery builders and render, seeded from examples/ and the tests/badinput corpus. Their seeds
## alone run in test-unit (plain go test runs every f.Add input).
FUZZTIME ?= 2m
# Every component package with a FuzzBuild target is found, so a new component needs no line here.
BUILD_FUZZ_PKGS := $(sort $(dir $(shell grep -l '^func FuzzBuild' pkg/manager/*/*_test.go)))
FUZZ_TARGETS ?= ./pkg/apis/pingcap/v1alpha1:FuzzDecode ./pkg/apis/pingcap/v1alpha1/defaulting:FuzzDefaulting \
	./pkg/apis/pingcap/v1alpha1/validation:FuzzValidate $(patsubst %/,./%:FuzzBuild,$(BUILD_FUZZ_PKGS)) \
	./cmd/controller-manager/app:FuzzRender
.PHONY: fuzz
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "go test -fuzz $$name -fuzztime $(FUZZTIME) $$pkg"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

## verify: formatting, vet, lint, generated code and CRDs up to date
verify:
	hack/verify.sh

fmt:
	gofmt -s -w $$(git ls-files '*.go' | grep -v '^pkg/client/')

codegen:
	hack/update-codegen.sh

crds:
	hack/update-crds.sh

verify-codegen:
	hack/verify-codegen.sh

verify-crds:
	hack/verify-crds.sh

## local-up: a real kube-apiserver + etcd + controllers + KWOK on 127.0.0.1 (kubeconfig in _output/local/kubeconfig)
local-up:
	hack/local-cluster.sh up

local-down:
	hack/local-cluster.sh down

local-status:
	hack/local-cluster.sh status

## bench: micro-benchmarks, then N TidbClusters on a dedicated control plane (BENCH_N=100; docs/performance.md)
bench:
	hack/bench.sh

## demo: own local control plane + operator + simulator in the background; examples/basic Ready in namespace demo
.PHONY: demo demo-tls demo-down image helm-lint
demo:
	hack/demo.sh up

## demo-tls: after `make demo`, examples/tls with per-cluster cert Secrets of a fresh CA, Ready over HTTPS
demo-tls:
	hack/demo.sh tls

## demo-down: stop the demo's operator and simulator (by PID) and its control plane
demo-down:
	hack/demo.sh down

## image: the operator image (tidb-controller-manager + tidb-discovery) with Docker; IMAGE=repo:tag
IMAGE ?= kubetidb/tidb-operator:$(VERSION)
image:
	@docker info >/dev/null 2>&1 || { echo "error: 'make image' needs a running Docker engine ('docker info' failed); build elsewhere with: docker build -t $(IMAGE) ." >&2; exit 1; }
	docker build --build-arg VERSION=$(VERSION) --build-arg GIT_COMMIT=$$(git rev-parse HEAD 2>/dev/null || echo unknown) -t $(IMAGE) .

## helm-lint: helm lint --strict + helm template of charts/tidb-operator per mode, chart CRDs in sync (helm from the cache)
helm-lint:
	hack/local-cluster.sh build-helm
	@set -e; helm="$$(hack/local-cluster.sh bin-path helm)"; \
	for v in "" "--set clusterScoped=false" "--set serviceMonitor.enabled=true"; do \
	  echo "helm lint/template $$v"; \
	  "$$helm" lint --strict --quiet charts/tidb-operator $$v; \
	  "$$helm" template kubetidb charts/tidb-operator $$v >/dev/null; \
	done
	hack/verify-chart-crds.sh

clean:
	rm -rf $(OUTPUT)
