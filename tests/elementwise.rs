//! Memory-order element-wise operations agree with logical-order indexing on every kind of layout.

use dlspan::*;
use proptest::prelude::*;

fn layouts(data: &[i64]) -> Vec<HostMdspan<'_, i64, 2, LayoutStrideRelaxed>> {
    vec![
        HostMdspan::from_slice_relaxed(data, [4, 6], [6, 1], 0).unwrap(), // row-major
        HostMdspan::from_slice_relaxed(data, [4, 6], [1, 4], 0).unwrap(), // column-major
        HostMdspan::from_slice_relaxed(data, [3, 4], [1, 6], 2).unwrap(), // transposed, strided
        HostMdspan::from_slice_relaxed(data, [4, 6], [-6, -1], 23).unwrap(), // fully reversed
        HostMdspan::from_slice_relaxed(data, [4, 3], [6, -2], 4).unwrap(), // reversed, gappy
        HostMdspan::from_slice_relaxed(data, [5, 6], [0, 1], 0).unwrap(), // broadcast rows
    ]
}

#[test]
fn fold_unordered_visits_every_element_once() {
    let data: Vec<i64> = (0..24).map(|x| x * x + 1).collect();
    for view in layouts(&data) {
        let logical: i64 = view.iter().sum();
        assert_eq!(view.fold_unordered(0, |acc, &x| acc + x), logical, "{view:?}");
        assert_eq!(view.fold_unordered(0, |n, _| n + 1), view.size());
    }
}

#[test]
fn for_each_unordered_and_zip_with_match_indexing() {
    let source: Vec<i64> = (0..24).collect();
    let x = HostMdspan::<i64, 2, LayoutStride>::from_slice_strided(&source, [4, 6], [1, 4]).unwrap();
    for (strides, offset) in [([6isize, 1isize], 0usize), ([1, 4], 0), ([-6, -1], 23), ([6, -1], 5)] {
        let mut out = vec![100i64; 24];
        let mut y = HostMdspanMut::<i64, 2, LayoutStrideRelaxed>::from_slice_relaxed(&mut out, [4, 6], strides, offset)
            .unwrap();
        y.zip_with(&x, |y, &x| *y += 3 * x).unwrap();
        y.for_each_unordered(|y| *y -= 100);
        let y = y.as_view();
        for i in 0..4 {
            for j in 0..6 {
                assert_eq!(y[[i, j]], 3 * x[[i, j]], "strides {strides:?}, index [{i}, {j}]");
            }
        }
    }
    // Extents must match.
    let mut out = vec![0i64; 24];
    let mut y = HostMdspanMut::<i64, 2>::from_slice(&mut out, [6, 4]).unwrap();
    assert_eq!(y.zip_with(&x, |_, _| ()).unwrap_err(), DlpackError::ShapeMismatch { axis: 0, expected: 6, found: 4 });
}

#[test]
fn rank_zero_and_empty_views() {
    let one = [7u8];
    let scalar = HostMdspan::<u8, 0>::from_slice(&one, []).unwrap();
    assert_eq!(scalar.fold_unordered(0u32, |a, &x| a + u32::from(x)), 7);
    let empty = HostMdspan::<u8, 2>::from_slice(&[], [0, 3]).unwrap();
    assert_eq!(empty.fold_unordered(0, |n, _| n + 1), 0);
}

proptest! {
    #[test]
    fn random_relaxed_layouts(
        extents in proptest::array::uniform3(0usize..5),
        strides in proptest::array::uniform3(-7isize..8),
        offset in 0usize..64,
    ) {
        let data: Vec<i64> = (0..160).collect();
        if let Ok(view) = HostMdspan::<i64, 3, LayoutStrideRelaxed>::from_slice_relaxed(&data, extents, strides, offset) {
            prop_assert_eq!(view.fold_unordered(0i64, |a, &x| a + x * x), view.iter().map(|&x| x * x).sum::<i64>());
        }
        let mut out = vec![0i64; 160];
        if let Ok(mut y) = HostMdspanMut::<i64, 3, LayoutStrideRelaxed>::from_slice_relaxed(&mut out, extents, strides, offset) {
            let source: Vec<i64> = (0..125).map(|v| v * 3).collect();
            let x = HostMdspan::<i64, 3>::from_slice(&source[..extents.iter().product()], extents).unwrap();
            y.zip_with(&x, |y, &x| *y += x).unwrap();
            prop_assert_eq!(y.to_vec(), x.to_vec());
        }
    }
}

#[test]
fn sums_agree_with_iteration() {
    let data: Vec<i64> = (0..24).map(|x| x * x + 1).collect();
    for view in layouts(&data) {
        assert_eq!(view.sum(), view.iter().sum::<i64>(), "{view:?}");
    }
    let floats: Vec<f64> = (0..1000).map(|x| f64::from(x) * 0.25).collect();
    let view = HostMdspan::<f64, 2>::from_slice(&floats, [10, 100]).unwrap();
    assert_eq!(view.sum(), floats.iter().sum::<f64>(), "exact for these values in either order");
    let empty = HostMdspan::<f32, 2>::from_slice(&[], [0, 4]).unwrap();
    assert_eq!(empty.sum(), 0.0);
}

#[test]
fn unit_axes_with_extreme_strides() {
    // Found while auditing stride arithmetic: an axis of extent 1 reaches nothing, so a validated mapping
    // allows it any stride, and memory-order traversals overflowed on isize::MAX and isize::MIN
    // (a debug build panicked).
    let data: Vec<u32> = (0..8).collect();
    for stride in [isize::MAX, isize::MIN, isize::MIN + 1] {
        let view =
            HostMdspan::<u32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [1, 3], [stride, 2], 1).unwrap();
        assert_eq!(view.to_vec(), [1, 3, 5]);
        assert_eq!(view.fold_unordered(0, |a, &x| a + x), 9);
        assert_eq!(view.sum(), 9);
        let mut out = vec![0u32; 8];
        let mut y =
            HostMdspanMut::<u32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&mut out, [1, 3], [stride, 2], 1).unwrap();
        y.zip_with(&view, |y, &x| *y = x).unwrap();
        y.for_each_unordered(|y| *y += 1);
        assert_eq!(out, [0, 2, 0, 4, 0, 6, 0, 0]);
    }
}

#[test]
fn copy_from_matches_indexing_between_every_pair_of_layouts() {
    let data: Vec<i64> = (0..24).map(|x| x * 7 - 30).collect();
    for source in layouts(&data).into_iter().filter(|view| view.extents() == [4, 6]) {
        for (strides, offset) in [([6isize, 1isize], 0usize), ([1, 4], 0), ([-6, -1], 23), ([6, -1], 5)] {
            let mut out = vec![-1i64; 24];
            let mut target =
                HostMdspanMut::<i64, 2, LayoutStrideRelaxed>::from_slice_relaxed(&mut out, [4, 6], strides, offset)
                    .unwrap();
            target.copy_from(&source).unwrap();
            let target = target.as_view();
            for i in 0..4 {
                for j in 0..6 {
                    assert_eq!(target[[i, j]], source[[i, j]], "{source:?} into strides {strides:?}");
                }
            }
        }
    }
}

#[test]
fn copy_from_a_contiguous_view_of_the_same_layout_is_one_slice() {
    let source: Vec<u16> = (0..12).collect();
    let source = HostMdspan::<u16, 2, LayoutLeft>::from_slice(&source, [3, 4]).unwrap();
    let mut out = [0u16; 12];
    HostMdspanMut::<u16, 2, LayoutLeft>::from_slice(&mut out, [3, 4]).unwrap().copy_from(&source).unwrap();
    assert_eq!(out.to_vec(), source.as_slice().unwrap());
}

#[test]
fn copy_from_another_shape_writes_nothing() {
    let source = [1u8; 6];
    let source = HostMdspan::<u8, 2>::from_slice(&source, [3, 2]).unwrap();
    let mut out = [0u8; 6];
    let mut target = HostMdspanMut::<u8, 2>::from_slice(&mut out, [2, 3]).unwrap();
    assert_eq!(target.copy_from(&source), Err(DlpackError::ShapeMismatch { axis: 0, expected: 2, found: 3 }));
    let mut empty = [0u8; 0];
    let mut empty = HostMdspanMut::<u8, 2>::from_slice(&mut empty, [0, 2]).unwrap();
    assert!(matches!(empty.copy_from(&source), Err(DlpackError::ShapeMismatch { axis: 0, .. })));
    assert_eq!(out, [0; 6]);
}

#[test]
fn fill_writes_every_reached_element_and_nothing_else() {
    for (strides, offset) in [([6isize, 1isize], 0usize), ([1, 4], 0), ([-12, -2], 30), ([2, -12], 36)] {
        let mut out = vec![0i32; 48];
        let mut target =
            HostMdspanMut::<i32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&mut out, [3, 4], strides, offset)
                .unwrap();
        target.fill(9);
        let mut reached = vec![false; 48];
        for i in 0..3 {
            for j in 0..4 {
                let at = offset as isize + i as isize * strides[0] + j as isize * strides[1];
                reached[at as usize] = true;
            }
        }
        for (k, (&value, &reached)) in out.iter().zip(&reached).enumerate() {
            assert_eq!(value, if reached { 9 } else { 0 }, "strides {strides:?}, element {k}");
        }
    }
    let mut scalar = [0.0f32];
    let mut scalar = HostMdspanMut::<f32, 0>::from_slice(&mut scalar, []).unwrap();
    scalar.fill(2.5);
    assert_eq!(scalar[[]], 2.5);
}

/// The relative error of a float32 sum of `0, 1, …, n-1` (exact in f64).
fn relative_error(sum: f32, n: usize) -> f64 {
    let exact = (n * (n - 1) / 2) as f64;
    (f64::from(sum) - exact).abs() / exact
}

#[test]
fn sums_are_pairwise_on_every_layout() {
    // 2^20 float32 integers: a sequential sum (or eight running partial sums) loses digits once the
    // running sums pass 2^24; a pairwise sum adds numbers of similar size at every level.
    let n = 1 << 20;
    let data: Vec<f32> = (0..n).map(|v| v as f32).collect();
    let contiguous = HostMdspan::<f32, 1>::from_slice(&data, [n]).unwrap();
    assert!(relative_error(contiguous.sum(), n) < 1e-7, "{}", contiguous.sum());
    // The same values in other layouts: columns (runs of 1024 combined by the cascade), reversed,
    // and a strided run of every other value (twice: each half of the values).
    let columns = HostMdspan::<f32, 2, LayoutLeft>::from_slice(&data, [1024, 1024]).unwrap();
    let reversed = HostMdspan::<f32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [n], [-1], n - 1).unwrap();
    let transposed = HostMdspan::<f32, 2, LayoutStride>::from_slice_strided(&data, [1024, 1024], [1, 1024]).unwrap();
    for (name, sum) in [("columns", columns.sum()), ("reversed", reversed.sum()), ("transposed", transposed.sum())] {
        assert!(relative_error(sum, n) < 1e-7, "{name}: {sum}");
    }
    let even = HostMdspan::<f32, 1, LayoutStride>::from_slice_strided(&data, [n / 2], [2]).unwrap();
    let odd = HostMdspan::<f32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [n / 2], [2], 1).unwrap();
    let halves = f64::from(even.sum()) + f64::from(odd.sum());
    assert!((halves - (n * (n - 1) / 2) as f64).abs() / halves < 1e-7, "{halves}");
    // Many short runs (a column of a matrix with 8 columns): their sums are combined pairwise too.
    let narrow = HostMdspan::<f32, 2>::from_slice(&data, [n / 8, 8]).unwrap();
    let first_column = narrow.subview((.., 0..1));
    let exact: f64 = (0..n / 8).map(|row| (row * 8) as f64).sum();
    assert!((f64::from(first_column.sum()) - exact).abs() / exact < 1e-7, "{}", first_column.sum());
}

#[test]
fn sum_with_takes_the_accumulator_and_the_addition() {
    let data: Vec<f32> = (0..1_000_000).map(|v| v as f32).collect();
    let view = HostMdspan::<f32, 2>::from_slice(&data, [1000, 1000]).unwrap();
    assert_eq!(view.sum_with(0.0f64, |&v| f64::from(v), |a, b| a + b), 499_999_500_000.0);
    // Integers wrap with a wrapping addition, in any order of additions.
    let bytes: Vec<u8> = (0..=255).collect();
    let reversed = HostMdspan::<u8, 1, LayoutStrideRelaxed>::from_slice_relaxed(&bytes, [256], [-1], 255).unwrap();
    assert_eq!(reversed.sum_with(0u8, |&v| v, u8::wrapping_add), (255 * 256 / 2 % 256) as u8);
    // With NumPy's zero, a sum of negative zeros is a positive zero, however many there are.
    let zeros = [-0.0f64; 20];
    for len in [1, 8, 20] {
        let view = HostMdspan::<f64, 1>::from_slice(&zeros[..len], [len]).unwrap();
        assert!(view.sum_with(0.0, |&v| v, |a, b| a + b).is_sign_positive(), "{len}");
    }
    let empty = HostMdspan::<f64, 1>::from_slice(&[], [0]).unwrap();
    assert_eq!(empty.sum_with(0.0, |&v| v, |a, b| a + b), 0.0);
}

#[test]
fn sum_starts_from_numpys_positive_zero() {
    // `Iterator::sum` of floats starts from -0.0; `np.sum` from +0.0. `sum()` is NumPy's: empty
    // rows and rows of negative zeros sum to +0.0, by every path (short, blocked, strided, rows).
    let zeros = [-0.0f32; 40];
    for len in [0, 1, 7, 8, 15, 16, 20, 40] {
        let row = HostMdspan::<f32, 1>::from_slice(&zeros[..len], [len]).unwrap();
        assert!(row.sum().is_sign_positive(), "contiguous, {len}");
        let strided = HostMdspan::<f32, 1, LayoutStride>::from_slice_strided(&zeros, [len / 2], [2]).unwrap();
        assert!(strided.sum().is_sign_positive(), "strided, {}", len / 2);
    }
    let matrix = HostMdspan::<f32, 2>::from_slice(&zeros, [4, 10]).unwrap();
    assert!(matrix.sum().is_sign_positive());
    let no_columns = HostMdspan::<f64, 2>::from_slice(&[], [2, 0]).unwrap();
    assert!(no_columns.outer_iter().all(|row| row.sum().is_sign_positive() && row.sum() == 0.0));
}

/// Float32 values whose sum depends on the order of the additions: magnitudes from 2^-20 to 2^20
/// of either sign, and negative zeros.
fn order_sensitive_values(state: &mut u64, len: usize) -> Vec<f32> {
    (0..len)
        .map(|_| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            let r = *state;
            let value = match r % 8 {
                0 => -0.0,
                _ => (1.0 + (r >> 40) as f32 / (1u64 << 24) as f32) * 2f32.powi((r >> 8) as i32 % 41 - 20),
            };
            if r & (1 << 33) != 0 { -value } else { value }
        })
        .collect()
}

#[test]
fn short_contiguous_sums_agree_with_the_strided_path() {
    // Contiguous views shorter than 16 elements (rows of a few values) take `sum_with`'s inline
    // path; the same values every other element of a buffer take the strided path. Both are
    // NumPy's order, so they agree bit for bit, around each boundary of the eight partial sums.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    // Fewer rounds under Miri, which interprets every access (about 1000x slower).
    let rounds = if cfg!(miri) { 6 } else { 300 };
    for len in 0..=18 {
        for _ in 0..rounds {
            let values = order_sensitive_values(&mut state, len);
            let interleaved: Vec<f32> = values.iter().flat_map(|&v| [v, f32::NAN]).collect();
            let row = HostMdspan::<f32, 1>::from_slice(&values, [len]).unwrap();
            let strided = HostMdspan::<f32, 1, LayoutStride>::from_slice_strided(&interleaved, [len], [2]).unwrap();
            assert_eq!(row.sum().to_bits(), strided.sum().to_bits(), "{values:?}");
            let widened = |v: &f32| f64::from(*v);
            assert_eq!(
                row.sum_with(0.0, widened, |a, b| a + b).to_bits(),
                strided.sum_with(0.0, widened, |a, b| a + b).to_bits(),
                "{values:?}"
            );
        }
    }
    // Rows of a matrix through `outer_iter`, as the short-rows benchmark sums them.
    let values = order_sensitive_values(&mut state, 3 * 9);
    let interleaved: Vec<f32> = values.iter().flat_map(|&v| [v, f32::NAN]).collect();
    let matrix = HostMdspan::<f32, 2>::from_slice(&values, [3, 9]).unwrap();
    let strided = HostMdspan::<f32, 2, LayoutStride>::from_slice_strided(&interleaved, [3, 9], [18, 2]).unwrap();
    for (row, strided_row) in matrix.outer_iter().zip(strided.outer_iter()) {
        assert_eq!(row.sum().to_bits(), strided_row.sum().to_bits());
    }
}

#[test]
fn packed_sums_are_pairwise() {
    use dlspan::dtype::Float4E2m1fn;
    // 1000 FP4 values of 6.0 (0x7 twice a byte) and 0.5 (0x1): 3000 + 250.
    let bytes: Vec<u8> = (0..500).map(|i| if i % 2 == 0 { 0x77 } else { 0x11 }).collect();
    let view = PackedMdspan::<Float4E2m1fn, 1>::from_bytes(&bytes, [1000]).unwrap();
    assert_eq!(view.sum_with(0.0f32, |x| x.to_f32(), |a, b| a + b), 3250.0);
}

dlspan::elementwise! {
    /// `acc = 2·acc + x + b`: an updated view, an input and a broadcast input.
    fn update(x: &f64, b: &f64, acc: &mut f64) {
        *acc = *acc * 2.0 + *x + *b;
    }
}

/// A kernel's runs that are not contiguous in every view are staged through buffers in chunks (the
/// same values as in place): here the updated view has gaps, `x` is read transposed and `b` is a
/// column broadcast along the rows (stride 0), over runs longer than a chunk (256 `f64` values).
/// Small enough for Miri, which checks the staging's reads and writes.
#[test]
fn kernels_stage_runs_that_are_not_contiguous() {
    use dlspan::kernel::Cpu;
    let (rows, cols) = (2usize, 300usize);
    let xs: Vec<f64> = (0..rows * cols).map(|k| k as f64 * 0.5).collect();
    let bs = [1000.0f64, 2000.0];
    let mut accs: Vec<f64> = (0..2 * rows * cols).map(|k| k as f64).collect();
    let before = accs.clone();
    // `x` is the transpose of a [cols, rows] row-major array; `acc` every other value of its buffer.
    let x = HostMdspan::<f64, 2, LayoutStride>::from_slice_strided(&xs, [rows, cols], [1, rows as isize]).unwrap();
    let b = HostMdspan::<f64, 2>::from_slice(&bs, [rows, 1]).unwrap();
    let mut acc =
        HostMdspanMut::<f64, 2, LayoutStride>::from_slice_strided(&mut accs, [rows, cols], [2 * cols as isize, 2])
            .unwrap();
    update.run(Cpu, &x, &b, &mut acc).unwrap();
    for i in 0..rows {
        for j in 0..cols {
            let at = 2 * cols * i + 2 * j;
            assert_eq!(accs[at], before[at] * 2.0 + xs[j * rows + i] + bs[i], "[{i}, {j}]");
            assert_eq!(accs[at + 1], before[at + 1], "the gap after [{i}, {j}] is untouched");
        }
    }
}

/// A far-strided run (here `x` read transposed, 80 bytes between its elements along the run) is
/// walked in tiles of rows by elements, partial tiles included. Small enough for Miri.
#[test]
fn kernels_tile_far_strided_runs() {
    use dlspan::kernel::Cpu;
    let (rows, cols) = (18usize, 70usize);
    let xs: Vec<f64> = (0..rows * cols).map(|k| k as f64 * 0.25).collect();
    let bs: Vec<f64> = (0..cols).map(|k| k as f64 * 1000.0).collect();
    let mut accs: Vec<f64> = (0..rows * cols).map(|k| k as f64).collect();
    let before = accs.clone();
    let x = HostMdspan::<f64, 2, LayoutStride>::from_slice_strided(&xs, [rows, cols], [1, rows as isize]).unwrap();
    let b = HostMdspan::<f64, 1>::from_slice(&bs, [cols]).unwrap();
    let mut acc = HostMdspanMut::<f64, 2>::from_slice(&mut accs, [rows, cols]).unwrap();
    update.run(Cpu, &x, &b, &mut acc).unwrap();
    for i in 0..rows {
        for j in 0..cols {
            let at = cols * i + j;
            assert_eq!(accs[at], before[at] * 2.0 + xs[j * rows + i] + bs[j], "[{i}, {j}]");
        }
    }
}
