#!/usr/bin/env bash
# Runs every test of dlspan on a fresh machine: it installs what the tests need by itself.
#
#   bash scripts/test.sh
#
# Tiers, in order: formatting and lints; Rust unit, integration and doc tests (with the ABI
# comparison against a real dlpack.h, the C round trip compiled with gcc, and the README's
# examples); compile-fail UI cases; the test binaries again under valgrind memcheck; the examples;
# the benches in test mode; documentation with warnings denied.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

step() { printf '\n==> %s\n' "$*"; }

# Where cargo builds (CARGO_TARGET_DIR, relative to the workspace when relative): downloads go there
# too, so a shared or read-only checkout stays untouched.
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac

# Output redirected to a file or a pipe gets no colour codes: trybuild colours its report whenever
# TERM allows it, without asking whether standard error is a terminal.
if [ ! -t 2 ]; then
  export NO_COLOR=1 CARGO_TERM_COLOR=never
fi

# A real dlpack.h (1.3), from the apache-tvm-ffi wheel on PyPI, for the ABI and C round-trip tests.
deps="$target_dir/deps"
if [ ! -f "$deps/include/dlpack/dlpack.h" ]; then
  step "fetching dlpack.h from the apache-tvm-ffi wheel"
  mkdir -p "$deps/wheels"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$deps/wheels" "apache-tvm-ffi==0.1.15.post2"
  python3 - "$deps" <<'PY'
import glob, os, sys, zipfile
deps = sys.argv[1]
wheel = glob.glob(os.path.join(deps, "wheels", "apache_tvm_ffi-*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    data = z.read("tvm_ffi/include/dlpack/dlpack.h")
os.makedirs(os.path.join(deps, "include", "dlpack"), exist_ok=True)
with open(os.path.join(deps, "include", "dlpack", "dlpack.h"), "wb") as f:
    f.write(data)
PY
fi
export DLSPAN_DLPACK_INCLUDE="$deps/include"
export DLSPAN_REQUIRE_DLPACK_H=1
grep -q '#define DLPACK_MINOR_VERSION 3' "$DLSPAN_DLPACK_INCLUDE/dlpack/dlpack.h"

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (workspace, all targets, warnings denied)"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

step "cargo test (unit, integration, doc, UI)"
cargo test --workspace --all-features --locked

step "memcheck: test binaries under valgrind (invalid accesses and leaks fail)"
bash scripts/valgrind.sh

step "examples"
for example in tour dlpack_to_mdspan mdspan_to_dlpack; do
  cargo run --quiet --locked --example "$example" > /dev/null
done

step "benches in test mode (each benchmark runs once)"
cargo test --locked -p dlspan-benches --benches

step "cargo doc (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --all-features --no-deps --locked

step "all tests passed"
