# weft — the front door. Everything builds out of tree in build/.
# bash: the bench recipes need pipefail, so a bench that fails fails make.
SHELL := /bin/bash
BUILD ?= build
JOBS  ?= $(shell nproc)
CTEST_ARGS ?=
# More cmake -D settings for a new build tree, e.g. CMAKE_FLAGS=-DWEFT_WERROR=ON (as CI builds).
CMAKE_FLAGS ?=
SAN_BUILD ?= build-asan

.PHONY: all deps demo test check bench-tools sanitize tidy unit-test system-test bench bench-ccl bench-boards bench-model bench-systems bench-tensor clean configure help

# Ninja, quiet: a no-op build prints nothing, a build prints only what fails.
all: configure
	@ninja -C $(BUILD) --quiet -j $(JOBS)

help:
	@echo "weft's make targets:"
	@echo "  make deps         install the Debian packages weft needs (sudo apt-get)"
	@echo "  make              build the host tools, the firmware of every board and the tests in $(BUILD)/"
	@echo "  make demo         boot ring8, move data over every link both ways, check every byte"
	@echo "  make check        the quick tier, for every change: unit tests and one system test of each kind (~1 min)"
	@echo "  make test         every test: CMocka unit tests and the system tests on real QEMU clusters, in parallel"
	@echo "  make unit-test    the CMocka unit tests only (seconds)"
	@echo "  make sanitize     the host code under ASan and UBSan, running the unit tests (in $(SAN_BUILD)/)"
	@echo "  make tidy         clang-tidy's checks (.clang-tidy) over the host sources"
	@echo "  make system-test  the system tests only (QEMU clusters, minutes)"
	@echo "  make bench        platform, CCL and fabric benchmarks; tables and charts to bench/results/"
	@echo "  make bench-ccl    the CCL benchmark only"
	@echo "  make bench-model  the fabric model: virtual-time figures beside silicon's, its speed, tables at scale"
	@echo "  make bench-systems the hierarchical all-reduce on a cluster of systems, on QEMU and in the model"
	@echo "  make bench-tensor the tensor all-gather and all-reduce in each layout beside the flat ops, on shaped ring8"
	@echo "  make bench-boards ring8-rv32 (the 32-bit chip) beside ring8, shaped and unshaped"
	@echo "  make clean        remove $(BUILD)/"
	@echo "Variables: BUILD=$(BUILD) JOBS=$(JOBS) CTEST_ARGS='-R pattern' (make test CTEST_ARGS='-R ccl')"

deps:
	@scripts/install-deps

configure: $(BUILD)/build.ninja
$(BUILD)/build.ninja:
	@scripts/install-deps
	@if [ -f $(BUILD)/CMakeCache.txt ]; then echo "$(BUILD)/ was configured with another generator: configuring it afresh"; \
	    rm -rf $(BUILD)/CMakeCache.txt $(BUILD)/CMakeFiles $(BUILD)/firmware-build; fi
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null

# Boots the ring8 cluster, moves data over every link both ways, checks every byte.
demo: all
	@scripts/demo $(BUILD)

# System tests run their clusters in run directories of their own, so ctest
# runs them side by side; the longest first (ctest's recorded costs).
test: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

check: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L check $(CTEST_ARGS)

# The host code under AddressSanitizer and UndefinedBehaviorSanitizer, in a
# tree of its own, running the unit tests (CI runs it). -O1 and line tables
# only: half the build time of -O0 -g and twice the speed, and a report still
# names file and line. Unity batches; the host code has no precompiled headers
# (clang-tidy reads its compile commands, and cannot read gcc's), the tests
# keep theirs (tidy does not read them).
SAN_FLAGS := -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCMAKE_C_FLAGS_DEBUG="-O1 -g1"
sanitize:
	@scripts/install-deps
	@cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug $(SAN_FLAGS) -DWEFT_SANITIZE=ON -DWEFT_UNITY=ON \
	    -DCMAKE_DISABLE_PRECOMPILE_HEADERS=OFF $(CMAKE_FLAGS) >/dev/null
	@ninja -C $(SAN_BUILD) --quiet -j $(JOBS) unit-tests
	cd $(SAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L unit

# .clang-tidy's checks over the host sources (CI runs it), with the compile
# commands of the sanitizer tree.
tidy: sanitize
	@scripts/tidy $(SAN_BUILD) $(JOBS)

unit-test: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L unit

system-test: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L system

# The platform (links, EDM, start-up), then the collective ops on ring8. Each
# report is also recorded beside its JSON, so the recorded text is always this
# run's (progress lines go to stderr and are not recorded).
RESULTS := bench/results
# The benches write their charts and the fitted cost model into this tree.
export WEFT_BENCH_OUT := $(CURDIR)
BENCHES := weft-bench-platform weft-bench-ccl weft-bench-fabric weft-bench-boards weft-bench-model weft-bench-systems \
    weft-bench-tensor
bench-tools: all
	@ninja -C $(BUILD) --quiet -j $(JOBS) $(BENCHES)

bench: bench-tools
	@set -o pipefail; $(BUILD)/bin/weft-bench-platform | tee $(RESULTS)/platform.txt
	@set -o pipefail; $(BUILD)/bin/weft-bench-ccl | tee $(RESULTS)/ccl_ring8.txt
	@set -o pipefail; $(BUILD)/bin/weft-bench-fabric | tee $(RESULTS)/fabric_ring8.txt
	@set -o pipefail; $(BUILD)/bin/weft-bench-boards | tee $(RESULTS)/boards_ring8.txt
	@set -o pipefail; $(BUILD)/bin/weft-bench-model | tee $(RESULTS)/fabric_model.txt
	@set -o pipefail; $(BUILD)/bin/weft-bench-systems | tee $(RESULTS)/systems.txt
	@set -o pipefail; $(BUILD)/bin/weft-bench-tensor | tee $(RESULTS)/tensor_ring8.txt

bench-tensor: bench-tools
	@set -o pipefail; $(BUILD)/bin/weft-bench-tensor | tee $(RESULTS)/tensor_ring8.txt

bench-systems: bench-tools
	@set -o pipefail; $(BUILD)/bin/weft-bench-systems | tee $(RESULTS)/systems.txt

bench-model: bench-tools
	@set -o pipefail; $(BUILD)/bin/weft-bench-model | tee $(RESULTS)/fabric_model.txt

bench-ccl: bench-tools
	@set -o pipefail; $(BUILD)/bin/weft-bench-ccl | tee $(RESULTS)/ccl_ring8.txt

bench-boards: bench-tools
	@set -o pipefail; $(BUILD)/bin/weft-bench-boards | tee $(RESULTS)/boards_ring8.txt

clean:
	rm -rf $(BUILD)
