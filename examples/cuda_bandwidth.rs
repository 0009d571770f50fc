//! GPU bandwidth of dlspan's kernels on 256 MiB tensors, beside the device-to-device copy measured
//! in the same run (bytes read + written per second; median of 10 timed runs after a warm-up):
//! copies of every layout class (contiguous, transposed, permuted, strided, reversed), arithmetic,
//! and casts from `f32` to `f16`, `bf16` and FP8 and back. Needs a CUDA device:
//! `cargo run --release --features cuda --example cuda_bandwidth` (`scripts/gpu.sh` runs the
//! prebuilt binary). Without a device it says so and exits 0.

use cudarc::driver::CudaSlice;
use dlspan::cuda::{CudaError, Gpu, Stream, device_count};
use dlspan::dtype::{Float8E4m3fn, Float8E5m2};
use dlspan::half::{bf16, f16};
use dlspan::{DeviceMdspan, DeviceMdspanMut, DlElement, HostMdspan, LayoutStride, LayoutStrideRelaxed};
use std::mem::size_of;

const BYTES: usize = 256 << 20;

/// Median milliseconds of `run` over 10 timed repetitions (after one warm-up), by CUDA events.
fn time_ms(stream: &Stream, mut run: impl FnMut() -> Result<(), CudaError>) -> Result<f32, CudaError> {
    run()?;
    stream.synchronize()?;
    let mut times = Vec::new();
    for _ in 0..10 {
        let start = stream.cudarc().record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        run()?;
        let end = stream.cudarc().record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        times.push(start.elapsed_ms(&end)?);
    }
    times.sort_by(f32::total_cmp);
    Ok(times[times.len() / 2])
}

fn row(name: &str, bytes_moved: usize, ms: f32, reference: f64) -> f64 {
    let gbs = bytes_moved as f64 / (f64::from(ms) * 1e-3) / 1e9;
    println!("| {name:<34} | {ms:>8.3} | {gbs:>8.1} | {:>6.1}% |", 100.0 * gbs / reference.max(1e-9));
    gbs
}

/// Times `dst = src` cast element by element over `n` elements and prints the row.
fn cast_row<Out: DlElement, In: DlElement>(
    stream: &Stream,
    src: &CudaSlice<In>,
    dst: &mut CudaSlice<Out>,
    n: usize,
    reference: f64,
) -> Result<(), CudaError> {
    let a = DeviceMdspan::<In, 1>::from_cuda(src, [n])?;
    let ms = time_ms(stream, || stream.cast(&a, &mut DeviceMdspanMut::<Out, 1>::from_cuda(dst, [n])?))?;
    row(&format!("cast {} -> {}", In::DTYPE, Out::DTYPE), n * (size_of::<In>() + size_of::<Out>()), ms, reference);
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if device_count() == 0 {
        println!("skipped: no CUDA device");
        return Ok(());
    }
    let gpu = Gpu::new(0)?;
    let stream = gpu.new_stream()?;
    let name = gpu.context().name()?;
    let n = BYTES / 4;
    // Values in [-10, 10] (every cast takes its common path, not a zero's shortcut).
    let values: Vec<f32> =
        (0..n as u64).map(|i| (i.wrapping_mul(2_654_435_761) % 2001) as f32 / 100.0 - 10.0).collect();
    let mut src = stream.alloc_zeros::<f32>(n)?;
    stream.copy_from_host(
        &HostMdspan::<f32, 1>::from_slice(&values, [n])?,
        &mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut src, [n])?,
    )?;
    let mut dst = stream.alloc_zeros::<f32>(n)?;
    println!("device: {name} ({}), f32 tensors of {} MiB", gpu.arch(), BYTES >> 20);
    println!("| operation                          |       ms |     GB/s | of D2D |");
    println!("|---|---|---|---|");
    let d2d = time_ms(&stream, || Ok(stream.cudarc().memcpy_dtod(&src, &mut dst)?))?;
    let reference = 2.0 * BYTES as f64 / (f64::from(d2d) * 1e-3) / 1e9;
    row("device-to-device copy (cuMemcpy)", 2 * BYTES, d2d, reference);

    let a = DeviceMdspan::<f32, 1>::from_cuda(&src, [n])?;
    let ms = time_ms(&stream, || stream.copy(&a, &mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut dst, [n])?))?;
    row("contiguous copy", 2 * BYTES, ms, reference);

    let (rows, cols) = (8192, n / 8192);
    let a2 = DeviceMdspan::<f32, 2>::from_cuda(&src, [rows, cols])?;
    let ms = time_ms(&stream, || {
        let mut t =
            DeviceMdspanMut::<f32, 2, LayoutStride>::from_cuda_strided(&mut dst, [rows, cols], [1, rows as isize])?;
        stream.copy(&a2, &mut t)
    })?;
    row("2-d transpose", 2 * BYTES, ms, reference);

    let (d0, d1, d2) = (256, 512, n / (256 * 512));
    let a3 = DeviceMdspan::<f32, 3>::from_cuda(&src, [d0, d1, d2])?;
    let ms = time_ms(&stream, || {
        // Permutation (2, 0, 1) of the output's memory order.
        let strides = [d2 as isize, 1, (d0 * d2) as isize];
        let mut t = DeviceMdspanMut::<f32, 3, LayoutStride>::from_cuda_strided(&mut dst, [d0, d1, d2], strides)?;
        stream.copy(&a3, &mut t)
    })?;
    row("3-d permutation (2, 0, 1)", 2 * BYTES, ms, reference);

    let half_rows = rows / 2;
    let every_other =
        DeviceMdspan::<f32, 2, LayoutStride>::from_cuda_strided(&src, [half_rows, cols], [2 * cols as isize, 1])?;
    let ms = time_ms(&stream, || {
        stream.copy(
            &every_other,
            &mut DeviceMdspanMut::<f32, 2>::from_cuda(&mut dst.slice_mut(0..half_rows * cols), [half_rows, cols])?,
        )
    })?;
    row("strided copy (every other row)", BYTES, ms, reference);

    let reversed = DeviceMdspan::<f32, 1, LayoutStrideRelaxed>::from_cuda_relaxed(&src, [n], [-1], n - 1)?;
    let ms = time_ms(&stream, || stream.copy(&reversed, &mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut dst, [n])?))?;
    row("reversed copy", 2 * BYTES, ms, reference);

    let ms = time_ms(&stream, || stream.axpy(&mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut dst, [n])?, 0.5, &a))?;
    row("axpy (y = a x + y)", 3 * BYTES, ms, reference);

    let ms = time_ms(&stream, || stream.fill(&mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut dst, [n])?, 1.0))?;
    row("fill", BYTES, ms, reference);

    // Casts from f32 and back (the narrow results are cast back, so they hold real values).
    let mut halves = stream.alloc_zeros::<f16>(n)?;
    cast_row(&stream, &src, &mut halves, n, reference)?;
    cast_row(&stream, &halves, &mut dst, n, reference)?;
    let mut bfloats = stream.alloc_zeros::<bf16>(n)?;
    cast_row(&stream, &src, &mut bfloats, n, reference)?;
    cast_row(&stream, &bfloats, &mut dst, n, reference)?;
    let mut e4m3 = stream.alloc_zeros::<Float8E4m3fn>(n)?;
    cast_row(&stream, &src, &mut e4m3, n, reference)?;
    cast_row(&stream, &e4m3, &mut dst, n, reference)?;
    let mut e5m2 = stream.alloc_zeros::<Float8E5m2>(n)?;
    cast_row(&stream, &src, &mut e5m2, n, reference)?;
    cast_row(&stream, &e5m2, &mut dst, n, reference)?;
    let ms = time_ms(&stream, || {
        let mut t =
            DeviceMdspanMut::<f16, 2, LayoutStride>::from_cuda_strided(&mut halves, [rows, cols], [1, rows as isize])?;
        stream.cast(&a2, &mut t)
    })?;
    row("2-d transpose + cast f32 -> f16", 6 * n, ms, reference);

    // Launch overhead of a cached kernel: a one-element fill, back to back.
    let mut tiny = stream.alloc_zeros::<f32>(1)?;
    let ms = time_ms(&stream, || {
        let mut view = DeviceMdspanMut::<f32, 1>::from_cuda(&mut tiny, [1])?;
        for _ in 0..1000 {
            stream.fill(&mut view, 2.0)?;
        }
        Ok(())
    })?;
    println!("launch of a cached kernel (1-element fill, 1000 back to back): {:.2} us each", ms);
    Ok(())
}
