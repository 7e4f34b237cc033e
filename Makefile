# tensor.h — build, test, demo.   make | make test | make demo | make bench | make clean
# Overridable: CC, CFLAGS, SANITIZE=1 (ASan + UBSan), BLAS=openblas (matmul through cblas)
CC       ?= cc
CXX      ?= c++
CFLAGS   ?= -O2 -g
WARN     := -std=c11 -Wall -Wextra -pedantic
CPPFLAGS += -I.
LDLIBS   += -lm -pthread
BUILD    := build

ifeq ($(SANITIZE),1)
  CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
  BUILD   := build/san
endif
ifeq ($(BLAS),openblas)
  CPPFLAGS += -DTENSOR_CBLAS -I/usr/include/x86_64-linux-gnu/openblas-pthread
  LDLIBS   += -lopenblas
endif

HEADER   := tensor.h
PENDING  := test_data test_safetensors test_optim test_nn test_rnn
TESTS    := $(filter-out $(patsubst %,$(BUILD)/%,$(PENDING)),$(patsubst tests/%.c,$(BUILD)/%,$(wildcard tests/test_*.c)))

EXAMPLES := $(patsubst examples/%.c,$(BUILD)/%,$(wildcard examples/*.c))

.PHONY: all test demo bench clean check-header
all: lib/libtensor.so $(TESTS) $(EXAMPLES)

lib/libtensor.so: $(HEADER)
	@mkdir -p lib
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -fPIC -shared -x c -DTENSOR_IMPLEMENTATION tensor.h -o $@ $(LDFLAGS) $(LDLIBS)

$(BUILD)/%: tests/%.c tests/tn_test.h $(HEADER)
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)

$(BUILD)/%: examples/%.c $(HEADER)
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)

# The header must compile warning-free as C11 (gcc and clang) and as C++17.
check-header:
	@mkdir -p $(BUILD)
	@printf '#define TENSOR_IMPLEMENTATION\n#include "tensor.h"\nint main(void){return 0;}\n' > $(BUILD)/hdr.c
	@cp $(BUILD)/hdr.c $(BUILD)/hdr.cpp
	@for c in gcc clang; do if command -v $$c >/dev/null; then \
	  $$c -std=c11 -Wall -Wextra -pedantic -Werror -I. -c $(BUILD)/hdr.c -o $(BUILD)/hdr_$$c.o || exit 1; echo "header: C11 $$c ok"; fi; done
	@for c in g++ clang++; do if command -v $$c >/dev/null; then \
	  $$c -std=c++17 -Wall -Wextra -Werror -I. -c $(BUILD)/hdr.cpp -o $(BUILD)/hdr_cpp.o || exit 1; echo "header: C++17 $$c ok"; fi; done

test: check-header $(TESTS) lib/libtensor.so
	@sh tests/run_all.sh $(TESTS)

demo: $(BUILD)/fashion_mlp_by_hand
	@sh tools/fetch_fashion_mnist.sh
	./$(BUILD)/fashion_mlp_by_hand data/fashion-mnist

bench: $(BUILD)/bench_matmul $(BUILD)/bench_autograd
	./$(BUILD)/bench_matmul | tee bench/results.md
	./$(BUILD)/bench_autograd | tee -a bench/results.md

$(BUILD)/bench_autograd: bench/bench_autograd.c $(HEADER)
	@mkdir -p $(BUILD)
	$(CC) $(WARN) -O2 -g $(CPPFLAGS) $< -o $@ -lm -pthread

$(BUILD)/bench_matmul: bench/bench_matmul.c $(HEADER)
	@mkdir -p $(BUILD)
	$(CC) -O2 -g $(CPPFLAGS) -I/usr/include/x86_64-linux-gnu/openblas-pthread $< -o $@ -lopenblas -lm

clean:
	rm -rf build lib
