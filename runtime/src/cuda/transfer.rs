//! Copies between host and device views of any strides: [`Stream::copy_from_host`] and
//! [`Stream::copy_to_host`]. Contiguous row-major device views are copied directly; any other
//! layout goes through a compact temporary and the copy kernel, on the stream.

use super::abi::KernelKind;
use super::error::CudaError;
use super::kernel::{ModuleKey, Operand};
use super::launch::slice_bytes;
use super::operand::{DeviceRead, DeviceWrite};
use super::order::{run, schedule};
use super::stream::Stream;
use crate::check::compact_strides;
use crate::dtype::DlElement;
use crate::error::LayoutKind;
use crate::space::HostAccessible;
use crate::view::{Extents, Layout, Mdspan, MdspanMut};
use core::mem::size_of;

impl Stream {
    /// Copies a host view into a device view of the same extents (any strides on either side).
    /// The host data is read before this returns; the device side runs on the stream.
    ///
    /// # Errors
    ///
    /// [`DlpackError::ShapeMismatch`](crate::DlpackError::ShapeMismatch), [`CudaError::WrongDevice`], [`CudaError::Driver`].
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspanMut, HostMdspan};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let host = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// let mut device = stream.alloc_zeros::<f32>(6)?;
    /// let src = HostMdspan::<f32, 2>::from_slice(&host, [2, 3])?;
    /// stream.copy_from_host(&src, &mut DeviceMdspanMut::<f32, 2>::from_cuda(&mut device, [2, 3])?)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn copy_from_host<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>(
        &self,
        src: &Mdspan<'_, T, R, E, L, S>,
        dst: &mut impl DeviceWrite<T, R>,
    ) -> Result<(), CudaError> {
        let extents = dst.kernel_extents();
        self.check(extents, &[(&extents, dst.kernel_ordinal()), (&src.extents(), None)])?;
        if extents.contains(&0) {
            return Ok(());
        }
        let staged = src.to_vec();
        let target = dst.kernel_operand();
        let schedule = schedule(&[dst.kernel_order()]);
        if is_row_major(&extents, &target.strides) {
            // SAFETY: `target.address` is the first of `staged.len()` consecutive elements of the
            // destination view (row-major from its first element), whose memory outlives this call;
            // `run` orders the copy with the memory's other uses.
            return run(&**self.cudarc(), &schedule, || unsafe { self.upload(target.address, slice_bytes(&staged)) });
        }
        // Through a compact temporary, used and freed on this stream only.
        let mut temp = self.alloc_zeros::<T>(staged.len())?;
        let (address, record) = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut temp, self.cudarc());
        drop(record);
        let compact = compact_strides(&extents, LayoutKind::Right)?;
        let key = ModuleKey::new::<T, T>(KernelKind::Copy)?;
        let operands = [target, Operand::new(address, compact, size_of::<T>())];
        let Some((function, plan)) = self.kernel(&key, extents, &operands, &[])? else {
            return Ok(());
        };
        // SAFETY: `temp` holds `staged.len()` elements, written on this stream only.
        unsafe { self.upload(address, slice_bytes(&staged)) }?;
        run(&**self.cudarc(), &schedule, || self.enqueue(&function, &plan))
        // `temp` is freed on this stream, after the copy kernel.
    }

    /// Enqueues a copy of `bytes` to device memory at `address`; the bytes are read before this
    /// returns (pageable host memory).
    ///
    /// # Safety
    ///
    /// `address` starts `bytes.len()` bytes of device memory of this stream's context that stay
    /// allocated until the copy has run, and that nothing else uses meanwhile unless ordered with it.
    unsafe fn upload(&self, address: u64, bytes: &[u8]) -> Result<(), CudaError> {
        self.gpu().context().bind_to_thread()?;
        // SAFETY: the caller's contract for the device side; the copy reads `bytes` before it
        // returns.
        unsafe { cudarc::driver::result::memcpy_htod_async(address, bytes, self.cudarc().cu_stream()) }?;
        Ok(())
    }

    /// Enqueues a copy of device memory at `address` into `bytes`.
    ///
    /// # Safety
    ///
    /// `address` starts `bytes.len()` bytes of device memory of this stream's context that stay
    /// allocated and unwritten until the copy has run; `bytes` is not read or dropped before the
    /// stream has run the copy.
    pub(super) unsafe fn download(&self, address: u64, bytes: &mut [u8]) -> Result<(), CudaError> {
        self.gpu().context().bind_to_thread()?;
        // SAFETY: the caller's contract.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(bytes, address, self.cudarc().cu_stream()) }?;
        Ok(())
    }

    /// Copies a device view into a host view of the same extents (any strides on either side),
    /// waiting for the data: when this returns, `dst` holds the values.
    ///
    /// # Errors
    ///
    /// [`DlpackError::ShapeMismatch`](crate::DlpackError::ShapeMismatch), [`CudaError::WrongDevice`], [`CudaError::Driver`] (including
    /// errors of earlier work on the stream).
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, HostMdspanMut};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let device = stream.alloc_zeros::<i32>(4)?;
    /// let mut host = [9i32; 4];
    /// stream.copy_to_host(&DeviceMdspan::<i32, 1>::from_cuda(&device, [4])?, &mut HostMdspanMut::<i32, 1>::from_slice(&mut host, [4])?)?;
    /// assert_eq!(host, [0; 4]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn copy_to_host<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>(
        &self,
        src: &impl DeviceRead<T, R>,
        dst: &mut MdspanMut<'_, T, R, E, L, S>,
    ) -> Result<(), CudaError> {
        let extents = dst.extents();
        self.check(extents, &[(&src.kernel_extents(), src.kernel_ordinal())])?;
        if extents.contains(&0) {
            return Ok(());
        }
        let n = dst.size();
        let source = src.kernel_operand();
        // Staged as bytes: a `Vec<T>` of uninitialised or zeroed elements is not valid for every
        // element type, bytes are.
        let mut staged = vec![0u8; n * size_of::<T>()];
        let schedule = schedule(&[src.kernel_order()]);
        let mut temp = None;
        if is_row_major(&extents, &source.strides) {
            // SAFETY: `source.address` is the first of `n` consecutive elements of the source view
            // (row-major from its first element), whose memory outlives this call; `staged` holds
            // their bytes and is read only after the synchronisation below; `run` orders the copy
            // with the memory's other uses.
            run(&**self.cudarc(), &schedule, || unsafe { self.download(source.address, &mut staged) })?;
        } else {
            // Through a compact temporary, used and freed on this stream only.
            let mut buffer = self.alloc_zeros::<T>(n)?;
            let (address, record) = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut buffer, self.cudarc());
            drop(record);
            temp = Some(buffer);
            let compact = compact_strides(&extents, LayoutKind::Right)?;
            let key = ModuleKey::new::<T, T>(KernelKind::Copy)?;
            let operands = [Operand::new(address, compact, size_of::<T>()), source];
            if let Some((function, plan)) = self.kernel(&key, extents, &operands, &[])? {
                run(&**self.cudarc(), &schedule, || {
                    self.enqueue(&function, &plan)?;
                    // SAFETY: the temporary holds `n` elements, written by the kernel before on
                    // this stream; `staged` holds their bytes and is read only after the
                    // synchronisation below.
                    unsafe { self.download(address, &mut staged) }
                })?;
            }
        }
        self.synchronize()?;
        drop(temp);
        // Device memory is never checked on import: `bool` bytes become 0 or 1 here (rule I18).
        crate::dtype::make_valid::<T>(&mut staged);
        for (slot, bytes) in dst.iter_mut().zip(staged.chunks_exact(size_of::<T>())) {
            // SAFETY: `bytes` are the bytes of one element the device view held, copied byte for
            // byte, valid for `T` (any bytes, or the bytes 0 and 1 just made so).
            *slot = unsafe { bytes.as_ptr().cast::<T>().read_unaligned() };
        }
        Ok(())
    }
}

/// Whether strides are row-major compact for these extents (axes of extent 1 may have any stride):
/// the elements are consecutive in logical order from the first.
fn is_row_major<const R: usize>(extents: &[usize; R], strides: &[isize; R]) -> bool {
    let mut expected = 1isize;
    for axis in (0..R).rev() {
        if extents[axis] != 1 && strides[axis] != expected {
            return false;
        }
        expected = expected.saturating_mul(extents[axis] as isize);
    }
    true
}
