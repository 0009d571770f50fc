//! Instruction counts of the checked import, ranks 1–4 × the four layouts, for callgrind
//! (deterministic where timings are noisy). Its peer is CCCL's `cuda::to_host_mdspan`, measured by
//! `benches/cccl/import_instructions.cpp` on the same tensors with the same loop:
//!
//!     cargo build --release -p dlspan-benches --bin import_instructions
//!     valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/import_instructions
//!     callgrind_annotate --inclusive=yes cg.out | grep import_instructions::
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

/// One checked-import variant: `$name` converts a tensor `ITERATIONS` times with rank `$r` and
/// layout `$layout`.
macro_rules! import {
    ($($name:ident: $r:literal, $layout:ty;)*) => {$(
        #[inline(never)]
        fn $name(tensor: &DLTensor) -> usize {
            let mut sum = 0usize;
            for _ in 0..ITERATIONS {
                // SAFETY: the harness's tensors describe its live buffer.
                if let Ok(view) = unsafe { to_host_mdspan::<f32, $r, $layout>(black_box(tensor)) } {
                    sum = sum.wrapping_add(consume(&view));
                }
            }
            sum
        }
    )*};
}

import! {
    rank1_right: 1, LayoutRight;
    rank1_left: 1, LayoutLeft;
    rank1_stride: 1, LayoutStride;
    rank1_relaxed: 1, LayoutStrideRelaxed;
    rank2_right: 2, LayoutRight;
    rank2_left: 2, LayoutLeft;
    rank2_stride: 2, LayoutStride;
    rank2_relaxed: 2, LayoutStrideRelaxed;
    rank3_right: 3, LayoutRight;
    rank3_left: 3, LayoutLeft;
    rank3_stride: 3, LayoutStride;
    rank3_relaxed: 3, LayoutStrideRelaxed;
    rank4_right: 4, LayoutRight;
    rank4_left: 4, LayoutLeft;
    rank4_stride: 4, LayoutStride;
    rank4_relaxed: 4, LayoutStrideRelaxed;
}

/// The unchecked floors of rank `$r`: `$floor` reads pointer and shape (what a compact view holds),
/// `$strided` also strides and byte offset (what a strided view holds), each summed as `consume`
/// sums a view's parts.
macro_rules! floor {
    ($($floor:ident, $strided:ident: $r:literal;)*) => {$(
        #[inline(never)]
        fn $floor(tensor: &DLTensor) -> usize {
            let mut sum = 0usize;
            for _ in 0..ITERATIONS {
                let tensor = black_box(tensor);
                // SAFETY: the harness's tensors have `$r` extents.
                let shape = unsafe { *tensor.shape.cast::<[i64; $r]>() };
                sum = sum.wrapping_add(shape.iter().fold(tensor.data as usize, |acc, &e| acc.wrapping_add(e as usize)));
            }
            sum
        }

        #[inline(never)]
        fn $strided(tensor: &DLTensor) -> usize {
            let mut sum = 0usize;
            for _ in 0..ITERATIONS {
                let tensor = black_box(tensor);
                // SAFETY: the harness's tensors have `$r` extents and strides.
                let shape = unsafe { *tensor.shape.cast::<[i64; $r]>() };
                // SAFETY: as above.
                let strides = unsafe { *tensor.strides.cast::<[i64; $r]>() };
                let data = (tensor.data as usize).wrapping_add(tensor.byte_offset as usize);
                let parts = shape.iter().chain(&strides).fold(data, |acc, &x| acc.wrapping_add(x as usize));
                sum = sum.wrapping_add(parts);
            }
            sum
        }
    )*};
}

floor! {
    rank1_floor, rank1_floor_strided: 1;
    rank2_floor, rank2_floor_strided: 2;
    rank3_floor, rank3_floor_strided: 3;
    rank4_floor, rank4_floor_strided: 4;
}

/// The variants of one rank, each run on its tensor: the floors and right on the row-major one,
/// left on the column-major one, stride and relaxed on the pitched one.
type Rank = [(&'static str, fn(&DLTensor) -> usize, Input); 6];

/// Which tensor of a rank a variant converts.
#[derive(Clone, Copy)]
enum Input {
    RowMajor,
    ColumnMajor,
    Pitched,
}

/// Runs every variant of rank `R` and prints its tensors and sums (relative to the buffer).
fn run<const R: usize>(shape: [i64; R], data: &mut [f32], variants: Rank) {
    let base = data.as_ptr() as usize;
    let mut tensors = [Tensor::row_major(shape), Tensor::column_major(shape), Tensor::pitched(shape)];
    for (name, tensor) in ["row-major", "column-major", "pitched"].iter().zip(&tensors) {
        println!("rank {R} {name}: shape {:?} strides {:?}", tensor.shape, tensor.strides);
    }
    let [row, column, pitched] = &mut tensors;
    let (row, column, pitched) = (row.dl(data), column.dl(data), pitched.dl(data));
    for (name, variant, which) in variants {
        let tensor = match which {
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
    use Input::*;
    let mut data = vec![1.0f32; 2 * ELEMENTS];
    run(
        SHAPE_1,
        &mut data,
        [
            ("rank1_floor", rank1_floor, RowMajor),
            ("rank1_floor_strided", rank1_floor_strided, Pitched),
            ("rank1_right", rank1_right, RowMajor),
            ("rank1_left", rank1_left, ColumnMajor),
            ("rank1_stride", rank1_stride, Pitched),
            ("rank1_relaxed", rank1_relaxed, Pitched),
        ],
    );
    run(
        SHAPE_2,
        &mut data,
        [
            ("rank2_floor", rank2_floor, RowMajor),
            ("rank2_floor_strided", rank2_floor_strided, Pitched),
            ("rank2_right", rank2_right, RowMajor),
            ("rank2_left", rank2_left, ColumnMajor),
            ("rank2_stride", rank2_stride, Pitched),
            ("rank2_relaxed", rank2_relaxed, Pitched),
        ],
    );
    run(
        SHAPE_3,
        &mut data,
        [
            ("rank3_floor", rank3_floor, RowMajor),
            ("rank3_floor_strided", rank3_floor_strided, Pitched),
            ("rank3_right", rank3_right, RowMajor),
            ("rank3_left", rank3_left, ColumnMajor),
            ("rank3_stride", rank3_stride, Pitched),
            ("rank3_relaxed", rank3_relaxed, Pitched),
        ],
    );
    run(
        SHAPE_4,
        &mut data,
        [
            ("rank4_floor", rank4_floor, RowMajor),
            ("rank4_floor_strided", rank4_floor_strided, Pitched),
            ("rank4_right", rank4_right, RowMajor),
            ("rank4_left", rank4_left, ColumnMajor),
            ("rank4_stride", rank4_stride, Pitched),
            ("rank4_relaxed", rank4_relaxed, Pitched),
        ],
    );
}
