//! The DLPack doors of the dynamic views ([`DynMdspan`], [`DynMdspanMut`]): built from a
//! `DLTensor` by the dynamic import, turned into typed and packed views by the typed import
//! (`typed`, `typed_packed`, ... run it on the view's own `DLTensor`), exported
//! ([`DynDlpackTensor`]), and their [`FromDlTensor`] implementations.

use super::dyn_import::import_dynamic;
use super::export::{DynDlpackTensor, export_dynamic};
use super::from_dltensor::{FromDlTensor, sealed};
use super::import::{Element, ImportOptions, import, import_element};
use crate::dtype::{DlElement, PlainBits};
use crate::error::DlpackError;
use crate::ffi::{DLPackVersion, DLTensor};
use crate::index::{Dims, Layout, Mapping};
use crate::space::{MemorySpace, OrderEvent};
use crate::view::{
    DynMdspan, DynMdspanMut, DynParts, Mdspan, MdspanMut, PackedMdspan, PackedMdspanMut, assert_packable,
};
use core::ptr::NonNull;

/// A typed view's parts, by the typed import's rules (it runs on the dynamic view's own
/// `DLTensor`), with the dynamic view's origin.
#[allow(clippy::type_complexity)]
fn typed_parts<T: DlElement, const R: usize, L: Layout, S: MemorySpace>(
    parts: &DynParts<S>,
    unique: bool,
) -> Result<(NonNull<T>, Mapping<R, Dims<R>, L>, S::Origin), DlpackError> {
    let (ptr, mapping, _) = with_tensor::<R, S, _>(parts, |tensor, options| {
        // SAFETY: when `ndim == R`, shape and strides point to `R` entries (`with_tensor`).
        unsafe { import::<T, R, Dims<R>, L, S>(tensor, options, unique) }
    })?;
    Ok((ptr, mapping, parts.origin))
}

/// A packed view's parts, by the typed import's rules with positions in bits, with the dynamic
/// view's origin.
#[allow(clippy::type_complexity)]
fn packed_parts<T: DlElement, const R: usize, L: Layout, S: MemorySpace>(
    parts: &DynParts<S>,
    unique: bool,
) -> Result<(NonNull<u8>, usize, Mapping<R, Dims<R>, L>, S::Origin), DlpackError> {
    // As every packed constructor: a `u16` or a two-lane type cannot be addressed in bits.
    const { assert_packable::<T>() };
    let (base, start_bit, mapping, _) = with_tensor::<R, S, _>(parts, |tensor, options| {
        // SAFETY: when `ndim == R`, shape and strides point to `R` entries (`with_tensor`).
        unsafe { import_element::<R, Dims<R>, L, S>(tensor, options, unique, Element::packed::<T>()) }
    })?;
    Ok((base, start_bit, mapping, parts.origin))
}

/// Runs `import` on the dynamic view's own `DLTensor` (shape and strides as `R` entries when the
/// rank is `R`) and what its producer said.
fn with_tensor<const R: usize, S: MemorySpace, Out>(
    parts: &DynParts<S>,
    import: impl FnOnce(&DLTensor, ImportOptions) -> Out,
) -> Out {
    let (mut shape, mut strides) = ([0i64; R], [0i64; R]);
    if parts.extents.as_slice().len() == R {
        for axis in 0..R {
            // Validated: extents and strides fit isize, hence int64_t.
            shape[axis] = parts.extents.as_slice()[axis] as i64;
            strides[axis] = parts.strides.as_slice()[axis] as i64;
        }
    }
    let tensor = DLTensor {
        data: parts.data.cast(),
        device: S::device(S::ordinal_of(parts.origin)),
        ndim: i32::try_from(parts.extents.as_slice().len()).unwrap_or(-1),
        dtype: parts.dtype,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: parts.byte_offset,
    };
    import(&tensor, ImportOptions { version: DLPackVersion::CURRENT, subbyte_padded: parts.padded })
}

impl<'a, S: MemorySpace> DynMdspan<'a, S> {
    /// A dynamic view of a `DLTensor` from a current (1.3) producer: sub-byte data packed, null
    /// strides an error for rank > 0.
    ///
    /// Name the memory space (`DynMdspan::<Host>::from_dltensor`) or annotate the binding
    /// (`let view: DynMdspan = …`): Rust does not infer a type parameter from its default, so a
    /// bare `DynMdspan::from_dltensor(&t)` with nothing else fixing `S` is error E0283.
    ///
    /// # Errors
    ///
    /// The first rule that fails (see the type's documentation).
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan`](crate::to_host_mdspan) in `S`'s memory, for the bytes the tensor
    /// describes: `shape` and `strides`, when non-null and `ndim > 0`, each point to `ndim`
    /// readable `int64_t`; every byte holding an element (all of it, for the partly used bytes of
    /// packed data) stays alive and unwritten for `'a`, and holds a valid value of the dtype.
    ///
    /// ```
    /// use dlspan::{DynMdspan, ffi::*};
    /// let mut packed = [0x21u8, 0x07]; // FP4 values 0.5, 1.0, 6.0, low nibble first
    /// let mut shape = [3i64];
    /// let mut strides = [1i64];
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
    /// let view = unsafe { DynMdspan::<dlspan::Host>::from_dltensor(&tensor) }?;
    /// assert_eq!((view.element_bits(), view.byte_range().len()), (4, 2));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A dynamic view of a `DLTensor`, with what the producer said about it (version, padding).
    ///
    /// # Errors
    ///
    /// The first rule that fails (see the type's documentation).
    ///
    /// # Safety
    ///
    /// As for [`from_dltensor`](Self::from_dltensor).
    ///
    /// ```
    /// use dlspan::{DynMdspan, ImportOptions, ffi::*};
    /// let mut data = [1u8, 2, 3, 4];
    /// let mut shape = [2i64, 2];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(), // a legacy producer: row-major
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, alive and unwritten while `view` lives.
    /// let view = unsafe { DynMdspan::<dlspan::Host>::from_dltensor_with(&tensor, ImportOptions::legacy()) }?;
    /// assert_eq!(view.strides(), [2, 1]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller (shape and strides arrays).
        let parts = unsafe { import_dynamic(tensor, options, false) }?;
        // SAFETY: validated parts; the caller keeps the bytes alive (and unwritten, or reached
        // through nothing else for a mutable view) for `'a`.
        Ok(unsafe { Self::from_parts(parts) })
    }

    /// The typed view of element type `T`, rank `R` and layout `L`, by every rule of the typed
    /// import ([`to_host_mdspan`](crate::to_host_mdspan) and its twins): data type (with sub-byte
    /// packing), rank, alignment, the layout's stride rules.
    ///
    /// # Errors
    ///
    /// The first typed rule that fails: [`DlpackError::DtypeMismatch`],
    /// [`DlpackError::RankMismatch`], [`DlpackError::Misaligned`],
    /// [`DlpackError::StridesIncompatible`], ...
    ///
    /// ```
    /// use dlspan::{DlpackError, DynMdspan, HostMdspan, LayoutLeft, LayoutStride};
    /// let data = [1i32, 2, 3, 4, 5, 6];
    /// let view: DynMdspan = HostMdspan::<i32, 2, LayoutLeft>::from_slice(&data, [2, 3])?.into();
    /// assert_eq!(view.typed::<i32, 2, LayoutStride>()?[[1, 2]], 6);
    /// assert!(matches!(view.typed::<i32, 3, LayoutStride>(), Err(DlpackError::RankMismatch { .. })));
    /// # Ok::<(), DlpackError>(())
    /// ```
    #[inline]
    pub fn typed<T: DlElement, const R: usize, L: Layout>(
        &self,
    ) -> Result<Mdspan<'a, T, R, Dims<R>, L, S>, DlpackError> {
        let (ptr, mapping, origin) = typed_parts::<T, R, L, S>(self.parts(), false)?;
        // SAFETY: the typed import validated the mapping, byte range and alignment; the elements
        // are alive and unwritten for `'a` (this view's invariant).
        Ok(unsafe { Mdspan::from_parts_unchecked(ptr, mapping, origin) })
    }
}

impl<'a, S: MemorySpace> DynMdspan<'a, S> {
    /// The packed view of sub-byte values of `T` (packed data: DLPack's default), rank `R`,
    /// layout `L`, by the typed import's rules with positions in bits ([rule P2](crate::rules#p2)).
    ///
    /// # Errors
    ///
    /// As [`typed`](Self::typed); [`DlpackError::SubbytePacking`] for padded data.
    ///
    /// ```
    /// use dlspan::{DynMdspan, LayoutRight, PackedMdspan};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let bytes = [0x21u8, 0x07];
    /// let view: DynMdspan = PackedMdspan::<Float4E2m1fn, 1>::from_bytes(&bytes, [3])?.into();
    /// assert_eq!((view.element_bits(), view.shape()), (4, &[3usize][..]));
    /// let packed = view.typed_packed::<Float4E2m1fn, 1, LayoutRight>()?;
    /// assert_eq!(packed.get([2]).map(|x| x.to_f32()), Some(6.0));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn typed_packed<T: DlElement + PlainBits, const R: usize, L: Layout>(
        &self,
    ) -> Result<PackedMdspan<'a, T, R, Dims<R>, L, S>, DlpackError> {
        let (base, start_bit, mapping, origin) = packed_parts::<T, R, L, S>(self.parts(), false)?;
        // SAFETY: validated by the typed import with positions in bits; the bytes are alive and
        // unwritten for `'a` (this view's invariant).
        Ok(unsafe { PackedMdspan::from_validated(base, start_bit, mapping, origin) })
    }
}

impl<'a, S: MemorySpace> DynMdspanMut<'a, S> {
    /// A mutable packed view of sub-byte values of `T`, borrowing this one; see
    /// [`DynMdspan::typed_packed`].
    ///
    /// # Errors
    ///
    /// As [`DynMdspan::typed_packed`].
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, LayoutRight, PackedMdspanMut};
    /// use dlspan::dtype::Float6E2m3fn;
    /// let mut bytes = [0u8; 3];
    /// let mut view: DynMdspanMut = PackedMdspanMut::<Float6E2m3fn, 1>::from_bytes(&mut bytes, [4])?.into();
    /// view.typed_packed_mut::<Float6E2m3fn, 1, LayoutRight>()?.fill(Float6E2m3fn::from_f32(1.0));
    /// assert_eq!(view.as_view().typed_packed::<Float6E2m3fn, 1, LayoutRight>()?.get([3]).unwrap().to_f32(), 1.0);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn typed_packed_mut<T: DlElement + PlainBits, const R: usize, L: Layout>(
        &mut self,
    ) -> Result<PackedMdspanMut<'_, T, R, Dims<R>, L, S>, DlpackError> {
        let (base, start_bit, mapping, origin) = packed_parts::<T, R, L, S>(self.parts(), true)?;
        // SAFETY: validated (unique included); the bytes are reached only through this borrow.
        Ok(unsafe { PackedMdspanMut::from_validated(base, start_bit, mapping, origin) })
    }

    /// The mutable packed view of sub-byte values of `T`, consuming this one; see
    /// [`DynMdspan::typed_packed`].
    ///
    /// # Errors
    ///
    /// As [`DynMdspan::typed_packed`].
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, LayoutRight, PackedMdspanMut};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut bytes = [0u8; 2];
    /// let view: DynMdspanMut = PackedMdspanMut::<Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?.into();
    /// view.into_typed_packed::<Float4E2m1fn, 1, LayoutRight>()?.set([2], Float4E2m1fn::from_f32(6.0));
    /// assert_eq!(bytes, [0x00, 0x07]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn into_typed_packed<T: DlElement + PlainBits, const R: usize, L: Layout>(
        self,
    ) -> Result<PackedMdspanMut<'a, T, R, Dims<R>, L, S>, DlpackError> {
        let (base, start_bit, mapping, origin) = packed_parts::<T, R, L, S>(self.parts(), true)?;
        // SAFETY: validated (unique included); this view's unique access for `'a` moves on.
        Ok(unsafe { PackedMdspanMut::from_validated(base, start_bit, mapping, origin) })
    }

    /// A mutable dynamic view of a `DLTensor` from a current (1.3) producer.
    ///
    /// # Errors
    ///
    /// As [`DynMdspan::from_dltensor`], and [`DlpackError::OverlappingStrides`] when two indices
    /// share an element.
    ///
    /// # Safety
    ///
    /// As for [`DynMdspan::from_dltensor`], with the bytes valid for writes and accessed through
    /// nothing else for `'a`.
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, LayoutRight, ffi::*};
    /// let mut data = [0i64; 3];
    /// let mut shape = [3i64];
    /// let mut strides = [1i64];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLInt, 64, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, which nothing else touches while `view` lives.
    /// let view = unsafe { DynMdspanMut::<dlspan::Host>::from_dltensor(&tensor) }?;
    /// view.into_typed::<i64, 1, LayoutRight>()?[[2]] = 9;
    /// assert_eq!(data, [0, 0, 9]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A mutable dynamic view of a `DLTensor`, with what the producer said about it.
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
    /// use dlspan::{DlpackError, DynMdspanMut, ImportOptions, ffi::*};
    /// let mut data = [0u8; 4];
    /// let mut shape = [2i64, 2];
    /// let mut strides = [0i64, 1]; // broadcast rows: not unique
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, which nothing else touches while a view lives.
    /// let refused = unsafe { DynMdspanMut::<dlspan::Host>::from_dltensor_with(&tensor, ImportOptions::CURRENT) };
    /// assert!(matches!(refused, Err(DlpackError::OverlappingStrides)));
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller (shape and strides arrays).
        let parts = unsafe { import_dynamic(tensor, options, true) }?;
        // SAFETY: validated parts; the caller keeps the bytes alive (and unwritten, or reached
        // through nothing else for a mutable view) for `'a`.
        Ok(unsafe { Self::from_parts(parts) })
    }

    /// A typed mutable view, borrowing this one; see [`DynMdspan::typed`] for the rules.
    ///
    /// # Errors
    ///
    /// As [`DynMdspan::typed`], and [`DlpackError::UncheckedWrites`] for a type that may write any
    /// byte (`dtype::Bool`) over memory of Rust `bool`s (a view made from a `bool` view).
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, HostMdspanMut, LayoutStrideRelaxed};
    /// let mut data = [1.0f64, 2.0, 3.0];
    /// let mut view: DynMdspanMut = HostMdspanMut::<f64, 1>::from_slice(&mut data, [3])?.into();
    /// view.typed_mut::<f64, 1, LayoutStrideRelaxed>()?.for_each_unordered(|x| *x *= 2.0);
    /// assert_eq!(data, [2.0, 4.0, 6.0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn typed_mut<T: DlElement, const R: usize, L: Layout>(
        &mut self,
    ) -> Result<MdspanMut<'_, T, R, Dims<R>, L, S>, DlpackError> {
        let (ptr, mapping, origin) = typed_parts::<T, R, L, S>(self.parts(), true)?;
        // After the type's own checks, so that another type is its mismatch.
        if !self.parts().validity.kept_by(T::VALIDITY) {
            return Err(DlpackError::UncheckedWrites);
        }
        // SAFETY: validated by the typed import (unique mapping included); the elements are valid
        // for writes and reachable through nothing else while `self` is borrowed mutably.
        Ok(unsafe { MdspanMut::from_parts_unchecked(ptr, mapping, origin) })
    }

    /// The typed mutable view, consuming this one; see [`DynMdspan::typed`] for the rules.
    ///
    /// # Errors
    ///
    /// As [`typed_mut`](Self::typed_mut).
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, HostMdspanMut, LayoutRight};
    /// let mut data = [0u32; 4];
    /// let view: DynMdspanMut = HostMdspanMut::<u32, 2>::from_slice(&mut data, [2, 2])?.into();
    /// let mut typed = view.into_typed::<u32, 2, LayoutRight>()?;
    /// typed[[1, 0]] = 3;
    /// assert_eq!(data, [0, 0, 3, 0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn into_typed<T: DlElement, const R: usize, L: Layout>(
        self,
    ) -> Result<MdspanMut<'a, T, R, Dims<R>, L, S>, DlpackError> {
        let (ptr, mapping, origin) = typed_parts::<T, R, L, S>(self.parts(), true)?;
        // After the type's own checks, so that another type is its mismatch.
        if !self.parts().validity.kept_by(T::VALIDITY) {
            return Err(DlpackError::UncheckedWrites);
        }
        // SAFETY: validated by the typed import; this view's unique access for `'a` moves into the
        // typed view.
        Ok(unsafe { MdspanMut::from_parts_unchecked(ptr, mapping, origin) })
    }
}

/// The export of both dynamic views.
macro_rules! dyn_export {
    ($view:ident, $typed:ident, $mut_kw:literal) => {
        impl<S: MemorySpace> $view<'_, S> {
            /// Describes the view as a `DLTensor` (shape and strides stored in the result, no
            /// allocation up to 8 axes); `data` is null when the view has no elements.
            ///
            /// # Errors
            ///
            /// [`DlpackError::PaddedSubbyteExport`] for padded sub-byte data (a plain `DLTensor` is
            /// packed).
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// let exported = view.to_dlpack_tensor()?;
            /// assert_eq!((exported.get().ndim, exported.shape()), (2, &[2i64, 2][..]));
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn to_dlpack_tensor(&self) -> Result<DynDlpackTensor<'_>, DlpackError> {
                export_dynamic(self.parts())
            }
        }
    };
}

dyn_export!(DynMdspan, HostMdspan, "");
dyn_export!(DynMdspanMut, HostMdspanMut, "mut ");

impl<S: MemorySpace> sealed::Sealed for DynMdspan<'_, S> {}
impl<S: MemorySpace> sealed::Sealed for DynMdspanMut<'_, S> {}

impl<'a, S: MemorySpace> FromDlTensor<'a> for DynMdspan<'a, S> {
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

impl<'a, S: MemorySpace> FromDlTensor<'a> for DynMdspanMut<'a, S> {
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
