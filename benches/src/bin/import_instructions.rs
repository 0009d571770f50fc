//! Instruction counts of the import paths, for callgrind (deterministic where timings are noisy):
//!
//!     cargo build --release -p dlspan-benches --bin import_instructions
//!     valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/import_instructions
//!     callgrind_annotate cg.out | grep import_instructions::
//!
//! Each variant runs `ITERATIONS` times in a function of its own; divide its count by that.

use dlspan::ffi::{DLDevice, DLDeviceType, DLTensor};
use dlspan::*;
use std::hint::black_box;

const ITERATIONS: usize = 100_000;

fn tensor<const R: usize>(shape: [i64; R], strides: &mut [i64; R], data: &mut [f32]) -> DLTensor {
    DLTensor {
        data: data.as_mut_ptr().cast(),
        device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        ndim: R as i32,
        dtype: f32::DTYPE,
        shape: Box::leak(Box::new(shape)).as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    }
}

macro_rules! variant {
    ($name:ident, $r:literal, $layout:ty) => {
        #[inline(never)]
        fn $name(t: &DLTensor) -> usize {
            let mut acc = 0usize;
            for _ in 0..ITERATIONS {
                // SAFETY: the tensors describe live buffers.
                if let Ok(v) = unsafe { to_host_mdspan::<f32, $r, $layout>(black_box(t)) } {
                    acc = acc.wrapping_add(v.data_handle() as usize ^ v.extent(0));
                }
            }
            acc
        }
    };
}

variant!(rank2_right, 2, LayoutRight);
variant!(rank2_left, 2, LayoutLeft);
variant!(rank2_stride, 2, LayoutStride);
variant!(rank2_relaxed, 2, LayoutStrideRelaxed);
variant!(rank4_right, 4, LayoutRight);
variant!(rank4_stride, 4, LayoutStride);
variant!(rank4_relaxed, 4, LayoutStrideRelaxed);

#[inline(never)]
fn rank2_floor(t: &DLTensor) -> usize {
    let mut acc = 0usize;
    for _ in 0..ITERATIONS {
        let t = black_box(t);
        // SAFETY: rank-2 tensors with live shapes.
        let shape = unsafe { *t.shape.cast::<[i64; 2]>() };
        acc = acc.wrapping_add(t.data as usize ^ shape[0] as usize ^ shape[1] as usize);
    }
    acc
}

fn main() {
    let mut data = vec![1.0f32; 512 * 512];
    let mut row2 = [512i64, 1];
    let mut col2 = [1i64, 512];
    let mut row4 = [16 * 32 * 64, 32 * 64, 64, 1];
    let r2 = tensor([512, 512], &mut row2, &mut data);
    let c2 = tensor([512, 512], &mut col2, &mut data);
    let r4 = tensor([8, 16, 32, 64], &mut row4, &mut data);
    let results = [
        rank2_floor(&r2),
        rank2_right(&r2),
        rank2_left(&c2),
        rank2_stride(&r2),
        rank2_relaxed(&r2),
        rank4_right(&r4),
        rank4_stride(&r4),
        rank4_relaxed(&r4),
    ];
    assert!(results.iter().all(|&r| r != 0), "every variant imports");
    println!("{ITERATIONS} iterations per variant");
}
