#!/usr/bin/env bash
# Runs dlspan's prebuilt GPU binaries on a machine with a CUDA GPU and no Rust toolchain (built by
# scripts/gpu-build.sh): the GPU tests (every kernel against the CPU reference on fresh random data,
# outputs poisoned first; every cast pair on boundary inputs; every element-wise test kernel against
# the CPU path), the same tests under compute-sanitizer memcheck and racecheck (their modules loaded
# from the PTX cache the first run filled), the element-wise example, and the bandwidth table
# (copies, transposes, casts). NVRTC comes from the system toolkit or the pip wheel
# `nvidia-cuda-nvrtc`.
#
#   bash gpu.sh            (from the bundle directory, or with DLSPAN_GPU_BUNDLE=dir)
#
# DLSPAN_GPU_STEPS picks steps (default: all of them, in this order): tests examples python
# bandwidth sanitizers. A lease's few minutes can then go first to what a run has not shown yet:
#
#   DLSPAN_GPU_STEPS=python bash gpu.sh; DLSPAN_GPU_STEPS="tests examples" bash gpu.sh
set -uo pipefail
bundle="${DLSPAN_GPU_BUNDLE:-$(cd "$(dirname "$0")" && pwd)}"
step() { printf '\n==> %s\n' "$*"; }
steps=" ${DLSPAN_GPU_STEPS:-tests examples python bandwidth sanitizers} "
for name in $steps; do
  case "$name" in
    tests | examples | python | bandwidth | sanitizers) ;;
    *) echo "DLSPAN_GPU_STEPS: no step '$name' (tests examples python bandwidth sanitizers)" >&2; exit 2 ;;
  esac
done
wants() { [[ "$steps" == *" $1 "* ]]; }

# NVRTC from the pip wheel when the toolkit's is not on the library path.
wheel_lib=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))' 2> /dev/null || true)
if [ -n "$wheel_lib" ] && [ -d "$wheel_lib" ]; then
  export LD_LIBRARY_PATH="$wheel_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export DLSPAN_REQUIRE_NVRTC=1
failed=0

# A fresh PTX cache (rule K10): the first GPU run compiles every module and stores it, the runs under
# the sanitizers then load their modules from it, so the GPU checks PTX that came from disk as well
# as PTX that came from NVRTC.
DLSPAN_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/dlspan-kernels.XXXXXX")
export DLSPAN_CACHE_DIR
trap 'rm -rf "$DLSPAN_CACHE_DIR"' EXIT

step "device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || failed=1

if wants tests; then
  step "GPU tests (correctness against the CPU reference, poisoned outputs)"
  # DLSPAN_GPU_SKIP names a test to leave out (a rerun that has the slow cast test's result already).
  timeout "${DLSPAN_GPU_TEST_TIMEOUT:-600}" "$bundle/cuda_gpu" --test-threads=1 --nocapture \
    ${DLSPAN_GPU_SKIP:+--skip "$DLSPAN_GPU_SKIP"} || failed=1
  entries=$(find "$DLSPAN_CACHE_DIR/kernels" -name '*.ptx' | wc -l)
  echo "PTX cache: $entries modules stored in $DLSPAN_CACHE_DIR/kernels"
  [ "$entries" -gt 0 ] || { echo "the GPU run stored no module in the PTX cache" >&2; failed=1; }
fi

if wants examples; then
  step "the element-wise example on the GPU (the same results as on the CPU)"
  "$bundle/elementwise" || failed=1

  step "the raw kernels example on the GPU (the same results as on the CPU; needs a host C++ compiler)"
  "$bundle/raw_kernels" || failed=1
fi

wants python && step "Python x CUDA: arguments and outputs on the caller's stream and the package's functions (PyTorch, CuPy, JAX), the PyTorch operator"
# The wheels unpacked onto PYTHONPATH (nothing is installed); a test whose framework is missing
# reports it as skipped, and the CUDA tests must not skip for want of a device here. Of the
# operator's tests, the CUDA ones (the others read the README and the crate, not in the bundle).
wheel=$(ls "$bundle"/python/dlspan-*-abi3-*.whl 2> /dev/null | head -n 1)
if ! wants python; then
  :
elif [ -n "$wheel" ]; then
  site=$(mktemp -d "${TMPDIR:-/tmp}/dlspan-wheel.XXXXXX")
  for w in "$bundle"/python/*.whl; do python3 -m zipfile -e "$w" "$site"; done
  tests=$(cd "$bundle/python" && ls test_cuda_*.py)
  report=$(cd "$bundle/python" && PYTHONPATH="$site" timeout 300 python3 -m pytest -q -p no:cacheprovider -rs \
    $tests "test_torch_op.py::test_cuda_forward_and_backward_run_on_the_callers_stream" \
    "test_torch_op.py::test_cuda_forward_returns_before_the_callers_pending_work_ends" \
    "test_torch_op.py::test_cuda_opcheck_gradcheck_and_compile" 2>&1)
  status=$?
  echo "$report"
  [ "$status" = 0 ] || failed=1
  if echo "$report" | grep -q "skipped: no CUDA device"; then
    echo "Python x CUDA tests skipped for want of a CUDA device on a GPU machine" >&2
    failed=1
  fi
  step "native PyTorch operators on CUDA (examples/torch-native: current stream, opcheck, gradcheck, compile)"
  report=$(cd "$bundle/python" && DLSPAN_TORCH_NATIVE="$bundle/python/libdlspan_torch_native.so" PYTHONPATH="$site" \
    timeout 300 python3 -m pytest -q -p no:cacheprovider -rs test_torch_native.py -k cuda 2>&1)
  status=$?
  echo "$report"
  [ "$status" = 0 ] || failed=1
  if echo "$report" | grep -q "skipped"; then
    echo "native operator CUDA tests skipped on a GPU machine" >&2
    failed=1
  fi
  (cd "$bundle/python" && DLSPAN_TORCH_NATIVE="$bundle/python/libdlspan_torch_native.so" PYTHONPATH="$site" \
    timeout 120 python3 torch_native.py --cuda --rounds 5 --seconds 0.05 --markdown) || failed=1
  step "JAX kernels on CUDA (examples/jax-ffi: the CUDA handlers on XLA's stream, jit, vmap, grad)"
  report=$(cd "$bundle/python" && JAX_PLATFORMS=cuda DLSPAN_REQUIRE_JAX_BACKEND=gpu PYTHONPATH="$site" \
    timeout 300 python3 -m pytest -q -p no:cacheprovider -rs test_jax_ffi.py 2>&1)
  status=$?
  echo "$report"
  [ "$status" = 0 ] || failed=1
  (cd "$bundle/python" && JAX_PLATFORMS=cuda PYTHONPATH="$site" timeout 120 python3 jax_ffi.py --rounds 5 --seconds 0.05 \
    --markdown) || failed=1
  step "Python exchange on CUDA tensors (benchmark: ns per call beside its peer, same run)"
  (cd "$bundle/python" && PYTHONPATH="$site" timeout 120 python3 exchange.py --cuda --rounds 5 --seconds 0.05 --markdown) ||
    failed=1
  rm -rf "$site"
else
  echo "no dlspan wheel in the bundle (scripts/gpu-build.sh builds it)" >&2
  failed=1
fi

if wants bandwidth; then
  step "bandwidth (256 MiB tensors)"
  "$bundle/cuda_bandwidth" || failed=1
  step "a small launch's host cost, step by step"
  "$bundle/cuda_launch_cost" || failed=1
fi

# The sanitizers last, so that a slow run (each bounded by DLSPAN_SANITIZER_TIMEOUT seconds, 240 by
# default) cannot keep the other steps from running. Under them every test but the cast of every
# type pair on the boundary inputs (529 instrumented modules over millions of elements, whose
# memory accesses are those of the flat cast kernels the other tests run; its conversions are
# checked by the plain run above).
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null || true)
if ! wants sanitizers; then
  :
elif [ -n "$sanitizer" ]; then
  for tool in memcheck racecheck; do
    step "compute-sanitizer $tool"
    timeout "${DLSPAN_SANITIZER_TIMEOUT:-240}" "$sanitizer" --tool "$tool" --error-exitcode 42 "$bundle/cuda_gpu" --test-threads=1 \
      --skip every_cast_pair_matches_the_cpu_cast_on_the_gpu || failed=1
  done
else
  echo "compute-sanitizer not found" >&2
  failed=1
fi

if [ "$failed" = 0 ]; then step "GPU run passed"; else step "GPU run FAILED"; fi
exit $failed
