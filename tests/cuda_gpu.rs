//! The GPU tier: kernels, copies, exports and streams on a real device, against the CPU reference,
//! on fresh random data with poisoned outputs. Without a CUDA device each test prints
//! `skipped: no CUDA device` and passes; `scripts/gpu.sh` runs this binary on a GPU machine.
#![cfg(feature = "cuda")]

#[macro_use]
mod cuda_support;
#[macro_use]
mod kernels_support;
mod raw_kernels_support;

use cuda_support::{
    Arith, CAST_SCALARS, Case, CastInput, Reference, Rng, TestElement, arithmetic, bytes, cast, movement,
    random_extents, random_layout,
};
use cudarc::driver::CudaSlice;
use dlspan::cuda::{
    CudaError, CudaLibrary, Gpu, KernelKind, Stream, device_count, driver_present, export_cuda,
    export_cuda_for_consumer,
};
use dlspan::half::{bf16, f16};
use dlspan::{
    DeviceMdspan, DeviceMdspanMut, DlElement, HostMdspan, HostMdspanMut, LayoutRight, LayoutStrideRelaxed,
    ManagedMdspan, ManagedMdspanMut, Mapping,
};

/// The stream of device 0, or `None` after printing why the test skips.
fn stream_or_skip() -> Option<Stream> {
    if device_count() == 0 {
        eprintln!("skipped: no CUDA device");
        return None;
    }
    Some(Gpu::new(0).expect("device 0").new_stream().expect("a stream"))
}

#[test]
fn without_a_driver_every_entry_point_is_a_typed_error() {
    if driver_present() {
        eprintln!("skipped: a CUDA driver is installed (this test covers machines without one)");
        return;
    }
    assert_eq!(device_count(), 0);
    assert!(matches!(Gpu::new(0), Err(CudaError::LibraryMissing { library: CudaLibrary::Driver })));
}

/// Uploads `values` into a fresh device allocation.
fn upload<T: DlElement>(stream: &Stream, values: &[T]) -> CudaSlice<T> {
    let mut buffer = stream.alloc_zeros::<T>(values.len()).expect("alloc");
    let host = HostMdspan::<T, 1>::from_slice(values, [values.len()]).expect("host view");
    let mut device = DeviceMdspanMut::<T, 1>::from_cuda(&mut buffer, [values.len()]).expect("device view");
    stream.copy_from_host(&host, &mut device).expect("upload");
    buffer
}

/// Downloads a whole device allocation.
fn download<T: DlElement + Default>(stream: &Stream, buffer: &CudaSlice<T>) -> Vec<T> {
    let mut values = vec![T::default(); buffer.len()];
    let device = DeviceMdspan::<T, 1>::from_cuda(buffer, [buffer.len()]).expect("device view");
    let mut host = HostMdspanMut::<T, 1>::from_slice(&mut values, [buffer.len()]).expect("host view");
    stream.copy_to_host(&device, &mut host).expect("download");
    values
}

type View<'a, T, const R: usize> = DeviceMdspan<'a, T, R, LayoutStrideRelaxed>;
type ViewMut<'a, T, const R: usize> = DeviceMdspanMut<'a, T, R, LayoutStrideRelaxed>;

/// An operation launched on device views of any rank.
trait Launch<Out, In> {
    fn kind(&self) -> KernelKind;
    fn launch<const R: usize>(
        &self,
        stream: &Stream,
        inputs: &[View<'_, In, R>],
        out: &mut ViewMut<'_, Out, R>,
        scalar: Out,
    ) -> Result<(), CudaError>;
}

/// Copy, fill, add, mul, scale and axpy of one element type.
struct Same(KernelKind);

impl<T: DlElement> Launch<T, T> for Same {
    fn kind(&self) -> KernelKind {
        self.0
    }

    fn launch<const R: usize>(
        &self,
        stream: &Stream,
        inputs: &[View<'_, T, R>],
        out: &mut ViewMut<'_, T, R>,
        scalar: T,
    ) -> Result<(), CudaError> {
        match self.0 {
            KernelKind::Copy => stream.copy(&inputs[0], out),
            KernelKind::Fill => stream.fill(out, scalar),
            KernelKind::Add => stream.add(&inputs[0], &inputs[1], out),
            KernelKind::Mul => stream.mul(&inputs[0], &inputs[1], out),
            // `scale` is in place (its case has no input).
            KernelKind::Scale => stream.scale(out, scalar),
            KernelKind::Axpy => stream.axpy(out, scalar, &inputs[0]),
            KernelKind::Cast => stream.cast(&inputs[0], out),
            KernelKind::Sum => unreachable!("a sum returns its value (sums_match_the_reference_on_the_gpu)"),
        }
    }
}

/// A cast between two element types.
struct Cast;

impl<Out: DlElement, In: DlElement> Launch<Out, In> for Cast {
    fn kind(&self) -> KernelKind {
        KernelKind::Cast
    }

    fn launch<const R: usize>(
        &self,
        stream: &Stream,
        inputs: &[View<'_, In, R>],
        out: &mut ViewMut<'_, Out, R>,
        _: Out,
    ) -> Result<(), CudaError> {
        stream.cast(&inputs[0], out)
    }
}

/// Runs `case` on the GPU (the inputs and the poisoned output uploaded) and compares the whole
/// output allocation, byte for byte, with the CPU reference.
fn gpu_case<Out: TestElement + Default, In: TestElement, const R: usize>(
    stream: &Stream,
    op: &impl Launch<Out, In>,
    case: &Case<Out, In, R>,
    reference: Reference<'_, Out, In>,
) {
    let expected = case.expected(reference);
    let inputs: Vec<CudaSlice<In>> = case.in_buffers.iter().map(|v| upload(stream, v)).collect();
    let mut out = upload(stream, &case.poisoned);
    {
        let views: Vec<View<'_, In, R>> = inputs
            .iter()
            .zip(&case.in_layouts)
            .map(|(buffer, l)| DeviceMdspan::from_cuda_relaxed(buffer, case.extents, l.strides, l.offset).unwrap())
            .collect();
        let mut target =
            ViewMut::from_cuda_relaxed(&mut out, case.extents, case.out_layout.strides, case.out_layout.offset)
                .unwrap();
        op.launch(stream, &views, &mut target, case.scalar).expect("launch");
    }
    let actual = download(stream, &out);
    assert!(
        bytes(&actual) == bytes(&expected),
        "{} {} <- {} differs from the CPU reference: extents {:?}, output {:?}, inputs {:?}",
        op.kind(),
        Out::DTYPE,
        In::DTYPE,
        case.extents,
        case.out_layout,
        case.in_layouts
    );
}

/// Random cases of `op` at every rank class, large enough for tiles in some.
fn gpu_cases<Out: TestElement + Default, In: TestElement>(
    stream: &Stream,
    op: &impl Launch<Out, In>,
    rng: &mut Rng,
    reference: Reference<'_, Out, In>,
    value: fn(&mut Rng) -> In,
) {
    let kind = op.kind();
    for _ in 0..6 {
        gpu_case(stream, op, &Case::<Out, In, 1>::random(rng, kind, 9, value), reference);
        gpu_case(stream, op, &Case::<Out, In, 2>::random(rng, kind, 9, value), reference);
        gpu_case(stream, op, &Case::<Out, In, 2>::random(rng, kind, 300, value), reference);
        gpu_case(stream, op, &Case::<Out, In, 3>::random(rng, kind, 9, value), reference);
        gpu_case(stream, op, &Case::<Out, In, 3>::random(rng, kind, 40, value), reference);
        gpu_case(stream, op, &Case::<Out, In, 4>::random(rng, kind, 9, value), reference);
        gpu_case(stream, op, &Case::<Out, In, 6>::random(rng, kind, 3, value), reference);
    }
}

/// Every operation of `T` on random cases.
fn same_type_cases<T: Arith + Default>(stream: &Stream, seed: u64) {
    let mut rng = Rng::new(seed);
    for kind in [KernelKind::Copy, KernelKind::Fill] {
        gpu_cases::<T, T>(stream, &Same(kind), &mut rng, &movement::<T>(kind), T::any);
    }
    for kind in [KernelKind::Add, KernelKind::Mul, KernelKind::Scale, KernelKind::Axpy] {
        gpu_cases::<T, T>(stream, &Same(kind), &mut rng, &arithmetic::<T>(kind), T::random);
    }
}

/// The time as a seed: fresh random data on every run (printed, to replay a failure).
fn fresh_seed() -> u64 {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
    println!("seed {seed}");
    seed
}

#[test]
fn kernels_match_the_cpu_reference_on_the_gpu() {
    let Some(stream) = stream_or_skip() else { return };
    let seed = fresh_seed();
    same_type_cases::<u8>(&stream, seed);
    same_type_cases::<i32>(&stream, seed + 1);
    same_type_cases::<u64>(&stream, seed + 2);
    same_type_cases::<i128>(&stream, seed + 3);
    same_type_cases::<f16>(&stream, seed + 4);
    same_type_cases::<bf16>(&stream, seed + 5);
    same_type_cases::<f32>(&stream, seed + 6);
    same_type_cases::<f64>(&stream, seed + 7);
    assert!(stream.gpu().compiled_modules() >= 40, "each module compiled once per device");
}

macro_rules! cast_cases {
    (($stream:expr, $rng:expr) $(($out:ty, $in:ty)),*) => {$(
        gpu_cases::<$out, $in>($stream, &Cast, $rng, &cast::<$out, $in>, <$in>::any);
    )*};
}

/// Cast kernels of every kind of conversion on random layouts (flat, strided, tiled), NaNs and
/// infinities in the inputs.
#[test]
fn casts_match_the_cpu_cast_on_random_layouts_on_the_gpu() {
    let Some(stream) = stream_or_skip() else { return };
    let mut rng = Rng::new(fresh_seed());
    cast_layout_pairs!(cast_cases!(&stream, &mut rng));
}

/// Casts `inputs` (uploaded as `device`) to `Out` and compares every result, bit for bit, with
/// dlspan's CPU cast: the hardware's conversions (int to float, float to double, truncation)
/// where the host-logic tier ran the host's.
fn check_cast<Out: CastInput + Default, In: CastInput>(stream: &Stream, inputs: &[In], device: &CudaSlice<In>) {
    let expected: Vec<Out> = inputs.iter().map(|&x| dlspan::dtype::cast::<In, Out>(x)).collect();
    let n = inputs.len();
    let mut out = stream.alloc_zeros::<Out>(n).expect("alloc");
    stream
        .cast(
            &DeviceMdspan::<In, 1>::from_cuda(device, [n]).unwrap(),
            &mut DeviceMdspanMut::<Out, 1>::from_cuda(&mut out, [n]).unwrap(),
        )
        .expect("launch");
    let actual = download(stream, &out);
    if let Some(i) = (0..n).find(|&i| bytes(&actual[i..=i]) != bytes(&expected[i..=i])) {
        panic!(
            "cast {} <- {} on the GPU: input {:?} (bits {:02x?}) gave {:?} (bits {:02x?}), the CPU cast {:?}",
            Out::DTYPE,
            In::DTYPE,
            inputs[i],
            bytes(&inputs[i..=i]),
            actual[i],
            bytes(&actual[i..=i]),
            expected[i]
        );
    }
}

/// Every pair of scalar types on the boundary inputs, a thread and a stream per source type (the
/// modules compile in parallel).
#[test]
fn every_cast_pair_matches_the_cpu_cast_on_the_gpu() {
    let Some(stream) = stream_or_skip() else { return };
    let gpu = stream.gpu().clone();
    std::thread::scope(|scope| {
        for_each_cast_scalar!(In => {
            let gpu = gpu.clone();
            scope.spawn(move || {
                let started = std::time::Instant::now();
                let stream = gpu.new_stream().expect("a stream");
                let inputs = In::boundary_inputs();
                let device = upload(&stream, &inputs);
                for_each_cast_scalar!(Out => check_cast::<Out, In>(&stream, &inputs, &device));
                // Progress, for a run stopped by its time limit: which sources finished, when.
                eprintln!(
                    "casts from {}: {CAST_SCALARS} targets right after {:.1} s ({} modules compiled so far)",
                    In::DTYPE,
                    started.elapsed().as_secs_f64(),
                    gpu.compiled_modules()
                );
            });
        });
    });
    assert!(gpu.compiled_modules() >= CAST_SCALARS * CAST_SCALARS);
}

#[test]
fn host_device_copies_take_any_strides_on_either_side() {
    let Some(stream) = stream_or_skip() else { return };
    let mut rng = Rng::new(9);
    for _ in 0..40 {
        let extents = random_extents::<3>(&mut rng, 7);
        let host_layout = random_layout(&mut rng, extents, false);
        let device_layout = random_layout(&mut rng, extents, false);
        let values: Vec<f32> = (0..host_layout.len).map(|_| f32::random(&mut rng)).collect();
        let src = HostMdspan::<f32, 3, LayoutStrideRelaxed>::from_slice_relaxed(
            &values,
            extents,
            host_layout.strides,
            host_layout.offset,
        )
        .unwrap();
        let mut device = stream.alloc_zeros::<f32>(device_layout.len).unwrap();
        stream
            .copy_from_host(
                &src,
                &mut DeviceMdspanMut::<f32, 3, LayoutStrideRelaxed>::from_cuda_relaxed(
                    &mut device,
                    extents,
                    device_layout.strides,
                    device_layout.offset,
                )
                .unwrap(),
            )
            .unwrap();
        let mut back = vec![0.0f32; extents.iter().product()];
        let mut dst = HostMdspanMut::<f32, 3, LayoutRight>::from_slice(&mut back, extents).unwrap();
        let view = DeviceMdspan::<f32, 3, LayoutStrideRelaxed>::from_cuda_relaxed(
            &device,
            extents,
            device_layout.strides,
            device_layout.offset,
        )
        .unwrap();
        stream.copy_to_host(&view, &mut dst).unwrap();
        assert_eq!(back, src.to_vec(), "extents {extents:?}, host {host_layout:?}, device {device_layout:?}");
    }
}

#[test]
fn operands_of_other_devices_and_shapes_are_refused() {
    let Some(stream) = stream_or_skip() else { return };
    let a = stream.alloc_zeros::<f32>(6).unwrap();
    let mut out = stream.alloc_zeros::<f32>(6).unwrap();
    let a_view = DeviceMdspan::<f32, 2>::from_cuda(&a, [2, 3]).unwrap();
    // The same memory claimed for device 1: refused before any launch.
    // SAFETY: the view is never read; its mapping fits the allocation.
    let foreign =
        unsafe { DeviceMdspan::<f32, 2>::from_raw_parts(a_view.data_handle(), Mapping::compact([2, 3]).unwrap(), 1) };
    let mut out_view = DeviceMdspanMut::<f32, 2>::from_cuda(&mut out, [2, 3]).unwrap();
    assert!(matches!(stream.copy(&foreign, &mut out_view), Err(CudaError::WrongDevice { expected: 0, found: 1 })));
    let a_flat = DeviceMdspan::<f32, 2>::from_cuda(&a, [3, 2]).unwrap();
    assert!(matches!(
        stream.copy(&a_flat, &mut out_view),
        Err(CudaError::View(dlspan::DlpackError::ShapeMismatch { axis: 0, expected: 2, found: 3 }))
    ));
    assert!(matches!(
        stream.add(
            &DeviceMdspan::<bool, 1>::from_cuda(&stream.alloc_zeros::<bool>(1).unwrap(), [1]).unwrap(),
            &DeviceMdspan::<bool, 1>::from_cuda(&stream.alloc_zeros::<bool>(1).unwrap(), [1]).unwrap(),
            &mut DeviceMdspanMut::<bool, 1>::from_cuda(&mut stream.alloc_zeros::<bool>(1).unwrap(), [1]).unwrap()
        ),
        Err(CudaError::Unsupported { .. })
    ));
}

#[test]
fn exports_free_device_memory_from_any_thread_and_import_as_device_views() {
    let Some(stream) = stream_or_skip() else { return };
    let values: Vec<i32> = (0..12).collect();
    let buffer = upload(&stream, &values);
    let tensor = export_cuda(buffer, [3, 4]).unwrap();
    assert_eq!(tensor.device().device_type, dlspan::ffi::DLDeviceType::kDLCUDA);
    {
        let view = tensor.view_as::<DeviceMdspan<'_, i32, 2, LayoutRight>>().unwrap();
        let mut back = vec![0i32; 12];
        stream.copy_to_host(&view, &mut HostMdspanMut::<i32, 2>::from_slice(&mut back, [3, 4]).unwrap()).unwrap();
        assert_eq!(back, values);
    }
    let raw = tensor.into_raw_versioned();
    let handle = raw as usize;
    std::thread::spawn(move || {
        let raw = handle as *mut dlspan::ffi::DLManagedTensorVersioned;
        // SAFETY: `raw` is the live export handed over to this thread.
        let deleter = unsafe { (*raw).deleter }.expect("a deleter");
        // SAFETY: this thread is the export's only owner and calls its deleter once.
        unsafe { deleter(raw) };
    })
    .join()
    .unwrap();
    stream.gpu().context().check_err().expect("the deleter freed the memory without a driver error");
}

#[test]
fn streams_order_work_through_events_and_dlpack_stream_values() {
    let Some(stream) = stream_or_skip() else { return };
    let gpu = stream.gpu().clone();
    let consumer = gpu.new_stream().unwrap();
    let n = 1 << 22;
    let mut big = stream.alloc_zeros::<f32>(n).unwrap();
    {
        let mut view = DeviceMdspanMut::<f32, 1>::from_cuda(&mut big, [n]).unwrap();
        for _ in 0..20 {
            stream.fill(&mut view, 3.0).unwrap();
        }
    }
    // SAFETY: the consumer's value names a live stream of this context.
    unsafe { stream.sync_for_consumer(Some(consumer.dlpack_stream())) }.unwrap();
    let done = consumer.record().unwrap();
    done.synchronize().unwrap();
    // SAFETY: 0 is refused before any use.
    assert!(matches!(unsafe { stream.sync_for_consumer(Some(0)) }, Err(CudaError::InvalidDlpackStream { value: 0 })));
    assert_eq!(gpu.default_stream().dlpack_stream(), 1);
    let values = download(&stream, &big);
    assert!(values.iter().all(|&v| v == 3.0));
}

/// Elements of the buffers the ordering tests race on: large enough that a kernel runs for tens of
/// microseconds, so unordered work on another stream would overlap it.
const RACE: usize = 1 << 22;

/// Fills `buffer` on `stream` with 1, 2, ..., `rounds`: the last value is there only once every
/// fill has run.
fn fill_rounds(stream: &Stream, buffer: &mut CudaSlice<f32>, rounds: u16) {
    let mut view = DeviceMdspanMut::<f32, 1>::from_cuda(buffer, [buffer.len()]).unwrap();
    for round in 1..=rounds {
        stream.fill(&mut view, f32::from(round)).unwrap();
    }
}

/// The positions where `values` differ from `expected` (at most a few), for the failure message.
fn mismatches(values: &[f32], expected: f32) -> Vec<(usize, f32)> {
    values.iter().copied().enumerate().filter(|&(_, v)| v != expected).take(4).collect()
}

#[test]
fn work_on_another_stream_waits_for_the_allocations_pending_writes() {
    let Some(a) = stream_or_skip() else { return };
    let (b, c) = (a.gpu().new_stream().unwrap(), a.gpu().new_stream().unwrap());
    let mut src = a.alloc_zeros::<f32>(RACE).unwrap();
    fill_rounds(&a, &mut src, 16);
    // A kernel on `b` reads what `a` wrote, and a copy to the host on `c` reads what `b` wrote.
    let mut dst = b.alloc_zeros::<f32>(RACE).unwrap();
    b.copy(
        &DeviceMdspan::<f32, 1>::from_cuda(&src, [RACE]).unwrap(),
        &mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut dst, [RACE]).unwrap(),
    )
    .unwrap();
    assert_eq!(mismatches(&download(&c, &dst), 16.0), []);
    // A copy to the host on another stream than the writer's waits for it too.
    fill_rounds(&a, &mut src, 12);
    assert_eq!(mismatches(&download(&b, &src), 12.0), []);
}

#[test]
fn an_allocation_is_freed_only_after_the_work_of_other_streams_on_it() {
    let Some(a) = stream_or_skip() else { return };
    let b = a.gpu().new_stream().unwrap();
    let mut copies: Vec<CudaSlice<f32>> = (0..8).map(|_| b.alloc_zeros::<f32>(RACE).unwrap()).collect();
    {
        let mut src = a.alloc_zeros::<f32>(RACE).unwrap();
        fill_rounds(&a, &mut src, 7);
        let view = DeviceMdspan::<f32, 1>::from_cuda(&src, [RACE]).unwrap();
        for copy in &mut copies {
            b.copy(&view, &mut DeviceMdspanMut::<f32, 1>::from_cuda(copy, [RACE]).unwrap()).unwrap();
        }
        // `src` is freed on `a` here, while `b` may still be copying from it.
    }
    // The stream-ordered allocator hands freed memory to the next allocation on `a` at once:
    // overwrite it there. The copies on `b` must still have read 7s.
    let mut reuse = a.alloc_zeros::<f32>(RACE).unwrap();
    a.fill(&mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut reuse, [RACE]).unwrap(), -1.0).unwrap();
    for copy in &copies {
        assert_eq!(mismatches(&download(&b, copy), 7.0), []);
    }
}

#[test]
fn a_writer_waits_for_the_readers_on_every_stream() {
    let Some(a) = stream_or_skip() else { return };
    let (b, c) = (a.gpu().new_stream().unwrap(), a.gpu().new_stream().unwrap());
    let mut src = a.alloc_zeros::<f32>(RACE).unwrap();
    fill_rounds(&a, &mut src, 3);
    let mut on_b: Vec<CudaSlice<f32>> = (0..4).map(|_| b.alloc_zeros::<f32>(RACE).unwrap()).collect();
    let mut on_c: Vec<CudaSlice<f32>> = (0..4).map(|_| c.alloc_zeros::<f32>(RACE).unwrap()).collect();
    {
        // Two readers on two streams: cudarc keeps one read event, so the second reader's record
        // must include the first reader's work.
        let view = DeviceMdspan::<f32, 1>::from_cuda(&src, [RACE]).unwrap();
        for (x, y) in on_b.iter_mut().zip(&mut on_c) {
            b.copy(&view, &mut DeviceMdspanMut::<f32, 1>::from_cuda(x, [RACE]).unwrap()).unwrap();
            c.copy(&view, &mut DeviceMdspanMut::<f32, 1>::from_cuda(y, [RACE]).unwrap()).unwrap();
        }
    }
    // A writer on `a` runs after both readers.
    a.fill(&mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut src, [RACE]).unwrap(), -1.0).unwrap();
    for copy in on_b.iter().chain(&on_c) {
        assert_eq!(mismatches(&download(&a, copy), 3.0), []);
    }
    assert_eq!(mismatches(&download(&b, &src), -1.0), []);
}

#[test]
fn a_kernel_on_a_managed_view_completes_before_the_host_indexes_it() {
    let Some(stream) = stream_or_skip() else { return };
    // SAFETY: zero bytes are valid `f32`s; every element is written below before it is read.
    let mut unified = unsafe { stream.gpu().context().alloc_unified::<f32>(RACE, true) }.expect("managed memory");
    let mut view =
        ManagedMdspanMut::<f32, 1>::from_unified_mapping(&mut unified, Mapping::compact([RACE]).unwrap(), &stream)
            .unwrap();
    for round in 1..=4u16 {
        stream.fill(&mut view, f32::from(round)).unwrap();
        // Safe code indexes the view right after the launch returns: the kernel has run.
        assert_eq!(
            (view[[0]], view[[RACE / 2]], view[[RACE - 1]]),
            (f32::from(round), f32::from(round), f32::from(round))
        );
    }
    let host: Vec<f32> = (0..RACE).map(|i| (i % 1000) as f32).collect();
    stream.copy_from_host(&HostMdspan::<f32, 1>::from_slice(&host, [RACE]).unwrap(), &mut view).unwrap();
    assert!(view.iter().eq(host.iter()));
}

#[test]
fn device_views_of_unified_memory_run_asynchronously_and_a_managed_view_waits_for_them() {
    let Some(a) = stream_or_skip() else { return };
    let b = a.gpu().new_stream().unwrap();
    // SAFETY: zero bytes are valid `f32`s.
    let mut unified = unsafe { a.gpu().context().alloc_unified::<f32>(RACE, true) }.expect("managed memory");
    {
        let mut device = DeviceMdspanMut::<f32, 1>::from_cuda(&mut unified, [RACE]).unwrap();
        for round in 1..=8u16 {
            b.fill(&mut device, f32::from(round)).unwrap();
        }
    }
    // The managed view is made on `a`, not on `b`: it waits for `b`'s fills through the event.
    let view = ManagedMdspan::<f32, 1>::from_unified_mapping(&unified, Mapping::compact([RACE]).unwrap(), &a).unwrap();
    assert_eq!(mismatches(&view.to_vec(), 8.0), []);
}

#[test]
fn an_export_orders_the_consumers_stream_after_work_on_any_stream() {
    let Some(a) = stream_or_skip() else { return };
    let (b, consumer) = (a.gpu().new_stream().unwrap(), a.gpu().new_stream().unwrap());
    let mut buffer = a.alloc_zeros::<f32>(RACE).unwrap();
    // Written on `b`, not on the allocation's stream `a`.
    fill_rounds(&b, &mut buffer, 16);
    // SAFETY: the consumer's value names a live stream of this context.
    let tensor = unsafe { export_cuda_for_consumer(buffer, [RACE], Some(consumer.dlpack_stream())) }.unwrap();
    // The consumer reads on its own stream (a view of imported memory: the consumer orders it).
    let view = tensor.view_as::<DeviceMdspan<'_, f32, 1, LayoutRight>>().unwrap();
    let mut back = vec![0f32; RACE];
    consumer.copy_to_host(&view, &mut HostMdspanMut::<f32, 1>::from_slice(&mut back, [RACE]).unwrap()).unwrap();
    assert_eq!(mismatches(&back, 16.0), []);
    // SAFETY: 0 is refused before any use.
    let refused = unsafe { export_cuda_for_consumer(a.alloc_zeros::<f32>(1).unwrap(), [1], Some(0)) };
    assert!(matches!(refused, Err(CudaError::InvalidDlpackStream { value: 0 })));
}

/// A managed tensor orders the device views it lends (rule C6): the launches on them record its
/// event, and dropping it waits for them before its deleter frees the memory (the export's slice,
/// freed on its own stream, where the next allocation reuses the memory at once).
#[test]
fn a_managed_tensor_is_released_only_after_the_work_on_its_views() {
    let Some(a) = stream_or_skip() else { return };
    let b = a.gpu().new_stream().unwrap();
    let mut copies: Vec<CudaSlice<f32>> = (0..8).map(|_| b.alloc_zeros::<f32>(RACE).unwrap()).collect();
    {
        let mut src = a.alloc_zeros::<f32>(RACE).unwrap();
        fill_rounds(&a, &mut src, 5);
        let tensor = export_cuda(src, [RACE]).unwrap();
        let view = tensor.view_as::<DeviceMdspan<'_, f32, 1>>().unwrap();
        for copy in &mut copies {
            b.copy(&view, &mut DeviceMdspanMut::<f32, 1>::from_cuda(copy, [RACE]).unwrap()).unwrap();
        }
        // The tensor is dropped here, while `b` may still be copying from its memory.
    }
    let mut reuse = a.alloc_zeros::<f32>(RACE).unwrap();
    a.fill(&mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut reuse, [RACE]).unwrap(), -1.0).unwrap();
    for copy in &copies {
        assert_eq!(mismatches(&download(&b, copy), 5.0), []);
    }
}

/// One random case of an element-wise kernel on the GPU (arguments as `kernel_case!`): the CPU
/// path into each output's `expected`, the kernel launched on device views of the same data (inputs
/// uploaded, outputs uploaded poisoned) into its `actual`, compared within `$ulps` (0: bit for bit,
/// for kernels of `+ - * /`, `sqrt`, `mul_add`, comparisons and casts; the math functions' bound of
/// rule K4 for the others).
macro_rules! gpu_case {
    ($stream:expr, $rng:expr, $shape:expr, $ulps:expr, $kernel:ident $(::<$g:ty>)?; $($kind:ident $name:ident: $t:ty $(= $value:expr)?),* $(,)?) => {{
        let shape = $shape;
        $(kernel_case!(@make $kind $rng, shape, $name, $t, $($value)?);)*
        $kernel.run(dlspan::kernel::Cpu, $(gpu_case!(@cpu $kind $name)),*).expect("the CPU path runs");
        $(gpu_case!(@upload $stream, $kind $name);)*
        $kernel.run($stream, $(gpu_case!(@gpu $kind $name)),*).expect("the kernel launches");
        $(gpu_case!(@download $stream, $kind $name);)*
        let what = format!("{} on the GPU against the CPU path, shape {shape:?}", stringify!($kernel $(::<$g>)?));
        $(gpu_case!(@check $kind $name what $ulps);)*
    }};
    (@cpu s $name:ident) => { $name };
    (@cpu i $name:ident) => { &$name.layout.view(&$name.buffer) };
    (@cpu o $name:ident) => { &mut $name.layout.view_mut(&mut $name.expected) };
    (@upload $stream:expr, s $name:ident) => {};
    (@upload $stream:expr, i $name:ident) => { let $name = (upload($stream, &$name.buffer), $name); };
    (@upload $stream:expr, o $name:ident) => { let mut $name = (upload($stream, &$name.before), $name); };
    (@gpu s $name:ident) => { $name };
    (@gpu i $name:ident) => {
        &DeviceMdspan::<_, _, LayoutStrideRelaxed>::from_cuda_relaxed(&$name.0, $name.1.layout.extents, $name.1.layout.strides, $name.1.layout.offset).unwrap()
    };
    (@gpu o $name:ident) => {
        &mut DeviceMdspanMut::<_, _, LayoutStrideRelaxed>::from_cuda_relaxed(&mut $name.0, $name.1.layout.extents, $name.1.layout.strides, $name.1.layout.offset).unwrap()
    };
    (@download $stream:expr, s $name:ident) => {};
    (@download $stream:expr, i $name:ident) => {};
    (@download $stream:expr, o $name:ident) => { $name.1.actual = download($stream, &$name.0); };
    (@check s $name:ident $what:ident $ulps:expr) => {};
    (@check i $name:ident $what:ident $ulps:expr) => {};
    (@check o $name:ident $what:ident $ulps:expr) => { $name.1.check_within(&format!("{} output `{}`", $what, stringify!($name)), $ulps) };
}

/// Every test kernel once at rank `R` on the GPU.
fn every_kernel_on_the_gpu<const R: usize>(stream: &Stream, rng: &mut kernels_support::Rng, max: usize) {
    use dlspan::dtype::Float8E4m3fn;
    use kernels_support::*;
    // CUDA's documented bounds (rule K4) plus the CPU's libm error, in the output's own ulps.
    const MATH: f64 = 8.0;
    let shape = random_extents::<R>(rng, max, true);
    gpu_case!(stream, rng, shape, 0.0, axpby::<f16>; s a: f16, s b: f16, i x: f16, i y: f16, o out: f16);
    gpu_case!(stream, rng, shape, 0.0, axpby::<bf16>; s a: bf16, s b: bf16, i x: bf16, i y: bf16, o out: bf16);
    gpu_case!(stream, rng, shape, 0.0, axpby::<f32>; s a: f32, s b: f32, i x: f32, i y: f32, o out: f32);
    gpu_case!(stream, rng, shape, 0.0, axpby::<f64>; s a: f64, s b: f64, i x: f64, i y: f64, o out: f64);
    gpu_case!(stream, rng, shape, 0.0, axpby::<i8>; s a: i8, s b: i8, i x: i8, i y: i8, o out: i8);
    gpu_case!(stream, rng, shape, 0.0, axpby::<u32>; s a: u32, s b: u32, i x: u32, i y: u32, o out: u32);
    gpu_case!(stream, rng, shape, 0.0, axpby::<i128>; s a: i128, s b: i128, i x: i128, i y: i128, o out: i128);
    gpu_case!(stream, rng, shape, 0.0, gray; i px: Rgba, o out: u8);
    gpu_case!(stream, rng, shape, 0.0, brighten; o px: Rgba, s by: u8);
    gpu_case!(stream, rng, shape, MATH, soft::<f16>; i x: f16, s limit: f16, o out: f16);
    gpu_case!(stream, rng, shape, MATH, soft::<f32>; i x: f32, s limit: f32, o out: f32);
    gpu_case!(stream, rng, shape, MATH, soft::<f64>; i x: f64, s limit: f64, o out: f64);
    for which in 0..UNARY {
        // sqrt (0), floor, ceil, round, trunc, abs and negation (10 to 15) are exact.
        let ulps = if which == 0 || which >= 10 { 0.0 } else { MATH };
        gpu_case!(stream, rng, shape, ulps, unary::<bf16>; i x: bf16, s which: i32 = which, o out: bf16);
        gpu_case!(stream, rng, shape, ulps, unary::<f32>; i x: f32, s which: i32 = which, o out: f32);
        gpu_case!(stream, rng, shape, ulps, unary::<f64>; i x: f64, s which: i32 = which, o out: f64);
    }
    for which in 0..BINARY {
        // `+ - * / %`, min, max, mul_add are exact; powf (5) is a math function.
        let ulps = if which == 5 { MATH } else { 0.0 };
        gpu_case!(stream, rng, shape, ulps, binary::<f16>; i x: f16, i y: f16, i z: f16, s which: i32 = which, o out: f16);
        gpu_case!(stream, rng, shape, ulps, binary::<f32>; i x: f32, i y: f32, i z: f32, s which: i32 = which, o out: f32);
        gpu_case!(stream, rng, shape, ulps, binary::<f64>; i x: f64, i y: f64, i z: f64, s which: i32 = which, o out: f64);
    }
    gpu_case!(stream, rng, shape, 0.0, integers::<i8>; i x: i8, i y: i8, o quotient: i8, o other: i8);
    gpu_case!(stream, rng, shape, 0.0, integers::<u64>; i x: u64, i y: u64, o quotient: u64, o other: u64);
    gpu_case!(stream, rng, shape, 0.0, integers::<i128>; i x: i128, i y: i128, o quotient: i128, o other: i128);
    gpu_case!(stream, rng, shape, 0.0, mask::<f32>; i x: f32, s low: f32, s high: f32, o out: bool);
    gpu_case!(stream, rng, shape, 0.0, select::<f64>; i m: bool, i a: f64, i b: f64, o out: f64);
    gpu_case!(stream, rng, shape, 0.0, casts; i x: f32, o i: i32, o h: f16, o b: bf16, o e: Float8E4m3fn, o m: Meters);
    gpu_case!(stream, rng, shape, 0.0, copy::<Rgba>; i x: Rgba, o out: Rgba);
    // The derived tangent and backward of a differentiable kernel: math functions, so within the
    // bounds of rule K4 (the derivative of `tanh` is `1 − tanh²`: its ulps in `tanh`'s).
    gpu_case!(stream, rng, shape, MATH, cartesian_tangent; i p: Polar, i s: f32, i tangent_p: Polar, i tangent_s: f32, o x: f32, o y: f32, o tangent_x: f32, o tangent_y: f32);
    gpu_case!(stream, rng, shape, MATH, cartesian_backward; i p: Polar, i s: f32, i grad_x: f32, i grad_y: f32, o grad_p: Polar, o grad_s: f32);
    gpu_case!(stream, rng, shape, MATH, smooth_tangent::<f32>; i x: f32, i b: f32, i tangent_x: f32, i tangent_b: f32, o out: f32, o tangent_out: f32);
    gpu_case!(stream, rng, shape, MATH, smooth_tangent::<f64>; i x: f64, i b: f64, i tangent_x: f64, i tangent_b: f64, o out: f64, o tangent_out: f64);
    gpu_case!(stream, rng, shape, MATH, smooth_backward::<f32>; i x: f32, i b: f32, i grad_out: f32, o grad_x: f32, o grad_b: f32);
    gpu_case!(stream, rng, shape, MATH, smooth_backward::<f64>; i x: f64, i b: f64, i grad_out: f64, o grad_x: f64, o grad_b: f64);
}

/// Every element-wise kernel of the tests on the GPU against the CPU path, on fresh random data
/// and layouts (transposed, reversed, broadcast, zero-size, rank 0), outputs poisoned: bit for bit
/// for the exact operations, within rule K4's bounds for the math functions.
#[test]
fn elementwise_kernels_match_the_cpu_path_on_the_gpu() {
    let Some(stream) = stream_or_skip() else { return };
    let mut rng = kernels_support::Rng::new(fresh_seed());
    for _ in 0..4 {
        every_kernel_on_the_gpu::<0>(&stream, &mut rng, 1);
        every_kernel_on_the_gpu::<1>(&stream, &mut rng, 1000);
        every_kernel_on_the_gpu::<2>(&stream, &mut rng, 40);
        every_kernel_on_the_gpu::<3>(&stream, &mut rng, 9);
        every_kernel_on_the_gpu::<5>(&stream, &mut rng, 3);
    }
}

/// Launch rules on a stream: a view of another device is a typed error before anything runs;
/// managed views are accepted, and host access after the launch sees the kernel's results (the
/// launch waited, rule C3); launches on device views are asynchronous (the stream is idle only
/// after a synchronisation).
#[test]
fn elementwise_launch_rules_on_a_stream() {
    let Some(stream) = stream_or_skip() else { return };
    use kernels_support::axpby;
    let x = upload(&stream, &[1.0f32, 2.0, 3.0]);
    let mut out = stream.alloc_zeros::<f32>(3).unwrap();
    let x_view = DeviceMdspan::<f32, 1>::from_cuda(&x, [3]).unwrap();
    // SAFETY: the view is never read; its mapping fits the allocation.
    let foreign =
        unsafe { DeviceMdspan::<f32, 1>::from_raw_parts(x_view.data_handle(), Mapping::compact([3]).unwrap(), 1) };
    let result = axpby.run(
        &stream,
        1.0,
        1.0,
        &x_view,
        &foreign,
        &mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut out, [3]).unwrap(),
    );
    assert!(matches!(result, Err(CudaError::WrongDevice { expected: 0, found: 1 })), "{result:?}");
    // Managed memory: written by the GPU, read on the host right after the call.
    // SAFETY: zero bytes are valid `f32`s.
    let mut unified = unsafe { stream.gpu().context().alloc_unified::<f32>(3, true) }.unwrap();
    let compact = Mapping::compact([3]).unwrap();
    let mut managed = ManagedMdspanMut::<f32, 1>::from_unified_mapping(&mut unified, compact, &stream).unwrap();
    axpby.run(&stream, 2.0, 0.0, &x_view, &x_view, &mut managed).unwrap();
    assert_eq!(managed.as_view().to_vec(), [2.0, 4.0, 6.0]);
    // A kernel on the CPU over the managed view, broadcasting a host scalar view: y = 1·x + y.
    let one = [1.0f32];
    let host = HostMdspan::<f32, 0>::from_slice(&one, []).unwrap();
    dlspan::kernel::builtin::axpy.run(dlspan::kernel::Cpu, 1.0, &host, &mut managed).unwrap();
    assert_eq!(managed.as_view().to_vec(), [3.0, 5.0, 7.0]);
}

/// The raw test kernels on the CPU over host buffers and on the GPU over device copies of them
/// (views of the same layouts), compared element for element.
fn raw_kernels_on_both(stream: &Stream, seed: u64) {
    use dlspan::kernel::{Cpu, LaunchConfig};
    use raw_kernels_support::{axpy2, block_sum, reverse_blocks, row_sum_atomic};
    let layout = |rng: &mut kernels_support::Rng, shape: [usize; 2]| kernels_support::random_layout(rng, shape, false);
    let mut rng = kernels_support::Rng::new(seed);
    for _ in 0..20 {
        let shape = kernels_support::random_extents::<2>(&mut rng, 300, true);
        let (lx, ly, lo) = (layout(&mut rng, shape), layout(&mut rng, shape), layout(&mut rng, shape));
        let x: Vec<f32> = (0..lx.len).map(|k| (k % 97) as f32 * 0.25).collect();
        let y: Vec<f32> = (0..ly.len).map(|k| (k % 13) as f32 - 6.0).collect();
        let mut cpu = vec![-1.0f32; lo.len];
        let config = LaunchConfig::for_extent_2d(shape, [8, 32]).unwrap();
        // SAFETY: the body guards every index by the output's extents, which all views share.
        unsafe { axpy2.launch(Cpu, config, 1.5f32, &lx.view(&x), &ly.view(&y), &mut lo.view_mut(&mut cpu)) }.unwrap();
        let (dx, dy, mut dout) = (upload(stream, &x), upload(stream, &y), upload(stream, &vec![-1.0f32; lo.len]));
        {
            let xv = View::<f32, 2>::from_cuda_relaxed(&dx, shape, lx.strides, lx.offset).unwrap();
            let yv = View::<f32, 2>::from_cuda_relaxed(&dy, shape, ly.strides, ly.offset).unwrap();
            let mut ov = ViewMut::<f32, 2>::from_cuda_relaxed(&mut dout, shape, lo.strides, lo.offset).unwrap();
            // SAFETY: as on the CPU.
            unsafe { axpy2.launch(stream, config, 1.5f32, &xv, &yv, &mut ov) }.expect("launch");
        }
        assert_eq!(download(stream, &dout), cpu, "axpy2 on {shape:?}");
    }
    // Barriers and shared memory, atomics, dynamic shared memory: the GPU gives the CPU's results.
    let n = 10_000usize;
    let x: Vec<i64> = (0..n as i64).map(|k| k * 7 - 3000).collect();
    let blocks = n.div_ceil(256);
    let mut cpu = vec![0i64; blocks];
    let config = LaunchConfig::for_elements(n, 256).unwrap();
    // SAFETY: guarded by the extents; one writer per output element.
    unsafe {
        block_sum.launch(
            Cpu,
            config,
            &HostMdspan::<i64, 1>::from_slice(&x, [n]).unwrap(),
            &mut HostMdspanMut::<i64, 1>::from_slice(&mut cpu, [blocks]).unwrap(),
        )
    }
    .unwrap();
    let (dx, mut dout) = (upload(stream, &x), upload(stream, &vec![0i64; blocks]));
    // SAFETY: as on the CPU.
    unsafe {
        block_sum.launch(
            stream,
            config,
            &DeviceMdspan::<i64, 1>::from_cuda(&dx, [n]).unwrap(),
            &mut DeviceMdspanMut::<i64, 1>::from_cuda(&mut dout, [blocks]).unwrap(),
        )
    }
    .unwrap();
    assert_eq!(download(stream, &dout), cpu, "block_sum");
    let rows = [37usize, 1000];
    let values: Vec<u32> = (0..rows[0] * rows[1]).map(|k| (k % 1009) as u32).collect();
    let mut cpu = vec![0u32; rows[0]];
    let config = LaunchConfig::for_extent_2d(rows, [4, 64]).unwrap();
    let host =
        HostMdspan::<u32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&values, rows, [rows[1] as isize, 1], 0).unwrap();
    // SAFETY: guarded by the extents; the totals are written with atomics only.
    unsafe {
        row_sum_atomic.launch(
            Cpu,
            config,
            &host,
            &mut HostMdspanMut::<u32, 1>::from_slice(&mut cpu, [rows[0]]).unwrap(),
        )
    }
    .unwrap();
    let (dv, mut dsum) = (upload(stream, &values), upload(stream, &vec![0u32; rows[0]]));
    // SAFETY: as on the CPU.
    unsafe {
        row_sum_atomic.launch(
            stream,
            config,
            &View::<u32, 2>::from_cuda_relaxed(&dv, rows, [rows[1] as isize, 1], 0).unwrap(),
            &mut DeviceMdspanMut::<u32, 1>::from_cuda(&mut dsum, [rows[0]]).unwrap(),
        )
    }
    .unwrap();
    assert_eq!(download(stream, &dsum), cpu, "row_sum_atomic");
    let f: Vec<f32> = (0..1000).map(|k| k as f32).collect();
    let mut cpu = vec![0.0f32; 1000];
    let config = LaunchConfig::for_elements(1000, 128).unwrap().with_shared_bytes(128 * 4);
    // SAFETY: guarded by the extent; the tile holds one element per thread.
    unsafe {
        reverse_blocks.launch(
            Cpu,
            config,
            &HostMdspan::<f32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&f, [1000], [1], 0).unwrap(),
            &mut HostMdspanMut::<f32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&mut cpu, [1000], [1], 0).unwrap(),
        )
    }
    .unwrap();
    let (df, mut dr) = (upload(stream, &f), upload(stream, &vec![0.0f32; 1000]));
    // SAFETY: as on the CPU.
    unsafe {
        reverse_blocks.launch(
            stream,
            config,
            &View::<f32, 1>::from_cuda_relaxed(&df, [1000], [1], 0).unwrap(),
            &mut ViewMut::<f32, 1>::from_cuda_relaxed(&mut dr, [1000], [1], 0).unwrap(),
        )
    }
    .unwrap();
    assert_eq!(download(stream, &dr), cpu, "reverse_blocks");
}

#[test]
fn raw_kernels_give_the_cpus_results_on_the_gpu() {
    let Some(stream) = stream_or_skip() else { return };
    raw_kernels_on_both(&stream, fresh_seed());
}

#[test]
fn a_raw_kernel_on_a_managed_view_completes_before_the_host_indexes_it() {
    use dlspan::kernel::LaunchConfig;
    let Some(stream) = stream_or_skip() else { return };
    // SAFETY: zero bytes are valid `f32`s; every element is written below before it is read.
    let mut unified = unsafe { stream.gpu().context().alloc_unified::<f32>(RACE, true) }.expect("managed memory");
    let input: Vec<f32> = (0..RACE).map(|k| (k % 1000) as f32).collect();
    let dx = upload(&stream, &input);
    let mut view =
        ManagedMdspanMut::<f32, 1>::from_unified_mapping(&mut unified, Mapping::compact([RACE]).unwrap(), &stream)
            .unwrap();
    let config = LaunchConfig::for_elements(RACE, 256).unwrap().with_shared_bytes(256 * 4);
    // SAFETY: guarded by the extent; the tile holds one element per thread.
    unsafe {
        raw_kernels_support::reverse_blocks.launch(
            &stream,
            config,
            &View::<f32, 1>::from_cuda_relaxed(&dx, [RACE], [1], 0).unwrap(),
            &mut view,
        )
    }
    .unwrap();
    // Safe code indexes the managed view right after the launch returns: the kernel has run.
    assert_eq!((view[[0]], view[[RACE - 1]]), (input[255], input[RACE - 256]));
}

#[test]
fn a_raw_kernel_refuses_a_view_of_another_device() {
    use dlspan::kernel::LaunchConfig;
    let Some(stream) = stream_or_skip() else { return };
    let a = stream.alloc_zeros::<i64>(256).unwrap();
    let mut out = stream.alloc_zeros::<i64>(1).unwrap();
    let a_view = DeviceMdspan::<i64, 1>::from_cuda(&a, [256]).unwrap();
    // SAFETY: the view is never read; its mapping fits the allocation.
    let foreign =
        unsafe { DeviceMdspan::<i64, 1>::from_raw_parts(a_view.data_handle(), Mapping::compact([256]).unwrap(), 1) };
    // SAFETY: refused before it runs.
    let result = unsafe {
        raw_kernels_support::block_sum.launch(
            &stream,
            LaunchConfig::for_elements(256, 256).unwrap(),
            &foreign,
            &mut DeviceMdspanMut::<i64, 1>::from_cuda(&mut out, [1]).unwrap(),
        )
    };
    assert!(matches!(result, Err(CudaError::WrongDevice { expected: 0, found: 1 })), "{result:?}");
}

/// The sum of a view's values by the CPU: integers wrapping in the accumulator (exact), floats in
/// `f64`; and the sum of their magnitudes.
fn reference_sum<T: dlspan::dtype::Numeric, const R: usize>(
    extents: [usize; R],
    layout: &cuda_support::Layout<R>,
    buffer: &[T],
) -> (T::Acc, f64, f64) {
    use dlspan::dtype::{Numeric, cast};
    let view =
        HostMdspan::<T, R, LayoutStrideRelaxed>::from_slice_relaxed(buffer, extents, layout.strides, layout.offset)
            .expect("valid layout");
    let (mut wrapping, mut exact, mut magnitude) = (T::Acc::ZERO, 0f64, 0f64);
    for &v in view.iter() {
        wrapping = Numeric::add(wrapping, v.to_acc());
        let v = cast::<T, f64>(v);
        exact += v;
        magnitude += v.abs();
    }
    (wrapping, exact, magnitude)
}

/// Random sums of `T` on the GPU at every rank class (transposed, reversed, broadcast and gapped
/// layouts; some large enough for every block of the first pass), against the CPU: integers
/// exactly, floats within `tolerance` times the sum of magnitudes.
fn gpu_sums<T: dlspan::dtype::Numeric + TestElement>(stream: &Stream, seed: u64, tolerance: f64) {
    fn one<T: dlspan::dtype::Numeric + TestElement, const R: usize>(
        stream: &Stream,
        rng: &mut Rng,
        max: usize,
        tolerance: f64,
    ) {
        use dlspan::dtype::cast;
        let extents = random_extents::<R>(rng, max);
        let layout = random_layout(rng, extents, true);
        let values: Vec<T> = (0..layout.len)
            .map(|_| {
                if tolerance == 0.0 { T::random(rng) } else { cast::<f64, T>((rng.below(4001) as f64 - 2000.0) / 16.0) }
            })
            .collect();
        let buffer = upload(stream, &values);
        let view = View::<T, R>::from_cuda_relaxed(&buffer, extents, layout.strides, layout.offset).unwrap();
        let got = stream.sum(&view).expect("sum");
        let (wrapping, exact, magnitude) = reference_sum(extents, &layout, &values);
        let name = core::any::type_name::<T>();
        if tolerance == 0.0 {
            assert_eq!(got, wrapping, "sum of {name} over {extents:?} {layout:?}");
        } else {
            let got = cast::<T::Acc, f64>(got);
            assert!(
                (got - exact).abs() <= tolerance * magnitude + f64::MIN_POSITIVE,
                "sum of {name} over {extents:?} {layout:?}: {got} vs {exact}"
            );
        }
    }
    let mut rng = Rng::new(seed);
    let rng = &mut rng;
    for _ in 0..4 {
        one::<T, 1>(stream, rng, 3000, tolerance);
        one::<T, 1>(stream, rng, 700_000, tolerance);
        one::<T, 2>(stream, rng, 300, tolerance);
        one::<T, 3>(stream, rng, 40, tolerance);
        one::<T, 4>(stream, rng, 9, tolerance);
        one::<T, 6>(stream, rng, 4, tolerance);
    }
}

#[test]
fn sums_match_the_reference_on_the_gpu() {
    let Some(stream) = stream_or_skip() else { return };
    let seed = fresh_seed();
    let f32_tolerance = 4.0 * f64::from(f32::EPSILON);
    gpu_sums::<f32>(&stream, seed, f32_tolerance);
    gpu_sums::<f16>(&stream, seed + 1, f32_tolerance);
    gpu_sums::<bf16>(&stream, seed + 2, f32_tolerance);
    gpu_sums::<f64>(&stream, seed + 3, 4.0 * f64::EPSILON);
    gpu_sums::<i8>(&stream, seed + 4, 0.0);
    gpu_sums::<i32>(&stream, seed + 5, 0.0);
    gpu_sums::<u16>(&stream, seed + 6, 0.0);
    gpu_sums::<i64>(&stream, seed + 7, 0.0);
    gpu_sums::<u64>(&stream, seed + 8, 0.0);

    // Many elements of an inexact value: the grid-stride loop, every first-pass block, second-pass
    // threads adding several partials, the compensation (an uncompensated f32 loop drifts by far
    // more than 8 ulps here).
    let n = 5_000_000usize;
    let tenths = upload(&stream, &vec![0.1f32; n]);
    let total = stream.sum(&DeviceMdspan::<f32, 1>::from_cuda(&tenths, [n]).unwrap()).unwrap();
    let exact = n as f64 * f64::from(0.1f32);
    assert!((f64::from(total) - exact).abs() <= 8.0 * f64::from(f32::EPSILON) * exact, "{total} vs {exact}");

    // bool counts as NumPy's sum does (an int64), a transposed view, an empty one.
    let flags: Vec<bool> = (0..60_000).map(|i| i % 7 == 0).collect();
    let flags_buffer = upload(&stream, &flags);
    let transposed = View::<bool, 2>::from_cuda_relaxed(&flags_buffer, [300, 200], [1, 300], 0).unwrap();
    assert_eq!(stream.sum(&transposed).unwrap(), flags.iter().filter(|&&f| f).count() as i64);
    let empty = View::<f32, 2>::from_cuda_relaxed(&tenths, [0, 5], [5, 1], 0).unwrap();
    assert_eq!(stream.sum(&empty).unwrap(), 0.0);

    // Infinities and NaN.
    let special = |values: &[f32]| {
        let buffer = upload(&stream, values);
        stream.sum(&DeviceMdspan::<f32, 1>::from_cuda(&buffer, [values.len()]).unwrap()).unwrap()
    };
    assert_eq!(special(&[f32::INFINITY, 1.0, 2.0]), f32::INFINITY);
    assert_eq!(special(&[1.0, f32::NEG_INFINITY, 2.0, f32::NEG_INFINITY]), f32::NEG_INFINITY);
    assert!(special(&[1.0, f32::NAN, 2.0]).is_nan());
    assert!(special(&[f32::INFINITY, f32::NEG_INFINITY]).is_nan());
    let mut many = vec![1.0f32; 300_000];
    many[123_456] = f32::INFINITY;
    assert_eq!(special(&many), f32::INFINITY);

    // Ordered after the stream's earlier work, with no synchronisation in between: a fill, then
    // the sum on the same stream; and a fill on another stream, then the sum here (rule C6).
    let mut filled = stream.alloc_zeros::<f32>(1 << 20).unwrap();
    stream.fill(&mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut filled, [1 << 20]).unwrap(), 2.0).unwrap();
    assert_eq!(stream.sum(&DeviceMdspan::<f32, 1>::from_cuda(&filled, [1 << 20]).unwrap()).unwrap(), 2097152.0);
    let other = stream.gpu().new_stream().unwrap();
    other.fill(&mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut filled, [1 << 20]).unwrap(), 0.5).unwrap();
    assert_eq!(stream.sum(&DeviceMdspan::<f32, 1>::from_cuda(&filled, [1 << 20]).unwrap()).unwrap(), 524288.0);

    // Types without a sum are typed errors before any launch.
    let complex = stream.alloc_zeros::<dlspan::num_complex::Complex<f32>>(4).unwrap();
    let complex = DeviceMdspan::<dlspan::num_complex::Complex<f32>, 1>::from_cuda(&complex, [4]).unwrap();
    assert!(matches!(stream.sum(&complex), Err(CudaError::Unsupported { kernel: KernelKind::Sum, .. })));
}

#[test]
fn a_sum_of_a_managed_view_is_right() {
    let Some(stream) = stream_or_skip() else { return };
    // SAFETY: zero bytes are valid `f64`s; every element is written below before it is read.
    let mut unified = unsafe { stream.gpu().context().alloc_unified::<f64>(1000, true) }.expect("managed memory");
    {
        let mut view =
            ManagedMdspanMut::<f64, 1>::from_unified_mapping(&mut unified, Mapping::compact([1000]).unwrap(), &stream)
                .unwrap();
        for (i, v) in view.iter_mut().enumerate() {
            *v = i as f64;
        }
    }
    let view =
        ManagedMdspan::<f64, 1>::from_unified_mapping(&unified, Mapping::compact([1000]).unwrap(), &stream).unwrap();
    assert_eq!(stream.sum(&view).unwrap(), 499_500.0);
}

#[test]
fn dynamic_copies_and_casts_match_the_typed_ones() {
    use dlspan::{Device, DynMdspan, DynMdspanMut};
    let Some(stream) = stream_or_skip() else { return };
    let mut rng = Rng::new(fresh_seed());
    let values: Vec<f32> = (0..600).map(|_| f32::random(&mut rng)).collect();
    let src = upload(&stream, &values);
    // A transposed 20x30 view (column-major reads) into a row-major f16 and a row-major f32.
    let transposed = View::<f32, 2>::from_cuda_relaxed(&src, [20, 30], [1, 20], 0).unwrap();
    let mut half = upload(&stream, &vec![f16::from_f32(7.0); 600]);
    let mut copy = upload(&stream, &vec![7.0f32; 600]);
    {
        let dynamic_src: DynMdspan<'_, Device> = transposed.into();
        let mut dynamic_half: DynMdspanMut<'_, Device> =
            DeviceMdspanMut::<f16, 2>::from_cuda(&mut half, [20, 30]).unwrap().into();
        stream.cast_dynamic(&dynamic_src, &mut dynamic_half).unwrap();
        let mut dynamic_copy: DynMdspanMut<'_, Device> =
            DeviceMdspanMut::<f32, 2>::from_cuda(&mut copy, [20, 30]).unwrap().into();
        stream.copy_dynamic(&dynamic_src, &mut dynamic_copy).unwrap();
        // Refusals: another dtype for a copy, another shape, another rank.
        assert!(matches!(
            stream.copy_dynamic(&dynamic_src, &mut dynamic_half),
            Err(CudaError::View(dlspan::DlpackError::DtypeMismatch { .. }))
        ));
        let mut short: DynMdspanMut<'_, Device> =
            DeviceMdspanMut::<f32, 2>::from_cuda(&mut copy, [30, 20]).unwrap().into();
        assert!(matches!(
            stream.copy_dynamic(&dynamic_src, &mut short),
            Err(CudaError::View(dlspan::DlpackError::ShapeMismatch { axis: 0, .. }))
        ));
        let mut flat: DynMdspanMut<'_, Device> = DeviceMdspanMut::<f32, 1>::from_cuda(&mut copy, [600]).unwrap().into();
        assert!(matches!(
            stream.cast_dynamic(&dynamic_src, &mut flat),
            Err(CudaError::View(dlspan::DlpackError::RankMismatch { .. }))
        ));
    }
    let (half, copy) = (download(&stream, &half), download(&stream, &copy));
    for i in 0..20 {
        for j in 0..30 {
            let v = values[i + 20 * j];
            assert_eq!(copy[i * 30 + j].to_bits(), v.to_bits(), "copy at [{i}, {j}]");
            let expected: f16 = dlspan::dtype::cast(v);
            assert_eq!(half[i * 30 + j].to_bits(), expected.to_bits(), "cast at [{i}, {j}]");
        }
    }
}
