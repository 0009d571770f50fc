//! The DLPack doors of the packed views ([`PackedMdspan`], [`PackedMdspanMut`]): views of a
//! `DLTensor` of packed sub-byte values, by the import rules with positions counted in bits
//! ([rule P2](crate::rules#p2)), their export ([`ToDlpackTensor`]) and their [`FromDlTensor`]
//! implementations.

use super::export::{DlpackTensor, ToDlpackTensor, export_element};
use super::from_dltensor::{FromDlTensor, sealed};
use super::import::{Element, ImportOptions, import_element};
use crate::dtype::{DlElement, PlainBits};
use crate::error::DlpackError;
use crate::ffi::DLTensor;
use crate::index::{Extents, Layout};
use crate::space::{MemorySpace, OrderEvent};
use crate::view::{PackedMdspan, PackedMdspanMut, assert_packable};

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>
    PackedMdspan<'a, T, R, E, L, S>
{
    /// A packed view of a `DLTensor` of a current (1.3) producer: data type exactly `T::DTYPE`,
    /// packed (the default of a plain `DLTensor`), and every other rule of
    /// [section I](crate::rules#i) with positions counted in bits ([rule P2](crate::rules#p2)).
    ///
    /// # Errors
    ///
    /// The first rule that fails; [`DlpackError::SubbytePacking`] for padded data.
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan`](crate::to_host_mdspan) in `S`'s memory, for every byte that holds
    /// a value (all of it, also the partly used bytes at the ends).
    ///
    /// ```
    /// use dlspan::{PackedMdspan, ffi::*};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut packed = [0x21u8, 0x07];
    /// let (mut shape, mut strides) = ([3i64], [1i64]);
    /// let tensor = DLTensor {
    ///     data: packed.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `packed`, alive and unwritten while `view` lives.
    /// let view = unsafe { PackedMdspan::<Float4E2m1fn, 1>::from_dltensor(&tensor) }?;
    /// assert_eq!(view.get([2]).map(|x| x.to_f32()), Some(6.0));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A packed view of a `DLTensor`, with what the producer said about it (version, padding).
    ///
    /// # Errors
    ///
    /// As [`from_dltensor`](Self::from_dltensor).
    ///
    /// # Safety
    ///
    /// As for [`from_dltensor`](Self::from_dltensor).
    ///
    /// ```
    /// use dlspan::{DlpackError, ImportOptions, PackedMdspan, ffi::*};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut padded = [0x01u8, 0x02, 0x07]; // one value per byte
    /// let mut shape = [3i64];
    /// let tensor = DLTensor {
    ///     data: padded.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(),
    ///     byte_offset: 0,
    /// };
    /// let options = ImportOptions { subbyte_padded: true, ..ImportOptions::legacy() };
    /// // SAFETY: metadata only: the padded data is refused.
    /// let refused = unsafe { PackedMdspan::<Float4E2m1fn, 1>::from_dltensor_with(&tensor, options) };
    /// assert!(matches!(refused, Err(DlpackError::SubbytePacking { .. })));
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        const { assert_packable::<T>() };
        // SAFETY: forwarded to the caller (shape and strides arrays).
        let (base, start_bit, map, ordinal) =
            unsafe { import_element::<R, E, L, S>(tensor, options, false, Element::packed::<T>()) }?;
        // SAFETY: validated: every value's bytes lie in the range checked, which the caller keeps
        // alive and unwritten for `'a`; index 0 starts at `data + byte_offset`, a whole byte.
        Ok(unsafe { Self::from_validated(base, start_bit, map, S::origin(ordinal)) })
    }
}

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>
    PackedMdspanMut<'a, T, R, E, L, S>
{
    /// A mutable packed view of a `DLTensor` of a current (1.3) producer.
    ///
    /// # Errors
    ///
    /// As [`PackedMdspan::from_dltensor`]; [`DlpackError::OverlappingStrides`] when two indices
    /// share a value.
    ///
    /// # Safety
    ///
    /// As for [`PackedMdspan::from_dltensor`], with the bytes valid for writes and reached through
    /// nothing else for `'a`.
    ///
    /// ```
    /// use dlspan::{PackedMdspanMut, ffi::*};
    /// use dlspan::dtype::Float6E3m2fn;
    /// let mut packed = [0u8; 3]; // three FP6 values: 18 bits
    /// let (mut shape, mut strides) = ([3i64], [1i64]);
    /// let tensor = DLTensor {
    ///     data: packed.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat6_e3m2fn, 6, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `packed`, which nothing else touches while `view` lives.
    /// let mut view = unsafe { PackedMdspanMut::<Float6E3m2fn, 1>::from_dltensor(&tensor) }?;
    /// view.set([2], Float6E3m2fn::from_f32(28.0));
    /// assert_eq!(packed, [0x00, 0xF0, 0x01]); // bits 12..18
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A mutable packed view of a `DLTensor`, with what the producer said about it.
    ///
    /// # Errors
    ///
    /// As [`from_dltensor`](Self::from_dltensor).
    ///
    /// # Safety
    ///
    /// As for [`from_dltensor`](Self::from_dltensor).
    ///
    /// ```
    /// use dlspan::{DlpackError, ImportOptions, PackedMdspanMut, ffi::*};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut packed = [0u8; 2];
    /// let (mut shape, mut strides) = ([2i64, 2], [0i64, 1]); // broadcast rows: not unique
    /// let tensor = DLTensor {
    ///     data: packed.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: metadata only: refused.
    /// let refused = unsafe {
    ///     PackedMdspanMut::<Float4E2m1fn, 2, dlspan::Dims<2>, dlspan::LayoutStrideRelaxed>::from_dltensor_with(
    ///         &tensor,
    ///         ImportOptions::CURRENT,
    ///     )
    /// };
    /// assert!(matches!(refused, Err(DlpackError::OverlappingStrides)));
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        const { assert_packable::<T>() };
        // SAFETY: forwarded to the caller (shape and strides arrays).
        let (base, start_bit, map, ordinal) =
            unsafe { import_element::<R, E, L, S>(tensor, options, true, Element::packed::<T>()) }?;
        // SAFETY: validated, unique; the caller gives unique access to the bytes for `'a`.
        Ok(unsafe { Self::from_validated(base, start_bit, map, S::origin(ordinal)) })
    }
}

macro_rules! packed_export {
    ($view:ident) => {
        impl<T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> ToDlpackTensor<R>
            for $view<'_, T, R, E, L, S>
        {
            /// Exports as a `DLTensor` of dtype `T::DTYPE` (packed: no padding flag exists on a plain
            /// `DLTensor`), with the view's shape and strides.
            #[inline]
            fn to_dlpack_tensor(&self) -> Result<DlpackTensor<'_, R>, DlpackError> {
                let data = self.data_handle().cast_mut().cast();
                export_element(data, Element::packed::<T>(), self.start_bit(), self.mapping(), self.device())
            }
        }
    };
}

packed_export!(PackedMdspan);
packed_export!(PackedMdspanMut);

impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> sealed::Sealed for PackedMdspan<'_, T, R, E, L, S> {}
impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> sealed::Sealed
    for PackedMdspanMut<'_, T, R, E, L, S>
{
}

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> FromDlTensor<'a>
    for PackedMdspan<'a, T, R, E, L, S>
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

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> FromDlTensor<'a>
    for PackedMdspanMut<'a, T, R, E, L, S>
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
