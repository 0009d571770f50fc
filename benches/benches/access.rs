//! Element access over N×N f32 (N = 64, 256, 1024) in four layouts of the same memory — row-major,
//! column-major, transposed (strided), relaxed with a reversed axis — beside a raw slice loop over
//! that memory (the floor) and ndarray views of the same memory:
//!
//! - `sum`: raw `slice.iter().sum()`; dlspan `iter().sum()` (logical order), `fold_unordered`
//!   (memory order) and `sum()` (memory order, pairwise: blocks of 128 with eight partial sums);
//!   ndarray `iter().sum()` (logical order) and `sum()` (its eight-accumulator reduction);
//! - `axpy` (y += a·x): raw zip loop; dlspan `zip_with` (memory order); in logical order, dlspan
//!   `iter_mut().zip(iter())` beside a hand-written loop in that order, ndarray's
//!   `iter_mut().zip(iter())`, and dlspan's shared `iter().zip(iter())` over the same views; ndarray
//!   `Zip` (memory order);
//! - `rows`: a sum per row through sub-views (dlspan `index_axis` and `outer_iter`, ndarray `rows()`,
//!   raw chunks); `rows_short`: each row's `sum()` over 125 000 rows of 8 values (dlspan
//!   `outer_iter`, ndarray `rows()` and `sum_axis`), where per-row costs decide;
//! - the zero-copy conversions to and from ndarray views.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{Criterion, criterion_group, criterion_main};
use dlspan::*;
use ndarray::{ArrayView2, ArrayViewMut2, Zip};
use std::hint::black_box;
use std::time::Duration;

const A: f32 = 0.5;

/// The four layouts, as relaxed views of the same N×N buffer (any layout type can be taken from
/// them; the benchmarks use each layout's own type below).
struct Layouts<'a> {
    row: HostMdspan<'a, f32, 2, LayoutRight>,
    column: HostMdspan<'a, f32, 2, LayoutLeft>,
    transposed: HostMdspan<'a, f32, 2, LayoutStride>,
    reversed: HostMdspan<'a, f32, 2, LayoutStrideRelaxed>,
}

fn layouts(data: &[f32], n: usize) -> Layouts<'_> {
    Layouts {
        row: HostMdspan::from_slice(data, [n, n]).unwrap(),
        column: HostMdspan::from_slice(data, [n, n]).unwrap(),
        transposed: HostMdspan::from_slice_strided(data, [n, n], [1, n as isize]).unwrap(),
        reversed: HostMdspan::from_slice_relaxed(data, [n, n], [-(n as isize), 1], (n - 1) * n).unwrap(),
    }
}

fn sum_group<L: Layout>(c: &mut Criterion, name: &str, n: usize, data: &[f32], view: HostMdspan<'_, f32, 2, L>) {
    let nd: ArrayView2<'_, f32> = view.to_ndarray();
    let mut group = c.benchmark_group(format!("sum_{name}_{n}"));
    group.bench_function("floor_slice", |b| b.iter(|| black_box(data).iter().sum::<f32>()));
    group.bench_function("dlspan_iter", |b| b.iter(|| black_box(&view).iter().sum::<f32>()));
    group.bench_function("dlspan_fold_unordered", |b| {
        b.iter(|| black_box(&view).fold_unordered(0.0f32, |acc, &x| acc + x))
    });
    group.bench_function("dlspan_sum", |b| b.iter(|| black_box(&view).sum()));
    group.bench_function("ndarray_iter", |b| b.iter(|| black_box(&nd).iter().sum::<f32>()));
    group.bench_function("ndarray_sum", |b| b.iter(|| black_box(&nd).sum()));
    group.finish();
}

/// y += a·x with y and x in the same layout (each over its own buffer).
fn axpy_group<L: Layout>(
    c: &mut Criterion,
    name: &str,
    n: usize,
    x_data: &[f32],
    x: HostMdspan<'_, f32, 2, L>,
    y_data: &mut [f32],
    make_y: impl for<'b> Fn(&'b mut [f32]) -> HostMdspanMut<'b, f32, 2, L>,
) {
    let x_nd: ArrayView2<'_, f32> = x.to_ndarray();
    assert_eq!(x_data.len(), n * n);
    let mut group = c.benchmark_group(format!("axpy_{name}_{n}"));
    group.bench_function("floor_slice", |b| {
        b.iter(|| {
            for (y, x) in y_data.iter_mut().zip(black_box(x_data)) {
                *y += A * x;
            }
        })
    });
    group.bench_function("dlspan_zip_with", |b| {
        let mut y = make_y(y_data);
        b.iter(|| y.zip_with(black_box(&x), |y, &x| *y += A * x))
    });
    group.bench_function("dlspan_iter_zip", |b| {
        let mut y = make_y(y_data);
        b.iter(|| y.iter_mut().zip(black_box(&x).iter()).for_each(|(y, &x)| *y += A * x))
    });
    group.bench_function("dlspan_iter_zip_shared", |b| {
        // The same logical-order traversal of both views, reading only: what the mutable iterator is
        // measured against.
        let y = make_y(y_data).into_view();
        // XOR of the bits: a one-cycle dependency, where a float sum would wait on each addition.
        b.iter(|| y.iter().zip(black_box(&x).iter()).fold(0u32, |acc, (&y, &x)| acc ^ (y + A * x).to_bits()))
    });
    group.bench_function("floor_logical", |b| {
        // The loop written by hand in logical order: the floor of any traversal in that order.
        let mut y = make_y(y_data);
        b.iter(|| dlspan_benches::axpy_by_hand(&mut y, black_box(&x), A))
    });
    group.bench_function("ndarray_iter_zip", |b| {
        let mut y_nd: ArrayViewMut2<'_, f32> = make_y(y_data).into_ndarray();
        b.iter(|| y_nd.iter_mut().zip(black_box(&x_nd).iter()).for_each(|(y, &x)| *y += A * x))
    });
    group.bench_function("ndarray_zip", |b| {
        let mut y_nd: ArrayViewMut2<'_, f32> = make_y(y_data).into_ndarray();
        b.iter(|| Zip::from(&mut y_nd).and(black_box(&x_nd)).for_each(|y, &x| *y += A * x))
    });
    group.finish();
}

fn rows_group(c: &mut Criterion, n: usize, data: &[f32]) {
    let view = HostMdspan::<f32, 2>::from_slice(data, [n, n]).unwrap();
    let nd = view.to_ndarray();
    let mut group = c.benchmark_group(format!("rows_{n}"));
    group.bench_function("floor_chunks", |b| {
        b.iter(|| black_box(data).chunks_exact(n).map(|row| row.iter().sum::<f32>()).sum::<f32>())
    });
    group.bench_function("dlspan_index_axis", |b| {
        b.iter(|| {
            let view = black_box(&view);
            (0..n).map(|i| view.index_axis(0, i).iter().sum::<f32>()).sum::<f32>()
        })
    });
    group.bench_function("dlspan_outer_iter", |b| {
        b.iter(|| black_box(&view).outer_iter().map(|row| row.iter().sum::<f32>()).sum::<f32>())
    });
    group.bench_function("ndarray_rows", |b| {
        b.iter(|| black_box(&nd).rows().into_iter().map(|row| row.iter().sum::<f32>()).sum::<f32>())
    });
    group.finish();
}

/// Rows of the short-rows benchmark: 125 000 rows of 8 f32 (one million values).
const SHORT_ROWS: usize = 125_000;
/// Values per short row.
const SHORT_ROW: usize = 8;

/// The sum of each short row into an output vector: the per-row costs (a sub-view, the sum's
/// set-up) dominate, not the additions. `sum()` on both sides (the vectorised reductions), beside
/// a sequential `iter().sum()` over ndarray's rows and the raw chunk loop (the floor).
fn short_rows_group(c: &mut Criterion, data: &[f32]) {
    let view = HostMdspan::<f32, 2>::from_slice(data, [SHORT_ROWS, SHORT_ROW]).unwrap();
    let nd = view.to_ndarray();
    let mut out = vec![0.0f32; SHORT_ROWS];
    let mut group = c.benchmark_group(format!("rows_short_{SHORT_ROWS}x{SHORT_ROW}"));
    group.bench_function("floor_chunks", |b| {
        b.iter(|| {
            for (o, row) in out.iter_mut().zip(black_box(data).chunks_exact(SHORT_ROW)) {
                *o = row.iter().sum::<f32>();
            }
            black_box(&mut out);
        })
    });
    group.bench_function("dlspan_outer_iter_sum", |b| {
        b.iter(|| {
            for (o, row) in out.iter_mut().zip(black_box(&view).outer_iter()) {
                *o = row.sum();
            }
            black_box(&mut out);
        })
    });
    group.bench_function("ndarray_rows_sum", |b| {
        b.iter(|| {
            for (o, row) in out.iter_mut().zip(black_box(&nd).rows()) {
                *o = row.sum();
            }
            black_box(&mut out);
        })
    });
    group.bench_function("ndarray_sum_axis", |b| b.iter(|| black_box(&nd).sum_axis(ndarray::Axis(1))));
    group.finish();
}

fn convert_group(c: &mut Criterion, data: &[f32]) {
    let view =
        HostMdspan::<f32, 2, LayoutStrideRelaxed>::from_slice_relaxed(data, [256, 256], [-256, 1], 255 * 256).unwrap();
    let nd = view.to_ndarray();
    let mut group = c.benchmark_group("ndarray_convert");
    group.bench_function("to_ndarray", |b| b.iter(|| black_box(&view).to_ndarray().as_ptr()));
    group.bench_function("from_ndarray", |b| {
        b.iter(|| HostMdspan::<f32, 2, LayoutStrideRelaxed>::from_ndarray(black_box(nd.view())).map(|v| v.offset()))
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    for n in [64usize, 256, 1024] {
        let data: Vec<f32> = (0..n * n).map(|i| (i % 97) as f32).collect();
        let views = layouts(&data, n);
        sum_group(c, "row_major", n, &data, views.row);
        sum_group(c, "column_major", n, &data, views.column);
        sum_group(c, "transposed", n, &data, views.transposed);
        sum_group(c, "reversed", n, &data, views.reversed);

        let mut y = vec![0.0f32; n * n];
        axpy_group(c, "row_major", n, &data, views.row, &mut y, |y| HostMdspanMut::from_slice(y, [n, n]).unwrap());
        axpy_group(c, "column_major", n, &data, views.column, &mut y, |y| {
            HostMdspanMut::from_slice(y, [n, n]).unwrap()
        });
        axpy_group(c, "transposed", n, &data, views.transposed, &mut y, |y| {
            HostMdspanMut::from_slice_strided(y, [n, n], [1, n as isize]).unwrap()
        });
        axpy_group(c, "reversed", n, &data, views.reversed, &mut y, |y| {
            HostMdspanMut::from_slice_relaxed(y, [n, n], [-(n as isize), 1], (n - 1) * n).unwrap()
        });
        rows_group(c, n, &data);
    }
    let data: Vec<f32> = (0..SHORT_ROWS * SHORT_ROW).map(|i| (i % 97) as f32).collect();
    short_rows_group(c, &data);
    let data = vec![1.0f32; 256 * 256];
    convert_group(c, &data);
}

criterion_group! {
    name = access;
    config = Criterion::default().warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1)).sample_size(30);
    targets = benches
}
criterion_main!(access);
