//! The GPU tier: kernels, copies, exports and streams on a real device, against the CPU reference,
//! on fresh random data with poisoned outputs. Without a CUDA device each test prints
//! `skipped: no CUDA device` and passes; `scripts/gpu.sh` runs this binary on a GPU machine.
#![cfg(feature = "cuda")]

mod cuda_support;

use cuda_support::{Arith, Layout, Rng, TestElement, bytes, random_extents, random_layout};
use cudarc::driver::CudaSlice;
use dlspan::cuda::{CudaError, CudaLibrary, Gpu, Stream, device_count, driver_present, export_cuda};
use dlspan::half::{bf16, f16};
use dlspan::{
    DeviceMdspan, DeviceMdspanMut, DlElement, HostMdspan, HostMdspanMut, LayoutRight, LayoutStrideRelaxed, Mapping,
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

#[derive(Clone, Copy, Debug)]
enum Op {
    Copy,
    Fill,
    Add,
    Scale,
    Axpy,
}

/// One random case of `op` at rank `R` on the GPU, compared byte for byte with the CPU reference
/// over the whole (poisoned) output allocation.
fn gpu_case<T: Arith + Default, const R: usize>(stream: &Stream, op: Op, rng: &mut Rng) {
    let extents = random_extents::<R>(rng, if R > 4 { 3 } else { 9 });
    let out_layout = random_layout(rng, extents, false);
    let inputs = match op {
        Op::Fill => 0,
        Op::Copy | Op::Scale | Op::Axpy => 1,
        Op::Add => 2,
    };
    let in_layouts: Vec<Layout<R>> = (0..inputs).map(|_| random_layout(rng, extents, true)).collect();
    let in_values: Vec<Vec<T>> = in_layouts.iter().map(|l| (0..l.len).map(|_| T::random(rng)).collect()).collect();
    let poisoned: Vec<T> = (0..out_layout.len).map(|_| T::random(rng)).collect();
    let scalar = T::random(rng);

    let mut expected = poisoned.clone();
    {
        let mut out = HostMdspanMut::<T, R, LayoutStrideRelaxed>::from_slice_relaxed(
            &mut expected,
            extents,
            out_layout.strides,
            out_layout.offset,
        )
        .unwrap();
        let views: Vec<HostMdspan<'_, T, R, LayoutStrideRelaxed>> = in_layouts
            .iter()
            .zip(&in_values)
            .map(|(l, v)| HostMdspan::from_slice_relaxed(v, extents, l.strides, l.offset).unwrap())
            .collect();
        let mut a = views.first().map(|v| v.iter());
        let mut b = views.get(1).map(|v| v.iter());
        for slot in out.iter_mut() {
            let x = a.as_mut().map(|it| *it.next().unwrap());
            let y = b.as_mut().map(|it| *it.next().unwrap());
            *slot = match op {
                Op::Copy => x.unwrap(),
                Op::Fill => scalar,
                Op::Add => x.unwrap().add(y.unwrap()),
                Op::Scale => scalar.mul(x.unwrap()),
                Op::Axpy => scalar.mul(x.unwrap()).add(*slot),
            };
        }
    }

    let inputs: Vec<CudaSlice<T>> = in_values.iter().map(|v| upload(stream, v)).collect();
    let mut out = upload(stream, &poisoned);
    {
        let views: Vec<DeviceMdspan<'_, T, R, LayoutStrideRelaxed>> = inputs
            .iter()
            .zip(&in_layouts)
            .map(|(buffer, l)| DeviceMdspan::from_cuda_relaxed(buffer, extents, l.strides, l.offset).unwrap())
            .collect();
        let mut target = DeviceMdspanMut::<T, R, LayoutStrideRelaxed>::from_cuda_relaxed(
            &mut out,
            extents,
            out_layout.strides,
            out_layout.offset,
        )
        .unwrap();
        match op {
            Op::Copy => stream.copy(&views[0], &mut target),
            Op::Fill => stream.fill(&mut target, scalar),
            Op::Add => stream.add(&views[0], &views[1], &mut target),
            Op::Scale => stream.scale(scalar, &views[0], &mut target),
            Op::Axpy => stream.axpy(scalar, &views[0], &mut target),
        }
        .expect("launch");
    }
    let actual = download(stream, &out);
    assert!(
        bytes(&actual) == bytes(&expected),
        "{op:?} on {} differs from the CPU reference: extents {extents:?}, output {out_layout:?}, inputs {in_layouts:?}",
        T::DTYPE
    );
}

fn gpu_cases<T: Arith + Default>(stream: &Stream, seed: u64) {
    let mut rng = Rng::new(seed);
    for op in [Op::Copy, Op::Fill, Op::Add, Op::Scale, Op::Axpy] {
        for _ in 0..8 {
            gpu_case::<T, 1>(stream, op, &mut rng);
            gpu_case::<T, 2>(stream, op, &mut rng);
            gpu_case::<T, 3>(stream, op, &mut rng);
            gpu_case::<T, 4>(stream, op, &mut rng);
            gpu_case::<T, 6>(stream, op, &mut rng);
        }
    }
}

#[test]
fn kernels_match_the_cpu_reference_on_the_gpu() {
    let Some(stream) = stream_or_skip() else { return };
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
    println!("seed {seed}");
    gpu_cases::<u8>(&stream, seed);
    gpu_cases::<i32>(&stream, seed + 1);
    gpu_cases::<u64>(&stream, seed + 2);
    gpu_cases::<f16>(&stream, seed + 3);
    gpu_cases::<bf16>(&stream, seed + 4);
    gpu_cases::<f32>(&stream, seed + 5);
    gpu_cases::<f64>(&stream, seed + 6);
    assert!(stream.gpu().compiled_modules() >= 35, "each module compiled once per device");
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
