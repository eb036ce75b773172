# The two commands a newcomer needs:
#   make demo   build, then run the embedded-default demonstration
#   make test   build, then run every test under CTest
# Other targets: make bench, make install PREFIX=..., make asan, make tsan,
# make fuzz, make clean.  PRESET=debug|asan|tsan picks another build.
# The Redis module: make redis-demo (a throwaway server and a redis-cli
# session), make redis-bench (REDISBLOOM=path/to/redisbloom.so compares).

PRESET ?= release
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local

.PHONY: all build demo test deps bench asan tsan fuzz install clean redis-demo redis-bench

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	@scripts/install-deps.sh --check || scripts/install-deps.sh
	cmake --preset $(PRESET)

build: $(BUILD)/CMakeCache.txt
	cmake --build --preset $(PRESET) -j $(JOBS)

demo: build
	$(BUILD)/cli/bloomkit demo

test: build
	ctest --preset $(PRESET) -j $(JOBS)

asan:
	$(MAKE) test PRESET=asan

tsan:
	$(MAKE) test PRESET=tsan

redis-demo: build
	scripts/redis-demo.sh $(BUILD)/redis/bloomkit.so

redis-bench: build
	bench/redis_bench.sh $(BUILD)/redis/bloomkit.so

bench: build
	$(BUILD)/bench/bloomkit-bench --quick

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build
