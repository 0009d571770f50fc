//! What one small launch costs the host, step by step: finding the device, wrapping a caller's
//! stream, and launching dlspan's built-in and user kernels on four elements, beside cudarc's own
//! launch of a trivial kernel with a small and with a 1.5 KiB parameter block (what dlspan's
//! launches pass). Host nanoseconds per call, the median of 9 batches of 200 calls, the device
//! synchronised between batches so that the launch queue never fills. Needs a CUDA device:
//! `cargo run --release --features cuda --example cuda_launch_cost` (`scripts/gpu.sh` runs the
//! prebuilt binary). Without a device it says so and exits 0.

use cudarc::driver::{CudaFunction, DeviceRepr, LaunchConfig, PushKernelArg};
use dlspan::cuda::{CudaError, Gpu, Stream, device_count};
use dlspan::kernel::Float;
use dlspan::view::Mapping;
use dlspan::{DeviceMdspan, DeviceMdspanMut};
use std::time::Instant;

dlspan::elementwise! {
    /// `y = x · sigmoid(x)`, the README operator's forward kernel.
    pub fn silu<T: Float>(x: &T, y: &mut T) {
        *y = *x / (1.0 as T + (-*x).exp());
    }
}

/// A parameter block of dlspan's size (`dl_params`: operands, extents, strides, divisors).
#[derive(Clone, Copy)]
#[repr(C)]
struct Big([u64; 192]);

// SAFETY: plain bytes, passed by value as the kernel's one parameter of the same size.
unsafe impl DeviceRepr for Big {}

const BATCH: usize = 200;

/// One launch of `function`, a trivial kernel taking `params` by value, through cudarc's builder.
fn bare_launch<P: DeviceRepr>(stream: &Stream, function: &CudaFunction, params: &P) -> Result<(), CudaError> {
    let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
    let mut launch = stream.cudarc().launch_builder(function);
    launch.arg(params);
    // SAFETY: both kernels here take one struct of their parameter's size by value and write
    // nothing for the zeroed values passed.
    unsafe { launch.launch(one) }?;
    Ok(())
}

/// Median host nanoseconds per call of `step`, over 9 batches, the stream synchronised between.
fn per_call(stream: &Stream, mut step: impl FnMut() -> Result<(), CudaError>) -> Result<f64, CudaError> {
    for _ in 0..BATCH {
        step()?;
    }
    let mut batches = Vec::new();
    for _ in 0..9 {
        stream.synchronize()?;
        let start = Instant::now();
        for _ in 0..BATCH {
            step()?;
        }
        batches.push(start.elapsed().as_nanos() as f64 / BATCH as f64);
    }
    stream.synchronize()?;
    batches.sort_by(f64::total_cmp);
    Ok(batches[batches.len() / 2])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if device_count() == 0 {
        println!("no CUDA device: nothing to measure");
        return Ok(());
    }
    let gpu = Gpu::new(0)?;
    let owned = gpu.new_stream()?;
    let raw = owned.cudarc().cu_stream();
    let x = owned.alloc_zeros::<f32>(4)?;
    let mut y = owned.alloc_zeros::<f32>(4)?;
    // Views of memory dlspan did not allocate, as a Python argument's are (ordered by the caller).
    let x_ptr = DeviceMdspan::<f32, 1>::from_cuda(&x, [4])?.data_handle();
    let y_ptr = DeviceMdspanMut::<f32, 1>::from_cuda(&mut y, [4])?.data_handle();
    let mapping = Mapping::compact([4])?;
    // SAFETY: `x_ptr` points at a live 4-element allocation of device 0 that outlives the view.
    let x_view = unsafe { DeviceMdspan::<f32, 1>::from_raw_parts(x_ptr, mapping, 0) };
    // SAFETY: as `x_ptr`, and `y` is reached through no other view while this one is used.
    let mut y_view = unsafe { DeviceMdspanMut::<f32, 1>::from_raw_parts(y_ptr, mapping, 0) }?;

    let ptx = cudarc::nvrtc::compile_ptx(
        "struct Small { unsigned long long a, b; };
         struct Big { unsigned long long w[192]; };
         extern \"C\" __global__ void small(Small p) { if (p.a == 1234567) *(int *)p.b = 0; }
         extern \"C\" __global__ void big(Big p) { if (p.w[0] == 1234567) *(int *)p.w[1] = 0; }",
    )?;
    let module = gpu.context().load_module(ptx)?;
    let (small_fn, big_fn) = (module.load_function("small")?, module.load_function("big")?);
    let small = [0u64; 2];
    let big = Big([0; 192]);

    let mut rows: Vec<(&str, f64)> = Vec::new();
    rows.push(("Gpu::new(0) (a handle of the cached device)", per_call(&owned, || Gpu::new(0).map(drop))?));
    rows.push(("device_count()", per_call(&owned, || Ok(_ = std::hint::black_box(device_count())))?));
    rows.push(("context bind_to_thread", per_call(&owned, || Ok(gpu.context().bind_to_thread()?))?));
    rows.push((
        "a caller's stream wrapped (Gpu::new, bind, wrap)",
        per_call(&owned, || {
            let gpu = Gpu::new(0)?;
            gpu.context().bind_to_thread()?;
            // SAFETY: `raw` is a live stream of this device's primary context, kept by `owned`.
            let inner = unsafe { gpu.context().wrap_borrowed_stream(raw) };
            Stream::wrap(&gpu, inner).map(drop)
        })?,
    ));
    rows.push(("cudarc launch, 16-byte parameters", per_call(&owned, || bare_launch(&owned, &small_fn, &small))?));
    rows.push(("cudarc launch, 1536-byte parameters", per_call(&owned, || bare_launch(&owned, &big_fn, &big))?));
    rows.push(("dlspan Stream::scale, 4 f32", per_call(&owned, || owned.scale(&mut y_view, 1.0))?));
    rows.push(("dlspan user kernel (silu), 4 f32", per_call(&owned, || silu.run(&owned, &x_view, &mut y_view))?));
    println!("| step | host ns per call |\n|---|---:|");
    for (name, ns) in rows {
        println!("| {name} | {ns:.0} |");
    }
    Ok(())
}
