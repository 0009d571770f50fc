#!/usr/bin/env bash
# The Python benchmarks: builds the `dlspan` module, the peers module (benches/python: an empty
# #[pyfunction], the bare exchange-call floor, rust-numpy's extraction, an output like an argument)
# and the README's PyTorch operator (examples/torch-op) as release abi3 wheels into .venv, then runs
# benches/python/exchange.py pinned to one core with taskset. Prints one table per run (ns per call,
# each row beside its peer from the same run); run it on a quiet machine. On a GPU machine,
# scripts/gpu.sh runs its CUDA rows (`exchange.py --cuda`).
#
#   bash scripts/bench_python.sh [--markdown] [--rounds N]    (core: DLSPAN_BENCH_CORE, default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$root/.venv"
[ -x "$venv/bin/maturin" ] || { echo "no .venv: run bash scripts/python.sh first (it creates it)" >&2; exit 1; }

wheels="$target/bench-wheels"
rm -rf "$wheels"
for manifest in python/Cargo.toml benches/python/Cargo.toml examples/torch-op/Cargo.toml; do
  "$venv/bin/maturin" build --quiet --release --locked --manifest-path "$manifest" --out "$wheels" >&2
done
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/*.whl

core="${DLSPAN_BENCH_CORE:-1}"
echo "# taskset -c $core, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
taskset -c "$core" "$venv/bin/python" benches/python/exchange.py "$@"
