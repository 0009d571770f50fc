#!/usr/bin/env bash
# Builds, on the development machine, what scripts/gpu.sh runs on a GPU machine that has no Rust
# toolchain: the GPU test binary, the bandwidth benchmark and the element-wise example (release,
# feature `cuda`), the dlspan wheel (abi3, release) with the Python x CUDA tests
# (python/tests/test_cuda_args.py, test_cuda_package.py and the conftest.py they import), the
# README's PyTorch operator (examples/torch-op) with its tests, the JAX kernels (examples/jax-ffi,
# with CUDA handlers) with theirs, and the Python benchmark's peers,
# copied with scripts/gpu.sh into
# target/gpu-bundle/, which must stay within the 64 MiB a device call carries.
# The binaries need only the driver and NVRTC at run time (cudarc loads both dynamically).
#
#   bash scripts/gpu-build.sh && (carry target/gpu-bundle) && bash target/gpu-bundle/gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
bundle="$target/gpu-bundle"
rm -rf "$bundle"
mkdir -p "$bundle"
cargo test --release --locked --features cuda --test cuda_gpu --no-run
test_bin=$(cargo test --release --locked --features cuda --test cuda_gpu --no-run --message-format=json 2> /dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "cuda_gpu":
        print(m["executable"])')
[ -n "$test_bin" ] || { echo "no cuda_gpu test binary found" >&2; exit 1; }
cargo build --release --locked --features cuda --example cuda_bandwidth --example cuda_launch_cost --example elementwise --example raw_kernels
cp "$test_bin" "$bundle/cuda_gpu"
cp "$target/release/examples/cuda_bandwidth" "$bundle/cuda_bandwidth"
cp "$target/release/examples/cuda_launch_cost" "$bundle/cuda_launch_cost"
cp "$target/release/examples/elementwise" "$bundle/elementwise"
cp "$target/release/examples/raw_kernels" "$bundle/raw_kernels"
cp scripts/gpu.sh "$bundle/gpu.sh"
# The wheel is built by maturin from the local virtual environment scripts/python.sh makes (or
# $MATURIN); it loads on the GPU machine's Python 3.12 (abi3).
maturin="${MATURIN:-.venv/bin/maturin}"
[ -x "$maturin" ] || maturin=$(command -v maturin) || { echo "no maturin (run scripts/python.sh first)" >&2; exit 1; }
"$maturin" build --quiet --release --locked --manifest-path python/Cargo.toml --out "$bundle/python"
cp python/tests/conftest.py python/tests/test_cuda_args.py python/tests/test_cuda_package.py "$bundle/python/"
# The README's PyTorch operator (examples/torch-op, abi3) and its tests, whose CUDA half runs there.
"$maturin" build --quiet --release --locked --manifest-path examples/torch-op/Cargo.toml --out "$bundle/python"
cp examples/test_torch_op.py "$bundle/python/"
# The native operators (examples/torch-native, a cdylib with CUDA kernels), their tests and benchmark.
cargo build --quiet --release --locked -p dlspan-torch-native --features cuda
cp "$target/release/libdlspan_torch_native.so" examples/test_torch_native.py benches/python/torch_native.py "$bundle/python/"
strip "$bundle/python/libdlspan_torch_native.so"
# The JAX kernels (examples/jax-ffi, abi3, with their CUDA handlers), their tests and benchmark.
"$maturin" build --quiet --release --locked --manifest-path examples/jax-ffi/Cargo.toml --features cuda --out "$bundle/python"
cp examples/test_jax_ffi.py benches/python/jax_ffi.py "$bundle/python/"
# The Python benchmark's peers and script, for its CUDA rows.
"$maturin" build --quiet --release --locked --manifest-path benches/python/Cargo.toml --out "$bundle/python"
cp benches/python/exchange.py benches/python/table.py "$bundle/python/"
strip "$bundle/cuda_gpu" "$bundle/cuda_bandwidth" "$bundle/cuda_launch_cost" "$bundle/elementwise" "$bundle/raw_kernels"
bytes=$(du -sb "$bundle" | cut -f1)
limit=$((64 << 20))
echo "bundle: $bundle, $((bytes >> 10)) KiB (limit $((limit >> 20)) MiB)"
[ "$bytes" -le "$limit" ] || { echo "the GPU bundle exceeds $((limit >> 20)) MiB" >&2; exit 1; }
