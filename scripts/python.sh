#!/usr/bin/env bash
# The Python tier of the test command: builds the `dlspan` module (one abi3 wheel, release) with
# maturin into the local virtual environment .venv (created with the packages of
# python/requirements-test.txt when missing or out of date), with a second extension on the crate
# (python/tests/extension, for the tests of rule Y18), runs its pytest suite against NumPy,
# PyTorch and JAX, builds the README's Python extension (examples/python-extension: as the README
# shows it, dlspan from crates.io patched to this checkout; then with `maturin develop` into .venv)
# and runs its tests, builds the README's PyTorch operator (examples/torch-op, `maturin develop`)
# and runs its tests (opcheck, gradcheck, torch.compile), the native operators (examples/torch-native),
# the JAX kernels (examples/jax-ffi, `maturin develop`: jit, vmap, grad), and checks that the same wheel loads on
# Python 3.12 and 3.13 where installed.
#
#   bash scripts/python.sh            (scripts/test.sh calls it; needs python3 >= 3.11 with pip)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$root/.venv"
requirements="$root/python/requirements-test.txt"

# Each step prints the minutes and seconds since the test command began (DLSPAN_TEST_START,
# set once by scripts/test.sh), so a slow tier shows in the log.
export DLSPAN_TEST_START="${DLSPAN_TEST_START:-$(date +%s)}"
step() {
  local t=$(( $(date +%s) - DLSPAN_TEST_START ))
  printf '\n==> [%d:%02d] %s\n' $(( t / 60 )) $(( t % 60 )) "$*"
}

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
  { echo "the Python tier needs python3 >= 3.11 (the abi3 wheel's floor)" >&2; exit 1; }

# The environment is rebuilt only when the requirements change (PyTorch alone is a few GB).
stamp="$venv/.dlspan-requirements"
if ! cmp -s "$requirements" "$stamp" 2> /dev/null; then
  step "installing python/requirements-test.txt into .venv (minutes the first time)"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  # No copy of the downloads in pip's cache: PyTorch's wheels are a few GB, and the installed
  # environment is what later runs reuse (the stamp below).
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir -r "$requirements"
  cp "$requirements" "$stamp"
fi

# The C consumer of the exchange API compiles against the real dlpack.h.
DLSPAN_DLPACK_INCLUDE="${DLSPAN_DLPACK_INCLUDE:-$(bash scripts/deps.sh dlpack)}"
export DLSPAN_DLPACK_INCLUDE
export DLSPAN_REQUIRE_DLPACK_H=1

step "building the dlspan wheel (abi3, release)"
wheels="$target/wheels"
rm -f "$wheels"/dlspan-*.whl
"$venv/bin/maturin" build --quiet --release --locked --manifest-path python/Cargo.toml --out "$wheels"
wheel=$(ls "$wheels"/dlspan-*-abi3-*.whl)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"

# A second extension on the crate, built separately as any extension author's is: the tests of one
# Tensor class and one borrow registry per process (rule Y17) import it.
step "building the test extension (python/tests/extension, abi3, release)"
rm -f "$wheels"/dlspan_test_extension-*.whl
"$venv/bin/maturin" build --quiet --release --locked --manifest-path python/tests/extension/Cargo.toml --out "$wheels"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
  "$wheels"/dlspan_test_extension-*-abi3-*.whl

step "pytest: python/tests against NumPy, PyTorch and JAX"
"$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider
"$venv/bin/python" python/examples/autograd_square.py > /dev/null

# The README's copy differs from examples/python-extension in one line (tests/readme_extension.rs
# checks it): dlspan from crates.io, not by path. Built outside the workspace with crates.io's
# dlspan patched to this checkout, and the workspace's lock file, it must compile as shown.
step "the README's Python extension as shown: dlspan from crates.io (patched to this checkout)"
outside="$target/tmp/readme-extension"
rm -rf "$outside"
mkdir -p "$outside/src"
cp examples/python-extension/pyproject.toml "$outside/"
cp examples/python-extension/src/lib.rs "$outside/src/"
cp Cargo.lock "$outside/"
sed 's|path = "../../runtime", ||' examples/python-extension/Cargo.toml > "$outside/Cargo.toml"
printf '\n[patch.crates-io]\ndlspan = { path = "%s/runtime" }\n\n[workspace]\n' "$root" >> "$outside/Cargo.toml"
cargo check --quiet --offline --manifest-path "$outside/Cargo.toml" --target-dir "$target"

step "the README's Python extension: examples/python-extension with maturin develop, its tests"
VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --quiet --locked --manifest-path examples/python-extension/Cargo.toml
"$venv/bin/python" -m pytest examples/test_python_extension.py -q -p no:cacheprovider

# A custom operator registered with torch.library: opcheck, gradcheck and torch.compile (inductor,
# which compiles C++ with gcc: about 20 s of the step on 2 cores, a few with its cache warm).
step "the README's PyTorch operator: examples/torch-op with maturin develop, its tests"
VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --quiet --locked --manifest-path examples/torch-op/Cargo.toml
"$venv/bin/python" -m pytest examples/test_torch_op.py -q -p no:cacheprovider

# Operators registered natively with the dispatcher through LibTorch's stable C ABI: a plain cdylib
# (no PyO3, no torch at build time) loaded with torch.ops.load_library.
step "native PyTorch operators: examples/torch-native (cdylib, stable C ABI), its tests"
cargo build --quiet --locked -p dlspan-torch-native --features cuda
DLSPAN_TORCH_NATIVE="$target/debug/libdlspan_torch_native.so" RUST_BACKTRACE=0 \
  "$venv/bin/python" -m pytest examples/test_torch_native.py -q -p no:cacheprovider
# Their benchmark in test mode (each row once, on the debug build: the harness works; numbers come
# from scripts/bench_torch_native.sh).
DLSPAN_TORCH_NATIVE="$target/debug/libdlspan_torch_native.so" \
  "$venv/bin/python" benches/python/torch_native.py --rounds 1 --seconds 0.001 > /dev/null

# Element-wise kernels as XLA FFI handlers, registered from a PyO3 module: called inside jax.jit,
# under vmap, grad and jvp, against real JAX on the CPU.
step "JAX kernels: examples/jax-ffi with maturin develop, its tests"
VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --quiet --locked --manifest-path examples/jax-ffi/Cargo.toml
"$venv/bin/python" -m pytest examples/test_jax_ffi.py -q -p no:cacheprovider
# Their benchmark in test mode (each row once, on the debug build; numbers come from
# scripts/bench_jax_ffi.sh).
"$venv/bin/python" benches/python/jax_ffi.py --rounds 1 --seconds 0.001 > /dev/null

# The same wheel on the oldest JAX dlspan supports (0.5.0, whose `jax.ffi` has `ffi_call` with
# `vmap_method`, and whose XLA asks the handler's metadata with no API table), in a venv of its own.
step "JAX kernels: the same wheel on jax 0.5.0"
jax_oldest="$target/deps/venv-jax-0.5.0"
if ! "$jax_oldest/bin/python" -c "import jax, sys; sys.exit(jax.__version__ != '0.5.0')" 2> /dev/null; then
  python3 -m venv "$jax_oldest"
  "$jax_oldest/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir "jax==0.5.0" "jaxlib==0.5.0" "pytest==9.2.0"
fi
jax_wheels="$target/deps/jax-wheels"
rm -rf "$jax_wheels"
"$venv/bin/maturin" build --quiet --locked --profile dev --manifest-path examples/jax-ffi/Cargo.toml --out "$jax_wheels"
"$jax_oldest/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$jax_wheels"/*.whl
"$jax_oldest/bin/python" -m pytest examples/test_jax_ffi.py -q -p no:cacheprovider

# A python3.X that runs: pyenv installs shims for versions it has but has not selected, which fail.
find_python() {
  local candidate
  for candidate in "python$1" "$(pyenv root 2> /dev/null)/versions/$1".*/bin/"python$1"; do
    if "$candidate" -c '' 2> /dev/null; then
      command -v "$candidate"
      return
    fi
  done
  return 1
}

# The abi3 wheel built above for 3.11 loads unchanged on later versions: 3.12 is the GPU machine's.
for version in 3.12 3.13; do
  step "the same wheel on Python $version"
  if ! interpreter=$(find_python "$version"); then
    echo "skipped: no working python$version to load the abi3 wheel with"
    continue
  fi
  venv_other="$target/deps/venv$version"
  [ -x "$venv_other/bin/python" ] || "$interpreter" -m venv "$venv_other"
  "$venv_other/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
  "$venv_other/bin/python" - <<'PY'
import sys
import dlspan
import dlspan.diagnostics

t = dlspan.arange(6, "float32")
view = memoryview(t).cast("B").cast("f", (2, 3))
assert view.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
dlspan.scale_(t, 2.0)
assert dlspan.sum(t) == 30.0
capsule = t.__dlpack__(max_version=(1, 3))
back = dlspan.from_dlpack(capsule)
assert back.shape == (6,) and dlspan.diagnostics.live_borrows() == 0
print(f"the abi3 wheel loads and runs on Python {sys.version.split()[0]}")
PY
done
