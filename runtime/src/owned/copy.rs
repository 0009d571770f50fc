//! Copies of borrowed views into managed tensors (`to_managed_tensor`): a borrowed view cannot hand out
//! its data, so its export into an owned [`ManagedTensor`] copies, into storage the consumer owns
//! alone ([rule M8](crate::rules#m8), [rule P4](crate::rules#p4)).

use super::ManagedTensor;
use super::export::{CopyMode, export_compact, export_packed};
use crate::dtype::{DlElement, PlainBits};
use crate::error::DlpackError;
use crate::ffi::DLPACK_FLAG_BITMASK_IS_COPIED;
use crate::index::{Extents, Layout};
use crate::space::HostAccessible;
use crate::view::{Mdspan, MdspanMut, PackedMdspan, PackedMdspanMut};

/// The alignment of the buffers that view copies export, in bytes.
const COPY_ALIGNMENT: usize = 64;

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> Mdspan<'_, T, R, E, L, S> {
    /// An owned managed tensor of this view's elements. A borrowed view cannot hand out ownership
    /// of its data, so every export copies: into a compact row-major [`AlignedBuffer`](crate::AlignedBuffer) (64-byte
    /// aligned, what JAX needs to import without copying again) the consumer owns alone
    /// (`IS_COPIED` set, writable); [`CopyMode::Never`] is refused.
    ///
    /// # Errors
    ///
    /// [`DlpackError::CopyRequired`] for [`CopyMode::Never`].
    ///
    /// ```
    /// use dlspan::{CopyMode, HostMdspan, LayoutRight};
    /// let data: Vec<i32> = (0..6).collect();
    /// let view = HostMdspan::<i32, 2>::from_slice(&data, [2, 3])?;
    /// let owned = view.subview((.., 1..)).to_managed_tensor(CopyMode::Always)?;
    /// assert!(owned.is_copied() && !owned.is_read_only());
    /// assert_eq!(owned.view::<i32, 2, LayoutRight>()?.to_vec(), [1, 2, 4, 5]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn to_managed_tensor(&self, copy: CopyMode) -> Result<ManagedTensor, DlpackError> {
        match copy {
            CopyMode::Never => Err(DlpackError::CopyRequired),
            CopyMode::Always | CopyMode::IfNeeded => export_compact(
                self.to_aligned_buffer::<COPY_ALIGNMENT>(),
                self.extents(),
                DLPACK_FLAG_BITMASK_IS_COPIED,
            ),
        }
    }
}

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> MdspanMut<'_, T, R, E, L, S> {
    /// An owned managed tensor of this view's elements; see [`Mdspan::to_managed_tensor`].
    ///
    /// # Errors
    ///
    /// [`DlpackError::CopyRequired`] for [`CopyMode::Never`].
    ///
    /// ```
    /// use dlspan::{CopyMode, HostMdspanMut};
    /// let mut data = [1u8, 2];
    /// let view = HostMdspanMut::<u8, 1>::from_slice(&mut data, [2])?;
    /// assert_eq!(view.to_managed_tensor(CopyMode::Always)?.shape(), &[2]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn to_managed_tensor(&self, copy: CopyMode) -> Result<ManagedTensor, DlpackError> {
        self.as_view().to_managed_tensor(copy)
    }
}

impl<T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>
    PackedMdspan<'_, T, R, E, L, S>
{
    /// An owned managed tensor of these values: a copy, packed compact row-major, `IS_COPIED`
    /// set, dtype `T::DTYPE` packed ([rule P4](crate::rules#p4)); [`CopyMode::Never`] is refused.
    ///
    /// # Errors
    ///
    /// [`DlpackError::CopyRequired`] for [`CopyMode::Never`].
    ///
    /// ```
    /// use dlspan::{CopyMode, PackedMdspan};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let bytes = [0x21u8, 0x07];
    /// let view = PackedMdspan::<Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
    /// let owned = view.to_managed_tensor(CopyMode::Always)?;
    /// assert!(owned.is_copied() && !owned.is_subbyte_padded());
    /// assert_eq!(owned.view_as::<PackedMdspan<Float4E2m1fn, 1>>()?.to_vec(), view.to_vec());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn to_managed_tensor(&self, copy: CopyMode) -> Result<ManagedTensor, DlpackError> {
        if copy == CopyMode::Never {
            return Err(DlpackError::CopyRequired);
        }
        export_packed::<T, _, R>(self.compact_copy()?, self.extents(), DLPACK_FLAG_BITMASK_IS_COPIED)
    }
}

impl<T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>
    PackedMdspanMut<'_, T, R, E, L, S>
{
    /// An owned managed tensor of these values; see [`PackedMdspan::to_managed_tensor`].
    ///
    /// # Errors
    ///
    /// [`DlpackError::CopyRequired`] for [`CopyMode::Never`].
    ///
    /// ```
    /// # let mut bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspanMut::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// assert_eq!(view.to_managed_tensor(dlspan::CopyMode::Always)?.shape(), &[3]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn to_managed_tensor(&self, copy: CopyMode) -> Result<ManagedTensor, DlpackError> {
        self.as_view().to_managed_tensor(copy)
    }
}
