# weft — the front door. Everything builds out of tree in build/.
# bash: the bench recipes need pipefail, so a bench that fails fails make.
SHELL := /bin/bash
BUILD ?= build
JOBS  ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: all deps demo test unit-test system-test bench bench-ccl bench-boards clean configure help

all: configure
	cmake --build $(BUILD) -j $(JOBS)

help:
	@echo "weft's make targets:"
	@echo "  make deps         install the Debian packages weft needs (sudo apt-get)"
	@echo "  make              build the host tools, the firmware of every board and the tests in $(BUILD)/"
	@echo "  make demo         boot ring8, move data over every link both ways, check every byte"
	@echo "  make test         every test: CMocka unit tests, then the system tests on real QEMU clusters"
	@echo "  make unit-test    the CMocka unit tests only (seconds)"
	@echo "  make system-test  the system tests only (QEMU clusters, minutes)"
	@echo "  make bench        platform, CCL and fabric benchmarks; tables and charts to bench/results/"
	@echo "  make bench-ccl    the CCL benchmark only"
	@echo "  make bench-boards ring8-rv32 (the 32-bit chip) beside ring8, shaped and unshaped"
	@echo "  make clean        remove $(BUILD)/"
	@echo "Variables: BUILD=$(BUILD) JOBS=$(JOBS) CTEST_ARGS='-R pattern' (make test CTEST_ARGS='-R ccl')"

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

# The platform (links, EDM, start-up), then the collective ops on ring8. Each
# report is also recorded beside its JSON, so the recorded text is always this
# run's (progress lines go to stderr and are not recorded).
RESULTS := bench/results
# The benches write their charts and the fitted cost model into this tree.
export WEFT_BENCH_OUT := $(CURDIR)
bench: all
	@set -o pipefail; $(BUILD)/bin/weft-bench-platform | tee $(RESULTS)/platform.txt
	@set -o pipefail; $(BUILD)/bin/weft-bench-ccl | tee $(RESULTS)/ccl_ring8.txt
	@set -o pipefail; $(BUILD)/bin/weft-bench-fabric | tee $(RESULTS)/fabric_ring8.txt
	@set -o pipefail; $(BUILD)/bin/weft-bench-boards | tee $(RESULTS)/boards_ring8.txt

bench-ccl: all
	@set -o pipefail; $(BUILD)/bin/weft-bench-ccl | tee $(RESULTS)/ccl_ring8.txt

bench-boards: all
	@set -o pipefail; $(BUILD)/bin/weft-bench-boards | tee $(RESULTS)/boards_ring8.txt

clean:
	rm -rf $(BUILD)
