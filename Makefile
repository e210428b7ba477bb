# cella: the two commands that matter are `make run` and `make test`.
# Plain `make` builds build/cella; each target first installs what is missing.
.PHONY: all deps build asan run test test-default test-asan test-fuzz bench fuzz clean

all: build

deps:
	@sh scripts/deps.sh

build: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default

asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan

run: build
	./build/cella serve

test: test-default test-asan test-fuzz

test-default: build
	ctest --preset default

test-asan: asan
	ctest --preset asan

# The short fuzz pass of every `make test`: each libFuzzer target for
# FUZZ_CI_SECONDS from its seed corpus, as CTest tests (label fuzz), two at
# a time; a crash, leak, timeout or broken invariant fails it.
FUZZ_TARGETS = proto args text config http glob tar routes paths sed code_parse code_load
FUZZ_CI_SECONDS ?= 10
test-fuzz:
	@sh scripts/deps.sh fuzz
	@cmake --preset fuzz -DCELLA_FUZZ_SECONDS=$(FUZZ_CI_SECONDS) >/dev/null
	@cmake --build --preset fuzz --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	ctest --preset fuzz

bench: build
	@sh scripts/deps.sh bench
	./build/cella-bench-startup --cella ./build/cella --write docs/performance.md
	./build/cella-bench-daemon --cella ./build/cella --write docs/performance.md
	./build/cella-bench-files --cella ./build/cella --write docs/performance.md
	./build/cella-bench-load --cella ./build/cella --write docs/performance.md
	./build/cella-bench-code --write docs/performance.md

# Each fuzz target for FUZZ_SECONDS (default 60) from its seed corpus; new
# inputs go to build-fuzz/corpus, the seeds in fuzz/corpus stay as committed.
FUZZ_SECONDS ?= 60
fuzz:
	@sh scripts/deps.sh fuzz
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p build-fuzz/corpus/$$t; \
	  ./build-fuzz/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=build-fuzz/ $$([ -f fuzz/$$t.dict ] && echo -dict=fuzz/$$t.dict) \
	    build-fuzz/corpus/$$t fuzz/corpus/$$t || exit 1; \
	done

clean:
	rm -rf build build-asan build-debug build-fuzz
