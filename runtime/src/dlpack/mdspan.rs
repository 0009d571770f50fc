//! The DLPack doors of [`Mdspan`] and [`MdspanMut`]: views of a `DLTensor` (`from_dltensor`, the
//! generic form of [`to_host_mdspan`](crate::to_host_mdspan) and its twins), their export
//! ([`ToDlpackTensor`]) and their [`FromDlTensor`] implementations.

use super::export::{DlpackTensor, ToDlpackTensor, export_element};
use super::from_dltensor::{FromDlTensor, sealed};
use super::import::{Element, ImportOptions, import};
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::{DLDevice, DLTensor};
use crate::index::{Extents, Layout, Mapping};
use crate::space::{MemorySpace, OrderEvent};
use crate::view::{Mdspan, MdspanMut};

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Mdspan<'a, T, R, E, L, S> {
    /// A shared view of a `DLTensor` of a current (1.3) producer: the generic form of
    /// [`to_host_mdspan`](crate::to_host_mdspan) and its twins, for any extents type, layout and memory space.
    ///
    /// # Errors
    ///
    /// The first rule of [section I](crate::rules#i) that fails, as a [`DlpackError`] variant.
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan`](crate::to_host_mdspan), in `S`'s memory.
    ///
    /// ```
    /// use dlspan::{to_dlpack_tensor, mdspan};
    /// let data = [0i32, 1, 2, 3, 4, 5];
    /// let exported = dlspan::HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    /// let dl = to_dlpack_tensor(&exported).unwrap();
    /// let tensor = dl.get();
    /// // SAFETY: the tensor describes `data`, alive and unwritten for the view's life.
    /// let m = unsafe { <mdspan!(i32; 2, 3)>::from_dltensor(&tensor) }.unwrap();
    /// assert_eq!(m[[1, 2]], 5);
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A shared view of a `DLTensor`, with what the producer said about it (version, padding).
    ///
    /// # Errors
    ///
    /// The first rule of [section I](crate::rules#i) that fails, as a [`DlpackError`] variant.
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan`](crate::to_host_mdspan), in `S`'s memory.
    ///
    /// ```
    /// use dlspan::{HostMdspan, ImportOptions, ffi::*};
    /// let mut data = [1u8, 2, 3, 4];
    /// let mut shape = [2i64, 2];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(), // legacy producers may leave strides null: row-major
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, alive and unwritten for the view's life.
    /// let m = unsafe { HostMdspan::<u8, 2>::from_dltensor_with(&tensor, ImportOptions::legacy()) }.unwrap();
    /// assert_eq!(m[[1, 0]], 3);
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: the caller guarantees the shape and strides arrays.
        let (ptr, map, ordinal) = unsafe { import::<T, R, E, L, S>(tensor, options, false) }?;
        // SAFETY: validated mapping and byte range; the caller guarantees the memory for `'a`.
        Ok(unsafe { Self::from_parts_unchecked(ptr, map, S::origin(ordinal)) })
    }
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> MdspanMut<'a, T, R, E, L, S> {
    /// A mutable view of a `DLTensor` of a current (1.3) producer.
    ///
    /// # Errors
    ///
    /// The first rule of [section I](crate::rules#i) that fails; [`DlpackError::OverlappingStrides`]
    /// when two indices share an element.
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan_mut`](crate::to_host_mdspan_mut), in `S`'s memory.
    ///
    /// ```
    /// use dlspan::{HostMdspanMut, ffi::*};
    /// let mut data = [0f32; 4];
    /// let (mut shape, mut strides) = ([4i64], [1i64]);
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, which nothing else touches while the view lives.
    /// let mut m = unsafe { HostMdspanMut::<f32, 1>::from_dltensor(&tensor) }.unwrap();
    /// m[[3]] = 1.0;
    /// assert_eq!(data[3], 1.0);
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A mutable view of a `DLTensor`, with what the producer said about it.
    ///
    /// # Errors
    ///
    /// As for [`from_dltensor`](Self::from_dltensor).
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan_mut`](crate::to_host_mdspan_mut), in `S`'s memory.
    ///
    /// ```
    /// use dlspan::{HostMdspanMut, ImportOptions, ffi::*};
    /// let mut data = [0u8; 2];
    /// let mut shape = [2i64];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, which nothing else touches while the view lives.
    /// let mut m = unsafe { HostMdspanMut::<u8, 1>::from_dltensor_with(&tensor, ImportOptions::legacy()) }.unwrap();
    /// m[[1]] = 9;
    /// assert_eq!(data, [0, 9]);
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: the caller guarantees the shape and strides arrays.
        let (ptr, map, ordinal) = unsafe { import::<T, R, E, L, S>(tensor, options, true) }?;
        // SAFETY: validated unique mapping and byte range; the caller guarantees unique access to
        // the memory for `'a`.
        Ok(unsafe { Self::from_parts_unchecked(ptr, map, S::origin(ordinal)) })
    }
}

/// Describes a typed view (base pointer, mapping, device) as a `DLTensor`.
#[inline]
fn export<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout>(
    data: *mut T,
    mapping: &Mapping<R, E, L>,
    device: DLDevice,
) -> Result<DlpackTensor<'a, R>, DlpackError> {
    export_element(data.cast(), Element::of::<T>(), 0, mapping, device)
}

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> ToDlpackTensor<R>
    for Mdspan<'_, T, R, E, L, S>
{
    #[inline]
    fn to_dlpack_tensor(&self) -> Result<DlpackTensor<'_, R>, DlpackError> {
        export(self.data_handle().cast_mut(), self.mapping(), self.device())
    }
}

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> ToDlpackTensor<R>
    for MdspanMut<'_, T, R, E, L, S>
{
    #[inline]
    fn to_dlpack_tensor(&self) -> Result<DlpackTensor<'_, R>, DlpackError> {
        export(self.data_handle(), self.mapping(), self.device())
    }
}

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> sealed::Sealed
    for Mdspan<'_, T, R, E, L, S>
{
}

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> sealed::Sealed
    for MdspanMut<'_, T, R, E, L, S>
{
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> FromDlTensor<'a>
    for Mdspan<'a, T, R, E, L, S>
{
    const MUTABLE: bool = false;

    #[inline]
    unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller. The inherent method of the same name (inherent items
        // come before the trait's): this impl only names it for generic code.
        unsafe { Self::from_dltensor_with(tensor, options) }
    }
    #[inline]
    fn with_order(self, order: OrderEvent) -> Self {
        self.with_order(order)
    }
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> FromDlTensor<'a>
    for MdspanMut<'a, T, R, E, L, S>
{
    const MUTABLE: bool = true;

    #[inline]
    unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller. The inherent method of the same name (inherent items
        // come before the trait's): this impl only names it for generic code.
        unsafe { Self::from_dltensor_with(tensor, options) }
    }
    #[inline]
    fn with_order(self, order: OrderEvent) -> Self {
        self.with_order(order)
    }
}
