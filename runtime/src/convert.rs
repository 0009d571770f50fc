//! `DLTensor` ↔ typed views, by CCCL's names: [`to_host_mdspan`] / [`to_device_mdspan`] /
//! [`to_managed_mdspan`] (and their `_mut` twins) and [`to_dlpack_tensor`], with every rule of
//! sections [I](crate::rules#i) and [E](crate::rules#e) of the [rules page](crate::rules); and the
//! names around them users spell: [`DlpackTensor`], [`DlTensorRef`], [`DynDlpackTensor`],
//! [`ToDlpackTensor`], [`FromDlTensor`], [`ImportOptions`].
//!
//! The engine behind these doors (the typed and dynamic imports, the export wrappers, each view
//! kind's `from_dltensor`) is the crate's one place where raw DLPack pointers become views. A
//! `&DLTensor` cannot prove its data is alive, so the conversions from one are `unsafe`; the safe
//! doors are a managed tensor, which owns its data, and [`DlpackTensor`], which borrows a view.

pub use crate::dlpack::{
    DlTensorRef, DlpackTensor, DynDlpackTensor, FromDlTensor, ImportOptions, ToDlpackTensor, to_dlpack_tensor,
};
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::DLTensor;
use crate::index::{Dims, Layout};
use crate::space::{Device, Host, Managed};
use crate::view::{self, Mdspan, MdspanMut};

macro_rules! to_mdspan {
    ($(#[$doc:meta])* $name:ident, $name_mut:ident, $space:ident, $alias:ident, $alias_mut:ident, $memory:literal) => {
        $(#[$doc])*
        ///
        /// # Errors
        ///
        /// The first rule of [section I](crate::rules#i) that fails, as a [`DlpackError`] variant, in
        /// the rules' order: device type (I1), device id (I2), rank (I3), data type (I4), sub-byte
        /// packing (I5), null data (I6), byte offset (I7), alignment (I8), shape (I10), null strides
        /// (I11), static extents (I12), the layout's strides (I13), span (I14), no reach below the
        /// base (I15); then, for `bool` element types, the bytes (I18).
        ///
        /// # Safety
        ///
        /// - `tensor.shape` and `tensor.strides`, when non-null and `ndim` equals `R`, each point to
        ///   `R` readable, aligned `int64_t`;
        #[doc = concat!("- the elements the tensor describes lie in ", $memory, ", are initialised, and stay")]
        ///   alive and unwritten for `'a` (the view borrows the `DLTensor` struct, which cannot prove
        ///   that its data lives as long). Any bytes a producer stores for the tensor's dtype will
        ///   do: element types accept every such bit pattern, and views of `bool` check theirs
        ///   ([rule I18](crate::rules#i18)).
        #[inline]
        pub unsafe fn $name<'a, T: DlElement, const R: usize, L: Layout>(
            tensor: &'a DLTensor,
        ) -> Result<view::$alias<'a, T, R, L>, DlpackError> {
            // SAFETY: forwarded to the caller.
            unsafe { Mdspan::<'a, T, R, Dims<R>, L, $space>::from_dltensor(tensor) }
        }

        #[doc = concat!("The mutable twin of [`", stringify!($name), "`].")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($name), "`], and [`DlpackError::OverlappingStrides`] when two indices")]
        /// share an element.
        ///
        /// # Safety
        ///
        #[doc = concat!("As [`", stringify!($name), "`], with the elements valid for writes and accessed through")]
        /// nothing else for `'a`.
        #[inline]
        pub unsafe fn $name_mut<'a, T: DlElement, const R: usize, L: Layout>(
            tensor: &'a DLTensor,
        ) -> Result<view::$alias_mut<'a, T, R, L>, DlpackError> {
            // SAFETY: forwarded to the caller.
            unsafe { MdspanMut::<'a, T, R, Dims<R>, L, $space>::from_dltensor(tensor) }
        }
    };
}

to_mdspan! {
    /// A shared host view of a `DLTensor` on the CPU (CCCL `cuda::to_host_mdspan`): device `kDLCPU`
    /// (or pinned `kDLCUDAHost` / `kDLROCMHost`), rank `R`, element type `T`, layout `L`.
    ///
    /// ```
    /// use dlspan::{to_host_mdspan, LayoutRight, ffi::*};
    /// # fn main() -> Result<(), dlspan::DlpackError> {
    /// let mut data = [0i32, 1, 2, 3, 4, 5];
    /// let mut shape = [2i64, 3];
    /// let mut strides = [3i64, 1];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLInt, 32, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, alive and unwritten while `md` lives.
    /// let md = unsafe { to_host_mdspan::<i32, 2, LayoutRight>(&tensor) }?;
    /// assert_eq!((md.extent(0), md.extent(1), md.stride(0)), (2, 3, 3));
    /// assert_eq!((md[[0, 0]], md[[1, 2]]), (0, 5));
    /// # Ok(()) }
    /// ```
    to_host_mdspan, to_host_mdspan_mut, Host, HostMdspan, HostMdspanMut, "host memory"
}

to_mdspan! {
    /// A shared CUDA device view of a `DLTensor` (CCCL `cuda::to_device_mdspan`): device `kDLCUDA`;
    /// the view remembers the device ordinal. Validating needs no GPU: only metadata is read.
    ///
    /// ```
    /// use dlspan::{to_device_mdspan, LayoutRight, ffi::*};
    /// let mut shape = [4i64];
    /// let mut strides = [1i64];
    /// let tensor = DLTensor {
    ///     data: 0x7f00_0000_0000 as *mut core::ffi::c_void, // a device address, never read here
    ///     device: DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 1 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: a device view is never read on the host; the metadata arrays are alive.
    /// let d = unsafe { to_device_mdspan::<f32, 1, LayoutRight>(&tensor) }.unwrap();
    /// assert_eq!((d.extent(0), d.ordinal()), (4, 1));
    /// ```
    to_device_mdspan, to_device_mdspan_mut, Device, DeviceMdspan, DeviceMdspanMut, "the CUDA device's memory"
}

to_mdspan! {
    /// A shared CUDA managed-memory view of a `DLTensor` (CCCL `cuda::to_managed_mdspan`): device
    /// `kDLCUDAManaged`. Managed views index on the host.
    ///
    /// ```
    /// use dlspan::{to_managed_mdspan, LayoutRight, ffi::*};
    /// let mut data = [7u8; 3]; // stands in for cudaMallocManaged memory
    /// let mut shape = [3i64];
    /// let mut strides = [1i64];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCUDAManaged, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, alive and unwritten while the view lives.
    /// let m = unsafe { to_managed_mdspan::<u8, 1, LayoutRight>(&tensor) }.unwrap();
    /// assert_eq!(m[[2]], 7);
    /// ```
    to_managed_mdspan, to_managed_mdspan_mut, Managed, ManagedMdspan, ManagedMdspanMut, "CUDA managed memory"
}
