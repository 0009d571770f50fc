//! Element-wise kernels written once, in Rust syntax: a generic blend over `f16`, `bf16` and `f32`,
//! and alpha compositing of a derived RGBA type. Each runs on the CPU (`dlspan::kernel::Cpu`, the
//! body as Rust) and, with feature `cuda` on a machine with a GPU, on a CUDA stream (the body
//! translated to CUDA C++ and compiled by NVRTC), and the two agree.
//!
//! ```sh
//! cargo run --example elementwise                  # on the CPU
//! cargo run --example elementwise --features cuda  # and on the GPU, when there is one
//! ```

use dlspan::dtype::cast;
use dlspan::half::{bf16, f16};
use dlspan::kernel::{Cpu, Float};
use dlspan::{DlpackError, HostMdspan, HostMdspanMut, LayoutLeft};

/// An 8-bit RGBA pixel: its fields are the kernels' too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, dlspan::DlElement)]
#[repr(C)]
pub struct Rgba {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
    /// Alpha (255 is opaque).
    pub a: u8,
}

dlspan::elementwise! {
    /// `x + t·(y − x)`, then a gamma curve (0 below 0): written once, for every float type.
    pub fn blend<T: Float>(t: T, gamma: T, x: &T, y: &T, out: &mut T) {
        let v = *x + t * (*y - *x);
        *out = if v > 0 as T { v.powf(gamma) } else { 0 as T };
    }
}

dlspan::elementwise! {
    /// `fg` over `bg`, by `fg`'s alpha: integer arithmetic on the fields.
    pub fn over(fg: &Rgba, bg: &Rgba, out: &mut Rgba) {
        let a = fg.a as u32;
        out.r = ((fg.r as u32 * a + bg.r as u32 * (255 - a)) / 255) as u8;
        out.g = ((fg.g as u32 * a + bg.g as u32 * (255 - a)) / 255) as u8;
        out.b = ((fg.b as u32 * a + bg.b as u32 * (255 - a)) / 255) as u8;
        out.a = 255;
    }
}

const ROWS: usize = 48;
const COLUMNS: usize = 64;

/// The blend of `T` on the CPU, over a column-major `x` and a row-major `y`.
fn blend_on_cpu<T: Float>(x: &[T], y: &[T]) -> Result<Vec<T>, DlpackError> {
    let mut out = vec![T::ZERO; ROWS * COLUMNS];
    blend.run(
        Cpu,
        cast::<f32, T>(0.25),
        cast::<f32, T>(2.2),
        &HostMdspan::<T, 2, LayoutLeft>::from_slice(x, [ROWS, COLUMNS])?,
        &HostMdspan::<T, 2>::from_slice(y, [ROWS, COLUMNS])?,
        &mut HostMdspanMut::<T, 2>::from_slice(&mut out, [ROWS, COLUMNS])?,
    )?;
    Ok(out)
}

/// An image with a gradient of alpha, and a background colour: one pixel, broadcast to every one.
fn image() -> (Vec<Rgba>, Rgba) {
    let fg = (0..ROWS * COLUMNS)
        .map(|i| Rgba { r: (i % 256) as u8, g: (i / 7 % 256) as u8, b: 200, a: (i % COLUMNS * 4) as u8 })
        .collect();
    (fg, Rgba { r: 10, g: 20, b: 30, a: 255 })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ramp = |scale: f32| (0..ROWS * COLUMNS).map(move |i| i as f32 / (ROWS * COLUMNS) as f32 * scale);
    let (x32, y32): (Vec<f32>, Vec<f32>) = (ramp(1.0).collect(), ramp(2.0).collect());
    let out32 = blend_on_cpu::<f32>(&x32, &y32)?;
    let x16: Vec<f16> = x32.iter().map(|&v| f16::from_f32(v)).collect();
    let y16: Vec<f16> = y32.iter().map(|&v| f16::from_f32(v)).collect();
    let out16 = blend_on_cpu::<f16>(&x16, &y16)?;
    let xb: Vec<bf16> = x32.iter().map(|&v| bf16::from_f32(v)).collect();
    let yb: Vec<bf16> = y32.iter().map(|&v| bf16::from_f32(v)).collect();
    let outb = blend_on_cpu::<bf16>(&xb, &yb)?;
    let last = ROWS * COLUMNS - 1;
    println!("blend on the CPU: f32 {}, f16 {}, bf16 {} (last element)", out32[last], out16[last], outb[last]);
    assert!((out16[last].to_f32() - out32[last]).abs() < 1e-2 && (outb[last].to_f32() - out32[last]).abs() < 5e-2);

    let (fg, bg) = image();
    let mut composed = vec![Rgba::default(); ROWS * COLUMNS];
    over.run(
        Cpu,
        &HostMdspan::<Rgba, 2>::from_slice(&fg, [ROWS, COLUMNS])?,
        &HostMdspan::<Rgba, 0>::from_slice(core::slice::from_ref(&bg), [])?,
        &mut HostMdspanMut::<Rgba, 2>::from_slice(&mut composed, [ROWS, COLUMNS])?,
    )?;
    println!("over on the CPU: first pixel {:?}, last {:?}", composed[0], composed[last]);
    assert_eq!(composed[0], Rgba { r: 10, g: 20, b: 30, a: 255 }); // alpha 0: the background

    #[cfg(feature = "cuda")]
    gpu::run(&x32, &y32, &out32, &fg, bg, &composed)?;
    #[cfg(not(feature = "cuda"))]
    println!("GPU: built without feature `cuda` (cargo run --example elementwise --features cuda)");
    Ok(())
}

#[cfg(feature = "cuda")]
mod gpu {
    //! The same kernels on a CUDA stream, compared with the CPU's results.
    use super::{COLUMNS, ROWS, Rgba, blend, over};
    use dlspan::cuda::{Gpu, device_count};
    use dlspan::{DeviceMdspan, DeviceMdspanMut, HostMdspan, HostMdspanMut, LayoutLeft};

    pub(super) fn run(
        x: &[f32],
        y: &[f32],
        blended: &[f32],
        fg: &[Rgba],
        bg: Rgba,
        composed: &[Rgba],
    ) -> Result<(), Box<dyn std::error::Error>> {
        if device_count() == 0 {
            println!("GPU: no CUDA device, the GPU part is skipped");
            return Ok(());
        }
        let stream = Gpu::new(0)?.new_stream()?;
        let shape = [ROWS, COLUMNS];
        let upload = |values: &[f32]| -> Result<_, Box<dyn std::error::Error>> {
            let mut buffer = stream.alloc_zeros::<f32>(values.len())?;
            stream.copy_from_host(
                &HostMdspan::<f32, 1>::from_slice(values, [values.len()])?,
                &mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut buffer, [values.len()])?,
            )?;
            Ok(buffer)
        };
        let (dx, dy) = (upload(x)?, upload(y)?);
        let mut dout = stream.alloc_zeros::<f32>(ROWS * COLUMNS)?;
        blend.run(
            &stream,
            0.25f32,
            2.2f32,
            &DeviceMdspan::<f32, 2, LayoutLeft>::from_cuda_mapping(&dx, dlspan::Mapping::compact(shape)?)?,
            &DeviceMdspan::<f32, 2>::from_cuda(&dy, shape)?,
            &mut DeviceMdspanMut::<f32, 2>::from_cuda(&mut dout, shape)?,
        )?;
        let mut back = vec![0.0f32; ROWS * COLUMNS];
        stream.copy_to_host(
            &DeviceMdspan::<f32, 2>::from_cuda(&dout, shape)?,
            &mut HostMdspanMut::<f32, 2>::from_slice(&mut back, shape)?,
        )?;
        // `+ - *` agree bit for bit; `powf` within the ulps of rule K4.
        let worst =
            back.iter().zip(blended).map(|(g, c)| (g - c).abs() / c.abs().max(f32::MIN_POSITIVE)).fold(0.0, f32::max);
        println!("blend on the GPU: largest relative difference from the CPU {worst:e}");
        assert!(worst < 1e-6);

        let mut dfg = stream.alloc_zeros::<Rgba>(fg.len())?;
        stream.copy_from_host(
            &HostMdspan::<Rgba, 1>::from_slice(fg, [fg.len()])?,
            &mut DeviceMdspanMut::<Rgba, 1>::from_cuda(&mut dfg, [fg.len()])?,
        )?;
        let mut dbg = stream.alloc_zeros::<Rgba>(1)?;
        stream.fill(&mut DeviceMdspanMut::<Rgba, 1>::from_cuda(&mut dbg, [1])?, bg)?;
        let mut dcomposed = stream.alloc_zeros::<Rgba>(fg.len())?;
        over.run(
            &stream,
            &DeviceMdspan::<Rgba, 2>::from_cuda(&dfg, shape)?,
            &DeviceMdspan::<Rgba, 0>::from_cuda(&dbg, [])?,
            &mut DeviceMdspanMut::<Rgba, 2>::from_cuda(&mut dcomposed, shape)?,
        )?;
        let mut back = vec![Rgba::default(); fg.len()];
        stream.copy_to_host(
            &DeviceMdspan::<Rgba, 2>::from_cuda(&dcomposed, shape)?,
            &mut HostMdspanMut::<Rgba, 2>::from_slice(&mut back, shape)?,
        )?;
        assert_eq!(back, composed, "integer kernels agree bit for bit");
        println!("over on the GPU: the same {} pixels as the CPU", back.len());
        Ok(())
    }
}
