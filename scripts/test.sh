#!/usr/bin/env bash
# Runs every test of dlspan on a fresh machine: it installs what the tests need by itself.
#
#   bash scripts/test.sh
#
# Tiers, in order: formatting, the layering check (scripts/layers.py) and lints; the published
# crates packaged and built from their packages; Rust unit, integration and doc tests (with the ABI
# comparison against a real dlpack.h, the C round trip compiled with gcc, the README's examples,
# and the CUDA tiers: every kernel compiled to PTX by NVRTC, the kernels' logic run on the host,
# the GPU tests skipped without a device; the NVRTC tier's kernel x dtype matrix printed after);
# compile-fail UI cases; the test binaries again under valgrind memcheck; the pure-Rust tests under
# Miri; the examples;
# the benches in test mode; the Python tier (the dlspan module built with maturin into .venv, its
# pytest suite against NumPy, PyTorch and JAX, the README's Python extension built and tested, the
# wheel loaded on Python 3.12); documentation with warnings denied.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# Each step prints the minutes and seconds since the test command began (DLSPAN_TEST_START,
# set once by scripts/test.sh), so a slow tier shows in the log.
export DLSPAN_TEST_START="${DLSPAN_TEST_START:-$(date +%s)}"
step() {
  local t=$(( $(date +%s) - DLSPAN_TEST_START ))
  printf '\n==> [%d:%02d] %s\n' $(( t / 60 )) $(( t % 60 )) "$*"
}

# Output redirected to a file or a pipe gets no colour codes: trybuild colours its report whenever
# TERM allows it, without asking whether standard error is a terminal.
if [ ! -t 2 ]; then
  export NO_COLOR=1 CARGO_TERM_COLOR=never
fi

# A from-scratch run gains nothing from incremental compilation, which keeps gigabytes of
# artifacts beside the build; the CI machine's disk also takes PyTorch's few GB (CUDA libraries
# included) later on. Set CARGO_INCREMENTAL=1 to keep it for repeated local runs.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# Nor does it gain from debug info in the test builds: with it the debug build of a full run took
# 8.8 GB (one test binary 1.3 GB, two thirds of it the names of monomorphised kernels in
# .debug_str), and a CI machine ran out of disk linking it. The symbol table stays, so valgrind's
# reports and panics still name functions. Set CARGO_PROFILE_DEV_DEBUG=true to keep it.
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-0}"
disk() { df -h "$root" | awk 'NR == 2 { print "disk: " $4 " free of " $2 " (" $6 ")" }'; }
disk

# A real dlpack.h (1.3), from the apache-tvm-ffi wheel on PyPI, for the ABI and C round-trip tests.
DLSPAN_DLPACK_INCLUDE=$(bash scripts/deps.sh dlpack)
export DLSPAN_DLPACK_INCLUDE
export DLSPAN_REQUIRE_DLPACK_H=1
grep -q '#define DLPACK_MINOR_VERSION 3' "$DLSPAN_DLPACK_INCLUDE/dlpack/dlpack.h"

# ml_dtypes from PyPI, the reference of the FP8/FP6/FP4 encoders and of the element cast, in a
# local virtual environment (the Python tier below adds NumPy, PyTorch and JAX to it).
venv="$root/.venv"
if ! "$venv/bin/python" -c "import ml_dtypes, sys; sys.exit(ml_dtypes.__version__ != '0.6.0')" 2> /dev/null; then
  step "installing ml_dtypes into .venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet "ml_dtypes==0.6.0"
fi
export DLSPAN_PYTHON="$venv/bin/python"
export DLSPAN_REQUIRE_ML_DTYPES=1

# NVRTC 13 from the nvidia-cuda-nvrtc wheel on PyPI: the CUDA tests compile every kernel module to
# PTX with it (no GPU needed). cudarc finds the library through LD_LIBRARY_PATH.
nvrtc=$(bash scripts/deps.sh nvrtc)
export LD_LIBRARY_PATH="$nvrtc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DLSPAN_REQUIRE_NVRTC=1

step "cargo fmt --check"
cargo fmt --all -- --check

step "layering: no cycle between files of runtime/src, no edge against DESIGN.md's layer list"
python3 scripts/layers.py
python3 scripts/layers.py --selftest

step "cargo clippy (workspace, all targets, warnings denied)"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings
# Each feature alone too: an item only another feature uses warns in users' builds otherwise.
for features in "" cuda python ndarray jax; do
  cargo clippy -p dlspan --lib --no-default-features --features "$features" --locked -- -D warnings
done

step "cargo package: the published crates build from what they would publish"
# What `dlspan = "0.1"` promises: each crate verified from its own package (dlspan against the
# packaged dlspan-macros), so a feature or file the workspace lends them cannot hide.
# Cargo takes a registry package's build and its unpacked source for good once it has them (a
# version is immutable on a registry), and the packaged dlspan-macros reaches dlspan through a
# local registry of the same path each run: without a fresh target directory and the copies
# unpacked from earlier runs removed, dlspan would be verified against an earlier dlspan-macros.
package_target="${CARGO_TARGET_DIR:-$root/target}/package-verify"
rm -rf "$package_target" "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/dlspan-macros-*
cargo package -p dlspan-macros -p dlspan --locked --allow-dirty --target-dir "$package_target"
rm -rf "$package_target"

step "cargo test (unit, integration, doc, UI)"
# The NVRTC tier writes the kernel x dtype matrix it compiled here (test output is captured).
matrix="${CARGO_TARGET_DIR:-$root/target}/tmp/nvrtc-matrix.txt"
elementwise_list="${CARGO_TARGET_DIR:-$root/target}/tmp/nvrtc-elementwise.txt"
raw_list="${CARGO_TARGET_DIR:-$root/target}/tmp/nvrtc-raw.txt"
rm -f "$matrix" "$elementwise_list" "$raw_list"
cargo test --workspace --all-features --locked

step "kernels compiled to PTX by the NVRTC tier"
cat "$matrix" "$elementwise_list" "$raw_list"

step "memcheck: test binaries under valgrind (invalid accesses and leaks fail)"
bash scripts/valgrind.sh

step "miri: the pure-Rust core interpreted by Miri (nightly): no undefined behaviour"
# The views, imports, exports, owned tensors and element access, every access checked (Stacked
# Borrows, strict provenance, alignment, uninitialised and out-of-bounds reads, leaks; the tests'
# device addresses are pointers without provenance, never read). Property tests take fewer
# cases, tests that rerun themselves as a child process run in place (Miri cannot spawn), and the
# two sums over 2^20 elements are left out (the same code is run on small views). Miri is a
# component of the nightly toolchain: where it cannot be installed, the step says so and skips.
if ! cargo +nightly miri --version > /dev/null 2>&1; then
  rustup component add miri rust-src --toolchain nightly > /dev/null 2>&1 || true
fi
if cargo +nightly miri --version > /dev/null 2>&1; then
  miri_tests=(views dynamic packed lanes records owned export aligned buffer bad_input elementwise)
  PROPTEST_CASES=16 DLSPAN_TEST_IN_PROCESS=1 MIRIFLAGS="-Zmiri-disable-isolation -Zmiri-strict-provenance" \
    cargo +nightly miri test --locked "${miri_tests[@]/#/--test=}" -- \
    --skip sums_are_pairwise_on_every_layout --skip sum_with_takes_the_accumulator_and_the_addition
else
  echo "skipped: Miri could not be installed (rustup component add miri rust-src --toolchain nightly)"
fi

step "examples"
for example in tour dlpack_to_mdspan mdspan_to_dlpack elementwise raw_kernels; do
  cargo run --quiet --locked --example "$example" > /dev/null
done

step "benches in test mode (each benchmark runs once)"
cargo test --locked -p dlspan-benches --benches
cargo test --locked -p dlspan-benches --features cuda --bench launch

# What the steps above built and the steps below do not use goes before the Python tier takes a
# few GB more (PyTorch, JAX, release builds): Miri's build, trybuild's projects, the test,
# bench and example binaries (cargo rebuilds any of them on demand).
step "freeing the disk the steps above used"
disk
target="${CARGO_TARGET_DIR:-$root/target}"
rm -rf "$target/miri" "$target/tests/trybuild" "$target/debug/examples"
find "$target/debug/deps" -maxdepth 1 -type f -perm -u+x ! -name '*.so' -delete
disk

step "python: the dlspan module and its tests against NumPy, PyTorch and JAX"
bash scripts/python.sh

step "cargo doc (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --all-features --no-deps --locked

disk
step "all tests passed"
