#!/usr/bin/env bash
# Runs the Rust test binaries that exercise raw memory (views, conversions, owned exchange, aligned
# buffers, the C round trip, records, property tests, dynamically typed and packed views, element-wise
# and raw kernels on the CPU) under valgrind memcheck: any invalid read or write, use of uninitialised
# memory, or definite/indirect leak fails the run.
#
#   bash scripts/valgrind.sh            (after `cargo test --no-run`; scripts/test.sh calls it)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind > /dev/null; then
  echo "valgrind is not installed: trying apt-get" >&2
  if command -v apt-get > /dev/null && { [ "$(id -u)" = 0 ] || command -v sudo > /dev/null; }; then
    ${SUDO:-$( [ "$(id -u)" = 0 ] || echo sudo )} apt-get install -y -qq valgrind > /dev/null
  fi
fi
command -v valgrind > /dev/null || { echo "valgrind unavailable: memcheck tier cannot run" >&2; exit 1; }

# The memcheck tier's test binaries, by target name (the lib's unit tests are `dlspan`).
# `copies`, `python_imports` and `python_cuda_args` embed Python (feature `python`): scripts/valgrind.supp names the
# allocations of the interpreter's type objects, which live as long as the process.
targets="dlspan dtype views iteration aligned bad_input export no_alloc owned buffer c_roundtrip records properties elementwise kernels raw_kernels ndarray_interop dynamic address_oracle packed copies python_imports python_cuda_args"

bins=$(cargo test --workspace --all-features --locked --no-run --message-format=json 2> /dev/null | python3 -c '
import json, sys
wanted = set(sys.argv[1].split())
for line in sys.stdin:
    m = json.loads(line)
    # Test harnesses only: an example may bear a test binary name (examples/elementwise.rs).
    if (m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in wanted
            and m["profile"]["test"]):
        print(m["target"]["name"], m["executable"])
' "$targets")

found=$(echo "$bins" | wc -l)
expected=$(echo "$targets" | wc -w)
if [ "$found" -ne "$expected" ]; then
  echo "expected $expected test binaries, found $found:" >&2
  echo "$bins" >&2
  exit 1
fi

# Tests that rerun themselves in a child process to read its standard error run their body in this
# process instead, under memcheck (the log below captures the output).
export DLSPAN_TEST_IN_PROCESS=1

# Valgrind runs a process's threads one at a time, on one core: the binaries run side by side, as
# many at once as the machine has cores (DLSPAN_MEMCHECK_JOBS to change it), each reported as it
# ends.
jobs="${DLSPAN_MEMCHECK_JOBS:-$(nproc 2> /dev/null || echo 2)}"
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

memcheck() {
  local name=$1 bin=$2 log="$results/$1.log" began=$SECONDS
  # Property tests take their case count from PROPTEST_CASES; fewer under valgrind, which is ~50x
  # slower (the DLTensor property test keeps its fixed 2000 cases).
  if PROPTEST_CASES=200 valgrind --quiet --error-exitcode=42 --leak-check=full --suppressions=scripts/valgrind.supp \
      --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
      "$bin" --test-threads=2 > "$log" 2>&1; then
    echo "memcheck clean: $name ($(grep -o '[0-9]* passed' "$log" | head -1), $((SECONDS - began)) s)"
  else
    { echo "memcheck FAILED: $name"; tail -60 "$log"; } >&2
    touch "$results/$name.failed"
  fi
}

running=0
while read -r name bin; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  memcheck "$name" "$bin" &
  running=$((running + 1))
done <<< "$bins"
wait
if compgen -G "$results/*.failed" > /dev/null; then
  exit 1
fi
