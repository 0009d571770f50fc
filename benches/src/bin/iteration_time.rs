//! Logical-order iteration timed in interleaved rounds (every variant once per round, so the noise
//! of a shared machine hits them alike), for the ratios the criterion medians of `access` blur:
//!
//!     cargo run --release -p dlspan-benches --bin iteration_time [-- ROUNDS]
//!
//! axpy (`y += a·x`) over 1024² f32 in four layouts of the same memory, in logical (row-major
//! index) order: dlspan's `y.iter_mut().zip(x.iter())`, the same traversal over shared views
//! (reading both and folding the results' bits, no writes), the loop written by hand in that order over the views' strides (the
//! floor of the order), ndarray's `iter_mut().zip(iter())`; and dlspan's memory-order `zip_with`
//! for scale. Prints the median per variant and the ratios against the hand-written loop and the
//! shared traversal. Each variant is its own function, so that callgrind counts its instructions
//! (`valgrind --tool=callgrind target/release/iteration_time 1 column`, then `callgrind_annotate
//! --inclusive=yes`; the second argument picks a layout): deterministic where the timings of a
//! shared machine are not.

use dlspan::*;
use ndarray::{ArrayView2, ArrayViewMut2};
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1024;
const A: f32 = 0.5;

/// The two views of one layout: `x` over `x_data`, `y` over `y_data`.
type Make<L> = fn(&mut [f32]) -> HostMdspanMut<'_, f32, 2, L>;

fn row(data: &mut [f32]) -> HostMdspanMut<'_, f32, 2, LayoutRight> {
    HostMdspanMut::from_slice(data, [N, N]).unwrap()
}
fn column(data: &mut [f32]) -> HostMdspanMut<'_, f32, 2, LayoutLeft> {
    HostMdspanMut::from_slice(data, [N, N]).unwrap()
}
fn transposed(data: &mut [f32]) -> HostMdspanMut<'_, f32, 2, LayoutStride> {
    HostMdspanMut::from_slice_strided(data, [N, N], [1, N as isize]).unwrap()
}
fn reversed(data: &mut [f32]) -> HostMdspanMut<'_, f32, 2, LayoutStrideRelaxed> {
    HostMdspanMut::from_slice_relaxed(data, [N, N], [-(N as isize), 1], (N - 1) * N).unwrap()
}

const VARIANTS: [&str; 5] =
    ["hand-written", "dlspan iter_mut().zip", "dlspan shared zip", "ndarray iter_mut().zip", "dlspan zip_with"];

/// A variant: `y += a·x` over the two views (the shared one folds instead of writing).
type Variant<L> = fn(HostMdspanMut<'_, f32, 2, L>, HostMdspan<'_, f32, 2, L>);

#[inline(never)]
fn hand_written<L: Layout>(mut y: HostMdspanMut<'_, f32, 2, L>, x: HostMdspan<'_, f32, 2, L>) {
    dlspan_benches::axpy_by_hand(&mut y, &x, A);
}

#[inline(never)]
fn dlspan_iter_zip<L: Layout>(mut y: HostMdspanMut<'_, f32, 2, L>, x: HostMdspan<'_, f32, 2, L>) {
    y.iter_mut().zip(black_box(&x).iter()).for_each(|(y, &x)| *y += A * x);
}

#[inline(never)]
fn dlspan_shared_zip<L: Layout>(y: HostMdspanMut<'_, f32, 2, L>, x: HostMdspan<'_, f32, 2, L>) {
    // XOR of the bits: a one-cycle dependency, where a float sum would wait on each addition.
    let y = y.into_view();
    black_box(y.iter().zip(black_box(&x).iter()).fold(0u32, |acc, (&y, &x)| acc ^ (y + A * x).to_bits()));
}

#[inline(never)]
fn ndarray_iter_zip<L: Layout>(y: HostMdspanMut<'_, f32, 2, L>, x: HostMdspan<'_, f32, 2, L>) {
    let x_nd: ArrayView2<'_, f32> = x.to_ndarray();
    let mut y_nd: ArrayViewMut2<'_, f32> = y.into_ndarray();
    y_nd.iter_mut().zip(black_box(&x_nd).iter()).for_each(|(y, &x)| *y += A * x);
}

#[inline(never)]
fn dlspan_zip_with<L: Layout>(mut y: HostMdspanMut<'_, f32, 2, L>, x: HostMdspan<'_, f32, 2, L>) {
    y.zip_with(black_box(&x), |y, &x| *y += A * x).unwrap();
}

/// Runs one variant once over fresh views of the buffers; returns the seconds it took.
fn run<L: Layout>(variant: Variant<L>, make: Make<L>, x_data: &mut [f32], y_data: &mut [f32]) -> f64 {
    let x = make(x_data).into_view();
    let y = make(y_data);
    let start = Instant::now();
    variant(y, x);
    start.elapsed().as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn layout<L: Layout>(name: &str, make: Make<L>, rounds: usize) {
    let mut x: Vec<f32> = (0..N * N).map(|i| (i % 97) as f32).collect();
    let mut y = vec![0.0f32; N * N];
    let variants: [Variant<L>; 5] =
        [hand_written, dlspan_iter_zip, dlspan_shared_zip, ndarray_iter_zip, dlspan_zip_with];
    let mut times = vec![Vec::new(); VARIANTS.len()];
    for _ in 0..rounds {
        for (variant, samples) in variants.iter().zip(&mut times) {
            samples.push(run(*variant, make, &mut x, &mut y));
        }
    }
    let medians: Vec<f64> = times.into_iter().map(median).collect();
    println!("{name}");
    for (variant, &t) in VARIANTS.iter().zip(&medians) {
        println!(
            "  {variant:<24} {:>9.1} µs   {:>5.2}× hand-written   {:>5.2}× shared zip",
            t * 1e6,
            t / medians[0],
            t / medians[2]
        );
    }
}

fn main() {
    let rounds = std::env::args().nth(1).and_then(|r| r.parse().ok()).unwrap_or(15);
    // An optional second argument picks one layout (for per-layout instruction counts).
    let only = std::env::args().nth(2).unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || name.starts_with(&only);
    println!("median of {rounds} interleaved rounds, {N}×{N} f32, axpy in logical order");
    if wanted("row-major") {
        layout("row-major", row, rounds);
    }
    if wanted("column-major") {
        layout("column-major", column, rounds);
    }
    if wanted("transposed") {
        layout("transposed (strided)", transposed, rounds);
    }
    if wanted("relaxed") {
        layout("relaxed, reversed rows", reversed, rounds);
    }
}
