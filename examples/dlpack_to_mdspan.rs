//! CCCL's "DLPack to mdspan" example in Rust: a hand-made `DLTensor` validated into a typed host
//! view. Run with `cargo run --example dlpack_to_mdspan`.

use dlspan::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLTensor};
use dlspan::{DlpackError, LayoutRight, LayoutStride, to_host_mdspan};

fn main() -> Result<(), DlpackError> {
    let mut data = [0i32, 1, 2, 3, 4, 5];

    // Create a DLTensor manually for demonstration.
    let mut shape = [2i64, 3];
    let mut strides = [3i64, 1]; // row-major strides
    let tensor = DLTensor {
        data: data.as_mut_ptr().cast(),
        device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        ndim: 2,
        dtype: DLDataType::new(DLDataTypeCode::kDLInt, 32, 1),
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };

    // Convert to a host view. The conversion is `unsafe` because a `DLTensor` cannot prove its data
    // is alive; every other rule is checked and reported as a `DlpackError`.
    // SAFETY: `tensor` describes `data`, which stays alive and unwritten while `md` lives.
    let md = unsafe { to_host_mdspan::<i32, 2, LayoutRight>(&tensor) }?;

    assert_eq!(md.rank(), 2);
    assert!(md.extent(0) == 2 && md.extent(1) == 3);
    assert!(md.stride(0) == 3 && md.stride(1) == 1);
    assert_eq!(md.data_handle(), data.as_ptr());
    assert!(md[[0, 0]] == 0 && md[[1, 2]] == 5);
    println!("{md:?}");

    // Where CCCL throws std::invalid_argument, dlspan returns a structured error.
    // SAFETY: as above.
    let wrong_type = unsafe { to_host_mdspan::<f32, 2, LayoutRight>(&tensor) };
    println!("as f32: {}", wrong_type.unwrap_err());
    // SAFETY: as above.
    let wrong_rank = unsafe { to_host_mdspan::<i32, 3, LayoutStride>(&tensor) };
    println!("as rank 3: {}", wrong_rank.unwrap_err());
    Ok(())
}
