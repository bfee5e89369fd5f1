# The two set-up commands of the README, and the jobs CI runs. Each installs what it needs.
PRESET ?= release
JOBS ?= $(shell nproc)
BUILD_DIR = build/$(PRESET)

.PHONY: demo test deps build sanitize fuzz bench clean

deps:
	scripts/install-deps

build: deps
	cmake --preset $(PRESET) >/dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Builds, then optimises real photos into a mirror and prints the summary.
demo: build
	scripts/demo $(BUILD_DIR)/src/cli/lighten

# Builds, then runs the whole test suite.
test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer (tests/lsan.supp names
# the leaks that belong to system libraries).
sanitize:
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(MAKE) test PRESET=asan-ubsan

# libFuzzer targets (clang); FUZZ_SECONDS per target, seeded from ../shared/corpus.
FUZZ_SECONDS ?= 60
fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build build/fuzz -j $(JOBS)
	scripts/run-fuzzers build/fuzz $(FUZZ_SECONDS)

bench: build
	bench/jpeg_lossless $(BUILD_DIR)/src/cli/lighten

clean:
	rm -rf build
