//! A tour of dlspan. Run it with `cargo run --example tour`.

use dlspan::dtype::*;
use dlspan::half::{bf16, f16};
use dlspan::num_complex::Complex;
use dlspan::{
    AlignedBuffer, CopyMode, DlElement, DlRecord, DlpackError, HostMdspan, HostMdspanMut, LayoutRight, LayoutStride,
    LayoutStrideRelaxed, ManagedTensor, Storage, TensorOwner, mdspan, to_dlpack_tensor, to_host_mdspan,
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
    owned_exchange()?;
    records()?;
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

    println!("\n== element-wise: memory order is the fast order ==");
    let x: Vec<f32> = (0..12).map(|v| v as f32).collect();
    let column_major = HostMdspan::<f32, 2, dlspan::LayoutLeft>::from_slice(&x, [3, 4])?;
    println!(
        "sum {} (vectorised), memory-order fold {}",
        column_major.sum(),
        column_major.fold_unordered(0.0, |a, v| a + v)
    );
    let mut y = vec![1.0f32; 12];
    let mut y_view = HostMdspanMut::<f32, 2, dlspan::LayoutLeft>::from_slice(&mut y, [3, 4])?;
    // axpy in y's memory order; `y.iter_mut().zip(x.iter())` gives the same result in logical
    // order, which for column-major views steps a whole column per element.
    y_view.zip_with(&column_major, |y, &x| *y += 0.5 * x)?;
    y_view.for_each_unordered(|y| *y -= 1.0);
    println!("axpy y += 0.5 x, then y -= 1: {:?}", y_view.to_vec());

    println!("\n== rows, columns, mutable views ==");
    let mut grid = [0u8; 6];
    let mut m = HostMdspanMut::<u8, 2>::from_slice(&mut grid, [2, 3])?;
    for (i, mut row) in m.outer_iter_mut().enumerate() {
        row[[0]] = i as u8 + 1; // rows of a row-major view are row-major (contiguous)
    }
    m.index_axis_mut(1, 1).iter_mut().for_each(|x| *x = 7); // column 1, rank inferred
    m[[1, 2]] = 9;
    let column_sums: Vec<u32> = m.axis_iter(1).map(|c| c.iter().map(|&v| u32::from(v)).sum()).collect();
    println!("{m:?}, column sums {column_sums:?}");
    let nested = <mdspan!(u8; 2, 3)>::from_nested(&[[1, 2, 3], [4, 5, 6]]); // shape checked by `cargo check`
    println!("from a nested array: {:?}", nested.to_vec());
    Ok(())
}

/// An owner that says when DLPack's deleter releases it.
struct Loud(Vec<f32>);

impl Drop for Loud {
    fn drop(&mut self) {
        println!("  (the deleter dropped the owner of {} floats)", self.0.len());
    }
}

// SAFETY: the Vec's buffer does not move until the owner is dropped.
unsafe impl TensorOwner for Loud {
    type Elem = f32;

    fn storage(&mut self) -> Storage<f32> {
        Storage {
            ptr: core::ptr::NonNull::new(self.0.as_mut_ptr()).expect("Vec pointers are non-null"),
            len: self.0.len(),
            writable: true,
        }
    }
}

fn owned_exchange() -> Result<(), DlpackError> {
    println!("\n== owned exchange: managed tensors ==");
    let exported = ManagedTensor::from_owner(Loud((0..6).map(|x| x as f32).collect()), [2, 3])?;
    println!("exported: {exported:?}");
    let raw = exported.into_raw_versioned(); // what a C consumer receives
    println!("handed over as DLManagedTensorVersioned* {raw:p}");
    // The consumer side (here dlspan again): it owns the tensor and calls the deleter once on drop.
    // SAFETY: `raw` is a live managed tensor whose ownership passes here.
    let imported = unsafe { ManagedTensor::from_raw_versioned(raw) }?;
    let view = imported.view::<f32, 2, LayoutRight>()?;
    println!(
        "consumer reads {:?}, row sums {:?}",
        view.to_vec(),
        view.outer_iter().map(|row| row.sum()).collect::<Vec<f32>>()
    );
    drop(imported);
    println!("released");

    let data = [1u8, 2, 3, 4];
    let view = HostMdspan::<u8, 2>::from_slice(&data, [2, 2])?;
    let copy = view.to_managed_tensor(CopyMode::Always)?;
    println!("a copy of a borrowed view: is_copied {}, read_only {}", copy.is_copied(), copy.is_read_only());
    println!("never copying a borrowed view: {}", view.to_managed_tensor(CopyMode::Never).unwrap_err());
    let shared = ManagedTensor::from_owner(std::sync::Arc::<[u8]>::from(data), [4])?;
    println!("a shared Arc owner exports read-only: {}", shared.is_read_only());

    println!("\n== alignment: owned buffers and aligned views ==");
    let mut buffer = AlignedBuffer::<f32>::from_fn(32, |i| i as f32); // 64-byte aligned
    scale_rows(buffer.view_mut([4, 8])?, 0.5);
    let tensor = ManagedTensor::from_owner(buffer, [4, 8])?; // no copy
    let aligned = tensor.view_as::<mdspan!(f32; dyn, dyn; align = 64)>()?; // the import checks it
    println!("imported with its alignment: first element at {:p}, sum {}", aligned.data_handle(), aligned.sum());
    let shifted = aligned.subview_aligned((.., 1..));
    println!("a sub-view one column in is not 64-byte aligned: {}", shifted.unwrap_err());
    Ok(())
}

/// A kernel that may use 64-byte vector loads: its argument's type says the data allows them.
fn scale_rows(mut rows: mdspan!(mut f32; dyn, dyn; align = 64), factor: f32) {
    rows.view_mut().for_each_unordered(|v| *v *= factor);
}

/// A record: member views give one field of every record, zero-copy.
#[derive(Clone, Copy, Debug, DlRecord)]
#[repr(C)]
struct Particle {
    position: [f32; 3],
    mass: f32,
    id: u32,
    charge: f32,
}

fn records() -> Result<(), DlpackError> {
    println!("\n== record member views ==");
    let particles: Vec<Particle> =
        (0..4).map(|i| Particle { position: [i as f32; 3], mass: 0.5 * i as f32, id: 10 + i, charge: -1.0 }).collect();
    let view = HostMdspan::<Particle, 1>::from_slice(&particles, [4])?;
    let masses = view.member(Particle::MASS);
    println!("masses {:?}: stride {} floats, offset {} floats", masses.to_vec(), masses.stride(0), masses.offset());
    let dl = to_dlpack_tensor(&masses)?;
    println!(
        "exported zero-copy: byte_offset {}, strides {:?}, dtype {}",
        dl.get().byte_offset,
        dl.strides(),
        dl.get().dtype
    );
    println!("ids {:?}", view.member(Particle::ID).to_vec());
    Ok(())
}
