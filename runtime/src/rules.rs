#![doc = include_str!("../docs/rules.md")]

// The items the page links to, by their short names (the page is also read on GitHub, where the
// links show as their names).
#[cfg(doc)]
use crate::{
    Aligned, AlignedBuffer, CopyMode, DlElement, DlTensorRef, DlpackError, DlpackTensor, DynMdspan, DynMdspanMut,
    FromDlTensor, ImportOptions, IntoLegacyError, LayoutLeft, LayoutRight, LayoutStride, LayoutStrideRelaxed,
    ManagedTensor, Mapping, Mdspan, MdspanMut, PackedMdspan, PackedMdspanMut, TensorOwner, ToDlpackTensor, dtype,
    kernel, to_device_mdspan, to_dlpack_tensor, to_host_mdspan, to_managed_mdspan, view,
};
