#!/usr/bin/env python3
"""Writes BENCHMARKS.md from criterion's results (target/criterion/<group>/<bench>/new/estimates.json)
and the allocation counts the benches record (target/criterion/allocations.tsv).

Run through `bash scripts/bench.sh`, which runs the benches first. Every number in the report is a
median from the same run; ratios compare peers measured side by side on the same machine.
"""

import datetime
import json
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRITERION = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "criterion")


def median(group, bench):
    """Median time in nanoseconds, or None when the bench did not run."""
    path = os.path.join(CRITERION, group, bench, "new", "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"]
    except (OSError, KeyError, ValueError):
        return None


def allocations():
    counts = {}
    try:
        with open(os.path.join(CRITERION, "allocations.tsv")) as f:
            for line in f:
                key, value = line.rstrip("\n").split("\t")
                counts[key] = float(value)
    except OSError:
        pass
    return counts


ALLOCS = allocations()


def fmt_ns(ns):
    if ns is None:
        return "–"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.2f} ns"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def fmt_ratio(r):
    return "–" if r is None else f"{r:.2f}×"


def fmt_allocs(key):
    value = ALLOCS.get(key)
    if value is None:
        return "–"
    return f"{value:g}"


def machine():
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; {rustc}; commit {commit or 'unknown'}"


TARGETS = []

# "No slower" allows this much: the run-to-run spread of medians on this shared machine.
NOISE = 1.03


def callgrind_counts(harness, iterations):
    """Instructions per iteration of each `harness::function`, from callgrind_annotate --inclusive."""
    counts = {}
    try:
        with open(os.path.join(CRITERION, f"{harness}.txt")) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and f"{harness}::" in line:
                    # C++ names carry their parameter list: `rank1_right(DLTensor const*)`.
                    name = re.match(r"\w+", line.split(f"{harness}::", 1)[1]).group(0)
                    counts[name] = int(parts[0].replace(",", "")) / iterations
    except OSError:
        pass
    return counts


def loop_times(path):
    """Median ns per variant over the rounds of an interleaved timing loop (`round N name... X ns`)."""
    times = {}
    try:
        with open(os.path.join(CRITERION, path)) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 5 and parts[0] == "round" and "ns" in parts:
                    at = parts.index("ns")
                    times.setdefault(" ".join(parts[2:at - 1]), []).append(float(parts[at - 1]))
    except OSError:
        pass
    return {k: sorted(v)[len(v) // 2] for k, v in times.items()}


def target(description, met, detail):
    TARGETS.append((description, met, detail))


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


LAYOUTS_IMPORT = [("right", "layout_right"), ("left", "layout_left"), ("stride", "layout_stride"),
                  ("relaxed", "layout_stride_relaxed")]


def import_instructions_section():
    """The import's instruction counts beside CCCL's `cuda::to_host_mdspan`, with the targets."""
    ours = callgrind_counts("import_instructions", 100_000)
    peer = callgrind_counts("cccl_import_instructions", 100_000)
    lines = ["### Instructions per import, beside CCCL", ""]
    lines.append(
        "dlspan's `to_host_mdspan` (`benches/src/bin/import_instructions.rs`, release profile) and CCCL 3.5's "
        "`cuda::to_host_mdspan` (`benches/cccl/import_instructions.cpp`, g++ -O3, headers from the "
        "`nvidia-cuda-cccl` wheel), counted by callgrind: instructions per conversion, the loop included. "
        "Both harnesses convert the same tensors (right on the row-major one, left on the column-major one, "
        "stride and relaxed on the pitched one) 100 000 times in one function per cell, through the same "
        "`black_box` of the tensor pointer (a store, an empty asm statement that may touch all memory, a "
        "load), and add up every part of each view (pointer, extents, stored strides, offset); `bench.sh` "
        "fails unless both print the same tensors and the same sums. gcc keeps CCCL's `__to_mdspan` out of "
        "line (the view comes back through memory); rustc inlines dlspan's fast path and calls its ordered "
        "path out of line (never, on these tensors). The floors read the same parts without checking "
        "anything (their difference between the languages is code generation: LLVM vectorises the sum, gcc "
        "does not).")
    lines.append("")
    if not ours or not peer:
        lines.append("(no callgrind counts: run `bash scripts/bench.sh`)")
        lines.append("")
        return lines

    def count(table_, key):
        value = table_.get(key)
        return "–" if value is None else f"{value:.0f}"

    rows = []
    for rank in (1, 2, 3, 4):
        row = [rank, f"{count(ours, f'rank{rank}_floor')} / {count(peer, f'rank{rank}_floor')}",
               f"{count(ours, f'rank{rank}_floor_strided')} / {count(peer, f'rank{rank}_floor_strided')}"]
        for layout, label in LAYOUTS_IMPORT:
            key = f"rank{rank}_{layout}"
            a, b = ours.get(key), peer.get(key)
            met = a is not None and b is not None and round(a) <= round(b)
            row.append(f"{count(ours, key)} / {count(peer, key)}: {fmt_ratio(ratio(a, b))}, "
                       f"{'met' if met else '**missed**'}")
            target(f"checked import at or below CCCL's instructions: rank {rank}, {label}", met,
                   f"{count(ours, key)} vs {count(peer, key)} ({fmt_ratio(ratio(a, b))})")
        rows.append(row)
    lines.append(table(["rank", "floor", "floor strided"] + [label for _, label in LAYOUTS_IMPORT], rows))
    lines.append("")
    lines.append("(dlspan / CCCL: instructions per conversion, then their ratio)")
    lines.append("")
    lines.append("What each side checks on these tensors (CCCL reports a failure by throwing "
                 "`std::invalid_argument`, dlspan by returning a `DlpackError`):")
    lines.append("")
    lines.append(table(["check (rule in runtime/docs/rules.md)", "dlspan", "CCCL"], [
        ["device type, rank, data type, non-null data / shape / strides (I1, I3, I4, I6, I10, I11)", "yes", "yes"],
        ["extents ≥ 0 (I10); canonical strides for right and left, computed without overflow (I13)", "yes", "yes"],
        ["strides > 0 for stride (I13); byte offset a whole number of elements for relaxed (I7)", "yes", "yes"],
        ["alignment of the first element, or of the base for relaxed (I8)", "yes", "yes"],
        ["`data + byte_offset` does not wrap the address space (I7)", "yes", "no"],
        ["number of elements fits `isize` (I14)", "yes", "no"],
        ["highest reachable offset, and its bytes, fit `isize`; the byte range does not wrap (I14)", "yes",
         "no (the span is an assertion, compiled in only with `CCCL_ENABLE_ASSERTIONS` or `DEBUG`, "
         "and then aborts)"],
        ["no index reaches below the base, for relaxed (I15)", "yes", "no (an assertion, as above)"],
    ]))
    lines.append("")
    return lines


def import_section():
    lines = ["## DLTensor → typed view (import)", ""]
    lines.append(
        "Each tensor holds 2^18 float32 elements. `floor`: an unchecked read of pointer and shape "
        "(compact); `floor strided`: also strides and byte offset. dlspan runs every import rule "
        "(runtime/docs/rules.md, section I); dlpark's typed import is `TensorRef::from_raw` + `cpu_slice` (row-major compact "
        "tensors only) and its strided import goes through ndarray (`ArrayViewD::try_from_dlpack`). "
        "Layouts: right on a row-major tensor, left on a column-major one, stride and relaxed on a "
        "pitched (padded-rows) one; dlpark's ndarray import on the column-major and pitched ones."
    )
    lines.append("")
    header = ["rank", "floor", "floor strided", "dlspan right", "dlspan left", "dlspan stride", "dlspan relaxed",
              "dlpark slice", "dlpark ndarray (left)", "dlpark ndarray (strided)"]
    rows = []
    ratio_rows = []
    for rank in (1, 2, 3, 4):
        g = f"import_rank{rank}"
        names = ["floor", "floor_strided", "dlspan_right", "dlspan_left", "dlspan_stride", "dlspan_relaxed",
                 "dlpark_slice", "dlpark_ndarray_left", "dlpark_ndarray_strided"]
        values = {n: median(g, n) for n in names}
        rows.append([rank] + [fmt_ns(values[n]) for n in names])
        floor, floor_strided = values["floor"], values["floor_strided"]
        ratio_rows.append([
            rank,
            fmt_ratio(ratio(values["dlspan_right"], floor)),
            fmt_ratio(ratio(values["dlspan_left"], floor)),
            fmt_ratio(ratio(values["dlspan_stride"], floor_strided)),
            fmt_ratio(ratio(values["dlspan_relaxed"], floor_strided)),
            fmt_ratio(ratio(values["dlpark_slice"], values["dlspan_right"])),
            fmt_ratio(ratio(values["dlpark_ndarray_left"], values["dlspan_left"])),
            fmt_ratio(ratio(values["dlpark_ndarray_strided"], values["dlspan_stride"])),
            f"{fmt_allocs(g + '/dlspan_right')} / {fmt_allocs(g + '/dlspan_stride')}",
            f"{fmt_allocs(g + '/dlpark_slice')} / {fmt_allocs(g + '/dlpark_ndarray_strided')}",
        ])
        for peer, ours in (("dlpark_slice", "dlspan_right"), ("dlpark_ndarray_left", "dlspan_left"),
                           ("dlpark_ndarray_strided", "dlspan_stride")):
            r = ratio(values[peer], values[ours])
            target(f"≥ 5× faster than dlpark: rank {rank}, {peer} vs {ours}", r is not None and r >= 5.0, fmt_ratio(r))
        allocs = [ALLOCS.get(f"{g}/dlspan_{layout}") for layout in ("right", "stride", "relaxed")]
        target(f"no allocation in the checked import: rank {rank}", all(a == 0 for a in allocs if a is not None) and None not in allocs,
               " / ".join(fmt_allocs(f"{g}/dlspan_{l}") for l in ("right", "stride", "relaxed")))
    lines.append(table(header, rows))
    lines.append("")
    lines.append("Ratios (same run): dlspan against the unchecked floor (compact layouts against `floor`, strided "
                 "ones against `floor strided`), dlpark against dlspan on the same tensor, and allocations per import.")
    lines.append("")
    lines.append(table(["rank", "right / floor", "left / floor", "stride / floor strided", "relaxed / floor strided",
                        "dlpark slice / dlspan right", "dlpark ndarray / dlspan left", "dlpark ndarray / dlspan stride",
                        "dlspan allocs (right / stride)", "dlpark allocs (slice / ndarray)"], ratio_rows))
    lines.append("")
    lines += import_instructions_section()
    return lines


def export_section():
    lines = ["## View → DLTensor (borrow export)", ""]
    lines.append("`to_dlpack_tensor` + `get()`, then a consumer reads data, ndim, shape and strides. The floor is the "
                 "same export written by hand: the view's extents and strides converted into `int64_t` arrays and a "
                 "`DLTensor` pointing at them (dlpark has no borrowed export: this is what its users write). "
                 "`pre-existing arrays` is a lower reference that skips writing the arrays, which no export from a "
                 "view can.")
    lines.append("")
    rows = []
    for rank in (2, 4):
        g = f"export_rank{rank}"
        floor, ours, bare = median(g, "floor"), median(g, "dlspan_get"), median(g, "preexisting_arrays")
        r = ratio(ours, floor)
        rows.append([rank, fmt_ns(floor), fmt_ns(bare), fmt_ns(ours), fmt_ratio(r), fmt_ratio(ratio(ours, bare)), fmt_allocs(g + "/dlspan_get")])
        target(f"borrow export within 1.5× of the floor: rank {rank}", r is not None and r <= 1.5, fmt_ratio(r))
        target(f"no allocation in the borrow export: rank {rank}", ALLOCS.get(g + "/dlspan_get") == 0, fmt_allocs(g + "/dlspan_get"))
    lines.append(table(["rank", "floor (hand-written export)", "pre-existing arrays", "dlspan", "dlspan / floor",
                        "dlspan / pre-existing", "dlspan allocs"], rows))
    lines.append("")
    return lines


def managed_section():
    g = "managed_round_trip"
    lines = ["## Managed export + import + drop", ""]
    lines.append("A 64×64 `Vec<f32>` owner exported as a managed tensor, handed over as a raw pointer, imported "
                 "with its checks, viewed, and dropped (the deleter drops the owner). The owner is made outside "
                 "the timed routine and freed inside it; glibc is told to keep freed memory (no `munmap` in the "
                 "loop). The floor is a hand-written single-box export read without checks.")
    lines.append("")
    names = [("floor_hand_box", "hand-written box (floor)"), ("dlspan_versioned", "dlspan, versioned"),
             ("dlspan_legacy", "dlspan, legacy"), ("dlpark_versioned", "dlpark, versioned"),
             ("dlspan_arc_owner", "dlspan, `Arc<[f32]>` clone as owner"), ("dlspan_static_owner", "dlspan, static slice as owner")]
    floor = median(g, "floor_hand_box")
    rows = [[label, fmt_ns(median(g, n)), fmt_ratio(ratio(median(g, n), floor)), fmt_allocs(f"{g}/{n}")] for n, label in names]
    lines.append(table(["round trip", "median", "vs floor", "allocations besides the owner"], rows))
    lines.append("")
    e = "managed_export"
    floor_e, ours_e, peer_e = median(e, "floor_hand_box"), median(e, "dlspan"), median(e, "dlpark")
    counts = callgrind_counts("export_instructions", 10_000)
    loops = loop_times("export_time.txt")
    lines.append("Export alone (exported, handed over, the consumer calls the deleter at once; no import): criterion's "
                 "median (owners made in batches by `iter_batched`), the median over interleaved rounds of a plain "
                 "loop over 10 000 pre-made owners (`export_instructions --time`: the three variants alternate, "
                 "so machine noise hits them alike), and callgrind's instruction counts per export + release "
                 "(including the allocator's work and the owner's free): deterministic where the medians of this "
                 "shared machine move by tens of percent between runs.")
    lines.append("")
    rows = []
    for bench, counter, loop, label in (("floor_hand_box", "hand_export", "hand box", "hand-written box (floor)"),
                                        ("dlspan", "dlspan_export", "dlspan", "dlspan"), ("dlpark", "dlpark_export", "dlpark", "dlpark")):
        v = median(e, bench)
        c = counts.get(counter)
        lv = loops.get(loop)
        rows.append([label, fmt_ns(v), fmt_ratio(ratio(v, floor_e)), fmt_ns(lv), fmt_ratio(ratio(lv, loops.get("hand box"))),
                     "–" if c is None else f"{c:.0f}", fmt_ratio(ratio(c, counts.get("hand_export"))), fmt_allocs(f"{e}/{bench}")])
    lines.append(table(["export + release", "criterion median", "vs floor", "interleaved loop median", "vs floor",
                        "instructions", "instructions vs floor", "allocations besides the owner"], rows))
    lines.append("")
    target("managed export: at most one allocation besides the owner", ALLOCS.get(f"{e}/dlspan", 99) <= 1, fmt_allocs(f"{e}/dlspan"))
    c_ours, c_floor = counts.get("dlspan_export"), counts.get("hand_export")
    target("managed export no slower than the hand-written box (instructions, deterministic)",
           c_ours is not None and c_floor is not None and c_ours <= c_floor * NOISE,
           f"{fmt_ratio(ratio(c_ours, c_floor))} instructions; interleaved loop "
           f"{fmt_ratio(ratio(loops.get('dlspan'), loops.get('hand box')))}; criterion median {fmt_ratio(ratio(ours_e, floor_e))}")
    return lines


LAYOUTS = [("row_major", "row-major"), ("column_major", "column-major"), ("transposed", "transposed (strided)"),
           ("reversed", "relaxed, reversed rows")]


ITERATION_LAYOUTS = [("row", "row-major"), ("column", "column-major"), ("transposed", "transposed (strided)"),
                     ("relaxed", "relaxed, reversed rows")]
ITERATION_VARIANTS = [("hand_written", "hand-written"), ("dlspan_iter_zip", "dlspan iter_mut().zip"),
                      ("dlspan_shared_zip", "dlspan shared zip"), ("ndarray_iter_zip", "ndarray iter_mut().zip"),
                      ("dlspan_zip_with", "dlspan zip_with")]


def iteration_counts(layout):
    """Instructions per element of each variant of `iteration_time` for one layout (1024² elements)."""
    counts = {}
    try:
        with open(os.path.join(CRITERION, f"iteration_{layout}.txt")) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and "iteration_time::" in line:
                    name = line.split("iteration_time::", 1)[1].split()[0]
                    counts[name] = int(parts[0].replace(",", "")) / (1024 * 1024)
    except OSError:
        pass
    return counts


def iteration_times():
    """Median µs per (layout label, variant label) from `iteration_time`'s interleaved rounds."""
    times, layout = {}, None
    try:
        with open(os.path.join(CRITERION, "iteration_time.txt")) as f:
            for line in f:
                if line.startswith("  ") and layout:
                    variant, rest = line[2:26].strip(), line[26:].split()
                    times[(layout, variant)] = float(rest[0])
                elif line.strip() and not line.startswith("median"):
                    layout = line.strip()
    except OSError:
        pass
    return times


def iteration_lines():
    lines = ["### Logical-order iteration: axpy through iterators, 1024×1024", ""]
    lines.append("`y.iter_mut().zip(x.iter())` (logical, row-major index order) beside the same traversal over shared views "
                 "(`y.iter().zip(x.iter())`, folding the results' bits: reads only), the loop written by hand in that order "
                 "over the views' strides, ndarray's `iter_mut().zip(iter())`, and the memory-order `zip_with` for scale. "
                 "Instructions per element from callgrind (deterministic); times are medians of interleaved rounds "
                 "(`iteration_time`), so machine noise hits every variant alike. Over column-major and transposed views, "
                 "logical order steps a 4 KiB row pitch per element: any traversal in that order is bound by memory, "
                 "and `zip_with` is the fast form.")
    lines.append("")
    times = iteration_times()
    count_rows, time_rows = [], []
    for key, label in ITERATION_LAYOUTS:
        counts = iteration_counts(key)
        count_rows.append([label] + ["–" if counts.get(name) is None else f"{counts[name]:.1f}" for name, _ in ITERATION_VARIANTS])
        t = {variant: times.get((label, variant)) for _, variant in ITERATION_VARIANTS}
        ours, shared, hand = t["dlspan iter_mut().zip"], t["dlspan shared zip"], t["hand-written"]
        time_rows.append([label] + [fmt_ns(None if t[v] is None else t[v] * 1000) for _, v in ITERATION_VARIANTS] +
                         [fmt_ratio(ratio(ours, shared)), fmt_ratio(ratio(ours, hand))])
        ours, shared, nd = counts.get("dlspan_iter_zip"), counts.get("dlspan_shared_zip"), counts.get("ndarray_iter_zip")
        known = ours is not None and shared is not None and nd is not None
        target(f"logical-order mutable zip ({label}): no more instructions per element than the shared zip",
               known and ours <= shared * 1.01, f"{ours:.1f} vs {shared:.1f}" if known else "–")
        target(f"logical-order mutable zip ({label}): fewer instructions per element than ndarray's",
               known and ours < nd, f"{ours:.1f} vs {nd:.1f}" if known else "–")
    lines.append(table(["layout"] + [label for _, label in ITERATION_VARIANTS], count_rows))
    lines.append("")
    lines.append("(callgrind: instructions per element)")
    lines.append("")
    lines.append(table(["layout"] + [label for _, label in ITERATION_VARIANTS] +
                       ["iter_mut().zip / shared zip", "iter_mut().zip / hand-written"], time_rows))
    lines.append("")
    lines.append("(medians of interleaved rounds)")
    lines.append("")
    return lines


def access_section():
    lines = ["## Element access", ""]
    lines.append("Sum and axpy (y += a·x) over N×N float32 in four layouts of the same memory, beside a raw slice "
                 "loop over that memory (the floor) and ndarray views of the same memory. `iter` visits in logical "
                 "(row-major index) order; `fold_unordered` / `zip_with` / ndarray's `Zip` visit in memory order with "
                 "a plain sequential loop (the raw slice loop's algorithm); dlspan's `sum()` (NumPy's pairwise "
                 "summation: blocks of 128 with eight partial sums) and ndarray's `sum()` (eight partial sums over "
                 "a whole run) are vectorised algorithms of their own.")
    lines.append("")
    for n in (1024,):
        rows = []
        for key, label in LAYOUTS:
            g = f"sum_{key}_{n}"
            floor = median(g, "floor_slice")
            vals = {b: median(g, b) for b in ("dlspan_iter", "dlspan_fold_unordered", "dlspan_sum", "ndarray_iter", "ndarray_sum")}
            rows.append([label, fmt_ns(floor), fmt_ns(vals["dlspan_iter"]), fmt_ns(vals["dlspan_fold_unordered"]),
                         fmt_ns(vals["dlspan_sum"]), fmt_ns(vals["ndarray_iter"]), fmt_ns(vals["ndarray_sum"]),
                         fmt_ratio(ratio(vals["dlspan_fold_unordered"], floor)),
                         fmt_ratio(ratio(vals["dlspan_fold_unordered"], vals["ndarray_iter"])),
                         fmt_ratio(ratio(vals["dlspan_sum"], vals["ndarray_sum"]))])
            if key == "row_major":
                r = ratio(vals["dlspan_fold_unordered"], floor)
                target(f"contiguous sum within 10% of the raw slice loop ({n}², same sequential algorithm)", r is not None and r <= 1.10, fmt_ratio(r))
            r = ratio(vals["dlspan_fold_unordered"], vals["ndarray_iter"])
            target(f"sum ({label}, {n}²): dlspan's sequential traversal no slower than ndarray's", r is not None and r <= NOISE, fmt_ratio(r))
            r = ratio(vals["dlspan_sum"], vals["ndarray_sum"])
            target(f"sum ({label}, {n}²): dlspan `sum()` no slower than ndarray `sum()`", r is not None and r <= NOISE, fmt_ratio(r))
        lines.append(f"### sum, {n}×{n}")
        lines.append("")
        lines.append(table(["layout", "raw slice (floor)", "dlspan iter", "dlspan fold_unordered", "dlspan sum", "ndarray iter",
                            "ndarray sum", "fold_unordered / floor", "fold_unordered / ndarray iter", "sum / ndarray sum"], rows))
        lines.append("")
        rows = []
        for key, label in LAYOUTS:
            g = f"axpy_{key}_{n}"
            floor = median(g, "floor_slice")
            vals = {b: median(g, b) for b in ("dlspan_zip_with", "dlspan_iter_zip", "ndarray_zip")}
            rows.append([label, fmt_ns(floor), fmt_ns(vals["dlspan_zip_with"]), fmt_ns(vals["dlspan_iter_zip"]),
                         fmt_ns(vals["ndarray_zip"]), fmt_ratio(ratio(vals["dlspan_zip_with"], floor)),
                         fmt_ratio(ratio(vals["dlspan_zip_with"], vals["ndarray_zip"]))])
            r_floor = ratio(vals["dlspan_zip_with"], floor)
            r_nd = ratio(vals["dlspan_zip_with"], vals["ndarray_zip"])
            if key == "row_major":
                target(f"contiguous axpy within 10% of the raw slice loop ({n}²)", r_floor is not None and r_floor <= 1.10, fmt_ratio(r_floor))
            target(f"axpy ({label}, {n}²) no slower than ndarray", r_nd is not None and r_nd <= NOISE, fmt_ratio(r_nd))
        lines.append(f"### axpy, {n}×{n}")
        lines.append("")
        lines.append(table(["layout", "raw slice (floor)", "dlspan zip_with", "dlspan iter_mut().zip", "ndarray Zip",
                            "zip_with / floor", "zip_with / ndarray"], rows))
        lines.append("")
    lines += iteration_lines()
    # Growth with size: ns per element.
    lines.append("### Cost per element as the size grows")
    lines.append("")
    lines.append("Nanoseconds per element. The sequential sums (raw slice loop, dlspan `fold_unordered`) and the "
                 "vectorised sums (dlspan `sum()`, ndarray `sum()`) are two algorithms: compare within each pair.")
    lines.append("")
    rows = []
    for key, label in (("row_major", "row-major"), ("transposed", "transposed")):
        for n in (64, 256, 1024):
            row = [label, f"{n}×{n}"]
            for group, bench in ((f"sum_{key}_{n}", "floor_slice"), (f"sum_{key}_{n}", "dlspan_fold_unordered"),
                                 (f"sum_{key}_{n}", "dlspan_sum"), (f"sum_{key}_{n}", "ndarray_sum"),
                                 (f"axpy_{key}_{n}", "floor_slice"), (f"axpy_{key}_{n}", "dlspan_zip_with"),
                                 (f"axpy_{key}_{n}", "ndarray_zip")):
                v = median(group, bench)
                row.append("–" if v is None else f"{v / (n * n):.3f}")
            rows.append(row)
    lines.append(table(["layout", "size", "sequential sum: raw slice", "sequential sum: dlspan", "sum(): dlspan",
                        "sum(): ndarray", "axpy: raw slice", "axpy: dlspan", "axpy: ndarray"], rows))
    lines.append("")
    lines.append("(ns per element)")
    lines.append("")
    rows = []
    for n in (64, 256, 1024):
        g = f"rows_{n}"
        floor = median(g, "floor_chunks")
        ours, outer, nd = median(g, "dlspan_index_axis"), median(g, "dlspan_outer_iter"), median(g, "ndarray_rows")
        rows.append([f"{n}×{n}", fmt_ns(floor), fmt_ns(ours), fmt_ns(outer), fmt_ns(nd), fmt_ratio(ratio(outer, floor)),
                     fmt_ratio(ratio(outer, nd))])
    lines.append("### Iteration over sub-views: a sum per row")
    lines.append("")
    lines.append(table(["size", "raw chunks (floor)", "dlspan index_axis", "dlspan outer_iter", "ndarray rows()",
                        "outer_iter / floor", "outer_iter / ndarray"], rows))
    lines.append("")
    lines += short_rows_lines()
    lines.append("### Zero-copy conversions with ndarray (256×256, reversed rows)")
    lines.append("")
    lines.append(table(["conversion", "median"], [["view → ArrayView2 (`to_ndarray`)", fmt_ns(median("ndarray_convert", "to_ndarray"))],
                                                   ["ArrayView2 → view (`from_ndarray`, checked)", fmt_ns(median("ndarray_convert", "from_ndarray"))]]))
    lines.append("")
    return lines



KERNEL_LAYOUTS = [("row", "row-major"), ("column", "column-major"), ("transposed", "transposed (strided)"),
                  ("reversed", "reversed (relaxed)")]


def kernel_counts(layout):
    """Instructions per element of `kernel_time`'s variants for one layout (5 runs over 1024²)."""
    counts = {}
    try:
        with open(os.path.join(CRITERION, f"kernel_{layout}.txt")) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and "kernel_time::" in line:
                    name = line.split("kernel_time::", 1)[1].split()[0]
                    counts[name] = int(parts[0].replace(",", "")) / (5 * 1024 * 1024)
    except OSError:
        pass
    return counts


def kernel_times():
    """Median µs per (layout label, variant) from `kernel_time`'s interleaved rounds."""
    times = {}
    try:
        with open(os.path.join(CRITERION, "kernel_time.txt")) as f:
            for line in f:
                m = re.match(r"(.+?)\s+kernel\s+([\d.]+) µs\s+zip2_with\s+([\d.]+) µs\s+ndarray\s+([\d.]+) µs", line)
                if m:
                    times[m.group(1).strip()] = tuple(float(m.group(k)) for k in (2, 3, 4))
    except OSError:
        pass
    return times


def kernels_section():
    """Element-wise kernels: the CPU path beside zip2_with and ndarray's Zip, and the host-side
    cost of a cached launch beside cudarc's launch builder."""
    lines = ["## Element-wise kernels", ""]
    lines.append("`out = a·x + b·y` over 1024×1024 float32, the three views in one layout over their own buffers: an "
                 "`elementwise!` kernel run by `dlspan::kernel::Cpu` beside the same body through `MdspanMut::zip2_with` "
                 "(hand-written) and ndarray's `Zip`. Every loop streams 12 MB and is bound by memory, so on this shared "
                 "machine the times move by more than the variants differ: the timings are medians of interleaved rounds "
                 "(`kernel_time`, every variant once per round), and the instruction counts (callgrind, deterministic) "
                 "show what each variant does per element. Criterion's sequential groups (`--bench kernels`) are in "
                 "`target/criterion`.")
    lines.append("")
    times = kernel_times()
    rows = []
    for key, label in KERNEL_LAYOUTS:
        counts = kernel_counts(key)
        t = times.get(label)
        c = [counts.get(n) for n in ("kernel", "zip2_with", "ndarray_zip")]
        rows.append([label] + ["–" if v is None else f"{v:.3f}" for v in c] +
                    (["–"] * 3 if t is None else [fmt_ns(v * 1000) for v in t]) +
                    ["–" if t is None else fmt_ratio(t[0] / t[1]), "–" if t is None else fmt_ratio(t[0] / t[2])])
        if c[0] is not None and c[1] is not None:
            target(f"element-wise kernel ({label}, 1024²) within 5% of zip2_with (instructions)", c[0] <= c[1] * 1.05,
                   fmt_ratio(c[0] / c[1]))
        if t is not None:
            target(f"element-wise kernel ({label}, 1024²) within 5% of zip2_with (time)", t[0] <= t[1] * 1.05, fmt_ratio(t[0] / t[1]))
            target(f"element-wise kernel ({label}, 1024²) no slower than ndarray's Zip (time)", t[0] <= t[2] * NOISE,
                   fmt_ratio(t[0] / t[2]))
    lines.append(table(["layout", "kernel (instr./element)", "zip2_with", "ndarray Zip", "kernel (time)", "zip2_with",
                        "ndarray Zip", "kernel / zip2_with", "kernel / ndarray"], rows))
    lines.append("")
    g = "launch_axpby_1024x1024"
    ours, cudarc = median(g, "dlspan_marshal"), median(g, "cudarc_builder")
    lines.append("### Launching a cached kernel: the host side")
    lines.append("")
    lines.append("What `axpby.run(&stream, ..)` does before the driver's launch call, over 1024×1024 device views "
                 "(a transposed input, a broadcast row): views to operands, broadcast, plan (axes merged, divisors, the "
                 "1.5 KB parameter block), scalars, the module and kernel found in a device's caches, the parameter "
                 "block pushed as the launch's argument; beside pushing a hand-written strided kernel's arguments "
                 "(a, b, three slices with their events, the count, extents and strides) through cudarc's launch "
                 "builder. No driver here: cudarc's builder is a copy of its code over stand-ins, and the views carry "
                 "no event (the waits and records are driver calls, excluded on both sides) "
                 "(`cargo bench -p dlspan-benches --features cuda --bench launch`; criterion medians).")
    lines.append("")
    rows = [["dlspan (operands, plan, scalars, cache lookups, one argument)", fmt_ns(ours)],
            ["cudarc launch builder (14 arguments, 3 slices' events)", fmt_ns(cudarc)],
            ["of which dlspan's plan", fmt_ns(median(g, "step_plan"))],
            ["of which dlspan's module and kernel lookup", fmt_ns(median(g, "step_lookup"))],
            ["dlspan / cudarc", fmt_ratio(ratio(ours, cudarc))]]
    lines.append(table(["", "median"], rows))
    lines.append("")
    if ours is not None:
        r = ratio(ours, cudarc)
        target("cached launch's host side within 1.1× of cudarc's launch builder", r is not None and r <= 1.10, fmt_ratio(r))
    return lines


def short_rows_lines():
    """The sum of each of 125 000 rows of 8 float32 values (a per-row result): per-row costs, not
    additions, decide it."""
    g = "rows_short_125000x8"
    floor, ours = median(g, "floor_chunks"), median(g, "dlspan_outer_iter_sum")
    nd, nd_axis = median(g, "ndarray_rows_sum"), median(g, "ndarray_sum_axis")
    r = ratio(ours, nd)
    target("a sum per short row (125 000×8 f32): dlspan `outer_iter` + `sum()` no slower than ndarray "
           "`rows()` + `sum()`", r is not None and r <= 1.0, fmt_ratio(r))
    lines = ["### Short rows: a sum per row, 125 000×8", ""]
    lines.append("Each row's sum written to an output vector: dlspan `outer_iter()` with `sum()` on each row, "
                 "ndarray `rows()` with `sum()` on each row and `sum_axis(Axis(1))`, beside a sequential sum of "
                 "each 8-value chunk of the slice (the floor, another algorithm). With eight values a row, the "
                 "per-row costs (the sub-view, the sum's set-up) decide the time.")
    lines.append("")
    lines.append(table(["raw chunks (floor)", "dlspan outer_iter + sum()", "ndarray rows() + sum()",
                        "ndarray sum_axis", "dlspan / ndarray rows()"],
                       [[fmt_ns(floor), fmt_ns(ours), fmt_ns(nd), fmt_ns(nd_axis), fmt_ratio(r)]]))
    lines.append("")
    return lines


def kept_sections():
    """The sections other scripts write into BENCHMARKS.md (the Python exchange's, from
    `bash scripts/bench_python.sh`), kept as they are."""
    try:
        with open("BENCHMARKS.md") as f:
            text = f.read()
    except FileNotFoundError:
        return []
    at = text.find("\n## Python exchange")
    return text[at + 1:].rstrip("\n").split("\n") + [""] if at >= 0 else []


def main():
    if not os.path.isdir(CRITERION):
        sys.exit(f"no criterion results in {CRITERION}: run `bash scripts/bench.sh`")
    body = []
    body += import_section()
    body += export_section()
    body += managed_section()
    body += access_section()
    body += kernels_section()
    out = ["# dlspan benchmarks", ""]
    out.append(f"Generated by `bash scripts/bench.sh` on {datetime.date.today().isoformat()}: {machine()}. "
               "Medians of criterion runs; every ratio compares numbers measured in the same run (the machine "
               "is shared and noisy, so absolute times move between runs more than ratios do).")
    out.append("")
    out.append("## Targets")
    out.append("")
    out.append(table(["target", "result", "measured"], [[d, "met" if m else "**missed**", detail] for d, m, detail in TARGETS]))
    out.append("")
    out += body
    out += kept_sections()
    print("\n".join(out))


if __name__ == "__main__":
    main()
