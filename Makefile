# kafkas3 — see README.md.
SHELL := /bin/bash
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X github.com/kafkas3/kafkas3/cmd.version=$(VERSION) -X github.com/kafkas3/kafkas3/cmd.commit=$(COMMIT)
BIN     ?= bin/kafkas3

.PHONY: build test integration bench lint clean testbed fuzz

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

# Hermetic tests: only Go is needed (kfake, temp dirs, in-process S3 fake).
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# Integration tests against real Apache Kafka (KRaft, from Maven Central jars
# on Java 17) and versitygw, started by internal/testbed.
# Prints each test's PASS/FAIL/SKIP line, its log lines and the per-package
# ok/FAIL lines; the full -v output is in integration.log. Fails if any test fails.
integration:
	set -o pipefail; $(GO) test -count=1 -tags integration -timeout 60m -v -run 'Integration' ./... 2>&1 | tee integration.log | { grep -E --line-buffered '^\s*--- (PASS|FAIL|SKIP)|^(PASS|FAIL|ok|panic:|#)|\.go:[0-9]+:|testbed:' || true; }

# Benchmarks against the test bed (Kafka with full JIT, versitygw); figures go
# into BENCHMARKS.md. The results table is also written to bin/bench-results.md
# (or KAFKAS3_BENCH_OUT) and the full log to bin/bench.log.
# KAFKAS3_BENCH_BYTES (default 1 GiB) sizes the main data set.
bench:
	@mkdir -p bin
	set -o pipefail; KAFKAS3_BENCH_OUT="$${KAFKAS3_BENCH_OUT:-$(CURDIR)/bin/bench-results.md}" \
		$(GO) test -count=1 -tags integration -timeout 60m -run '^$$' -bench . -benchtime 1x ./internal/bench/... 2>&1 | tee bin/bench.log

# Start the test bed by hand (Kafka + versitygw) and print how to reach it.
testbed:
	$(GO) run ./internal/testbed/cmd/testbed

# Short fuzz runs of every parser and format reader (FUZZTIME each).
FUZZTIME ?= 15s
FUZZ_TARGETS = ./partition:FuzzParseObjectKey ./partition:FuzzObjectKeyRoundTrip \
	./format:FuzzBytesReader ./format:FuzzJSONReader ./format:FuzzJSONValueRoundTrip \
	./format:FuzzGzipJSONReader ./format:FuzzZstdJSONReader ./format:FuzzAvroReader ./format:FuzzAvroDatumCheck \
	./format:FuzzParquetReader ./format:FuzzJSONEnvelopeReader ./format:FuzzEnvelopeFastIsGeneral ./format:FuzzAvroEnvelopeDecode ./format:FuzzAvroEnvelopeReader \
	./convert:FuzzJSONConverter ./cmd:FuzzParseProperties \
	./cmd:FuzzParseUntil ./index:FuzzDecode ./index:FuzzDecodeSnapshot ./index:FuzzDecodeTopic ./index:FuzzDecodeWatermark ./index:FuzzReadCheckpoint ./restore:FuzzSpillRecord
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$fn ($$pkg)"; $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg; done

# Static checks: gofmt, go vet (with and without the integration tag),
# staticcheck's default checks (fetched through the Go module proxy at a fixed
# version, so no install step is needed), a tidy go.mod, and no function over
# 80 lines outside data tables (internal/tools/funclen).
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags integration ./...
	$(GO) mod tidy -diff
	$(GO) run ./internal/tools/funclen -max 80 .

clean:
	rm -rf bin integration.log
