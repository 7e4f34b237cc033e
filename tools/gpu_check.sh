#!/usr/bin/env bash
# tools/gpu_check.sh — `make gpu-check`: everything a machine with an NVIDIA GPU should run,
# in one command and under 8 minutes on one H100/H200 (16 cores). Run from anywhere.
#
#   1. probe: nvcc, cuBLAS and cuDNN wherever they are (CUDA_HOME, system paths, or the
#      nvidia/* directories of a pip-installed PyTorch, which ship libcudnn.so.9 without
#      the unversioned link: linked with -l:libcudnn.so.9 then); the GPU, driver, CUDA,
#      cuBLAS and cuDNN versions
#   2. build for this GPU's compute capability only (nvidia-smi), make -j(cores)
#   3. the GPU tests (build/cuda/test_cuda; rerun with CUDA_LAUNCH_BLOCKING=1 when they fail),
#      torch.distributed over NCCL on one GPU (build/cuda/test_dist_nccl, where NCCL is found)
#      and the Python GPU tests (test_cuda*.py) when the interpreter has pytest
#   4. the GPU benchmark beside PyTorch (build/cuda/bench_cuda)
#   5. compute-sanitizer memcheck on the GPU tests with the time that is left
#   6. a recap, one line per step
# Each step runs under its own timeout; every step's log is a flat file in $GPU_CHECK_OUT
# (default build/gpu-check; `make gpu-check OUT=dir` sets it). The exit status is nonzero
# when a step failed. Without a GPU it builds everything, runs the tests (which say why they
# skip), says plainly that there is no GPU and exits 0.
#
# Environment:
#   CUDNN=1 | 0 | unset   1: cuDNN required (the default when a GPU is present; not found is
#                         an error naming where it looked); 0: build without; unset and no GPU:
#                         used if found
#   TN_BENCH_PYTHON       the interpreter with PyTorch for the benchmark and the Python tests
#                         (default: python3 on the PATH); its site-packages are searched for
#                         pip's nvidia/* libraries
#   TN_TEST_FILTER        comma-separated substrings: run only the C tests whose names contain
#                         one (TN_CASE_FILTER: the same for the op cases of tests/cuda_cases.h)
#   CUDA_HOME, NVCC       where the toolkit is (else found: PATH, /usr/local/cuda*, pip)
#   CUDA_ARCH             without a GPU: the architectures to build (default: the Makefile's list)
#   GPU_CHECK_BUDGET      seconds for the whole run (default 470); memcheck gets the rest
#   GPU_CHECK_BUILD_TIMEOUT  the build's timeout without a GPU (default 1800 s)
#   GPU_CHECK_STEPS       the steps to run after the build (default "test nccl pytest bench memcheck";
#                         "profile" adds tools/gpu_profile.py on TN_BENCH_ONLY's workloads, gpt by default)
#   BENCH_REPS            repetitions per benchmark workload (default 7)
#   JOBS                  parallel make jobs (default: the number of cores)
#   GPU_CHECK_DRY=1       probe and print the make command, build and run nothing
#   GPU_CHECK_SITE        extra site-packages directories (colon-separated) to search;
#   GPU_CHECK_SYSTEM_DIRS the system include/lib directories searched (default: Debian's and
#                         the usual ones; the tests set it to keep the search hermetic)
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${GPU_CHECK_OUT:-build/gpu-check}
BUDGET=${GPU_CHECK_BUDGET:-470}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
DRY=${GPU_CHECK_DRY:-0}
STEPS=${GPU_CHECK_STEPS:-test nccl pytest bench memcheck}
mkdir -p "$OUT" || exit 1
exec > >(tee "$OUT/gpu_check.log") 2>&1
START=$SECONDS
RECAP=""
FAILED=0
say() { echo "[$((SECONDS - START))s] $*"; }
left() { echo $((BUDGET - (SECONDS - START))); }
# recap NAME STATUS SECONDS LOG DETAIL
recap() {
    local line
    line=$(printf '%-9s %-22s %4ss  %-22s %s' "$1" "$2" "$3" "$4" "$5")
    RECAP="$RECAP$line
"
    echo "== $line"
}
# run_step NAME TIMEOUT LOG CMD...: CMD's output into $OUT/LOG; sets RC
run_step() {
    local name=$1 t=$2 log=$3 t0=$SECONDS
    shift 3
    say "$name: $* (timeout ${t}s, log $OUT/$log)"
    timeout --kill-after=10 "$t" "$@" >"$OUT/$log" 2>&1
    RC=$?
    STEP_SECS=$((SECONDS - t0))
    case $RC in
    0) STEP_STATUS=ok ;;
    124 | 137) STEP_STATUS="TIMEOUT after ${t}s" ;;
    *) STEP_STATUS="FAILED (exit $RC)" ;;
    esac
}
counts() { grep -E '[0-9]+ passed, [0-9]+ failed|[0-9]+ (passed|failed|skipped).* in [0-9.]+s' "$1" | tail -n 1; }

# ---- 1. probe ----
PY=${TN_BENCH_PYTHON:-$(command -v python3 || true)}
SITES=""
[ -n "${GPU_CHECK_SITE:-}" ] && SITES=$(echo "$GPU_CHECK_SITE" | tr ':' ' ')
if [ -n "$PY" ]; then
    SITES="$SITES $("$PY" -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()] + sys.path[1:]))' 2>/dev/null)"
fi
PIPDIRS=""   # the nvidia/* directories of pip's CUDA wheels
for s in $SITES; do
    for d in "$s"/nvidia/*/; do [ -d "$d" ] && PIPDIRS="$PIPDIRS ${d%/}"; done
done
SYSDIRS=${GPU_CHECK_SYSTEM_DIRS-/usr/include /usr/include/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib}

NVCC_BIN=""
for c in ${NVCC:-} ${CUDA_HOME:+$CUDA_HOME/bin/nvcc} $(command -v nvcc 2>/dev/null) /usr/local/cuda/bin/nvcc \
         $(ls -d /usr/local/cuda-*/bin/nvcc 2>/dev/null | sort -rV) /opt/cuda/bin/nvcc $(for d in $PIPDIRS; do echo "$d/bin/nvcc"; done); do
    if [ -x "$c" ]; then NVCC_BIN=$c; break; fi
done
if [ -z "$NVCC_BIN" ]; then
    say "no nvcc: not in CUDA_HOME (${CUDA_HOME:-unset}), on the PATH, in /usr/local/cuda*, /opt/cuda or pip's nvidia/cuda_nvcc"
    recap probe "FAILED (no nvcc)" 0 gpu_check.log "set CUDA_HOME or NVCC"
    printf '\n== recap\n%s' "$RECAP"
    exit 1
fi
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$NVCC_BIN")")")}
INCDIRS="$CUDA_HOME/include $CUDA_HOME/targets/x86_64-linux/include $SYSDIRS"
LIBDIRS="$CUDA_HOME/lib64 $CUDA_HOME/lib $CUDA_HOME/targets/x86_64-linux/lib $SYSDIRS"
for d in $PIPDIRS; do INCDIRS="$INCDIRS $d/include"; LIBDIRS="$LIBDIRS $d/lib"; done
# find_header NAME [DIR...]: the first directory holding NAME
find_header() {
    local n=$1 d
    shift
    for d in "$@" $INCDIRS; do [ -f "$d/$n" ] && { echo "$d"; return 0; }; done
    return 1
}
# find_lib NAME [DIR...]: "DIR LINKFLAG" for libNAME: -lNAME where libNAME.so is, else
# -l:libNAME.so.N (pip's wheels ship only the versioned name)
find_lib() {
    local n=$1 d v
    shift
    for d in "$@" $LIBDIRS; do
        [ -e "$d/lib$n.so" ] && { echo "$d -l$n"; return 0; }
        v=$(ls "$d/lib$n.so."[0-9]* 2>/dev/null | awk '{ print length($0), $0 }' | sort -n | head -n 1 | cut -d' ' -f2)
        [ -n "$v" ] && { echo "$d -l:$(basename "$v")"; return 0; }
    done
    return 1
}
hdr_version() {   # hdr_version FILE MACRO...: the macros' values joined by dots (indented #defines too: cusolver_common.h's)
    local f=$1 m out=""
    shift
    for m in "$@"; do out="$out${out:+.}$(sed -n "s/^[[:space:]]*#[[:space:]]*define $m \([0-9]*\).*/\1/p" "$f" | head -n 1)"; done
    echo "$out"
}

# the GPU: nvidia-smi (a fake one on the PATH in tests/test_gpu_check.sh)
GPU="" GPU_WHY="" CC_NUM=""
if ! command -v nvidia-smi >/dev/null 2>&1; then GPU_WHY="no nvidia-smi on the PATH (no NVIDIA driver)"
else
    q=$(nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader 2>&1)
    if [ $? -ne 0 ] || [ -z "$q" ]; then GPU_WHY="nvidia-smi found no GPU: $(echo "$q" | head -n 1)"
    else
        GPU=$(echo "$q" | head -n 1)
        cap=$(echo "$GPU" | cut -d, -f3 | tr -d ' ')
        case $cap in [0-9]*.[0-9]*) CC_NUM=$(echo "$cap" | tr -d .) ;; esac
    fi
fi

# cuDNN: required with a GPU unless CUDNN=0
WANT_CUDNN=${CUDNN:-}
[ -z "$WANT_CUDNN" ] && [ -n "$GPU" ] && WANT_CUDNN=1
DNN_INC="" DNN_LIB="" DNN_LINK="" DNN_VER=""
if [ "$WANT_CUDNN" != 0 ]; then
    if DNN_INC=$(find_header cudnn.h); then
        if r=$(find_lib cudnn "$(dirname "$DNN_INC")/lib" "$(dirname "$DNN_INC")/lib64"); then
            DNN_LIB=${r% *}; DNN_LINK=${r#* }
        fi
        v=$(find_header cudnn_version.h "$DNN_INC") && DNN_VER=$(hdr_version "$v/cudnn_version.h" CUDNN_MAJOR CUDNN_MINOR CUDNN_PATCHLEVEL)
    fi
    if [ -z "$DNN_INC" ] || [ -z "$DNN_LIB" ]; then
        if [ "$WANT_CUDNN" = 1 ]; then
            how="CUDNN=1 by default with a GPU"
            [ -n "${CUDNN:-}" ] && how="CUDNN=1 given"
            say "ERROR: cuDNN was asked for ($how) and not found:"
            say "  cudnn.h ${DNN_INC:+found in $DNN_INC}${DNN_INC:-not in: $INCDIRS}"
            say "  libcudnn ${DNN_LIB:+found in $DNN_LIB}${DNN_LIB:-not in: $LIBDIRS}"
            say "  install cuDNN 9 (or pip's nvidia-cudnn-cu12 under TN_BENCH_PYTHON), or run with CUDNN=0"
            recap probe "FAILED (no cuDNN)" $((SECONDS - START)) gpu_check.log "cuDNN asked for, not found"
            printf '\n== recap\n%s' "$RECAP"
            exit 2
        fi
        DNN_INC="" DNN_LIB="" DNN_LINK=""
    fi
fi
USE_CUDNN=$([ -n "$DNN_LIB" ] && echo 1 || echo 0)
BLAS_LIB="" BLAS_LINK="-lcublas" BLAS_VER=""
if r=$(find_lib cublas); then BLAS_LIB=${r% *}; BLAS_LINK=${r#* }; fi
LT_LINK="-lcublasLt"   # cuBLASLt (Linear's fused bias/activation epilogues): beside cuBLAS
if r=$(find_lib cublasLt ${BLAS_LIB:+"$BLAS_LIB"}); then LT_LINK=${r#* }; fi
if b=$(find_header cublas_api.h); then BLAS_VER=$(hdr_version "$b/cublas_api.h" CUBLAS_VER_MAJOR CUBLAS_VER_MINOR CUBLAS_VER_PATCH); fi
SOLVER_LIB="" SOLVER_LINK="-lcusolver" SOLVER_VER=""   # cuSOLVER: torch.linalg's factorizations
if r=$(find_lib cusolver); then SOLVER_LIB=${r% *}; SOLVER_LINK=${r#* }; fi
if b=$(find_header cusolver_common.h); then SOLVER_VER=$(hdr_version "$b/cusolver_common.h" CUSOLVER_VER_MAJOR CUSOLVER_VER_MINOR CUSOLVER_VER_PATCH); fi
FFT_LIB="" FFT_LINK="-lcufft" FFT_VER=""   # cuFFT: torch.fft
if r=$(find_lib cufft); then FFT_LIB=${r% *}; FFT_LINK=${r#* }; fi
if b=$(find_header cufft.h); then FFT_VER=$(hdr_version "$b/cufft.h" CUFFT_VER_MAJOR CUFFT_VER_MINOR CUFFT_VER_PATCH); fi
RT_LIB=""
if r=$(find_lib cudart); then RT_LIB=${r% *}; fi
# NCCL: torch.distributed's nccl backend in the unit (tests/test_dist_nccl.c: step nccl); built where found
NCCL_INC="" NCCL_LIB="" NCCL_LINK="" NCCL_VER=""
if NCCL_INC=$(find_header nccl.h); then
    if r=$(find_lib nccl "$(dirname "$NCCL_INC")/lib" "$(dirname "$NCCL_INC")/lib64"); then NCCL_LIB=${r% *}; NCCL_LINK=${r#* }; fi
    NCCL_VER=$(hdr_version "$NCCL_INC/nccl.h" NCCL_MAJOR NCCL_MINOR NCCL_PATCH)
fi
USE_NCCL=$([ -n "$NCCL_LIB" ] && echo 1 || echo 0)
EXTRA_LIBDIRS=""   # beyond the CUDA tree's lib64/ and lib/, which the Makefile links and rpaths itself
for d in $DNN_LIB $BLAS_LIB $SOLVER_LIB $FFT_LIB $RT_LIB $NCCL_LIB; do
    case " $EXTRA_LIBDIRS $CUDA_HOME/lib64 $CUDA_HOME/lib " in *" $d "*) ;; *) EXTRA_LIBDIRS="$EXTRA_LIBDIRS${EXTRA_LIBDIRS:+ }$d" ;; esac
done
# cuDNN 9 loads its engine libraries (and pip's cuDNN its pip cuBLAS) by name at run time:
# the directories found, then every pip nvidia/*/lib, go on the search path too
RUNDIRS=""
for d in $DNN_LIB $BLAS_LIB $SOLVER_LIB $FFT_LIB $RT_LIB $NCCL_LIB $(for p in $PIPDIRS; do echo "$p/lib"; done); do
    [ -d "$d" ] && case ":$RUNDIRS:" in *":$d:"*) ;; *) RUNDIRS="$RUNDIRS${RUNDIRS:+:}$d" ;; esac
done
export LD_LIBRARY_PATH="$RUNDIRS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ARCH=""
[ -n "$CC_NUM" ] && ARCH="-gencode arch=compute_$CC_NUM,code=sm_$CC_NUM"
ZL=1
printf '#include <zlib.h>\n' | ${CC:-cc} -E - >/dev/null 2>&1 || ZL=0

CUDA_VER=$("$NVCC_BIN" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
echo "== versions"
echo "GPU:      ${GPU:-none ($GPU_WHY)}"
if [ -n "$ARCH" ]; then echo "arch:     $ARCH"
elif [ -n "${CUDA_ARCH:-}" ]; then echo "arch:     $CUDA_ARCH (CUDA_ARCH from the environment)"
else echo "arch:     the default list (CUDA_ARCH in the Makefile)"; fi
echo "CUDA:     ${CUDA_VER:-?} (nvcc $NVCC_BIN, CUDA_HOME $CUDA_HOME)"
echo "cuBLAS:   ${BLAS_VER:-?} (${BLAS_LIB:-not found} $BLAS_LINK)"
echo "cuSOLVER: ${SOLVER_VER:-?} (${SOLVER_LIB:-not found} $SOLVER_LINK)"
echo "cuFFT:    ${FFT_VER:-?} (${FFT_LIB:-not found} $FFT_LINK)"
if [ "$USE_CUDNN" = 1 ]; then echo "cuDNN:    ${DNN_VER:-?} (cudnn.h in $DNN_INC; $DNN_LIB $DNN_LINK)"
elif [ "$WANT_CUDNN" = 0 ]; then echo "cuDNN:    not used (CUDNN=0): convolution takes im2col + cuBLAS"
else echo "cuDNN:    not found: convolution takes im2col + cuBLAS (CUDNN=1 makes this an error)"; fi
if [ "$USE_NCCL" = 1 ]; then echo "NCCL:     ${NCCL_VER:-?} (nccl.h in $NCCL_INC; $NCCL_LIB $NCCL_LINK)"
else echo "NCCL:     not found (nccl.h${NCCL_INC:+ in $NCCL_INC}, no libnccl): the unit is built without the nccl backend"; fi
# the interpreter's PyTorch, or the last line of why it has none
echo "python:   ${PY:-none} $([ -n "$PY" ] && { "$PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())' 2>&1 || echo "(no torch)"; } | tail -1)"
echo "jobs:     $JOBS; budget ${BUDGET}s; logs in $OUT"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
recap probe ok $((SECONDS - START)) gpu_check.log "${GPU:-no GPU}"

# ---- 2. build ----
MAKEARGS=(CUDA_HOME="$CUDA_HOME" NVCC="$NVCC_BIN" CUDNN="$USE_CUDNN" CUDNN_INC="$DNN_INC" CUDNN_LINK="$DNN_LINK"
          CUBLAS_LINK="$BLAS_LINK" CUBLASLT_LINK="$LT_LINK" CUSOLVER_LINK="$SOLVER_LINK" CUFFT_LINK="$FFT_LINK" CUDA_LIBDIRS="$EXTRA_LIBDIRS" ZLIB="$ZL")
MAKEARGS+=(NCCL="$USE_NCCL")
[ "$USE_NCCL" = 1 ] && MAKEARGS+=(NCCL_INC="$NCCL_INC" NCCL_LINK="$NCCL_LINK" NCCL_LIBDIR="$NCCL_LIB")
[ -n "$ARCH" ] && MAKEARGS+=(CUDA_ARCH="$ARCH")
[ -n "$PY" ] && MAKEARGS+=(PY="$PY")
TARGETS=(lib/libtensor.so lib/libtensor_cuda.so build/cuda/test_cuda build/cuda/test_dist_nccl build/cuda/bench_cuda build/cuda/fashion_mlp build/cuda/fashion_cnn)
has_step() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
has_step profile && TARGETS+=(build/cuda/libbench_cuda.so)
echo "make -j$JOBS ${MAKEARGS[*]} ${TARGETS[*]}"
if [ "$DRY" = 1 ]; then say "dry run: nothing built"; exit 0; fi
# with a GPU the build gets 300 s of the budget; without one (a CI machine, a laptop) it may
# take longer: every architecture of CUDA_ARCH is compiled
if [ -n "$GPU" ]; then BT=$(( $(left) > 330 ? 300 : $(left) - 30 )); else BT=${GPU_CHECK_BUILD_TIMEOUT:-1800}; fi
run_step build "$BT" build.log make -j"$JOBS" "${MAKEARGS[@]}" "${TARGETS[@]}"
recap build "$STEP_STATUS" "$STEP_SECS" build.log "$(grep -cE 'warning[: #]' "$OUT/build.log") warnings"   # not nvcc's "all-warnings" flag
if [ $RC -ne 0 ]; then
    tail -n 30 "$OUT/build.log"
    printf '\n== recap\n%s' "$RECAP"
    exit 1
fi
ldd build/cuda/test_cuda | grep -E 'cudnn|cublas|cusolver|cudart|not found' | tee "$OUT/libraries.txt"

# ---- 3-5. tests, benchmark, (profile), memcheck ----
if has_step test; then
    run_step test 150 test.log ./build/cuda/test_cuda
    tail -n 12 "$OUT/test.log"
    recap test "$STEP_STATUS" "$STEP_SECS" test.log "$(counts "$OUT/test.log")"
    if [ $RC -ne 0 ]; then
        FAILED=1
        if [ -n "$GPU" ]; then   # asynchronous faults then name the launch that faulted
            run_step blocking 120 test_blocking.log env CUDA_LAUNCH_BLOCKING=1 ./build/cuda/test_cuda
            grep -E '^FAIL' "$OUT/test_blocking.log" | head -n 10
            recap blocking "$STEP_STATUS" "$STEP_SECS" test_blocking.log "$(counts "$OUT/test_blocking.log")"
        fi
    fi
fi
if has_step nccl; then   # torch.distributed's nccl backend, one rank, no MPI: the collectives and DDP (a small CNN)
    if [ "$USE_NCCL" = 1 ]; then
        run_step nccl 120 nccl.log ./build/cuda/test_dist_nccl
        [ $RC -ne 0 ] && FAILED=1
        tail -n 3 "$OUT/nccl.log"
        recap nccl "$STEP_STATUS" "$STEP_SECS" nccl.log "$(head -n 1 "$OUT/nccl.log" | cut -c1-40); $(counts "$OUT/nccl.log")"
    else
        recap nccl skipped 0 - "no NCCL (nccl.h and libnccl): the unit was built without it"
    fi
fi
if has_step pytest; then
    if [ -n "$PY" ] && "$PY" -c 'import pytest' 2>/dev/null; then
        run_step pytest 120 pytest.log env TENSOR_LIB="$PWD/lib/libtensor_cuda.so" "$PY" -m pytest -q -p no:cacheprovider \
            ${TN_TEST_FILTER:+-k "$(echo "$TN_TEST_FILTER" | sed 's/,/ or /g')"} bindings/python/tests/test_cuda*.py
        [ $RC -ne 0 ] && FAILED=1
        recap pytest "$STEP_STATUS" "$STEP_SECS" pytest.log "$(counts "$OUT/pytest.log")"
    else
        recap pytest skipped 0 - "no pytest under ${PY:-python3}"
    fi
fi
if [ -z "$GPU" ]; then
    recap gpu "NO GPU" 0 - "$GPU_WHY: built everything; the GPU tests, benchmark and memcheck need one"
    printf '\n== recap (%ss)\n%s' $((SECONDS - START)) "$RECAP"
    echo "NO GPU on this machine ($GPU_WHY): everything was built; nothing ran on a GPU."
    exit $FAILED
fi
if has_step bench; then
    run_step bench $(( $(left) > 260 ? 180 : $(left) / 2 )) bench.md env TN_BENCH_PYTHON="${PY:-python3}" ./build/cuda/bench_cuda "${BENCH_REPS:-7}"
    [ $RC -ne 0 ] && FAILED=1
    tail -n 25 "$OUT/bench.md"
    recap bench "$STEP_STATUS" "$STEP_SECS" bench.md "$(grep -E 'within 10 %|failed on our side|PyTorch column missing' "$OUT/bench.md" | tr '\n' ' ')"
fi
if has_step profile; then   # not a default step: where the GPU time of TN_BENCH_ONLY's workloads goes
    run_step profile $(( $(left) > 200 ? 150 : $(left) / 2 )) profile.log env TN_BENCH_ONLY="${TN_BENCH_ONLY:-gpt}" "${PY:-python3}" tools/gpu_profile.py 3 40
    tail -n 50 "$OUT/profile.log"
    recap profile "$STEP_STATUS" "$STEP_SECS" profile.log "$(grep -E '^GPU busy' "$OUT/profile.log")"
fi
if has_step memcheck; then
    SAN=""
    for c in "$CUDA_HOME/bin/compute-sanitizer" "$CUDA_HOME/compute-sanitizer/compute-sanitizer" $(command -v compute-sanitizer 2>/dev/null); do
        [ -x "$c" ] && { SAN=$c; break; }
    done
    t=$(($(left) - 10))
    if [ -z "$SAN" ]; then recap memcheck skipped 0 - "no compute-sanitizer in $CUDA_HOME or on the PATH"
    elif [ $t -lt 30 ]; then recap memcheck skipped 0 - "only ${t}s left (GPU_CHECK_BUDGET=$BUDGET; rerun with GPU_CHECK_STEPS=memcheck)"
    else
        run_step memcheck "$t" memcheck.log "$SAN" --tool memcheck --error-exitcode 9 --print-limit 20 ./build/cuda/test_cuda
        tail -n 6 "$OUT/memcheck.log"
        errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$OUT/memcheck.log" | tail -n 1)
        case $RC in
        0) ;;
        124 | 137) STEP_STATUS="incomplete (${t}s)" ;;   # clean so far; not a failure, but said
        *) FAILED=1 ;;
        esac
        recap memcheck "$STEP_STATUS" "$STEP_SECS" memcheck.log "${errs:-?} errors; $(counts "$OUT/memcheck.log")"
    fi
fi
printf '\n== recap (%ss of %ss)\n%s' $((SECONDS - START)) "$BUDGET" "$RECAP"
[ $FAILED = 0 ] && echo "gpu-check: passed" || echo "gpu-check: FAILED (see the logs in $OUT)"
exit $FAILED
