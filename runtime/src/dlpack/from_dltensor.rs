//! [`FromDlTensor`]: the view types a `DLTensor` converts into, sealed to this crate's own views.
//! Each view kind implements it in its own DLPack file.

use super::import::ImportOptions;
use crate::error::DlpackError;
use crate::ffi::DLTensor;
use crate::space::OrderEvent;

pub(crate) mod sealed {
    /// A view type of this crate.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a view type of dlspan",
        note = "`FromDlTensor` is sealed: its `MUTABLE` constant is what keeps read-only managed tensors read-only, so only dlspan's own view types implement it"
    )]
    pub trait Sealed {}
}

/// View types a `DLTensor` converts into: [`Mdspan`](crate::Mdspan) (shared) and
/// [`MdspanMut`](crate::MdspanMut) (mutable) of any element type, rank, extents, layout and memory
/// space, and the other view kinds ([`Aligned`](crate::Aligned), the packed and the dynamic
/// views). Used by [`ManagedTensor::view_as`](crate::ManagedTensor::view_as) to produce any view
/// type.
///
/// Sealed: [`ManagedTensor::view_mut_as`](crate::ManagedTensor::view_mut_as) refuses a `READ_ONLY`
/// tensor only when [`MUTABLE`](Self::MUTABLE) says the view writes, so an outside implementation
/// that said otherwise could write to read-only memory.
///
/// ```
/// use dlspan::{FromDlTensor, HostMdspan, HostMdspanMut};
/// assert!(!<HostMdspan<'static, f32, 2> as FromDlTensor<'static>>::MUTABLE);
/// assert!(<HostMdspanMut<'static, f32, 2> as FromDlTensor<'static>>::MUTABLE);
/// ```
pub trait FromDlTensor<'a>: Sized + sealed::Sealed {
    /// Whether the view writes its elements (see the trait's example).
    const MUTABLE: bool;

    /// Validates `tensor` into this view type: each view type's own `from_dltensor_with` (the
    /// inherent method of the same name, which the trait names for code generic over the view).
    ///
    /// # Errors
    ///
    /// The first rule of [section I](crate::rules#i) that fails.
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan`](crate::to_host_mdspan) (or its `_mut` twin for mutable views), in
    /// the view's memory space.
    ///
    /// ```
    /// use dlspan::{DlpackError, FromDlTensor, HostMdspan, HostMdspanMut, ImportOptions, ToDlpackTensor};
    /// use dlspan::ffi::DLTensor;
    ///
    /// /// Any view type of a tensor from a legacy producer.
    /// ///
    /// /// # Safety
    /// ///
    /// /// As for `V::from_dltensor_with`.
    /// unsafe fn legacy<'a, V: FromDlTensor<'a>>(tensor: &'a DLTensor) -> Result<V, DlpackError> {
    ///     // SAFETY: forwarded to the caller.
    ///     unsafe { V::from_dltensor_with(tensor, ImportOptions::legacy()) }
    /// }
    ///
    /// let mut data = [1i16, 2, 3, 4];
    /// let source = HostMdspanMut::<i16, 2>::from_slice(&mut data, [2, 2])?;
    /// let dl = source.to_dlpack_tensor()?;
    /// let tensor = dl.get();
    /// // SAFETY: `tensor` describes `data`, live for this borrow and not written meanwhile.
    /// let view = unsafe { legacy::<HostMdspan<'_, i16, 2>>(&tensor) }?;
    /// assert_eq!(view[[1, 0]], 3);
    /// # Ok::<(), DlpackError>(())
    /// ```
    unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError>;

    /// The view, its device memory ordered by `order`: the event a
    /// [`ManagedTensor`](crate::ManagedTensor) keeps for the device views it lends, valid while the
    /// view borrows it ([rule C6](crate::rules#c6)). Host and managed views are returned as they are.
    #[doc(hidden)]
    fn with_order(self, order: OrderEvent) -> Self;
}
