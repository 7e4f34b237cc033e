#!/bin/sh
# tools/gpu_check.sh (make gpu-check) without a GPU: its probe against fakes — a fake
# nvidia-smi on the PATH, a fake CUDA tree, a fake pip layout with only libcudnn.so.9 and
# a fake interpreter naming it — in dry-run mode (probe and print the make command), the
# Makefile's cuDNN checks, and the test filters of the C tests. Quick: nothing is built.
cd "$(dirname "$0")/.." || exit 1
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
p=0; f=0
check() { if eval "$2"; then p=$((p + 1)); else f=$((f + 1)); echo "FAIL $1"; echo "$out" | tail -n 25; fi; }

# a CUDA tree: nvcc, cuBLAS (unversioned link), the runtime; no cuDNN
mkdir -p "$d/cuda/bin" "$d/cuda/include" "$d/cuda/lib64" "$d/bin" "$d/site/nvidia/cudnn/include" "$d/site/nvidia/cudnn/lib" "$d/empty"
printf '#!/bin/sh\necho "Cuda compilation tools, release 12.4, V12.4.131"\n' > "$d/cuda/bin/nvcc"
printf '#define CUBLAS_VER_MAJOR 12\n#define CUBLAS_VER_MINOR 4\n#define CUBLAS_VER_PATCH 5\n' > "$d/cuda/include/cublas_api.h"
touch "$d/cuda/lib64/libcublas.so" "$d/cuda/lib64/libcudart.so" "$d/cuda/lib64/libcusolver.so" "$d/cuda/lib64/libcufft.so"
printf '#define CUFFT_VER_MAJOR 11\n#define CUFFT_VER_MINOR 2\n#define CUFFT_VER_PATCH 1\n' > "$d/cuda/include/cufft.h"
printf '  #define CUSOLVER_VER_MAJOR 12\n  #define CUSOLVER_VER_MINOR 0\n  #define CUSOLVER_VER_PATCH 4\n' > "$d/cuda/include/cusolver_common.h"   # indented, as the real one
# pip's layout: nvidia/cudnn with libcudnn.so.9 (and a longer name) but no libcudnn.so
touch "$d/site/nvidia/cudnn/include/cudnn.h" "$d/site/nvidia/cudnn/lib/libcudnn.so.9" "$d/site/nvidia/cudnn/lib/libcudnn.so.9.1.0"
printf '#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n' > "$d/site/nvidia/cudnn/include/cudnn_version.h"
# an interpreter whose site-packages hold it
printf '#!/bin/sh\ncase "$*" in *getsitepackages*) echo "%s" ;; *) exit 1 ;; esac\n' "$d/site" > "$d/bin/fakepy"
# nvidia-smi: an H100, or what FAKE_SMI says
printf '#!/bin/sh\nif [ -n "$FAKE_SMI_FAIL" ]; then echo "No devices were found"; exit 6; fi\necho "${FAKE_SMI:-NVIDIA H100 80GB HBM3, 550.54.15, 9.0, 81559 MiB}"\n' > "$d/bin/nvidia-smi"
chmod +x "$d/cuda/bin/nvcc" "$d/bin/fakepy" "$d/bin/nvidia-smi"
mkdir -p "$d/nosmi" && ln -s "$d/bin/fakepy" "$d/nosmi/fakepy"
BASEPATH=/usr/bin:/bin
probe() {   # probe PATH VAR=VALUE...: the script in dry-run mode, hermetic (no system dirs)
    pth=$1; shift
    out=$(env PATH="$pth:$BASEPATH" CUDA_HOME="$d/cuda" GPU_CHECK_SYSTEM_DIRS="" TN_BENCH_PYTHON="$d/bin/fakepy" GPU_CHECK_DRY=1 \
          GPU_CHECK_OUT="$d/out" "$@" bash tools/gpu_check.sh 2>&1); rc=$?
}

probe "$d/bin"
check "H100: exit 0" '[ $rc -eq 0 ]'
check "H100: the GPU is named" 'echo "$out" | grep -q "^GPU: *NVIDIA H100 80GB HBM3, 550.54.15"'
check "H100: built for sm_90 only" 'echo "$out" | grep -q "CUDA_ARCH=-gencode arch=compute_90,code=sm_90 "'
check "pip cuDNN: the header from nvidia/cudnn" 'echo "$out" | grep -q "CUDNN_INC=$d/site/nvidia/cudnn/include "'
check "pip cuDNN: linked by its versioned name" 'echo "$out" | grep -q "CUDNN_LINK=-l:libcudnn.so.9 "'
check "pip cuDNN: its directory searched and on the rpath" 'echo "$out" | grep -q "CUDA_LIBDIRS=$d/site/nvidia/cudnn/lib ZLIB="'
check "pip cuDNN: the version" 'echo "$out" | grep -q "^cuDNN: *9.1.0 "'
check "CUDA and cuBLAS versions" 'echo "$out" | grep -q "^CUDA: *12.4 " && echo "$out" | grep -q "^cuBLAS: *12.4.5 ($d/cuda/lib64 -lcublas)"'
check "cuSOLVER version and library" 'echo "$out" | grep -q "^cuSOLVER: *12.0.4 ($d/cuda/lib64 -lcusolver)"'
check "cuFFT version and library" 'echo "$out" | grep -q "^cuFFT: *11.2.1 ($d/cuda/lib64 -lcufft)"'
check "the interpreter is TN_BENCH_PYTHON" 'echo "$out" | grep -q "^python: *$d/bin/fakepy" && echo "$out" | grep -q "PY=$d/bin/fakepy"'
check "pip's libraries on LD_LIBRARY_PATH" 'echo "$out" | grep -q "^LD_LIBRARY_PATH=$d/site/nvidia/cudnn/lib:$d/cuda/lib64\(:\|$\)"'
check "cuDNN is built in" 'echo "$out" | grep -q " CUDNN=1 "'
check "the log is a flat file in GPU_CHECK_OUT" '[ -s "$d/out/gpu_check.log" ] && grep -q "^GPU:" "$d/out/gpu_check.log"'

probe "$d/bin" FAKE_SMI="NVIDIA A10, 535.1, 8.6, 23028 MiB"
check "A10: built for sm_86" 'echo "$out" | grep -q "CUDA_ARCH=-gencode arch=compute_86,code=sm_86 "'

# cuDNN asked for (explicitly, or by default on a GPU machine) and not found: a loud failure
probe "$d/bin" TN_BENCH_PYTHON=/bin/false CUDNN=1
check "CUDNN=1 without cuDNN: exit 2" '[ $rc -eq 2 ]'
check "CUDNN=1 without cuDNN: says so" 'echo "$out" | grep -q "ERROR: cuDNN was asked for (CUDNN=1 given)" && echo "$out" | grep -q "cudnn.h not in: $d/cuda/include"'
check "CUDNN=1 without cuDNN: the recap says so" 'echo "$out" | grep -q "^== probe .*FAILED (no cuDNN)"'
probe "$d/bin" TN_BENCH_PYTHON=/bin/false
check "a GPU without cuDNN: required by default" '[ $rc -eq 2 ] && echo "$out" | grep -q "by default with a GPU"'
probe "$d/bin" TN_BENCH_PYTHON=/bin/false CUDNN=0
check "CUDNN=0: builds without it" '[ $rc -eq 0 ] && echo "$out" | grep -q " CUDNN=0 " && echo "$out" | grep -q "^cuDNN: *not used (CUDNN=0)"'
probe "$d/bin" TN_BENCH_PYTHON=/bin/false GPU_CHECK_SITE="$d/site"
check "GPU_CHECK_SITE: searched" '[ $rc -eq 0 ] && echo "$out" | grep -q "CUDNN_LINK=-l:libcudnn.so.9 "'

# NCCL in the CUDA tree: found, built in, the nccl step's library on the link line; the Makefile's NCCL=1 and NCCL=0
printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR 21\n#define NCCL_PATCH 5\n' > "$d/cuda/include/nccl.h"
touch "$d/cuda/lib64/libnccl.so"
probe "$d/bin"
check "NCCL: found, its version, built in" '[ $rc -eq 0 ] && echo "$out" | grep -q "^NCCL: *2.21.5 " && echo "$out" | grep -q " NCCL=1 NCCL_INC=$d/cuda/include NCCL_LINK=-lnccl "'
check "NCCL: the test built" 'echo "$out" | grep -q "build/cuda/test_dist_nccl"'
rm -f "$d/cuda/include/nccl.h" "$d/cuda/lib64/libnccl.so"
probe "$d/bin"
check "no NCCL: built without it, and said" 'echo "$out" | grep -q " NCCL=0" && echo "$out" | grep -q "^NCCL: *not found"'
out=$(make -n build/cuda/tensor_cuda.o NCCL=1 CUDNN=0 CUDA_HOME="$d/empty" 2>&1); rc=$?
check "make NCCL=1 without nccl.h fails" '[ $rc -ne 0 ] && echo "$out" | grep -q "NCCL=1 but there is no nccl.h in $d/empty/include"'
out=$(make -n build/cuda/tensor_cuda.o NCCL=0 CUDNN=0 2>&1); rc=$?
check "make NCCL=0: the unit without NCCL" '[ $rc -eq 0 ] && echo "$out" | grep -q "nvcc" && ! echo "$out" | grep -q "DTN_NCCL"'

# no GPU: no nvidia-smi, or one that finds nothing; cuDNN used when found (unversioned here)
mkdir -p "$d/cuda/lib" && touch "$d/cuda/include/cudnn.h" "$d/cuda/lib/libcudnn.so"
probe "$d/nosmi"
check "no nvidia-smi: exit 0" '[ $rc -eq 0 ]'
check "no nvidia-smi: says there is no GPU" 'echo "$out" | grep -q "^GPU: *none (no nvidia-smi on the PATH"'
check "no GPU: every architecture of the Makefile" 'echo "$out" | grep -q "^arch: *the default list" && ! echo "$out" | grep -q "CUDA_ARCH="'
check "CUDA tree cuDNN: the unversioned link first" 'echo "$out" | grep -q "CUDNN_INC=$d/cuda/include " && echo "$out" | grep -q "CUDNN_LINK=-lcudnn "'
probe "$d/bin" FAKE_SMI_FAIL=1
check "nvidia-smi without devices: no GPU" '[ $rc -eq 0 ] && echo "$out" | grep -q "^GPU: *none (nvidia-smi found no GPU: No devices were found)"'

# the Makefile: CUDNN=1 without cudnn.h is an error; the link line of a pip layout
out=$(make -n build/cuda/tensor_cuda.o CUDNN=1 CUDA_HOME="$d/empty" 2>&1); rc=$?
check "make CUDNN=1 without cudnn.h fails" '[ $rc -ne 0 ] && echo "$out" | grep -q "CUDNN=1 but there is no cudnn.h in $d/empty/include"'
out=$(make -n build/cuda/tensor_cuda.o CUDNN=0 2>&1); rc=$?
check "make CUDNN=0 builds without cuDNN" '[ $rc -eq 0 ] && echo "$out" | grep -q "nvcc.*-DTN_NO_CUDNN"'
out=$(make -n lib/libtensor_cuda.so CUDA_HOME="$d/cuda" CUDNN=1 CUDNN_INC="$d/site/nvidia/cudnn/include" CUDNN_LINK=-l:libcudnn.so.9 \
      CUDA_LIBDIRS="$d/site/nvidia/cudnn/lib" 2>&1); rc=$?
check "make: the pip link line" '[ $rc -eq 0 ] && echo "$out" | grep -q -- "-L$d/site/nvidia/cudnn/lib -Wl,-rpath,$d/site/nvidia/cudnn/lib .*-l:libcudnn.so.9 -lcusolver -lcufft -lcublas"'
check "make: cudnn.h from CUDNN_INC" 'echo "$out" | grep -q "nvcc.* -I$d/site/nvidia/cudnn/include "'
check "the benchmark has no compiled-in interpreter" '! grep -q "/usr/bin/python3" bench/bench_cuda.c && grep -q TN_BENCH_PYTHON bench/bench_cuda.c'

# the test filters, on a C test binary when it is built
B=${BUILD:-build}
if [ -x "$B/test_gpucheck" ]; then
    all=$("$B/test_gpucheck" | tail -n 1)
    out=$(TN_TEST_FILTER=tf32 "$B/test_gpucheck"); one=$(echo "$out" | tail -n 1)
    check "TN_TEST_FILTER runs fewer checks" '[ "${one%% passed*}" -gt 0 ] && [ "${one%% passed*}" -lt "${all%% passed*}" ] && echo "$one" | grep -q " 0 failed"'
    out=$(TN_TEST_FILTER=no_such_test "$B/test_gpucheck"); none=$(echo "$out" | tail -n 1)
    check "TN_TEST_FILTER matching nothing runs nothing" '[ "$none" = "1 passed, 0 failed" ]'
else
    echo "filter checks skipped: no $B/test_gpucheck"
fi
echo "$p passed, $f failed"
[ $f -eq 0 ]
