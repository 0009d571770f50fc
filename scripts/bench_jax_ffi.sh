#!/usr/bin/env bash
# The JAX kernels' benchmark: builds examples/jax-ffi (a PyO3 module of XLA FFI handlers) in release
# mode into .venv, then runs benches/python/jax_ffi.py pinned to one core with taskset, against the
# JAX of .venv (XLA's CPU client on one thread). Prints one table per run (ns per call, each row
# beside its peer from the same run); run it on a quiet machine.
#
#   bash scripts/bench_jax_ffi.sh [--markdown] [--rounds N]    (core: DLSPAN_BENCH_CORE, default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="$root/.venv"
[ -x "$venv/bin/python" ] || { echo "no .venv: run bash scripts/python.sh first (it creates it)" >&2; exit 1; }
VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --quiet --release --locked --manifest-path examples/jax-ffi/Cargo.toml >&2
core="${DLSPAN_BENCH_CORE:-1}"
echo "# taskset -c $core, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
taskset -c "$core" "$venv/bin/python" benches/python/jax_ffi.py "$@"
