# Fuzzing (included by the Makefile). libFuzzer harnesses for every reader of untrusted input
# (tests/fuzz/fuzz_*.c), built with clang -fsanitize=fuzzer,address,undefined against the
# implementation compiled once with the same sanitizers ($(FUZZ_BUILD)/tensor.o).
#
#   make fuzz [FUZZ_S=60] [FUZZ_TARGETS="checkpoint csv"]   each harness FUZZ_S seconds
#   make fuzz-check                                        each harness ~12 s (CI)
#   make fuzz-build                                        the binaries and seed corpora only
#
# Each run starts from the seed corpus the library writes ($(FUZZ_BUILD)/seeds/<harness>,
# made by tests/fuzz/seeds.c) and the corpus earlier runs grew ($(FUZZ_BUILD)/corpus/<harness>),
# and prints one line per harness: executions, seconds, findings. Findings (crash, leak,
# timeout, out-of-memory inputs) are saved as $(FUZZ_BUILD)/artifacts/<harness>/<kind>-<sha1>
# with the sanitizer's report beside them (.log); reproduce one with
#   $(FUZZ_BUILD)/fuzz_<harness> $(FUZZ_BUILD)/artifacts/<harness>/crash-...
# Any finding makes the target fail. Runs go on past a finding (libFuzzer's fork mode), so
# one run reports every distinct finding it reaches. tests/fuzz/run.sh does the running.
FUZZ_CC      ?= clang
FUZZ_S       ?= 60
FUZZ_BUILD   := build/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS  ?= -g -O1 $(FUZZ_SAN)
FUZZ_TARGETS ?= safetensors_buffer safetensors_file checkpoint idx idx_gz csv options onnx
FUZZ_BINS    := $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_TARGETS))
FUZZ_DEPS    := tests/fuzz/fuzz_common.h

.PHONY: fuzz fuzz-check fuzz-build fuzz-seeds
fuzz-build: $(FUZZ_BINS) $(FUZZ_BUILD)/seeds.stamp

# clang with libFuzzer's runtime (Debian: clang and libclang-rt-<version>-dev), checked once
$(FUZZ_BUILD)/toolchain.ok:
	@mkdir -p $(FUZZ_BUILD)
	@printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > $(FUZZ_BUILD)/probe.c
	@$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $(FUZZ_BUILD)/probe.c -o $(FUZZ_BUILD)/probe 2>$(FUZZ_BUILD)/probe.err || \
	  { echo "fuzz: '$(FUZZ_CC) -fsanitize=fuzzer' does not link (install clang and its libFuzzer runtime, e.g. libclang-rt-14-dev; or set FUZZ_CC):"; \
	    head -n 3 $(FUZZ_BUILD)/probe.err; exit 1; }
	@touch $@

# the implementation, once: coverage for libFuzzer (fuzzer-no-link), ASan, UBSan, zlib
$(FUZZ_BUILD)/tensor.o: build/tensor_lines.h $(FUZZ_BUILD)/toolchain.ok
	@mkdir -p $(FUZZ_BUILD)
	$(FUZZ_CC) -std=c11 $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(CPPFLAGS) -DTENSOR_ZLIB $(IMPL) -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DEPS) $(HEADER) $(FUZZ_BUILD)/tensor.o
	$(FUZZ_CC) -std=c11 $(FUZZ_CFLAGS) -fsanitize=fuzzer $(CPPFLAGS) -DTENSOR_ZLIB $(LINKED) $< $(FUZZ_BUILD)/tensor.o -o $@ -lz -lm -pthread

# the seed generator links the same object (no libFuzzer main: fuzzer-no-link)
$(FUZZ_BUILD)/seedgen: tests/fuzz/seeds.c tests/fuzz/fuzz_options.c $(FUZZ_DEPS) $(HEADER) $(FUZZ_BUILD)/tensor.o
	$(FUZZ_CC) -std=c11 $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(CPPFLAGS) -DTENSOR_ZLIB $(LINKED) $< $(FUZZ_BUILD)/tensor.o -o $@ -lz -lm -pthread
$(FUZZ_BUILD)/seeds.stamp: $(FUZZ_BUILD)/seedgen
	rm -rf $(FUZZ_BUILD)/seeds && ASAN_OPTIONS=detect_leaks=0 ./$(FUZZ_BUILD)/seedgen $(FUZZ_BUILD)/seeds && touch $@
fuzz-seeds: $(FUZZ_BUILD)/seeds.stamp

fuzz: fuzz-build
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_S) $(FUZZ_TARGETS)

fuzz-check: fuzz-build
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) 12 $(FUZZ_TARGETS)

# tests/test_fuzz_harness.c (part of `make test`) includes the harnesses and the seed
# generator: rebuild it when they change
$(BUILD)/test_fuzz_harness: $(wildcard tests/fuzz/*.c tests/fuzz/*.h)
LDLIBS_FUZZ_HARNESS := $(if $(filter -lz,$(LDLIBS)),,-lz)
$(BUILD)/test_fuzz_harness: LDLIBS += $(LDLIBS_FUZZ_HARNESS)
