//! Instruction counts of the checked import, ranks 1–4 × the four layouts, for callgrind
//! (deterministic where timings are noisy). Its peer is CCCL's `cuda::to_host_mdspan`, measured by
//! `benches/cccl/import_instructions.cpp` on the same tensors with the same loop:
//!
//!     cargo build --release -p dlspan-benches --bin import_instructions
//!     valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/import_instructions
//!     callgrind_annotate --inclusive=yes --threshold=100 cg.out | grep import_instructions::
//!
//! Each variant converts its tensor `ITERATIONS` times in a function of its own (divide its count by
//! that): the tensor pointer passes through `black_box` every time, so nothing is hoisted out of the
//! loop, and every part of the view (pointer, extents, stored strides, offset) is summed, so nothing
//! is optimised away. The output (each tensor, each variant's sum relative to the buffer) must equal
//! the CCCL harness's line for line: the same inputs gave the same views.

use dlspan::ffi::DLTensor;
use dlspan::*;
use dlspan_benches::import::{ELEMENTS, SHAPE_1, SHAPE_2, SHAPE_3, SHAPE_4, Tensor};
use std::hint::black_box;

const ITERATIONS: usize = 100_000;

/// The sum of a view's parts: data pointer, extents, and the strides and offset a strided layout
/// stores (a compact layout's strides follow from its extents).
#[inline(always)]
fn consume<const R: usize, L: Layout>(view: &HostMdspan<'_, f32, R, L>) -> usize {
    let mut sum = view.data_handle() as usize;
    for extent in view.extents() {
        sum = sum.wrapping_add(extent);
    }
    if matches!(L::KIND, LayoutKind::Stride | LayoutKind::StrideRelaxed) {
        for stride in view.strides() {
            sum = sum.wrapping_add(stride as usize);
        }
    }
    sum.wrapping_add(view.offset())
}

/// The unchecked floor of rank `R`: reads pointer and shape (what a compact view holds) and, when
/// `STRIDED`, strides and byte offset too (what a strided view holds), summed as `consume` sums a
/// view's parts.
#[inline(always)]
fn floor<const R: usize, const STRIDED: bool>(tensor: &DLTensor) -> usize {
    let mut sum = 0usize;
    for _ in 0..ITERATIONS {
        let tensor = black_box(tensor);
        // SAFETY: the harness's tensors have `R` extents.
        let shape = unsafe { *tensor.shape.cast::<[i64; R]>() };
        let mut parts = shape.iter().fold(tensor.data as usize, |acc, &e| acc.wrapping_add(e as usize));
        if STRIDED {
            // SAFETY: and `R` strides.
            let strides = unsafe { *tensor.strides.cast::<[i64; R]>() };
            parts = strides
                .iter()
                .fold(parts.wrapping_add(tensor.byte_offset as usize), |acc, &s| acc.wrapping_add(s as usize));
        }
        sum = sum.wrapping_add(parts);
    }
    sum
}

/// The checked import of rank `R` and layout `L`, `ITERATIONS` times.
#[inline(always)]
fn import<const R: usize, L: Layout>(tensor: &DLTensor) -> usize {
    let mut sum = 0usize;
    for _ in 0..ITERATIONS {
        // SAFETY: the harness's tensors describe its live buffer.
        if let Ok(view) = unsafe { to_host_mdspan::<f32, R, L>(black_box(tensor)) } {
            sum = sum.wrapping_add(consume(&view));
        }
    }
    sum
}

/// Which tensor of a rank a variant converts.
#[derive(Clone, Copy)]
enum Input {
    RowMajor,
    ColumnMajor,
    Pitched,
}

/// A variant: its name, its function, its tensor.
type Variant = (&'static str, fn(&DLTensor) -> usize, Input);

/// The variants of one rank, each in a function of its own (callgrind counts functions by name),
/// and `$run`, which runs them on their tensors: the floors and right on the row-major one, left on
/// the column-major one, stride and relaxed on the pitched one.
macro_rules! rank {
    ($run:ident, $r:literal, $shape:expr;
     $floor:ident, $floor_strided:ident, $right:ident, $left:ident, $stride:ident, $relaxed:ident) => {
        #[inline(never)]
        fn $floor(tensor: &DLTensor) -> usize {
            floor::<$r, false>(tensor)
        }
        #[inline(never)]
        fn $floor_strided(tensor: &DLTensor) -> usize {
            floor::<$r, true>(tensor)
        }
        #[inline(never)]
        fn $right(tensor: &DLTensor) -> usize {
            import::<$r, LayoutRight>(tensor)
        }
        #[inline(never)]
        fn $left(tensor: &DLTensor) -> usize {
            import::<$r, LayoutLeft>(tensor)
        }
        #[inline(never)]
        fn $stride(tensor: &DLTensor) -> usize {
            import::<$r, LayoutStride>(tensor)
        }
        #[inline(never)]
        fn $relaxed(tensor: &DLTensor) -> usize {
            import::<$r, LayoutStrideRelaxed>(tensor)
        }
        fn $run(data: &mut [f32]) {
            let variants: [Variant; 6] = [
                (stringify!($floor), $floor, Input::RowMajor),
                (stringify!($floor_strided), $floor_strided, Input::Pitched),
                (stringify!($right), $right, Input::RowMajor),
                (stringify!($left), $left, Input::ColumnMajor),
                (stringify!($stride), $stride, Input::Pitched),
                (stringify!($relaxed), $relaxed, Input::Pitched),
            ];
            run($shape, data, variants);
        }
    };
}

rank!(rank1, 1, SHAPE_1; rank1_floor, rank1_floor_strided, rank1_right, rank1_left, rank1_stride, rank1_relaxed);
rank!(rank2, 2, SHAPE_2; rank2_floor, rank2_floor_strided, rank2_right, rank2_left, rank2_stride, rank2_relaxed);
rank!(rank3, 3, SHAPE_3; rank3_floor, rank3_floor_strided, rank3_right, rank3_left, rank3_stride, rank3_relaxed);
rank!(rank4, 4, SHAPE_4; rank4_floor, rank4_floor_strided, rank4_right, rank4_left, rank4_stride, rank4_relaxed);

/// Runs the variants of rank `R` and prints its tensors and each variant's sum (relative to the
/// buffer).
fn run<const R: usize>(shape: [i64; R], data: &mut [f32], variants: [Variant; 6]) {
    let base = data.as_ptr() as usize;
    let mut tensors = [Tensor::row_major(shape), Tensor::column_major(shape), Tensor::pitched(shape)];
    for (name, tensor) in ["row-major", "column-major", "pitched"].iter().zip(&tensors) {
        println!("rank {R} {name}: shape {:?} strides {:?}", tensor.shape, tensor.strides);
    }
    let [row, column, pitched] = &mut tensors;
    let (row, column, pitched) = (row.dl(data), column.dl(data), pitched.dl(data));
    for (name, variant, input) in variants {
        let tensor = match input {
            Input::RowMajor => &row,
            Input::ColumnMajor => &column,
            Input::Pitched => &pitched,
        };
        let sum = variant(tensor);
        // Every iteration added the buffer's address once; what remains is the views' own parts.
        let parts = sum.wrapping_sub(base.wrapping_mul(ITERATIONS)) / ITERATIONS;
        assert_ne!(sum, 0, "{name} converts its tensor");
        println!("{name}: {parts}");
    }
}

fn main() {
    let mut data = vec![1.0f32; 2 * ELEMENTS];
    rank1(&mut data);
    rank2(&mut data);
    rank3(&mut data);
    rank4(&mut data);
}
