# The two commands a newcomer needs:
#   make demo   build the command-line tool only, then run the demonstration
#               (the build's own output goes to build/<preset>/build.log and
#               is shown only if the build fails)
#   make test   build everything, then run every test under CTest
# Other targets: make bench, make install PREFIX=..., make asan, make tsan,
# make fuzz, make clean.  PRESET=debug|asan|tsan picks another build.
# BLOOMKIT_BIG_TESTS=1 also runs the tests that need more than 4 GiB of RAM.
# The Redis module: make redis-demo (a throwaway server and a redis-cli
# session), make redis-bench (REDISBLOOM=path/to/redisbloom.so compares).

PRESET ?= release
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local

# No "Entering/Leaving directory" lines from the makefiles CMake generates
# (they inherit MAKEFLAGS), and only CMake's warnings when it configures.
MAKEFLAGS += --no-print-directory
CONFIGURE := cmake --preset $(PRESET) --log-level=WARNING

.PHONY: all build demo test deps bench asan tsan fuzz install clean redis-demo redis-bench

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	@scripts/install-deps.sh --check >/dev/null || scripts/install-deps.sh
	@$(CONFIGURE) >/dev/null

build: $(BUILD)/CMakeCache.txt
	cmake --build --preset $(PRESET) -j $(JOBS)

demo: $(BUILD)/CMakeCache.txt
	@echo "building bloomkit (log: $(BUILD)/build.log)"
	@cmake --build --preset $(PRESET) -j $(JOBS) --target bloomkit_cli \
		>$(BUILD)/build.log 2>&1 || { cat $(BUILD)/build.log; exit 1; }
	@$(BUILD)/cli/bloomkit demo

test: build
	ctest --preset $(PRESET) -j $(JOBS)

asan:
	$(MAKE) test PRESET=asan

tsan:
	$(MAKE) test PRESET=tsan

redis-demo: build
	scripts/redis-demo.sh $(BUILD)/redis/bloomkit.so

redis-bench: build
	bench/redis_bench.sh --client $(BUILD)/bench/bloomkit-redis-client $(BUILD)/redis/bloomkit.so

bench: build
	$(BUILD)/bench/bloomkit-bench --quick

fuzz:
	scripts/fuzz-smoke.sh

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build
