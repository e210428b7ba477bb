# cella: the two commands that matter are `make run` and `make test`.
# Plain `make` builds build/cella; each target first installs what is missing.
.PHONY: all deps build asan run test test-default test-asan bench clean

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

test: test-default test-asan

test-default: build
	ctest --preset default

test-asan: asan
	ctest --preset asan

bench: build
	@sh scripts/deps.sh bench
	./build/cella-bench-startup --cella ./build/cella --write docs/performance.md

clean:
	rm -rf build build-asan build-debug
