# tests/tsan.mk — ThreadSanitizer builds of the threading tests (included by the Makefile).
#
#   make tsan            build the implementation with -fsanitize=thread and -DTN_THREADS
#                        (the library's own pool; no OpenMP: TSan
#                        does not see libgomp's synchronisation) into build/tsan/, build
#                        tests/test_threads.c and tests/test_concurrency.c against it, run
#                        them: any race report fails the suite (TSan's exit status 66)
#   make test TSAN=1     make test, plus those two suites under ThreadSanitizer
#
# Also here, the rules of two suites that cannot take the Makefile's pattern rule:
# test_concurrency forks after OpenMP regions, so like test_threads it links the OpenMP
# object; test_alloc_failures hooks TN_MALLOC, so like test_gemm it compiles the header.

TSAN_BUILD  := build/tsan
TSAN_FLAGS  ?= -O1 -g -fsanitize=thread -fno-omit-frame-pointer -DTN_THREADS
TSAN_TESTS  := $(TSAN_BUILD)/test_threads $(TSAN_BUILD)/test_concurrency
# halt_on_error: the first race fails the suite; second_deadlock_stack: both stacks of a lock-order report
TSAN_RUN    := TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1 $(TSAN_OPTIONS)"

.PHONY: tsan
$(BUILD)/test_concurrency: tests/test_concurrency.c tests/tn_test.h $(HEADER) $(BUILD)/tensor_fast.o
	$(CC) $(WARN) $(CFLAGS) -fopenmp $(CPPFLAGS) $(LINKED) $< $(BUILD)/tensor_fast.o -o $@ $(LDFLAGS) $(LDLIBS)

$(TSAN_BUILD)/tensor.o: build/tensor_lines.h
	@mkdir -p $(TSAN_BUILD)
	$(CC) $(WARN) $(TSAN_FLAGS) $(CPPFLAGS) -DTN_TESTING $(IMPL) -c $< -o $@
$(TSAN_BUILD)/%: tests/%.c tests/tn_test.h $(HEADER) $(TSAN_BUILD)/tensor.o
	$(CC) $(WARN) $(TSAN_FLAGS) $(CPPFLAGS) -DTN_TESTING $(LINKED) $< $(TSAN_BUILD)/tensor.o -o $@ -fsanitize=thread $(LDLIBS)

tsan: $(TSAN_TESTS)
	@$(TSAN_RUN) sh tests/run_all.sh $(TSAN_TESTS)

ifeq ($(TSAN),1)
# the test recipe expands $(TESTS) when it runs: the TSan suites join the others
test: $(TSAN_TESTS)
TESTS += $(TSAN_TESTS)
export TSAN_OPTIONS := halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1 $(TSAN_OPTIONS)
endif

# test_alloc_failures hooks TN_MALLOC: it compiles the implementation itself (as test_gemm)
$(BUILD)/test_alloc_failures: tests/test_alloc_failures.c tests/tn_test.h $(HEADER)
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)
