//! The host-side cost of launching a cached element-wise kernel, the driver call excluded, beside
//! pushing the same arguments through cudarc's launch builder (target ≤ 1.1×). Feature `cuda`;
//! needs no driver or GPU.
//!
//! - dlspan: what `axpby.run(&stream, a, b, &x, &y, &mut out)` does before the driver's launch
//!   call, over three 1024×1024 f32 device views (row-major, a transposed input, a broadcast row):
//!   the views become operands (`Read<&Stream, _>`), the inputs are broadcast and checked, the
//!   launch is planned (axes merged, 32-bit divisors, the parameter block filled, the scalars
//!   placed), the module found in a device's module cache and the kernel in its table (the very
//!   `ModuleCache` and `FunctionTable` a `Gpu` holds, filled beforehand as after the first launch),
//!   and the parameter block pushed as the launch's one argument.
//! - cudarc: a hand-written strided kernel's arguments pushed through cudarc's `LaunchArgs`, as
//!   `launch_builder(..).arg(..)` pushes them: `a`, `b`, the three `CudaSlice`s (each one pointer
//!   and, in cudarc's default multi-stream mode, its events into the wait and record lists), the
//!   element count, the two extents and each view's two strides. cudarc's builder needs a live
//!   stream and function, which need a driver, so this is a copy of its code (cudarc 0.19.10,
//!   `driver/safe/launch.rs`: three `Vec`s, the same pushes in the same order) over stand-ins for
//!   the stream, the function and the events.
//!
//! The group `kernel_cache` times the on-disk PTX cache: a module compiled by NVRTC beside the same
//! module loaded from disk (needs NVRTC only).
//!
//! Without a driver the device views come from raw parts (they carry no ordering event): the
//! event waits and records around a launch are driver calls, excluded on both sides.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{Criterion, criterion_group, criterion_main};
use dlspan::cuda::Stream;
use dlspan::cuda::kernel::{FunctionTable, ModuleCache, ModuleKey, Plan, elementwise_plan, elementwise_plan_into};
use dlspan::kernel::{Scalar, ViewArgs, scalar_bytes};
use dlspan::{DeviceMdspan, DeviceMdspanMut, LayoutStride, LayoutStrideRelaxed, Mapping};
use std::ffi::c_void;
use std::hint::black_box;
use std::time::Duration;

const N: usize = 1024;

dlspan::elementwise! {
    /// `out = a·x + b·y`.
    fn axpby<T: Scalar>(a: T, b: T, x: &T, y: &T, out: &mut T) {
        *out = a * *x + b * *y;
    }
}

/// cudarc 0.19.10's `LaunchArgs`, field for field, over stand-ins for the stream, the function and
/// the events (which need a driver to exist).
#[allow(dead_code)]
struct LaunchArgs<'a> {
    stream: &'a Stand,
    func: &'a Stand,
    waits: Vec<&'a Stand>,
    records: Vec<&'a Stand>,
    args: Vec<*mut c_void>,
    flags: Option<u32>,
}

/// A stand-in for a cudarc stream, function or event.
struct Stand(#[allow(dead_code)] u64);

/// A stand-in for a `CudaSlice`: its device pointer and its two events.
struct Slice {
    ptr: u64,
    read: Option<Stand>,
    write: Option<Stand>,
}

impl<'a> LaunchArgs<'a> {
    /// `CudaStream::launch_builder`.
    fn new(stream: &'a Stand, func: &'a Stand) -> Self {
        Self { stream, func, waits: Vec::new(), records: Vec::new(), args: Vec::new(), flags: None }
    }

    /// `PushKernelArg<&T>` for plain values.
    fn arg<T>(&mut self, arg: &'a T) -> &mut Self {
        self.args.push(arg as *const T as *mut _);
        self
    }

    /// `PushKernelArg<&CudaSlice<T>>` in multi-stream mode.
    fn slice(&mut self, arg: &'a Slice) -> &mut Self {
        if let Some(write) = arg.write.as_ref() {
            self.waits.push(write);
        }
        if let Some(read) = arg.read.as_ref() {
            self.records.push(read);
        }
        self.args.push((&arg.ptr) as *const u64 as _);
        self
    }

    /// `PushKernelArg<&mut CudaSlice<T>>` in multi-stream mode.
    fn slice_mut(&mut self, arg: &'a Slice) -> &mut Self {
        if let Some(read) = arg.read.as_ref() {
            self.waits.push(read);
        }
        if let Some(write) = arg.write.as_ref() {
            self.waits.push(write);
            self.records.push(write);
        }
        self.args.push((&arg.ptr) as *const u64 as _);
        self
    }
}

fn benches(c: &mut Criterion) {
    // Device views of three allocations (from raw parts: no driver here). `x` transposed, `y` one
    // row broadcast to every row.
    let address = |k: usize| core::ptr::without_provenance_mut::<f32>(0x7f00_0000_0000 + k * (N * N * 4));
    // SAFETY: the views are never read or written: only their operands are taken.
    let x = unsafe {
        DeviceMdspan::<f32, 2, LayoutStride>::from_raw_parts(
            address(0),
            Mapping::from_strides([N, N], [1, N as isize]).unwrap(),
            0,
        )
    };
    // SAFETY: as above.
    let y = unsafe {
        DeviceMdspan::<f32, 2, LayoutStrideRelaxed>::from_raw_parts(
            address(1),
            Mapping::from_strides([N, N], [0, 1]).unwrap(),
            0,
        )
    };
    // SAFETY: as above.
    let mut out =
        unsafe { DeviceMdspanMut::<f32, 2>::from_raw_parts(address(2), Mapping::compact([N, N]).unwrap(), 0) }.unwrap();
    let (a, b) = (0.5f32, 2.0f32);
    // A device's caches after the first launch: the module compiled, the kernel loaded.
    let modules = ModuleCache::<FunctionTable<u64>>::default();
    let mut views = (&x, &y, &mut out);
    let mut operands = <(_, _, _) as ViewArgs<&Stream, 2, 3>>::operands(&mut views);
    let (key, plan) = elementwise_plan(axpby::instance::<f32>(), &mut operands, &[scalar_bytes(&a), scalar_bytes(&b)])
        .unwrap()
        .unwrap();
    let table = modules.get_or_compile(&key, || Ok(FunctionTable::default())).unwrap();
    table.get_or_load(plan.shape, plan.index, || Ok(0xF00D)).unwrap();
    let (key0, plan0) = (key, plan);

    let (stream, func) = (Stand(1), Stand(2));
    let mut group = c.benchmark_group("launch_axpby_1024x1024");
    group.bench_function("dlspan_marshal", |bench| {
        bench.iter(|| {
            let mut views = (black_box(&x), black_box(&y), &mut out);
            let mut operands = <(_, _, _) as ViewArgs<&Stream, 2, 3>>::operands(&mut views);
            let scalars = [scalar_bytes(&a), scalar_bytes(&b)];
            let instance = axpby::instance::<f32>();
            // A fresh parameter block, as `Stream::launch_elementwise` makes for each launch.
            let mut plan = Plan::EMPTY;
            assert!(elementwise_plan_into(instance, &mut operands, &scalars, &mut plan).unwrap());
            let table = modules.get_or_compile(&ModuleKey::Elementwise(instance), || unreachable!("cached")).unwrap();
            let function = *table.get_or_load(plan.shape, plan.index, || unreachable!("loaded")).unwrap();
            let mut launch = LaunchArgs::new(&stream, &func);
            launch.arg(&plan.params);
            black_box((&launch.args, function));
        })
    });
    let slices = [
        Slice { ptr: 0x7f00_0000_0000, read: Some(Stand(3)), write: Some(Stand(4)) },
        Slice { ptr: 0x7f00_0040_0000, read: Some(Stand(5)), write: Some(Stand(6)) },
        Slice { ptr: 0x7f00_0080_0000, read: Some(Stand(7)), write: Some(Stand(8)) },
    ];
    let shape = [N as u64, N as u64];
    let strides = [[1u64, N as u64], [0, 1], [N as u64, 1]];
    let n = (N * N) as u64;
    group.bench_function("cudarc_builder", |bench| {
        bench.iter(|| {
            let mut launch = LaunchArgs::new(&stream, &func);
            launch
                .arg(black_box(&a))
                .arg(black_box(&b))
                .slice(&slices[0])
                .slice(&slices[1])
                .slice_mut(&slices[2])
                .arg(&n)
                .arg(&shape[0])
                .arg(&shape[1]);
            for s in &strides {
                launch.arg(&s[0]).arg(&s[1]);
            }
            black_box((&launch.args, &launch.waits, &launch.records));
        })
    });
    group.bench_function("step_operands", |bench| {
        bench.iter(|| {
            let mut views = (black_box(&x), black_box(&y), &mut out);
            let operands = <(_, _, _) as ViewArgs<&Stream, 2, 3>>::operands(&mut views);
            black_box(operands.len());
        })
    });
    group.bench_function("step_plan", |bench| {
        let ops = [
            dlspan::cuda::kernel::Operand::new(0x7f00_0080_0000, [N as isize, 1], 4),
            dlspan::cuda::kernel::Operand::new(0x7f00_0000_0000, [1, N as isize], 4),
            dlspan::cuda::kernel::Operand::new(0x7f00_0040_0000, [0, 1], 4),
        ];
        let mut plan = Plan::EMPTY;
        bench.iter(|| {
            black_box(dlspan::cuda::kernel::plan_into(black_box([N, N]), black_box(&ops), false, &mut plan).unwrap())
        })
    });
    group.bench_function("step_lookup", |bench| {
        bench.iter(|| {
            let table = modules.get_or_compile(black_box(&key0), || unreachable!("cached")).unwrap();
            black_box(*table.get_or_load(plan0.shape, plan0.index, || unreachable!("loaded")).unwrap());
        })
    });
    group.bench_function("step_instance", |bench| bench.iter(|| black_box(axpby::instance::<f32>())));
    group.finish();
}

/// The on-disk PTX cache (rule K10): `axpby<float32>`'s module compiled by NVRTC beside the same
/// module loaded from a cache directory a first compilation filled (a fresh `DiskCache` each time,
/// as a new process has). Needs NVRTC (no driver); skipped without it.
fn disk_cache(c: &mut Criterion) {
    use dlspan::cuda::kernel::{DiskCache, Origin, compile_ptx_with, nvrtc_version};
    if nvrtc_version().is_none() {
        eprintln!("kernel_cache: skipped: NVRTC is not loadable (LD_LIBRARY_PATH=$(bash scripts/deps.sh nvrtc))");
        return;
    }
    let key = ModuleKey::elementwise(axpby::instance::<f32>()).unwrap();
    let dir = std::env::temp_dir().join(format!("dlspan-bench-kernels-{}", std::process::id()));
    let filled = compile_ptx_with(&key, "compute_90", &DiskCache::at(&dir)).unwrap();
    assert_eq!(filled.origin, Origin::Nvrtc);
    let mut group = c.benchmark_group("kernel_cache");
    group.sample_size(10);
    group.bench_function("nvrtc_compile", |bench| {
        bench.iter(|| black_box(compile_ptx_with(black_box(&key), "compute_90", &DiskCache::off()).unwrap()))
    });
    group.bench_function("disk_load", |bench| {
        bench.iter(|| {
            let loaded = compile_ptx_with(black_box(&key), "compute_90", &DiskCache::at(&dir)).unwrap();
            assert_eq!(loaded.origin, Origin::Disk);
            black_box(loaded)
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = launch;
    config = Criterion::default().warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2)).sample_size(50);
    targets = benches
}
criterion_group! {
    name = cache;
    config = Criterion::default().warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(3));
    targets = disk_cache
}
criterion_main!(launch, cache);
