#!/usr/bin/env bash
# Builds, on the development machine, what scripts/gpu.sh runs on a GPU machine that has no Rust
# toolchain: the GPU test binary and the bandwidth benchmark (release, feature `cuda`), copied with
# scripts/gpu.sh into target/gpu-bundle/ (well under the 64 MiB a device call carries).
#
#   bash scripts/gpu-build.sh && (carry target/gpu-bundle) && bash target/gpu-bundle/gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
bundle="$target/gpu-bundle"
rm -rf "$bundle"
mkdir -p "$bundle"
test_bin=$(cargo test --release --locked --features cuda --test cuda_gpu --no-run --message-format=json 2> /dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "cuda_gpu":
        print(m["executable"])')
cargo build --release --locked --features cuda --example cuda_bandwidth
cp "$test_bin" "$bundle/cuda_gpu"
cp "$target/release/examples/cuda_bandwidth" "$bundle/cuda_bandwidth"
cp scripts/gpu.sh "$bundle/gpu.sh"
strip "$bundle/cuda_gpu" "$bundle/cuda_bandwidth" 2> /dev/null || true
du -sh "$bundle"
