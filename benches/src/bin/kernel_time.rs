//! An element-wise kernel on host views timed in interleaved rounds (every variant once per round,
//! so the noise of a shared machine hits them alike), for the ratios criterion's sequential groups
//! (`--bench kernels`) blur:
//!
//!     cargo run --release -p dlspan-benches --bin kernel_time [-- ROUNDS [LAYOUT]]
//!
//! `out = a·x + b·y` over 1024² f32, the three views in one layout over their own buffers: the
//! `elementwise!` kernel run by `Cpu`, the same body through `MdspanMut::zip2_with`, and ndarray's
//! `Zip`. Prints each variant's median and the kernel's ratios to the two others. The order of the
//! variants rotates from round to round. Each variant is
//! its own function, so that callgrind counts its instructions (`valgrind --tool=callgrind
//! target/release/kernel_time 1 row`, then `callgrind_annotate --inclusive=yes`): deterministic
//! where the timings of a shared machine are not.

use dlspan::kernel::{Cpu, Scalar};
use dlspan::*;
use ndarray::Zip;
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1024;
const A: f32 = 0.5;
const B: f32 = 2.0;

dlspan::elementwise! {
    /// `out = a·x + b·y`.
    fn axpby<T: Scalar>(a: T, b: T, x: &T, y: &T, out: &mut T) {
        *out = a * *x + b * *y;
    }
}

/// A mutable view of one layout over `data`.
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

/// The element-wise kernel.
#[inline(never)]
fn kernel<L: Layout>(
    out: &mut HostMdspanMut<'_, f32, 2, L>,
    x: &HostMdspan<'_, f32, 2, L>,
    y: &HostMdspan<'_, f32, 2, L>,
) {
    axpby.run(Cpu, A, B, black_box(x), black_box(y), out).unwrap();
}

/// The body through `zip2_with`, written by hand.
#[inline(never)]
fn zip2_with<L: Layout>(
    out: &mut HostMdspanMut<'_, f32, 2, L>,
    x: &HostMdspan<'_, f32, 2, L>,
    y: &HostMdspan<'_, f32, 2, L>,
) {
    out.zip2_with(black_box(x), black_box(y), |o, &x, &y| *o = A * x + B * y).unwrap();
}

/// ndarray's `Zip`.
#[inline(never)]
fn ndarray_zip<L: Layout>(
    out: &mut HostMdspanMut<'_, f32, 2, L>,
    x: &HostMdspan<'_, f32, 2, L>,
    y: &HostMdspan<'_, f32, 2, L>,
) {
    let (xn, yn) = (x.to_ndarray(), y.to_ndarray());
    let on = out.reborrow().into_ndarray();
    Zip::from(on).and(black_box(&xn)).and(black_box(&yn)).for_each(|o, &x, &y| *o = A * x + B * y);
}

type Variant<L> = fn(&mut HostMdspanMut<'_, f32, 2, L>, &HostMdspan<'_, f32, 2, L>, &HostMdspan<'_, f32, 2, L>);

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn layout<L: Layout>(name: &str, make: Make<L>, rounds: usize) {
    let mut x: Vec<f32> = (0..N * N).map(|i| (i % 97) as f32).collect();
    let mut y: Vec<f32> = (0..N * N).map(|i| (i % 89) as f32).collect();
    let mut out = vec![0.0f32; N * N];
    let (xv, yv) = (make(&mut x).into_view(), make(&mut y).into_view());
    let mut o = make(&mut out);
    let variants: [(&str, Variant<L>); 3] =
        [("kernel (Cpu)", kernel::<L>), ("zip2_with", zip2_with::<L>), ("ndarray Zip", ndarray_zip::<L>)];
    let mut times = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        // Each round starts with another variant: none always follows the same one (ndarray's
        // reversed walk, the slowest, leaves the caches to whatever runs next).
        for k in (0..variants.len()).map(|k| (k + round) % variants.len()) {
            let run = variants[k].1;
            let start = Instant::now();
            for _ in 0..5 {
                run(&mut o, &xv, &yv);
            }
            times[k].push(start.elapsed().as_secs_f64() / 5.0 * 1e6);
        }
    }
    let medians: Vec<f64> = times.into_iter().map(median).collect();
    println!(
        "{name:<22} kernel {:>8.1} µs  zip2_with {:>8.1} µs  ndarray {:>8.1} µs  kernel/zip2_with {:.3}×  kernel/ndarray {:.3}×",
        medians[0],
        medians[1],
        medians[2],
        medians[0] / medians[1],
        medians[0] / medians[2]
    );
}

fn main() {
    let rounds = std::env::args().nth(1).and_then(|r| r.parse().ok()).unwrap_or(21);
    let only = std::env::args().nth(2).unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || name.starts_with(&only);
    println!("median of {rounds} interleaved rounds, {N}×{N} f32, out = a·x + b·y");
    if wanted("row") {
        layout("row-major", row, rounds);
    }
    if wanted("column") {
        layout("column-major", column, rounds);
    }
    if wanted("transposed") {
        layout("transposed (strided)", transposed, rounds);
    }
    if wanted("reversed") {
        layout("reversed (relaxed)", reversed, rounds);
    }
}
