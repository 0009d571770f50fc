//! Element-wise kernels on host views (`dlspan::kernel::Cpu`): `out = a·x + b·y` over 1024² f32
//! in four layouts (row-major, column-major, transposed (strided), reversed (relaxed)), each of the
//! three views in the layout over its own buffer, beside the same body through a hand-written
//! `MdspanMut::zip2_with` (target ≤ 1.05×) and ndarray's `Zip` (target ≤ 1.0×). `bench.sh` turns
//! the medians into ratios in BENCHMARKS.md.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{Criterion, criterion_group, criterion_main};
use dlspan::kernel::{Cpu, Scalar};
use dlspan::*;
use ndarray::Zip;
use std::hint::black_box;
use std::time::Duration;

const N: usize = 1024;
const A: f32 = 0.5;
const B: f32 = 2.0;

dlspan::elementwise! {
    /// `out = a·x + b·y`.
    fn axpby<T: Scalar>(a: T, b: T, x: &T, y: &T, out: &mut T) {
        *out = a * *x + b * *y;
    }
}

/// Views of one layout over three buffers: two inputs and an output.
fn group<L: Layout>(
    c: &mut Criterion,
    name: &str,
    make: impl Fn(&[f32]) -> HostMdspan<'_, f32, 2, L>,
    make_mut: impl for<'b> Fn(&'b mut [f32]) -> HostMdspanMut<'b, f32, 2, L>,
) {
    let x: Vec<f32> = (0..N * N).map(|i| (i % 97) as f32).collect();
    let y: Vec<f32> = (0..N * N).map(|i| (i % 89) as f32).collect();
    let mut out = vec![0.0f32; N * N];
    let (xv, yv) = (make(&x), make(&y));
    let mut group = c.benchmark_group(format!("kernel_axpby_{name}_{N}"));
    group.bench_function("dlspan_kernel", |bench| {
        let mut o = make_mut(&mut out);
        bench.iter(|| axpby.run(Cpu, A, B, black_box(&xv), black_box(&yv), &mut o).unwrap())
    });
    group.bench_function("dlspan_zip2_with", |bench| {
        let mut o = make_mut(&mut out);
        bench.iter(|| o.zip2_with(black_box(&xv), black_box(&yv), |o, &x, &y| *o = A * x + B * y).unwrap())
    });
    group.bench_function("ndarray_zip", |bench| {
        let (xn, yn) = (xv.to_ndarray(), yv.to_ndarray());
        let mut on = make_mut(&mut out).into_ndarray();
        bench.iter(|| {
            Zip::from(&mut on).and(black_box(&xn)).and(black_box(&yn)).for_each(|o, &x, &y| *o = A * x + B * y)
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    group::<LayoutRight>(
        c,
        "row_major",
        |d| HostMdspan::from_slice(d, [N, N]).unwrap(),
        |d| HostMdspanMut::from_slice(d, [N, N]).unwrap(),
    );
    group::<LayoutLeft>(
        c,
        "column_major",
        |d| HostMdspan::from_slice(d, [N, N]).unwrap(),
        |d| HostMdspanMut::from_slice(d, [N, N]).unwrap(),
    );
    group::<LayoutStride>(
        c,
        "transposed",
        |d| HostMdspan::from_slice_strided(d, [N, N], [1, N as isize]).unwrap(),
        |d| HostMdspanMut::from_slice_strided(d, [N, N], [1, N as isize]).unwrap(),
    );
    group::<LayoutStrideRelaxed>(
        c,
        "reversed",
        |d| HostMdspan::from_slice_relaxed(d, [N, N], [-(N as isize), 1], (N - 1) * N).unwrap(),
        |d| HostMdspanMut::from_slice_relaxed(d, [N, N], [-(N as isize), 1], (N - 1) * N).unwrap(),
    );
}

criterion_group! {
    name = kernels;
    config = Criterion::default().warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2)).sample_size(30);
    targets = benches
}
criterion_main!(kernels);
