//! Shared code of the CUDA tests: finding NVRTC and a C++ compiler, random layouts, element values
//! (`elements`), random launches and their CPU reference (`case`), a host build of the generated
//! kernels (`host_kernels`), and the cast kernels' boundary inputs (`cast_inputs`).
//!
//! `scripts/test.sh` installs the NVRTC wheel into `target/deps/nvrtc` and puts it on
//! `LD_LIBRARY_PATH`, and sets `DLSPAN_REQUIRE_NVRTC=1` so that CI never passes by skipping.
#![allow(dead_code, unreachable_pub, unused_imports, unused_macros)]

#[macro_use]
mod cast_inputs;
#[path = "../support/rng.rs"]
mod rng;
#[path = "../support/skip.rs"]
mod skip;
pub use rng::Rng;
use skip::skip_or_fail;
mod case;
mod elements;
mod host_kernels;

pub use case::{Case, Reference, arithmetic, cast, movement};
pub use cast_inputs::{CAST_SCALARS, CastInput};
pub use elements::{Arith, BoolBytes2, TestElement};
pub use host_kernels::HostKernels;

use dlspan::DlElement;
use std::process::Command;

/// Whether NVRTC can be loaded (else prints why the test skips).
pub fn nvrtc_or_skip() -> bool {
    if dlspan::cuda::nvrtc_present() {
        return true;
    }
    skip_or_fail(
        "NVRTC not found: run scripts/test.sh (it installs the nvidia-cuda-nvrtc wheel) or put libnvrtc.so.13 on LD_LIBRARY_PATH",
        "DLSPAN_REQUIRE_NVRTC",
    );
    false
}

/// The C++ compiler (`$CXX` or `g++`), or `None` after printing why the test skips.
pub fn cxx_or_skip() -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_owned());
    match Command::new(&cxx).arg("--version").output() {
        Ok(out) if out.status.success() => Some(cxx),
        _ => {
            skip_or_fail(&format!("no C++ compiler `{cxx}` found"), "DLSPAN_REQUIRE_NVRTC");
            None
        }
    }
}

/// One operand's memory: strides (elements), the offset of index 0 and the buffer length.
#[derive(Clone, Copy, Debug)]
pub struct Layout<const R: usize> {
    pub strides: [isize; R],
    pub offset: usize,
    pub len: usize,
}

/// A random layout of `extents`: a random axis order, gaps between axes, reversed axes, and for
/// inputs (`broadcast`) zero strides.
pub fn random_layout<const R: usize>(rng: &mut Rng, extents: [usize; R], broadcast: bool) -> Layout<R> {
    let mut order: Vec<usize> = (0..R).collect();
    for i in (1..R).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut strides = [0isize; R];
    let mut step = 1isize;
    let contiguous = rng.chance(35);
    for &axis in order.iter().rev() {
        if broadcast && rng.chance(20) {
            continue;
        }
        strides[axis] = step;
        let gap = if contiguous { 0 } else { rng.below(3) as isize };
        step *= extents[axis] as isize + gap;
    }
    let mut offset = 0usize;
    for axis in 0..R {
        if !contiguous && rng.chance(25) && strides[axis] != 0 {
            offset += (extents[axis] - 1) * strides[axis] as usize;
            strides[axis] = -strides[axis];
        }
    }
    let high: usize = (0..R).filter(|&a| strides[a] > 0).map(|a| (extents[a] - 1) * strides[a] as usize).sum();
    // A random lead before the first element, so addresses are not always aligned the same way.
    let lead = if contiguous { rng.below(2) * 8 } else { rng.below(3) };
    Layout { strides, offset: offset + lead, len: lead + offset + high + 1 + rng.below(3) }
}

/// Random extents of rank `R`, each `1..=max`.
pub fn random_extents<const R: usize>(rng: &mut Rng, max: usize) -> [usize; R] {
    core::array::from_fn(|_| 1 + rng.below(max))
}

/// The bytes of a slice of elements.
pub fn bytes<T: DlElement>(values: &[T]) -> &[u8] {
    // SAFETY: element types have no padding bytes: the slice's bytes are initialised.
    unsafe { core::slice::from_raw_parts(values.as_ptr().cast::<u8>(), core::mem::size_of_val(values)) }
}
