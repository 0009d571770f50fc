#!/usr/bin/env bash
# Runs every benchmark (dlspan beside dlpark, ndarray and hand-written floors), counts the
# instructions of the import and export paths with callgrind (deterministic, where timings on a
# shared machine are not; the import beside CCCL's C++ original, whose headers it fetches into the
# build's deps folder), and regenerates BENCHMARKS.md. Takes several minutes; run it on a quiet
# machine.
#
#   bash scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
out="$target/criterion"
rm -f "$out/allocations.tsv"
cargo bench --locked -p dlspan-benches "$@"
# The launch benchmark needs dlspan's CUDA module (no driver, no GPU).
cargo bench --locked -p dlspan-benches --features cuda --bench launch "$@"

mkdir -p "$out"
cargo build --locked --release -p dlspan-benches --bin import_instructions --bin export_instructions

# The peer of the import harness: CCCL's cuda::to_host_mdspan, built with g++ -O3 (the optimisation
# level of Rust's release profile) from the headers of CCCL's PyPI wheels.
cccl_dirs=$(bash scripts/deps.sh cccl)
mapfile -t cccl_include <<< "$cccl_dirs"
g++ -std=c++17 -O3 "${cccl_include[@]/#/-I}" benches/cccl/import_instructions.cpp -o "$target/release/cccl_import_instructions"

for harness in import_instructions export_instructions cccl_import_instructions; do
  valgrind --tool=callgrind --callgrind-out-file="$out/$harness.callgrind" \
    "$target/release/$harness" > "$out/$harness.out" 2> /dev/null
  callgrind_annotate --inclusive=yes --threshold=100 "$out/$harness.callgrind" > "$out/$harness.txt" 2> /dev/null
done
# Same tensors in, same views out (their parts, summed), or the comparison is void.
if ! diff "$out/import_instructions.out" "$out/cccl_import_instructions.out"; then
  echo "the dlspan and CCCL import harnesses disagree (above): fix the harnesses before comparing" >&2
  exit 1
fi

# Wall-clock of the managed exports in a plain interleaved loop (beside criterion's batched medians).
"$target/release/export_instructions" --time > "$out/export_time.txt"

# Logical-order iteration: instructions per element of each variant and layout (callgrind), and
# wall-clock medians of interleaved rounds.
cargo build --locked --release -p dlspan-benches --bin iteration_time
for layout in row column transposed relaxed; do
  valgrind --tool=callgrind --callgrind-out-file="$out/iteration_$layout.callgrind" \
    "$target/release/iteration_time" 1 "$layout" > /dev/null 2>&1
  callgrind_annotate --inclusive=yes "$out/iteration_$layout.callgrind" > "$out/iteration_$layout.txt" 2> /dev/null
done
"$target/release/iteration_time" 21 > "$out/iteration_time.txt"

# Element-wise kernels on host views: instructions per element of each variant and layout
# (callgrind), and wall-clock medians of interleaved rounds.
cargo build --locked --release -p dlspan-benches --bin kernel_time
for layout in row column transposed reversed; do
  valgrind --tool=callgrind --callgrind-out-file="$out/kernel_$layout.callgrind" \
    "$target/release/kernel_time" 1 "$layout" > /dev/null 2>&1
  callgrind_annotate --inclusive=yes "$out/kernel_$layout.callgrind" > "$out/kernel_$layout.txt" 2> /dev/null
done
"$target/release/kernel_time" 21 > "$out/kernel_time.txt"

# Written aside first: the report keeps the sections of BENCHMARKS.md that other scripts write.
python3 scripts/bench_report.py > "$out/BENCHMARKS.md"
mv "$out/BENCHMARKS.md" BENCHMARKS.md
echo "wrote BENCHMARKS.md"
