//! The NVRTC tier: every kernel module (operation × built-in element type, each module holding
//! every shape class and both index widths) compiled to PTX through the runtime's own code path,
//! for the H100's virtual architecture. Needs NVRTC (`scripts/test.sh` installs the
//! `nvidia-cuda-nvrtc` wheel), not a GPU. Prints the matrix compiled.
#![cfg(feature = "cuda")]

mod cuda_support;

use dlspan::cuda::{CudaError, ElementType, KernelKind, ModuleKey, compile_ptx};
use dlspan::dtype::*;
use dlspan::half::{bf16, f16};
use dlspan::num_complex::Complex;
use std::sync::Mutex;

macro_rules! element_types {
    ($($t:ty),* $(,)?) => { vec![$(ElementType::of::<$t>()),*] };
}

/// Every built-in element type.
fn builtin_types() -> Vec<ElementType> {
    element_types![
        bool,
        i8,
        i16,
        i32,
        i64,
        i128,
        u8,
        u16,
        u32,
        u64,
        u128,
        f16,
        bf16,
        f32,
        f64,
        Complex<f16>,
        Complex<f32>,
        Complex<f64>,
        Float8E3m4,
        Float8E4m3,
        Float8E4m3b11fnuz,
        Float8E4m3fn,
        Float8E4m3fnuz,
        Float8E5m2,
        Float8E5m2fnuz,
        Float8E8m0fnu,
        Float6E2m3fn,
        Float6E3m2fn,
        Float4E2m1fn,
        Float4E2m1fnX2,
        Float4E2m1fnX4,
        Float6E2m3fnX4,
        Float6E3m2fnX4,
        I8x2,
        U8x2,
        I16x2,
        U16x2,
        I32x2,
        U32x2,
        I64x2,
        U64x2,
        F16x2,
        Bf16x2,
        F32x2,
        F64x2,
        Float8E3m4X2,
        Float8E4m3X2,
        Float8E4m3b11fnuzX2,
        Float8E4m3fnX2,
        Float8E4m3fnuzX2,
        Float8E5m2X2,
        Float8E5m2fnuzX2,
        Float8E8m0fnuX2,
        I8x4,
        U8x4,
        I16x4,
        U16x4,
        I32x4,
        U32x4,
        I64x4,
        U64x4,
        F16x4,
        Bf16x4,
        F32x4,
        F64x4,
        Float8E3m4X4,
        Float8E4m3X4,
        Float8E4m3b11fnuzX4,
        Float8E4m3fnX4,
        Float8E4m3fnuzX4,
        Float8E5m2X4,
        Float8E5m2fnuzX4,
        Float8E8m0fnuX4,
    ]
}

/// A user's derived types: their modules come from the data type alone.
#[derive(Clone, Copy, dlspan::DlElement)]
#[repr(transparent)]
struct Meters(f32);

#[derive(Clone, Copy, dlspan::DlElement)]
#[repr(C)]
struct Rgba {
    r: u8,
    g: u8,
    b: u8,
    a: u8,
}

#[test]
fn every_kernel_and_element_type_compiles_to_ptx() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let mut types = builtin_types();
    types.extend(element_types![Meters, Rgba]);
    let mut keys = Vec::new();
    for &t in &types {
        for kind in KernelKind::ALL {
            match ModuleKey::from_types(kind, t, t) {
                Ok(key) => keys.push(key),
                // Arithmetic only on integers and IEEE-like floats; casts only between scalars.
                Err(CudaError::Unsupported { .. }) => {
                    assert!(
                        matches!(kind, KernelKind::Add | KernelKind::Scale | KernelKind::Axpy | KernelKind::Cast),
                        "{kind} refused for {t}"
                    );
                }
                Err(other) => panic!("{kind} for {t}: {other}"),
            }
        }
    }
    // Copy and fill for every type; arithmetic for every integer and IEEE-like float.
    let arithmetic = keys.iter().filter(|k| k.kind == KernelKind::Add).count();
    assert_eq!(arithmetic, 12 + 1, "i8..i64, u8..u64, f16, bf16, f32, f64, and Meters");

    // Compiled on two threads (NVRTC is thread-safe); each failure keeps NVRTC's log.
    let next = Mutex::new(keys.iter());
    let compiled = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let Some(key) = next.lock().unwrap().next() else { break };
                    let ptx =
                        compile_ptx(key, "compute_90").unwrap_or_else(|e| panic!("{} for {}: {e}", key.kind, key.out));
                    for shape in key.shapes() {
                        for index in [dlspan::cuda::IndexWidth::U32, dlspan::cuda::IndexWidth::U64] {
                            let entry = key.entry(shape, index);
                            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry} missing from the PTX");
                        }
                    }
                    compiled.lock().unwrap().push((*key, key.shapes().len() * 2));
                }
            });
        }
    });
    let compiled = compiled.into_inner().unwrap();
    assert_eq!(compiled.len(), keys.len());

    // The matrix: one row per element type, the kernels (shape classes x index widths) per operation.
    println!(
        "NVRTC tier (compute_90): {} modules, {} kernels",
        compiled.len(),
        compiled.iter().map(|c| c.1).sum::<usize>()
    );
    println!("{:<28} {}", "element type", KernelKind::ALL.map(|k| format!("{k:>6}")).join(" "));
    for t in &types {
        let cells = KernelKind::ALL.map(|kind| {
            compiled
                .iter()
                .find(|(key, _)| key.kind == kind && key.out == *t)
                .map_or_else(|| format!("{:>6}", "-"), |(_, kernels)| format!("{kernels:>6}"))
        });
        println!("{:<28} {}", format!("{t} ({})", t.c_name()).chars().take(28).collect::<String>(), cells.join(" "));
    }
}
