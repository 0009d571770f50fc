#!/usr/bin/env bash
# Fetches what the tests and benches need from pinned PyPI wheels into the build's deps folder
# ($CARGO_TARGET_DIR/deps, or target/deps), once, and prints the directories to use, one a line:
#
#   bash scripts/deps.sh dlpack   # include dir of dlpack.h 1.3, from the apache-tvm-ffi wheel
#   bash scripts/deps.sh cccl     # include dirs of CCCL 3.5 (cuda::to_host_mdspan), of the CUDA
#                                 # runtime headers it includes, and of dlpack.h
#   bash scripts/deps.sh nvrtc    # lib dir of NVRTC 13 (libnvrtc.so.13), for LD_LIBRARY_PATH
#
# Needs python3 with pip; only the files named here are extracted.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$(pwd)/target}"
deps="$target/deps"

# extract WHEEL_GLOB PREFIX DEST [NAME...]: the wheel's members under PREFIX (only PREFIX/NAME for
# each NAME given), written under DEST.
extract() {
  python3 - "$deps/wheels" "$@" <<'PY'
import glob, os, sys, zipfile
wheels, pattern, prefix, dest, *names = sys.argv[1:]
(wheel,) = glob.glob(os.path.join(wheels, pattern))
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        relative = name[len(prefix):]
        if name.startswith(prefix) and not name.endswith("/") and (not names or relative in names):
            out = os.path.join(dest, relative)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "wb") as f:
                f.write(z.read(name))
PY
}

download() {
  echo "fetching $* from PyPI" >&2
  mkdir -p "$deps/wheels"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$deps/wheels" "$@" >&2
}

dlpack() {
  if [ ! -f "$deps/include/dlpack/dlpack.h" ]; then
    download "apache-tvm-ffi==0.1.15.post2"
    extract "apache_tvm_ffi-*.whl" "tvm_ffi/include/dlpack/" "$deps/include/dlpack"
  fi
  echo "$deps/include"
}

cccl() {
  local cuda="$deps/cuda/include"
  if [ ! -f "$cuda/cccl/cuda/__mdspan/dlpack_to_mdspan.h" ] || [ ! -f "$cuda/cuda.h" ] || [ ! -f "$cuda/crt/host_defines.h" ]; then
    download "nvidia-cuda-cccl==13.3.5.0.6" "nvidia-cuda-runtime==13.5.37" "nvidia-cuda-crt==13.5.37"
    for wheel in nvidia_cuda_cccl nvidia_cuda_runtime nvidia_cuda_crt; do
      extract "$wheel-*.whl" "nvidia/cu13/include/" "$cuda"
    done
  fi
  echo "$cuda/cccl"
  echo "$cuda"
  dlpack
}

nvrtc() {
  local lib="$deps/nvrtc/lib"
  if [ ! -f "$lib/libnvrtc.so.13" ] || [ ! -f "$lib/libnvrtc-builtins.so.13.0" ]; then
    download "nvidia-cuda-nvrtc==13.0.88"
    extract "nvidia_cuda_nvrtc-13.0.88-*.whl" "nvidia/cu13/lib/" "$lib" libnvrtc.so.13 libnvrtc-builtins.so.13.0
  fi
  echo "$lib"
}

case "${1:-}" in
  dlpack) dlpack ;;
  cccl) cccl ;;
  nvrtc) nvrtc ;;
  *) echo "usage: $0 dlpack|cccl|nvrtc" >&2; exit 2 ;;
esac
