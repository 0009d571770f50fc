#!/usr/bin/env bash
# The native PyTorch operators against the oldest supported torch (dlspan::torch::OLDEST, 2.10),
# with the very libraries the test command built against the newest: examples/torch-native's
# cdylib (its pytest file, the C program, AOTInductor) and the test extension's abi3 wheel (a PyO3
# module registering operators from its init). Not part of scripts/test.sh: a second torch is a
# few GB and minutes to install, more than CI's budget; run it after the test command.
#
#   bash scripts/test.sh && bash scripts/torch_oldest.sh      (TORCH_OLDEST=2.11.0 for another)
#
# With TORCH_TOO_OLD=2.9.1 (a torch older than the oldest supported), it also checks that the
# wheel's import is an ImportError naming 2.10 and that the cdylib registers nothing, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target="${CARGO_TARGET_DIR:-$root/target}"
version="${TORCH_OLDEST:-2.10.0}"
venv="$root/.venv-torch-$version"

step() { printf '\n==> %s\n' "$*"; }

if ! "$venv/bin/python" -c "import torch, sys; sys.exit(not torch.__version__.startswith('$version'))" 2> /dev/null; then
  step "installing torch $version into $venv (minutes)"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
    "torch==$version" numpy==2.4.6 pytest==9.2.0 expecttest
fi

library="$target/debug/libdlspan_torch_native.so"
[ -f "$library" ] || cargo build --quiet --locked -p dlspan-torch-native
wheel=$(ls "$target"/wheels/dlspan_test_extension-*-abi3-*.whl 2> /dev/null | head -1 || true)
if [ -z "$wheel" ]; then
  [ -x "$root/.venv/bin/maturin" ] || { echo "no test extension wheel and no .venv/bin/maturin: run bash scripts/test.sh first" >&2; exit 1; }
  "$root/.venv/bin/maturin" build --quiet --release --locked --manifest-path python/tests/extension/Cargo.toml --out "$target/wheels"
  wheel=$(ls "$target"/wheels/dlspan_test_extension-*-abi3-*.whl | head -1)
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"

step "torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)'): examples/torch-native, the same cdylib"
DLSPAN_TORCH_NATIVE="$library" RUST_BACKTRACE=0 "$venv/bin/python" -m pytest examples/test_torch_native.py -q -p no:cacheprovider

step "torch $version: the test extension's native operator, the same abi3 wheel"
# Outside python/tests: its conftest imports the dlspan package, which this environment lacks.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp python/tests/test_native_operator.py "$scratch/"
(cd "$scratch" && "$venv/bin/python" -m pytest test_native_operator.py -q -p no:cacheprovider)
if [ -n "${TORCH_TOO_OLD:-}" ]; then
  old="$root/.venv-torch-$TORCH_TOO_OLD"
  if ! "$old/bin/python" -c "import torch, sys; sys.exit(not torch.__version__.startswith('$TORCH_TOO_OLD'))" 2> /dev/null; then
    step "installing torch $TORCH_TOO_OLD into $old (minutes)"
    python3 -m venv "$old"
    "$old/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir "torch==$TORCH_TOO_OLD" numpy==2.4.6
  fi
  "$old/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
  step "torch $TORCH_TOO_OLD, older than the oldest supported: an ImportError naming 2.10; no operators"
  "$old/bin/python" - "$library" << 'PY'
import subprocess, sys
import torch
try:
    import dlspan_test_extension  # noqa: F401
except ImportError as error:
    assert "torch 2.10 or newer" in str(error), error
else:
    sys.exit("the test extension imported on a torch older than 2.10")
run = subprocess.run([sys.executable, "-c", f"import torch; torch.ops.load_library({sys.argv[1]!r}); "
                      "assert not hasattr(torch.ops.dlspan_native, 'gelu_bias')"], capture_output=True, text=True)
assert run.returncode == 0 and "need torch 2.10 or newer" in run.stderr, run.stdout + run.stderr
print("refused as expected:", run.stderr.strip())
PY
fi
step "the native operators passed on torch $version"
