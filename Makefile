# tensor.h — build, test, demo.   make | make test | make demo | make demo-check | make bench | make clean
# Overridable: CC, CFLAGS, SANITIZE=1 (ASan + UBSan), BLAS=openblas (matmul through cblas;
# chosen by itself on machines whose CPU the built-in GEMM has no vector kernel for, when
# pkg-config finds OpenBLAS), LAPACK=openblas (torch.linalg's CPU factorizations through
# LAPACK, in build/lapack: make lapack-check), ZLIB=0 (no gzip support in the IDX reader), NO_OMP=1 (no
# OpenMP threads; also chosen when the compiler cannot build OpenMP), PREFIX (make install)
#
# The implementation is compiled once per flag set into an object that the tests, the
# examples and the library link: $(BUILD)/tensor.o (the tests' flags, TN_TESTING's white-box
# hooks) and $(BUILD)/tensor_fast.o (the examples' and the library's flags). Test and example
# files keep their `#define TENSOR_IMPLEMENTATION` and are compiled with
# -DTENSOR_NO_IMPLEMENTATION, so each one also builds alone as a single-header program.
# test_smoke and test_gemm (its own TN_MALLOC hooks) compile the header themselves: the
# single-header path stays proven by a running test.
CC       ?= cc
CXX      ?= c++
CFLAGS   ?= -O2 -g
# the library and the examples: -O3 vectorises the elementwise kernels, OpenMP threads the GEMM
# (a Fashion-MNIST CNN step: 60 ms at -O2, 48 ms with these on 2 cores); -fno-math-errno lets
# loops with sqrt vectorise (the optimizers' steps: 4x; the library reads errno only after I/O)
OMP      ?= -fopenmp
ifeq ($(NO_OMP),1)
  OMP :=
else ifneq ($(shell printf 'int main(void){return 0;}' | $(CC) $(OMP) -x c - -o /dev/null 2>/dev/null && echo y),y)
  $(info $(CC) cannot build OpenMP: building without threads (NO_OMP=1 says so quietly))
  OMP :=
endif
FAST     ?= -O3 $(OMP) -fno-math-errno
WARN     := -std=c11 -Wall -Wextra -pedantic-errors   # errors: a positional call to a keyword macro is only a warning in gcc
CPPFLAGS += -I.
LDLIBS   += -lm -pthread
BUILD    := build
LIB      := lib/libtensor.so
PY       ?= /usr/bin/python3

ifeq ($(SANITIZE),1)
  CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
  BUILD   := build/san
  # the sanitized library never replaces the plain one; the Python tests load it with the
  # ASan runtime preloaded (the interpreter itself is not instrumented: leaks not checked)
  LIB     := $(BUILD)/libtensor.so
  PY_PRELOAD := $(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so) $(abspath $(BUILD)/asan_blas_shim.so)
  SAN_EXTRA := $(BUILD)/asan_blas_shim.so
endif
# DIST=mpi: torch.distributed's collectives over Open MPI, built apart in build/mpi; the
# Python package uses lib/libtensor_mpi.so through TENSOR_LIB (make dist-check runs both)
ifeq ($(DIST),mpi)
  CPPFLAGS += -DTENSOR_MPI $(shell mpicc --showme:compile 2>/dev/null)
  LDLIBS   += $(shell mpicc --showme:link 2>/dev/null)
  BUILD    := build/mpi
  LIB      := lib/libtensor_mpi.so
endif
ifneq ($(ZLIB),0)
  CPPFLAGS += -DTENSOR_ZLIB
  LDLIBS   += -lz
endif
# the built-in GEMM has AVX2/AVX-512 kernels; elsewhere OpenBLAS is faster where it is installed
# (MACHINE: uname -m, overridable so tests/test_build_config.sh can check the choice)
MACHINE  ?= $(shell uname -m)
ifeq ($(BLAS),)
  ifeq ($(filter x86_64 amd64 i386 i686,$(MACHINE)),)
    BLAS := $(shell pkg-config --exists openblas 2>/dev/null && echo openblas)
  endif
endif
ifeq ($(BLAS),openblas)
  CPPFLAGS += -DTENSOR_CBLAS $(shell pkg-config --cflags openblas 2>/dev/null || echo -I/usr/include/x86_64-linux-gnu/openblas-pthread)
  LDLIBS   += $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
endif
# LAPACK=openblas: torch.linalg's CPU factorizations through LAPACK (-DTENSOR_LAPACK; Debian's
# OpenBLAS exports the Fortran LAPACK symbols; LAPACK_LIBS overrides the link flags, e.g.
# -llapack -lblas), built apart in build/lapack with lib/libtensor_lapack.so (make lapack-check)
ifneq ($(LAPACK),)
  LAPACK_LIBS ?= $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
  CPPFLAGS += -DTENSOR_LAPACK
  LDLIBS   += $(LAPACK_LIBS)
  BUILD    := $(BUILD)/lapack
  LIB      := $(if $(filter 1,$(SANITIZE)),$(BUILD)/libtensor.so,lib/libtensor_lapack.so)
endif

VERSION  := $(shell sed -n 's/^\#define TENSOR_VERSION_STRING "\(.*\)"/\1/p' src/api.h)
SOMAJOR  := $(firstword $(subst ., ,$(VERSION)))
HEADER   := tensor.h
PARTS    := src/parts.txt $(shell sed -n 's|^\([a-z_/]*\.[ch]\) .*|src/\1|p' src/parts.txt 2>/dev/null)
SELF     := test_smoke test_gemm test_threads_policy
TESTS    := $(patsubst tests/%.c,$(BUILD)/%,$(filter-out tests/test_cuda.c,$(wildcard tests/test_*.c)))
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/%,$(wildcard examples/*.c))
IMPL     := -DTENSOR_IMPLEMENTATION -x c
LINKED   := -DTENSOR_NO_IMPLEMENTATION

.PHONY: all test demo demo-check char-lm examples-metrics bench bench-epoch clean check-header
all: $(LIB) $(TESTS) $(EXAMPLES) docs/ops.md docs/api.md

# ---- the header, generated from src/ (tools/amalgamate; never edit tensor.h by hand) ----
# The objects compile the same amalgamation with #line directives, so compiler errors,
# sanitizer reports and debuggers point into src/.
$(HEADER): $(PARTS) tools/amalgamate LICENSE
	@if command -v python3 >/dev/null; then python3 tools/amalgamate && echo "tensor.h regenerated from src/"; \
	else echo "python3 not found: tensor.h not regenerated from src/" >&2; touch $@; fi
# the op index: for each public op its declaration, definition, derivative, backend entry
# and GPU kernel, as links into src/ (tools/opsindex)
docs/ops.md: $(PARTS) tensor_cuda.cu tools/opsindex
	@if command -v python3 >/dev/null; then python3 tools/opsindex && echo "docs/ops.md regenerated"; else touch $@; fi
# the API reference: every public declaration of src/api.h with its doc comment (tools/apidoc)
docs/api.md: src/api.h tools/apidoc
	@if command -v python3 >/dev/null; then python3 tools/apidoc && echo "docs/api.md regenerated"; else touch $@; fi
build/tensor_lines.h: $(HEADER)
	@mkdir -p build
	@if command -v python3 >/dev/null; then python3 tools/amalgamate --lines -o $@; else cp $< $@; fi

# ---- the implementation, once per flag set ----
$(BUILD)/tensor.o: build/tensor_lines.h
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DTN_TESTING $(IMPL) -c $< -o $@
$(BUILD)/tensor_fast.o: build/tensor_lines.h
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) $(FAST) -fPIC $(CPPFLAGS) $(IMPL) -c $< -o $@

$(LIB): $(BUILD)/tensor_fast.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FAST) -shared -Wl,-soname,libtensor.so.$(SOMAJOR) $< -o $@ $(LDFLAGS) $(LDLIBS)
	$(if $(filter lib/libtensor.so,$@),ln -sf $(notdir $@) $(dir $@)libtensor.so.$(SOMAJOR))   # the name a program linked with -ltensor looks for
lib/libtensor.a: $(BUILD)/tensor_fast.o
	@mkdir -p lib
	rm -f $@ && ar rcs $@ $<

# ---- tests: each links tensor.o (test_threads: the OpenMP build) ----
$(BUILD)/%: tests/%.c $(wildcard tests/*.h) $(HEADER) $(BUILD)/tensor.o
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DTN_TESTING $(LINKED) $< $(BUILD)/tensor.o -o $@ $(LDFLAGS) $(LDLIBS)

$(BUILD)/test_threads: tests/test_threads.c tests/tn_test.h $(HEADER) $(BUILD)/tensor_fast.o
	$(CC) $(WARN) $(CFLAGS) $(OMP) $(CPPFLAGS) $(LINKED) $< $(BUILD)/tensor_fast.o -o $@ $(LDFLAGS) $(LDLIBS)

$(patsubst %,$(BUILD)/%,$(SELF)): $(BUILD)/%: tests/%.c $(wildcard tests/*.h) $(HEADER)
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)
# the GEMM's threaded splits (rows, or columns for a few rows) run in its suite: the pool on
$(BUILD)/test_gemm: CPPFLAGS += -DTN_THREADS

# ---- examples: the fast object ----
$(BUILD)/%: examples/%.c examples/train_util.h $(HEADER) $(BUILD)/tensor_fast.o
	$(CC) $(WARN) $(CFLAGS) $(FAST) $(CPPFLAGS) $(LINKED) $< $(BUILD)/tensor_fast.o -o $@ $(LDFLAGS) $(LDLIBS)


# The header must be src/'s amalgamation (docs/ops.md its op index, docs/api.md its API
# reference) and compile
# warning-free as C11 (gcc and clang) and as C++17.
check-header: $(HEADER) docs/ops.md docs/api.md
	@python3 tools/amalgamate --check && echo "header: tensor.h is the amalgamation of src/"
	@python3 tools/opsindex --check && echo "header: docs/ops.md is the op index of src/"
	@python3 tools/apidoc --check && echo "header: docs/api.md is the API reference of src/api.h"
	@! grep -nE '([^/]\*|\b(int|double|float|int64_t|size_t|bool)) ?I\b *[=;,)[]' src/*.h src/*/*.c || \
	  { echo "header: a variable named I: <complex.h> (TENSOR_CBLAS builds) defines I as a macro; rename it"; exit 1; }
	@mkdir -p $(BUILD)
	@printf '#define TENSOR_IMPLEMENTATION\n#include "tensor.h"\nint main(void){return 0;}\n' > $(BUILD)/hdr.c
	@cp $(BUILD)/hdr.c $(BUILD)/hdr.cpp
	@for c in gcc clang; do if command -v $$c >/dev/null; then \
	  $$c -std=c11 -Wall -Wextra -pedantic -Werror -I. -c $(BUILD)/hdr.c -o $(BUILD)/hdr_$$c.o || exit 1; echo "header: C11 $$c ok"; fi; done
	@printf '#define TENSOR_STATIC\n#define TENSOR_IMPLEMENTATION\n#include "tensor.h"\nint main(void){return 0;}\n' > $(BUILD)/hdr_static.c
	@$(CC) -std=c11 -Wall -Wextra -pedantic -Werror -I. -c $(BUILD)/hdr_static.c -o $(BUILD)/hdr_static.o && echo "header: TENSOR_STATIC ok"
	@for c in g++ clang++; do if command -v $$c >/dev/null; then \
	  $$c -std=c++17 -Wall -Wextra -Werror -I. -c $(BUILD)/hdr.cpp -o $(BUILD)/hdr_cpp.o || exit 1; echo "header: C++17 $$c ok"; fi; done

# C tests, the Python tests (against $(LIB)) and demo-check, each a suite of run_all.sh;
# the last line is the summed "N passed, N failed".
test: check-header $(TESTS) $(LIB) $(EXAMPLES) $(SAN_EXTRA)
	@TENSOR_LIB=$(abspath $(LIB)) PY_PRELOAD='$(PY_PRELOAD)' PYTHON=$(PY) DEMO_BIN=$(BUILD)/fashion_mlp BUILD=$(BUILD) \
	  sh tests/run_all.sh $(TESTS) tests/test_run_all.sh tests/test_examples.sh tests/test_build_config.sh tests/test_gpu_check.sh $(if $(filter 1,$(SANITIZE)),,tests/test_install.sh tests/test_pip_install.sh tests/test_dist.sh) python demo-check

# the reference BLAS's complex gemv, preloaded before OpenBLAS for the sanitized Python suite
# (tests/asan_blas_shim.c says why); built without sanitizers, as the interpreter is
$(BUILD)/asan_blas_shim.so: tests/asan_blas_shim.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -fPIC -shared $< -o $@

# The main job: fetch Fashion-MNIST if missing, train the MLP, print the test accuracy.
demo: $(BUILD)/fashion_mlp
	@sh tools/fetch_fashion_mnist.sh
	./$(BUILD)/fashion_mlp --data data/fashion-mnist --save $(BUILD)/fashion_mlp.safetensors

# A character-level LSTM on Debian's fortune cookies (or --text FILE), then a sample.
char-lm: $(BUILD)/char_lm
	@sh tools/fetch_text.sh
	./$(BUILD)/char_lm --text data/fortunes.txt --save $(BUILD)/char_lm.safetensors

# pytorch/examples' mnist, vae, word_language_model (LSTM, Transformer) and dcgan trained
# under the package and under PyTorch side by side: each metric and whether ours reaches
# PyTorch's (tools/examples_metrics.py; minutes, so not part of make test). The programs are
# ported locally first: python3 tools/port_upstream.py examples <pytorch/examples checkout>
examples-metrics: $(LIB)
	@sh tools/fetch_fashion_mnist.sh && sh tools/fetch_text.sh
	TENSOR_LIB=$(abspath $(LIB)) $(PY) tools/examples_metrics.py $(METRICS_ARGS)

# The whole pipeline (IDX reader, loader, model, Adam, checkpoint) must reach 80 % in one
# epoch and again after resuming; skipped with a message when the data cannot be fetched.
demo-check: $(BUILD)/fashion_mlp
	@DEMO_BIN=$(BUILD)/fashion_mlp sh tests/demo_check.sh


# Every benchmark beside its reference, one markdown file: bench/results.md
bench: $(BUILD)/bench_matmul $(BUILD)/bench_autograd $(BUILD)/bench_train $(BUILD)/bench_epoch $(LIB)
	./$(BUILD)/bench_matmul | tee bench/results.md
	./$(BUILD)/bench_matmul --threads 2 | tee -a bench/results.md
	./$(BUILD)/bench_autograd | tee -a bench/results.md
	TENSOR_LIB=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PY) bench/bench_overhead.py | tee -a bench/results.md
	./$(BUILD)/bench_train | tee -a bench/results.md
	@sh tools/fetch_fashion_mnist.sh && ./$(BUILD)/bench_epoch data/fashion-mnist | tee -a bench/results.md

# one epoch of the CNN example beside PyTorch (about 5 minutes)
bench-epoch: $(BUILD)/bench_epoch
	@sh tools/fetch_fashion_mnist.sh
	./$(BUILD)/bench_epoch data/fashion-mnist

$(BUILD)/bench_%: bench/bench_%.c $(HEADER) $(BUILD)/tensor_fast.o
	$(CC) $(WARN) $(FAST) -g $(CPPFLAGS) $(LINKED) $< $(BUILD)/tensor_fast.o -o $@ $(LDFLAGS) $(LDLIBS)

# the GEMM against OpenBLAS calls the kernels directly: its own implementation unit
$(BUILD)/bench_matmul: bench/bench_matmul.c $(HEADER)
	@mkdir -p $(BUILD)
	$(CC) $(FAST) -g $(CPPFLAGS) -I/usr/include/x86_64-linux-gnu/openblas-pthread $< -o $@ -lopenblas $(LDLIBS)

# the FFT engine beside torch.fft calls the engine's internal entry: its own implementation unit
$(BUILD)/bench_fft: bench/bench_fft.c bench/bench_util.h $(HEADER)
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(FAST) -g $(CPPFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)

# CSR x dense beside torch.sparse.mm (bench/bench_sparse.py in a child process)
$(BUILD)/bench_sparse: bench/bench_sparse.c bench/bench_util.h $(HEADER)
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(FAST) -g $(CPPFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)

# ---- install: the header, the shared and static library, pkg-config and CMake files ----
#   make install PREFIX=/usr/local        (DESTDIR is honoured)
# A program that links the library includes tensor.h without TENSOR_IMPLEMENTATION:
#   cc main.c $(pkg-config --cflags --libs tensor)      or, in CMake,
#   find_package(tensor REQUIRED)  target_link_libraries(app PRIVATE tensor::tensor)
PREFIX   ?= /usr/local
INSTDIR  := $(DESTDIR)$(PREFIX)
.PHONY: install
install: lib/libtensor.so lib/libtensor.a $(HEADER)
	@mkdir -p $(INSTDIR)/include $(INSTDIR)/lib/pkgconfig $(INSTDIR)/lib/cmake/tensor
	cp $(HEADER) $(INSTDIR)/include/tensor.h
	cp lib/libtensor.so $(INSTDIR)/lib/libtensor.so.$(VERSION)
	ln -sf libtensor.so.$(VERSION) $(INSTDIR)/lib/libtensor.so.$(SOMAJOR)
	ln -sf libtensor.so.$(SOMAJOR) $(INSTDIR)/lib/libtensor.so
	cp lib/libtensor.a $(INSTDIR)/lib/libtensor.a
	@if [ -f lib/libtensor_cuda.so ]; then cp lib/libtensor_cuda.so $(INSTDIR)/lib/ && cp tensor_cuda.cu $(INSTDIR)/include/; fi
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@VERSION@|$(VERSION)|; s|@LIBS_PRIVATE@|$(OMP) $(LDLIBS)|' tools/tensor.pc.in > $(INSTDIR)/lib/pkgconfig/tensor.pc
	sed -e 's|@VERSION@|$(VERSION)|; s|@LIBS_PRIVATE@|$(OMP) $(LDLIBS)|' tools/tensorConfig.cmake.in > $(INSTDIR)/lib/cmake/tensor/tensorConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|' tools/tensorConfigVersion.cmake.in > $(INSTDIR)/lib/cmake/tensor/tensorConfigVersion.cmake
	@echo "installed tensor.h $(VERSION) into $(INSTDIR)"

# ---- the GPU unit: builds wherever nvcc is (no GPU needed); tests skip without one ----
CUDA_HOME  ?= /usr/local/cuda
NVCC       ?= $(CUDA_HOME)/bin/nvcc
CUDA_ARCH  ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
# -fmad=false: no fused multiply-adds the CPU does not do (the same Philox numbers on both)
NVFLAGS    ?= -O3 -std=c++17 -fmad=false
CUDA_WARN  := --Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror,-fPIC
# cuDNN 9 where its header is (CUDNN_INC, default the CUDA tree's include/); without it the
# unit builds with TN_NO_CUDNN and convolution takes the im2col + cuBLAS path. CUDNN=1 makes
# a missing cudnn.h an error instead. Libraries outside the CUDA tree (pip's nvidia/*/lib,
# which ship only libcudnn.so.9: CUDNN_LINK=-l:libcudnn.so.9) come in through CUDA_LIBDIRS;
# tools/gpu_check.sh (make gpu-check) finds them all.
CUDNN_INC  ?= $(CUDA_HOME)/include
CUDNN_LINK ?= -lcudnn
CUBLAS_LINK ?= -lcublas
CUBLASLT_LINK ?= -lcublasLt
CUSOLVER_LINK ?= -lcusolver
CUFFT_LINK ?= -lcufft
CUDA_LIBDIRS ?=
CUDNN      ?= $(shell test -f $(CUDNN_INC)/cudnn.h && echo 1)
ifeq ($(CUDNN),0)
  override CUDNN :=
endif
ifeq ($(CUDNN),1)
  ifeq ($(wildcard $(CUDNN_INC)/cudnn.h),)
    $(error CUDNN=1 but there is no cudnn.h in $(CUDNN_INC) (set CUDNN_INC, or CUDNN=0 to build without cuDNN; make gpu-check searches pip's nvidia/cudnn too))
  endif
endif
# NCCL (torch.distributed's "nccl" backend in the unit) where nccl.h is (NCCL_INC, default the
# CUDA tree's include/) and libnccl beside it (the CUDA tree's lib64/ or lib/, NCCL_LIBDIR, or
# the system's); NCCL=0 builds without it, NCCL=1 makes a missing header or library an error
NCCL_INC   ?= $(CUDA_HOME)/include
NCCL_LINK  ?= -lnccl
NCCL_LIBDIR ?=
NCCL_FOUND := $(wildcard $(NCCL_INC)/nccl.h)
NCCL_LIBFOUND := $(wildcard $(if $(NCCL_LIBDIR),$(NCCL_LIBDIR)/libnccl.so*) $(CUDA_HOME)/lib64/libnccl.so* $(CUDA_HOME)/lib/libnccl.so* \
                   /usr/lib/x86_64-linux-gnu/libnccl.so* /usr/lib64/libnccl.so*)
NCCL       ?= $(if $(and $(NCCL_FOUND),$(NCCL_LIBFOUND)),1)
ifeq ($(NCCL),0)
  override NCCL :=
endif
ifeq ($(NCCL),1)
  ifeq ($(NCCL_FOUND),)
    $(error NCCL=1 but there is no nccl.h in $(NCCL_INC) (set NCCL_INC, or NCCL=0 to build the unit without NCCL))
  endif
  ifeq ($(NCCL_LIBFOUND),)
    $(error NCCL=1 but no libnccl.so in $(NCCL_LIBDIR) $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib or the system's (set NCCL_LIBDIR, or NCCL=0))
  endif
endif
CUDA_LIBS  := $(foreach d,$(CUDA_LIBDIRS) $(if $(NCCL),$(NCCL_LIBDIR)),-L$(d) -Wl,-rpath,$(d)) \
              -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib -Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib \
              $(if $(CUDNN),$(CUDNN_LINK)) $(CUSOLVER_LINK) $(CUFFT_LINK) $(CUBLASLT_LINK) $(CUBLAS_LINK) $(if $(NCCL),$(NCCL_LINK)) -lcudart -lstdc++
CUDA_WARN  += $(if $(CUDNN),-I$(CUDNN_INC),-DTN_NO_CUDNN)
CUDA_WARN  += $(if $(NCCL),-DTN_NCCL -I$(NCCL_INC))
CUDA_BUILD := build/cuda
# the unit's compile and link flags as files that change when they do, so a build for
# another GPU, with or without cuDNN, or against other libraries recompiles or relinks
# (make gpu-check builds for the present GPU only)
$(CUDA_BUILD)/flags: tn_force
	@mkdir -p $(CUDA_BUILD)
	@echo '$(NVCC) $(NVFLAGS) $(CUDA_WARN) $(CUDA_ARCH)' | cmp -s - $@ || echo '$(NVCC) $(NVFLAGS) $(CUDA_WARN) $(CUDA_ARCH)' > $@
$(CUDA_BUILD)/link_flags: tn_force
	@mkdir -p $(CUDA_BUILD)
	@echo '$(CUDA_LIBS)' | cmp -s - $@ || echo '$(CUDA_LIBS)' > $@
.PHONY: tn_force
tn_force:

$(CUDA_BUILD)/tensor_cuda.o: tensor_cuda.cu $(HEADER) $(CUDA_BUILD)/flags
	@mkdir -p $(CUDA_BUILD)
	$(NVCC) $(NVFLAGS) $(CUDA_WARN) $(CUDA_ARCH) -I. -c $< -o $@
# the header's side of the unit: the implementation with TENSOR_CUDA, tests' and fast flags
$(CUDA_BUILD)/tensor.o: build/tensor_lines.h
	@mkdir -p $(CUDA_BUILD)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DTN_TESTING -DTENSOR_CUDA $(IMPL) -c $< -o $@
$(CUDA_BUILD)/tensor_fast.o: build/tensor_lines.h
	@mkdir -p $(CUDA_BUILD)
	$(CC) $(WARN) $(CFLAGS) $(FAST) -fPIC $(CPPFLAGS) -DTENSOR_CUDA $(IMPL) -c $< -o $@

lib/libtensor_cuda.so: $(CUDA_BUILD)/tensor_fast.o $(CUDA_BUILD)/tensor_cuda.o $(CUDA_BUILD)/link_flags
	@mkdir -p lib
	$(CC) $(CFLAGS) $(FAST) -shared $(filter %.o,$^) -o $@ $(LDFLAGS) $(LDLIBS) $(CUDA_LIBS)

$(CUDA_BUILD)/%: tests/%.c $(wildcard tests/*.h) $(HEADER) $(CUDA_BUILD)/tensor.o $(CUDA_BUILD)/tensor_cuda.o $(CUDA_BUILD)/link_flags
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DTN_TESTING -DTENSOR_CUDA $(LINKED) $< $(CUDA_BUILD)/tensor.o $(CUDA_BUILD)/tensor_cuda.o -o $@ $(LDFLAGS) $(LDLIBS) $(CUDA_LIBS)

$(CUDA_BUILD)/%: examples/%.c examples/train_util.h $(HEADER) $(CUDA_BUILD)/tensor_fast.o $(CUDA_BUILD)/tensor_cuda.o $(CUDA_BUILD)/link_flags
	$(CC) $(WARN) $(CFLAGS) $(FAST) $(CPPFLAGS) -DTENSOR_CUDA $(LINKED) $< $(CUDA_BUILD)/tensor_fast.o $(CUDA_BUILD)/tensor_cuda.o -o $@ $(LDFLAGS) $(LDLIBS) $(CUDA_LIBS)

$(CUDA_BUILD)/bench_cuda: bench/bench_cuda.c bench/bench_util.h $(HEADER) $(CUDA_BUILD)/tensor_fast.o $(CUDA_BUILD)/tensor_cuda.o $(CUDA_BUILD)/link_flags
	$(CC) $(WARN) $(FAST) -g $(CPPFLAGS) -I$(CUDA_HOME)/include -DTENSOR_CUDA $(LINKED) $< $(CUDA_BUILD)/tensor_fast.o $(CUDA_BUILD)/tensor_cuda.o -o $@ $(LDLIBS) $(CUDA_LIBS)
# the same as a shared library (tn_bench_main), for a profiler that runs in the process: tools/gpu_profile.py
$(CUDA_BUILD)/libbench_cuda.so: bench/bench_cuda.c bench/bench_util.h $(HEADER) $(CUDA_BUILD)/tensor_fast.o $(CUDA_BUILD)/tensor_cuda.o $(CUDA_BUILD)/link_flags
	$(CC) $(WARN) $(FAST) -g -fPIC -shared -DTN_BENCH_MAIN=tn_bench_main $(CPPFLAGS) -I$(CUDA_HOME)/include -DTENSOR_CUDA $(LINKED) $< $(CUDA_BUILD)/tensor_fast.o $(CUDA_BUILD)/tensor_cuda.o -o $@ $(LDLIBS) $(CUDA_LIBS)

.PHONY: cuda test-cuda cuda-check bench-cuda emulate-attention
cuda: lib/libtensor_cuda.so $(CUDA_BUILD)/test_cuda $(CUDA_BUILD)/fashion_mlp $(CUDA_BUILD)/fashion_cnn $(CUDA_BUILD)/test_dist_nccl

test-cuda: cuda
	./$(CUDA_BUILD)/test_cuda

# the GPU benchmark beside PyTorch on the same GPU (writes bench/results_cuda.md); without
# a GPU it says why in one line
bench-cuda: $(CUDA_BUILD)/bench_cuda
	./$(CUDA_BUILD)/bench_cuda | tee bench/results_cuda.md

# CI runs this beside `make test`: the unit must compile and link (warnings are errors)
# wherever nvcc is; its tests run on a GPU and say why they skipped elsewhere
cuda-check:
	@if command -v $(NVCC) >/dev/null 2>&1; then $(MAKE) --no-print-directory emulate-attention cuda && ./$(CUDA_BUILD)/test_cuda && ./$(CUDA_BUILD)/test_dist_nccl; \
	else echo "cuda-check: skipped (no nvcc at $(NVCC); set CUDA_HOME or NVCC)"; fi

# tensor_cuda.cu's attention kernels on the CPU (a thread per CUDA thread) against a double
# reference (tools/emulate_attention.cpp): their indexing and masking checked without a GPU
emulate-attention: build/emulate_attention
	./build/emulate_attention
build/emulate_attention: tools/emulate_attention.cpp tensor_cuda.cu
	@mkdir -p build
	sed -n '/^struct AttnGeo {/,/^\/\* dynamic shared memory above/p' tensor_cuda.cu | sed '$$d' \
	  | sed 's|extern __shared__ __align__(16) unsigned char attn_smem\[\];|ATTN_SMEM|' > build/attn_kernels.inc
	$(CXX) -std=c++20 -O2 -pthread -Wall -Wextra -Wno-unknown-pragmas -Ibuild tools/emulate_attention.cpp -o $@

# Everything a machine with an NVIDIA GPU should run, in one command (tools/gpu_check.sh):
# finds nvcc, cuBLAS and cuDNN (also pip PyTorch's nvidia/*), builds for this GPU only, runs
# the GPU tests, the benchmark beside PyTorch and compute-sanitizer; logs in OUT (default
# build/gpu-check), a recap last. Without a GPU it builds everything and says so.
#   make gpu-check [OUT=dir] [CUDNN=0|1] [TN_TEST_FILTER=name] [TN_BENCH_PYTHON=python]
# torch.distributed: the MPI build's tests under mpirun (1, 2, 3 ranks; the nccl backend on the
# stand-in too) and the plain build's nccl test (one rank, torchrun's variables, the TCP rendezvous)
.PHONY: dist-check
dist-check: $(BUILD)/test_dist_nccl
	./$(BUILD)/test_dist_nccl
	sh tests/test_dist.sh

# torch.linalg's tests against a TENSOR_LAPACK build (LAPACK=openblas: build/lapack,
# lib/libtensor_lapack.so): the linalg C tests and Python tests (tests/test_lapack.sh)
.PHONY: lapack-check
lapack-check:
	@PYTHON=$(PY) sh tests/test_lapack.sh

.PHONY: gpu-check
gpu-check:
	@$(if $(OUT),GPU_CHECK_OUT='$(OUT)') bash tools/gpu_check.sh

clean:
	rm -rf build lib

# ---- targets kept beside their sources: fuzzing (tests/fuzz/), ThreadSanitizer ----
-include tests/fuzz/fuzz.mk tests/tsan.mk
