//! The DLPack doors of [`Aligned`]: views of a `DLTensor` checked by every import rule and then by
//! the alignment ([rule A1](crate::rules#a1)), their export ([`ToDlpackTensor`]) and their
//! [`FromDlTensor`] implementation.

use super::export::{DlpackTensor, ToDlpackTensor};
use super::from_dltensor::{FromDlTensor, sealed};
use super::import::ImportOptions;
use crate::error::DlpackError;
use crate::ffi::DLTensor;
use crate::space::OrderEvent;
use crate::view::{Aligned, AlignedView};

impl<V, const ALIGN: usize> Aligned<V, ALIGN> {
    /// A view of a `DLTensor` of a current producer, checked by every import rule and then by the
    /// alignment (rule [A1](crate::rules#a1)).
    ///
    /// # Errors
    ///
    /// The first import rule that fails; then [`DlpackError::Underaligned`].
    ///
    /// # Safety
    ///
    /// As for `V`'s own `from_dltensor` ([`Mdspan::from_dltensor`](crate::Mdspan::from_dltensor),
    /// [`MdspanMut::from_dltensor`](crate::MdspanMut::from_dltensor)).
    ///
    /// ```
    /// use dlspan::{Aligned, HostMdspan, ToDlpackTensor};
    /// let buffer = dlspan::AlignedBuffer::<i32, 16>::from_fn(8, |i| i as i32);
    /// let exported = buffer.view([2, 4])?;
    /// let dl = exported.to_dlpack_tensor()?;
    /// let tensor = dl.get();
    /// // SAFETY: the tensor describes `buffer`, alive and unwritten while the view lives.
    /// let view = unsafe { Aligned::<HostMdspan<'_, i32, 2>, 16>::from_dltensor(&tensor) }?;
    /// assert_eq!(view[[1, 3]], 7);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor<'a>(tensor: &'a DLTensor) -> Result<Self, DlpackError>
    where
        V: FromDlTensor<'a> + AlignedView,
    {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A view of a `DLTensor`, with what the producer said about it; see
    /// [`from_dltensor`](Self::from_dltensor).
    ///
    /// # Errors
    ///
    /// The first import rule that fails; then [`DlpackError::Underaligned`].
    ///
    /// # Safety
    ///
    /// As for `V`'s own `from_dltensor_with`.
    ///
    /// ```
    /// use dlspan::{Aligned, DlpackError, HostMdspan, ImportOptions, ToDlpackTensor};
    /// let buffer = dlspan::AlignedBuffer::<u8, 64>::zeroed(8);
    /// let exported = HostMdspan::<u8, 1>::from_slice(&buffer[2..], [6])?;
    /// let dl = exported.to_dlpack_tensor()?;
    /// let tensor = dl.get();
    /// // SAFETY: the tensor describes `buffer`, alive and unwritten here.
    /// let view = unsafe { Aligned::<HostMdspan<'_, u8, 1>, 4>::from_dltensor_with(&tensor, ImportOptions::CURRENT) };
    /// assert!(matches!(view, Err(DlpackError::Underaligned { required: 4, found: 2, .. })));
    /// # Ok::<(), DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with<'a>(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError>
    where
        V: FromDlTensor<'a> + AlignedView,
    {
        // SAFETY: forwarded to the caller.
        Self::new(unsafe { V::from_dltensor_with(tensor, options) }?)
    }
}

impl<V: sealed::Sealed, const ALIGN: usize> sealed::Sealed for Aligned<V, ALIGN> {}

impl<'a, V: FromDlTensor<'a> + AlignedView, const ALIGN: usize> FromDlTensor<'a> for Aligned<V, ALIGN> {
    const MUTABLE: bool = V::MUTABLE;

    #[inline]
    unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller. The inherent method of the same name (inherent items
        // come before the trait's): this impl only names it for generic code.
        unsafe { Self::from_dltensor_with(tensor, options) }
    }

    #[inline]
    fn with_order(self, order: OrderEvent) -> Self {
        let view = self.into_inner().with_order(order);
        // SAFETY: the same view, its first element where it was (only its ordering event changed).
        unsafe { Self::new_unchecked(view) }
    }
}

impl<V: ToDlpackTensor<R>, const R: usize, const ALIGN: usize> ToDlpackTensor<R> for Aligned<V, ALIGN> {
    #[inline]
    fn to_dlpack_tensor(&self) -> Result<DlpackTensor<'_, R>, DlpackError> {
        (**self).to_dlpack_tensor()
    }
}
