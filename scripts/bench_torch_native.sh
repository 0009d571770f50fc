#!/usr/bin/env bash
# The native PyTorch operators' benchmark: builds examples/torch-native (the operator library, a
# cdylib registered through LibTorch's stable C ABI) in release mode, then runs
# benches/python/torch_native.py pinned to one core with taskset, against the PyTorch of .venv.
# Prints one table per run (ns per call, each row beside its peer from the same run); run it on a
# quiet machine.
#
#   bash scripts/bench_torch_native.sh [--markdown] [--rounds N]    (core: DLSPAN_BENCH_CORE, default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$root/.venv"
[ -x "$venv/bin/python" ] || { echo "no .venv: run bash scripts/python.sh first (it creates it)" >&2; exit 1; }
cargo build --quiet --release --locked -p dlspan-torch-native >&2
core="${DLSPAN_BENCH_CORE:-1}"
echo "# taskset -c $core, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
DLSPAN_TORCH_NATIVE="$target/release/libdlspan_torch_native.so" \
  taskset -c "$core" "$venv/bin/python" benches/python/torch_native.py "$@"
