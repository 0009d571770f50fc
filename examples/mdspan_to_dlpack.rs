//! CCCL's "mdspan to DLPack" example in Rust: a typed host view exported as a `DLTensor` without
//! heap allocation. Run with `cargo run --example mdspan_to_dlpack`.
//!
//! CCCL's invalid usages (calling `get()` on a temporary, returning a pointer into a local wrapper)
//! are compile errors here; see `ui-tests/fail/export/`.

use dlspan::ffi::DLDeviceType;
use dlspan::{DlpackError, mdspan, to_dlpack_tensor};

type Extents23<'a> = mdspan!(&'a i32; 2, 3);

fn main() -> Result<(), DlpackError> {
    let data = [0i32, 1, 2, 3, 4, 5];
    let md = Extents23::from_array(&data);

    let dl = to_dlpack_tensor(&md)?;
    let dltensor = dl.get();

    // `dl` owns the shape/stride storage; `dltensor.data` is a non-owning pointer to `data`.
    assert_eq!(dltensor.device.device_type, DLDeviceType::kDLCPU);
    assert_eq!(dltensor.ndim, 2);
    assert_eq!(dl.shape(), &[2, 3]);
    assert_eq!(dl.strides(), &[3, 1]);
    assert_eq!(dltensor.data, data.as_ptr().cast_mut().cast());
    println!("{:?}", *dltensor);

    // Hand it to C as `const DLTensor*`: valid while `dltensor` (and so `dl`) lives.
    let for_c = dltensor.as_ptr();
    println!("DLTensor at {for_c:p} with {} dimensions", dltensor.ndim);
    Ok(())
}
