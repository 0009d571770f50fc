//! Runtime dtypes and numeric formats, each beside its peer in the same run: a dynamically typed
//! import plus `typed()` beside the typed import of the same tensor (what a Python function taking
//! a tensor of unknown dtype pays over one of known dtype); FP8 encoding and decoding beside the
//! `half` crate's `f16` conversions (the established narrow-float conversions on this machine); the
//! cast copy between views beside a hand-written conversion loop over the same slices; the import of
//! a million `kDLBool` elements as `bool` (every byte checked, rule I18) beside `Bool` and `u8`
//! (nothing read), contiguous and strided.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dlspan::dtype::{Bool, Float8E4m3fn, Float8E5m2, cast};
use dlspan::ffi::{DLDevice, DLDeviceType, DLTensor};
use dlspan::half::f16;
use dlspan::*;
use std::hint::black_box;
use std::time::Duration;

fn tensor(data: &mut [f32], shape: &mut [i64; 2], strides: &mut [i64; 2]) -> DLTensor {
    DLTensor {
        data: data.as_mut_ptr().cast(),
        device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        ndim: 2,
        dtype: f32::DTYPE,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    }
}

fn imports(c: &mut Criterion) {
    let mut data = vec![0f32; 64 * 64];
    let (mut shape, mut strides) = ([64i64, 64], [64i64, 1]);
    let t = tensor(&mut data, &mut shape, &mut strides);
    let mut group = c.benchmark_group("dtype/import_2d");
    group.bench_function("typed", |b| {
        b.iter(|| {
            // SAFETY: the tensor describes `data`, alive and unwritten.
            let view = unsafe { to_host_mdspan::<f32, 2, LayoutStride>(black_box(&t)) }.unwrap();
            view.data_handle() as usize ^ view.extent(1)
        })
    });
    group.bench_function("dynamic", |b| {
        b.iter(|| {
            // SAFETY: as above.
            let view = unsafe { DynMdspan::<Host>::from_dltensor(black_box(&t)) }.unwrap();
            view.data_handle() as usize ^ view.shape()[1]
        })
    });
    group.bench_function("dynamic_then_typed", |b| {
        b.iter(|| {
            // SAFETY: as above.
            let view = unsafe { DynMdspan::<Host>::from_dltensor(black_box(&t)) }.unwrap();
            let typed = view.typed::<f32, 2, LayoutStride>().unwrap();
            typed.data_handle() as usize ^ typed.extent(1)
        })
    });
    group.finish();
}

/// A 1024 x 1024 byte tensor (`dtype`), or every other column of it (`strided`).
fn byte_tensor(data: &mut [u8], shape: &mut [i64; 2], strides: &mut [i64; 2], dtype: bool) -> DLTensor {
    DLTensor {
        data: data.as_mut_ptr().cast(),
        device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        ndim: 2,
        dtype: if dtype { bool::DTYPE } else { u8::DTYPE },
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    }
}

/// The import of a million booleans: `bool` reads every byte (the only type that does), `Bool` and
/// `u8` read none; the strided case reads half of them, element by element.
fn bool_imports(c: &mut Criterion) {
    const SIDE: usize = 1024;
    let mut data: Vec<u8> = (0..SIDE * SIDE).map(|i| u8::from(i % 3 == 0)).collect();
    let (mut shape, mut strides) = ([SIDE as i64; 2], [SIDE as i64, 1]);
    let bools = byte_tensor(&mut data, &mut shape, &mut strides, true);
    let bytes = byte_tensor(&mut data, &mut shape, &mut strides, false);
    let mut group = c.benchmark_group("dtype/import_bool_1m");
    group.throughput(Throughput::Elements((SIDE * SIDE) as u64));
    group.bench_function("bool_checked", |b| {
        b.iter(|| {
            // SAFETY: the tensor describes `data`, alive and unwritten.
            let view = unsafe { to_host_mdspan::<bool, 2, LayoutRight>(black_box(&bools)) }.unwrap();
            view.data_handle() as usize ^ view.extent(1)
        })
    });
    group.bench_function("Bool", |b| {
        b.iter(|| {
            // SAFETY: as above.
            let view = unsafe { to_host_mdspan::<Bool, 2, LayoutRight>(black_box(&bools)) }.unwrap();
            view.data_handle() as usize ^ view.extent(1)
        })
    });
    group.bench_function("u8", |b| {
        b.iter(|| {
            // SAFETY: as above.
            let view = unsafe { to_host_mdspan::<u8, 2, LayoutRight>(black_box(&bytes)) }.unwrap();
            view.data_handle() as usize ^ view.extent(1)
        })
    });
    group.finish();

    let (mut shape, mut strides) = ([SIDE as i64, SIDE as i64 / 2], [SIDE as i64, 2]);
    let columns = byte_tensor(&mut data, &mut shape, &mut strides, true);
    let mut group = c.benchmark_group("dtype/import_bool_strided_512k");
    group.throughput(Throughput::Elements((SIDE * SIDE / 2) as u64));
    group.bench_function("bool_checked", |b| {
        b.iter(|| {
            // SAFETY: the tensor describes every other byte of `data`, alive and unwritten.
            let view = unsafe { to_host_mdspan::<bool, 2, LayoutStride>(black_box(&columns)) }.unwrap();
            view.data_handle() as usize ^ view.extent(1)
        })
    });
    group.bench_function("Bool", |b| {
        b.iter(|| {
            // SAFETY: as above.
            let view = unsafe { to_host_mdspan::<Bool, 2, LayoutStride>(black_box(&columns)) }.unwrap();
            view.data_handle() as usize ^ view.extent(1)
        })
    });
    group.finish();
}

const VALUES: usize = 1 << 14;

fn conversions(c: &mut Criterion) {
    let inputs: Vec<f32> = (0..VALUES).map(|i| (i as f32 - 8000.0) * 0.037).collect();
    let fp8: Vec<Float8E4m3fn> = inputs.iter().map(|&x| Float8E4m3fn::from_f32(x)).collect();
    let halves: Vec<f16> = inputs.iter().map(|&x| f16::from_f32(x)).collect();
    let mut group = c.benchmark_group("dtype/convert");
    group.throughput(Throughput::Elements(VALUES as u64));
    group.bench_function("encode_e4m3fn", |b| {
        b.iter(|| black_box(&inputs).iter().map(|&x| Float8E4m3fn::from_f32(x).to_bits()).fold(0u8, u8::wrapping_add))
    });
    group.bench_function("encode_e5m2", |b| {
        b.iter(|| black_box(&inputs).iter().map(|&x| Float8E5m2::from_f32(x).to_bits()).fold(0u8, u8::wrapping_add))
    });
    group.bench_function("encode_f16_half", |b| {
        b.iter(|| black_box(&inputs).iter().map(|&x| f16::from_f32(x).to_bits()).fold(0u16, u16::wrapping_add))
    });
    group.bench_function("decode_e4m3fn", |b| b.iter(|| black_box(&fp8).iter().map(|x| x.to_f32()).sum::<f32>()));
    group.bench_function("decode_f16_half", |b| b.iter(|| black_box(&halves).iter().map(|x| x.to_f32()).sum::<f32>()));
    group.finish();

    let mut group = c.benchmark_group("dtype/cast_copy");
    group.throughput(Throughput::Elements(VALUES as u64));
    let source = HostMdspan::<f32, 2>::from_slice(&inputs, [128, 128]).unwrap();
    let mut target = vec![Float8E4m3fn::default(); VALUES];
    group.bench_function("cast_from_f32_e4m3fn", |b| {
        b.iter(|| {
            let mut view = HostMdspanMut::<Float8E4m3fn, 2>::from_slice(&mut target, [128, 128]).unwrap();
            view.cast_from(black_box(&source)).unwrap();
        })
    });
    group.bench_function("loop_f32_e4m3fn", |b| {
        b.iter(|| {
            for (t, &x) in target.iter_mut().zip(black_box(&inputs)) {
                *t = Float8E4m3fn::from_f32(x);
            }
        })
    });
    let mut halves_out = vec![f16::ZERO; VALUES];
    group.bench_function("cast_from_f32_f16", |b| {
        b.iter(|| {
            let mut view = HostMdspanMut::<f16, 2>::from_slice(&mut halves_out, [128, 128]).unwrap();
            view.cast_from(black_box(&source)).unwrap();
        })
    });
    group.bench_function("loop_f32_f16_half", |b| {
        b.iter(|| {
            for (t, &x) in halves_out.iter_mut().zip(black_box(&inputs)) {
                *t = f16::from_f32(x);
            }
        })
    });
    group.bench_function("cast_scalar_f64_bf16", |b| {
        b.iter(|| {
            black_box(&inputs)
                .iter()
                .map(|&x| cast::<f64, dlspan::half::bf16>(f64::from(x)).to_bits())
                .fold(0u16, u16::wrapping_add)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    targets = imports, conversions, bool_imports
}
criterion_main!(benches);
