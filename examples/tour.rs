//! A tour of dlspan. Run it with `cargo run --example tour`.

use dlspan::dtype::*;
use dlspan::half::{bf16, f16};
use dlspan::num_complex::Complex;
use dlspan::{
    DlElement, DlpackError, HostMdspan, HostMdspanMut, LayoutRight, LayoutStride, LayoutStrideRelaxed, mdspan,
    to_dlpack_tensor, to_host_mdspan,
};

/// An RGBA pixel: four `u8` lanes, DLPack `uint8x4`.
#[derive(Clone, Copy, Debug, DlElement)]
#[repr(C, align(4))]
struct Rgba8 {
    r: u8,
    g: u8,
    b: u8,
    a: u8,
}

/// A length in meters, exchanged as plain `float32`.
#[derive(Clone, Copy, Debug, DlElement)]
#[repr(transparent)]
struct Meters(f32);

/// An FP8 value from another library, declared by its DLPack code.
#[derive(Clone, Copy, Debug, DlElement)]
#[dl(code = kDLFloat8_e4m3fn, bits = 8)]
#[repr(transparent)]
struct TheirE4m3(u8);

fn row<T: DlElement>(name: &str) {
    let d = T::DTYPE;
    println!(
        "  {name:<26} {:<16} code {:>2}  bits {:>3}  lanes {:>2}  size {:>2}  align {:>2}",
        d.to_string(),
        d.code,
        d.bits,
        d.lanes,
        core::mem::size_of::<T>(),
        core::mem::align_of::<T>()
    );
}

fn main() -> Result<(), DlpackError> {
    dtype_table();
    views()?;
    Ok(())
}

fn dtype_table() {
    println!("== element types and their DLPack data types ==");
    row::<bool>("bool");
    row::<i8>("i8");
    row::<i32>("i32");
    row::<i128>("i128");
    row::<u16>("u16");
    row::<u64>("u64");
    row::<f16>("half::f16");
    row::<bf16>("half::bf16");
    row::<f32>("f32");
    row::<f64>("f64");
    row::<Complex<f16>>("Complex<f16>");
    row::<Complex<f32>>("Complex<f32>");
    row::<Complex<f64>>("Complex<f64>");
    row::<Float8E4m3fn>("Float8E4m3fn");
    row::<Float8E5m2>("Float8E5m2");
    row::<Float8E8m0fnu>("Float8E8m0fnu");
    row::<Float6E2m3fnX4>("Float6E2m3fnX4 (packed)");
    row::<Float4E2m1fnX2>("Float4E2m1fnX2 (packed)");
    row::<Float4E2m1fn>("Float4E2m1fn (padded)");
    row::<F32x4>("F32x4 (float4)");
    row::<F64x4>("F64x4 (double4)");
    row::<Bf16x2>("Bf16x2 (__nv_bfloat162)");
    row::<Float8E4m3fnX4>("Float8E4m3fnX4");
    println!("== derived element types ==");
    row::<Rgba8>("Rgba8 (repr(C) lanes)");
    row::<Meters>("Meters (transparent)");
    row::<TheirE4m3>("TheirE4m3 (#[dl] storage)");
    let fp8 = Float8E4m3fn::from_bits(TheirE4m3(0x7E).0);
    println!("  TheirE4m3(0x7E) decodes to {:?}", fp8);
    let _ = (Rgba8 { r: 1, g: 2, b: 3, a: 4 }, Meters(1.5));
}

/// A 4x4 tile with static extents: `from_array` with the wrong length would not compile.
type Tile<'a> = mdspan!(&'a f32; 4, 4);

fn views() -> Result<(), DlpackError> {
    println!("\n== typed views ==");
    let data: [f32; 16] = core::array::from_fn(|i| i as f32);
    let tile = Tile::from_array(&data);
    println!("tile[[2, 3]] = {}, sum = {}", tile[[2, 3]], tile.iter().sum::<f32>());
    let inner = tile.subview((1..3, 1..3));
    println!("inner 2x2 (strides {:?}): {:?}", inner.strides(), inner.to_vec());

    println!("\n== view -> DLTensor -> view, no allocation ==");
    let dl = to_dlpack_tensor(&inner)?;
    let tensor = dl.get();
    println!(
        "exported: ndim {}, shape {:?}, strides {:?}, dtype {}",
        tensor.ndim,
        dl.shape(),
        dl.strides(),
        tensor.dtype
    );
    // SAFETY: the export describes `data`, alive and unwritten while `back` lives.
    let back = unsafe { to_host_mdspan::<f32, 2, LayoutStride>(&tensor) }?;
    println!("imported back as layout_stride: {:?}", back.to_vec());
    // SAFETY: as above.
    let strict = unsafe { to_host_mdspan::<f32, 2, LayoutRight>(&tensor) };
    println!("as layout_right it is refused: {}", strict.unwrap_err());

    println!("\n== relaxed layouts: broadcast and reversed axes ==");
    let row = [1.0f32, 2.0, 3.0];
    let broadcast = HostMdspan::<f32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&row, [2, 3], [0, 1], 0)?;
    println!("broadcast 2x3 over 3 values: {:?}", broadcast.to_vec());
    let reversed = HostMdspan::<f32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&row, [3], [-1], 2)?;
    let dl = to_dlpack_tensor(&reversed)?;
    println!("reversed: {:?}, exported with byte_offset {}", reversed.to_vec(), dl.get().byte_offset);

    println!("\n== mutable views ==");
    let mut grid = [0u8; 6];
    let mut m = HostMdspanMut::<u8, 2>::from_slice(&mut grid, [2, 3])?;
    m.subview_mut((.., 1..2)).iter_mut().for_each(|x| *x = 7);
    m[[1, 2]] = 9;
    println!("{m:?}");
    Ok(())
}
