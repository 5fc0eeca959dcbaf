# weft — the front door. Everything builds out of tree in build/.
BUILD ?= build
JOBS  ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: all deps demo test unit-test system-test bench bench-ccl clean configure

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@scripts/install-deps

configure: $(BUILD)/CMakeCache.txt
$(BUILD)/CMakeCache.txt:
	@scripts/install-deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

# Boots the ring8 cluster, moves data over every link both ways, checks every byte.
demo: all
	@scripts/demo $(BUILD)

test: all
	cd $(BUILD) && ctest --output-on-failure $(CTEST_ARGS)

unit-test: all
	cd $(BUILD) && ctest --output-on-failure -L unit

system-test: all
	cd $(BUILD) && ctest --output-on-failure -L system

# The platform (links, EDM, start-up), then the collective ops on ring8.
bench: all
	@$(BUILD)/bin/weft-bench-platform
	@$(BUILD)/bin/weft-bench-ccl

bench-ccl: all
	@$(BUILD)/bin/weft-bench-ccl

clean:
	rm -rf $(BUILD)
