# nodezero — see README.md. `make test` is what CI runs.
GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
PKGS        := ./...
BIN         := bin/nodezero
FUZZTIME    ?= 5s
VERSION     ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

.PHONY: all build test unit capi lint deps bench bench-console fuzz fuzz-long faults vm-e2e run sandbox generate clean

all: build

## build: the static binary bin/nodezero (CGO_ENABLED=0)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(BIN) ./cmd/nodezero

## deps: what the tests need — Debian packages when missing, Go modules, the
## sandbox's kube-apiserver, etcd and kubectl in the tools cache (prints where)
deps:
	@./.ci/deps
	$(GO) mod download

## test: deps, lint, the static build, every test with -race, the Cluster API providers, short fuzz runs
test: deps lint build unit capi fuzz

## capi: the Cluster API providers' module (capi/, a module of its own so that nothing of
## Kubernetes reaches the nodezero binary): tidy, generated files current, vet, and its tests —
## unit (a real nodezero service), contract and end to end (a real kube-apiserver + etcd, CAPI's
## own controllers in-process). No -race: the k8s test binaries are large and the tiers are
## processes talking over loopback.
CAPI_TIMEOUT ?= 40m
capi: build
	cd capi && $(GO) mod tidy -diff
	cd capi/tools/controller-gen && $(GO) mod tidy -diff
	$(MAKE) -C capi generate-check
	cd capi && $(GO) vet ./...
	cd capi && NODEZERO_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout $(CAPI_TIMEOUT) ./...

unit:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 40m $(PKGS)

## lint: gofmt, go mod tidy (no change wanted), go vet, staticcheck
lint:
	$(GO) mod tidy -diff
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

## bench: Go benchmarks, the console's and the service load figures (not part of CI)
bench: build bench-console
	$(GO) test -run '^$$' -bench . -skip '^BenchmarkConsole$$' -benchmem -benchtime 2s $(PKGS)
	$(BIN) loadtest --agents real --hosts 5 --runs 5
	$(BIN) loadtest --agents sim --hosts 100
	$(BIN) loadtest --agents sim --hosts 1000 --idle 30s --timeout 15m --install=false

## bench-console: the console's first frame and idle CPU with 5 and 200 hosts (tmux; a few minutes)
bench-console:
	$(GO) test -run '^$$' -bench BenchmarkConsole -benchtime 1x -timeout 30m ./cmd/nodezero

## fuzz: each fuzz target for FUZZTIME (short in CI)
fuzz:
	@./.ci/fuzz $(FUZZTIME)

## fuzz-long: each fuzz target for 10 minutes
fuzz-long:
	@./.ci/fuzz 10m

## faults: the crash harness (SIGKILLs across sandbox installs) and the namespace network faults, verbose
faults:
	CGO_ENABLED=1 $(GO) test -count=1 -v -timeout 30m -run 'TestCrashFaults|TestNetnsNetworkFaults|TestNetnsCutOffWhileWriting' ./cmd/nodezero

## vm-e2e: 3 + 2 QEMU VMs from the factory image to installed, a bond and a VLAN on worker-1
## (root; under software emulation about 30 min on two cores; not part of CI, whose single-node VM
## install is TestVMSingleNode)
vm-e2e:
	CGO_ENABLED=1 $(GO) test -tags vme2e -count=1 -v -timeout 110m -run 'TestVMCluster' ./cmd/nodezero

## run: the embedded service on 127.0.0.1:8090 with its data in out/service
run: build
	$(BIN) service --dir out/service --listen 127.0.0.1:8090

## sandbox: a 3 + 2 cluster installed on this machine, on loopback (no root)
sandbox:
	@echo "building $(BIN): the first build compiles every dependency (minutes on two cores), later ones take seconds"
	@$(MAKE) --no-print-directory build
	$(BIN) sandbox $(SANDBOX_FLAGS)

## generate: state machine diagrams (SVG too when graphviz is installed), test hardware trees
generate:
	$(GO) generate ./...
	@if command -v dot >/dev/null; then for f in docs/state-machines/*.dot; do dot -Tsvg "$$f" -o "$${f%.dot}.svg"; done; \
	  else echo "graphviz (dot) not installed: SVGs not rendered"; fi

clean:
	rm -rf bin out
