#!/usr/bin/env bash
# Runs every benchmark (dlspan beside dlpark, ndarray and hand-written floors), counts the
# instructions of the import and export paths with callgrind (deterministic, where timings on a
# shared machine are not), and regenerates BENCHMARKS.md. Takes several minutes; run it on a quiet
# machine.
#
#   bash scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f target/criterion/allocations.tsv
cargo bench --locked -p dlspan-benches "$@"

mkdir -p target/criterion
cargo build --locked --release -p dlspan-benches --bin import_instructions --bin export_instructions
for harness in import_instructions export_instructions; do
  valgrind --tool=callgrind --callgrind-out-file="target/criterion/$harness.callgrind" \
    "target/release/$harness" > /dev/null 2>&1
  callgrind_annotate --inclusive=yes "target/criterion/$harness.callgrind" > "target/criterion/$harness.txt" 2> /dev/null
done

# Wall-clock of the managed exports in a plain interleaved loop (beside criterion's batched medians).
target/release/export_instructions --time > target/criterion/export_time.txt

# Logical-order iteration: instructions per element of each variant and layout (callgrind), and
# wall-clock medians of interleaved rounds.
cargo build --locked --release -p dlspan-benches --bin iteration_time
for layout in row column transposed relaxed; do
  valgrind --tool=callgrind --callgrind-out-file="target/criterion/iteration_$layout.callgrind" \
    target/release/iteration_time 1 "$layout" > /dev/null 2>&1
  callgrind_annotate --inclusive=yes "target/criterion/iteration_$layout.callgrind" \
    > "target/criterion/iteration_$layout.txt" 2> /dev/null
done
target/release/iteration_time 21 > target/criterion/iteration_time.txt

python3 scripts/bench_report.py > BENCHMARKS.md
echo "wrote BENCHMARKS.md"
