//! The views a [`ManagedTensor`] lends: every rule of section [I](crate::rules#i) on the tensor's
//! own `DLTensor`, with its version and flags ([rule M4](crate::rules#m4)), shared views of an
//! aliased tensor refused, mutable ones of a read-only tensor too.

use super::ManagedTensor;
use crate::dlpack::{FromDlTensor, ImportOptions};
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::index::Layout;
use crate::view::{HostMdspan, HostMdspanMut};

impl ManagedTensor {
    /// `view` as it is: without feature `cuda` there are no launches to order.
    #[cfg(not(feature = "cuda"))]
    #[inline]
    fn lend<'s, V: FromDlTensor<'s>>(&'s self, view: V) -> V {
        view
    }

    /// What the producer said about the tensor, for the conversion rules.
    ///
    /// ```
    /// use dlspan::{ImportOptions, ManagedTensor};
    /// let t = ManagedTensor::from_owner(vec![0u8; 4], [4])?;
    /// assert_eq!(t.import_options(), ImportOptions::CURRENT);
    /// let raw = t.into_raw_legacy().map_err(|e| e.error())?;
    /// // SAFETY: `raw` is a live legacy managed tensor whose ownership passes here.
    /// let legacy = unsafe { ManagedTensor::from_raw_legacy(raw) }?;
    /// assert_eq!(legacy.import_options(), ImportOptions::legacy());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn import_options(&self) -> ImportOptions {
        ImportOptions {
            version: self.version().unwrap_or(ImportOptions::legacy().version),
            subbyte_padded: self.is_subbyte_padded(),
        }
    }

    /// A shared host view of element type `T`, rank `R`, layout `L`.
    ///
    /// # Errors
    ///
    /// [`DlpackError::Aliased`] for an [aliased](Self::is_aliased) tensor; the first rule of
    /// [section I](crate::rules#i) that fails, as [`to_host_mdspan`](crate::to_host_mdspan).
    ///
    /// ```
    /// use dlspan::{ManagedTensor, LayoutRight, DlpackError};
    /// let t = ManagedTensor::from_owner(vec![1u16, 2, 3, 4], [2, 2])?;
    /// assert_eq!(t.view::<u16, 2, LayoutRight>()?[[1, 0]], 3);
    /// assert!(matches!(t.view::<f32, 2, LayoutRight>(), Err(DlpackError::DtypeMismatch { .. })));
    /// # Ok::<(), DlpackError>(())
    /// ```
    #[inline]
    pub fn view<T: DlElement, const R: usize, L: Layout>(&self) -> Result<HostMdspan<'_, T, R, L>, DlpackError> {
        self.view_as()
    }

    /// A mutable host view.
    ///
    /// # Errors
    ///
    /// [`DlpackError::ReadOnly`] for a `READ_ONLY` tensor, [`DlpackError::Aliased`] for an
    /// [aliased](Self::is_aliased) one; otherwise as [`view`](Self::view), and
    /// [`DlpackError::OverlappingStrides`] when two indices share an element.
    ///
    /// ```
    /// use dlspan::{ManagedTensor, LayoutRight};
    /// let mut t = ManagedTensor::from_owner(vec![0i32; 4], [4])?;
    /// t.view_mut::<i32, 1, LayoutRight>()?[[3]] = 5;
    /// assert_eq!(t.view::<i32, 1, LayoutRight>()?.to_vec(), [0, 0, 0, 5]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn view_mut<T: DlElement, const R: usize, L: Layout>(
        &mut self,
    ) -> Result<HostMdspanMut<'_, T, R, L>, DlpackError> {
        self.view_mut_as()
    }

    /// A shared view of any view type: static extents (`mdspan!`), device or managed memory.
    ///
    /// # Errors
    ///
    /// [`DlpackError::Aliased`] for an [aliased](Self::is_aliased) tensor; the first rule of
    /// [section I](crate::rules#i) that fails.
    ///
    /// ```
    /// use dlspan::{mdspan, ManagedTensor};
    /// let t = ManagedTensor::from_owner(vec![0.5f32; 6], [2, 3])?;
    /// let tile = t.view_as::<mdspan!(f32; 2, 3)>()?;
    /// assert_eq!(tile[[1, 2]], 0.5);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn view_as<'s, V: FromDlTensor<'s>>(&'s self) -> Result<V, DlpackError> {
        const { assert!(!V::MUTABLE, "view_as gives shared views; use view_mut_as for a mutable view") };
        if self.aliased {
            return Err(DlpackError::Aliased);
        }
        // SAFETY: the tensor owns its data until drop, which cannot happen while `self` is
        // borrowed; the constructor's contract makes the tensor well-formed and its data valid and
        // unwritten by others while this unaliased value lives.
        let view = unsafe { V::from_dltensor_with(self.dl_tensor(), self.import_options()) }?;
        Ok(self.lend(view))
    }

    /// A mutable view of any view type.
    ///
    /// # Errors
    ///
    /// [`DlpackError::ReadOnly`] for a `READ_ONLY` tensor, [`DlpackError::Aliased`] for an
    /// [aliased](Self::is_aliased) one; otherwise as [`view_as`](Self::view_as).
    ///
    /// ```
    /// use dlspan::{mdspan, ManagedTensor};
    /// let mut t = ManagedTensor::from_owner(vec![0u8; 4], [2, 2])?;
    /// t.view_mut_as::<mdspan!(mut u8; 2, 2)>()?[[0, 1]] = 1;
    /// assert_eq!(t.view::<u8, 2, dlspan::LayoutRight>()?.to_vec(), [0, 1, 0, 0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn view_mut_as<'s, V: FromDlTensor<'s>>(&'s mut self) -> Result<V, DlpackError> {
        if V::MUTABLE && self.is_read_only() {
            return Err(DlpackError::ReadOnly);
        }
        if self.aliased {
            return Err(DlpackError::Aliased);
        }
        // SAFETY: as in `view_as`, and `&mut self` makes this the only access through this value;
        // nobody else reaches the memory while we own an unaliased tensor (constructor contract,
        // or `assume_unaliased`'s), and `READ_ONLY` and aliased tensors were refused above.
        let view = unsafe { V::from_dltensor_with(self.dl_tensor(), self.import_options()) }?;
        Ok(self.lend(view))
    }
}
