//! Reductions on a [`Stream`]: [`Stream::sum`], the sum of every element of a device or managed
//! view of any layout, returned to the host in the element type's accumulator.
//!
//! Two launches on the stream: the first gives each of up to
//! [`SUM_BLOCKS`](super::kernel::SUM_BLOCKS) blocks a share of the elements (a grid-stride loop
//! over the view's merged axes, per-thread partial sums, compensated for floats, then a tree in
//! shared memory), the second, one block, adds the blocks' partial sums the same way; the total is
//! copied to the host on the stream, and only that stream is waited for.

use super::abi::KernelKind;
use super::error::CudaError;
use super::kernel::{ModuleKey, SUM_BLOCKS, sum_plans};
use super::operand::DeviceRead;
use super::order::{run, schedule};
use super::stream::Stream;
use crate::dtype::Numeric;
use core::mem::size_of;

impl Stream {
    /// The sum of every element of `x`, in `T`'s accumulator type ([`Numeric::Acc`]): `f32` for
    /// `f32` and the narrower floats (`f16`, `bf16`, the FP8 formats), `f64` for `f64`, `i64` for
    /// the signed integers and `bool`, `u64` for the unsigned ones (128-bit integers in their own
    /// type), integers wrapping on overflow as NumPy's sums do. Any layout (transposed, strided,
    /// negative or zero strides: a broadcast element counts once per index).
    ///
    /// Floats are summed with per-thread compensated (Kahan) partial sums, added as a tree within
    /// each block and then across blocks: the error is at most a few units in the last place times
    /// the tree's depth (about 18 levels), as good as or better than NumPy's pairwise sum (whose
    /// bound grows with `log2(n)` over blocks of 128 summed in order). The result is not NumPy's
    /// bit for bit: the order of the additions differs. A NaN gives NaN, infinities of one sign
    /// that sign's infinity.
    ///
    /// The work is enqueued on this stream after what is there already, ordered with `x`'s other
    /// uses ([rule C6](crate::rules#c6)); the total is copied back on this stream and the call
    /// waits for this stream only (not the device).
    ///
    /// # Errors
    ///
    /// [`CudaError::WrongDevice`]; [`CudaError::Unsupported`] for types without a sum (vectors,
    /// complex numbers, FP6/FP4, opaque types); the driver's and compiler's errors (including
    /// errors of earlier work on the stream).
    ///
    /// ```no_run
    /// use dlspan::DeviceMdspan;
    /// use dlspan::half::f16;
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let x = stream.alloc_zeros::<f16>(1 << 20)?;
    /// let total: f32 = stream.sum(&DeviceMdspan::<f16, 2>::from_cuda(&x, [1024, 1024])?)?;
    /// assert_eq!(total, 0.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn sum<T: Numeric, const R: usize>(&self, x: &impl DeviceRead<T, R>) -> Result<T::Acc, CudaError> {
        let extents = x.kernel_extents();
        self.check(extents, &[(&extents, x.kernel_ordinal())])?;
        let first_key = ModuleKey::new::<T::Acc, T>(KernelKind::Sum)?;
        let second_key = ModuleKey::new::<T::Acc, T::Acc>(KernelKind::Sum)?;
        if extents.contains(&0) {
            return Ok(T::Acc::ZERO);
        }
        // The blocks' partial sums, then the total: used on this stream only, freed after the wait.
        let mut partials = self.alloc_zeros::<T::Acc>(SUM_BLOCKS as usize + 1)?;
        let (address, record) = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut partials, self.cudarc());
        drop(record);
        let Some((first, second, total)) = sum_plans(extents, x.kernel_operand(), address, size_of::<T::Acc>())? else {
            return Ok(T::Acc::ZERO);
        };
        let first_function = self.gpu().function(&first_key, &first)?;
        let second_function = self.gpu().function(&second_key, &second)?;
        let mut staged = vec![0u8; size_of::<T::Acc>()];
        let enqueued = run(&**self.cudarc(), &schedule(&[x.kernel_order()]), || {
            self.enqueue(&first_function, &first)?;
            self.enqueue(&second_function, &second)?;
            // SAFETY: `total` is the last element written by the second kernel, before on this
            // stream, inside `partials` (which lives until after the wait below); `staged` holds
            // its bytes and is read only after that wait.
            unsafe { self.download(total, &mut staged) }
        });
        // Waited for even after an error: the copy into `staged` may have been enqueued.
        let waited = self.synchronize();
        enqueued?;
        waited?;
        drop(partials);
        // SAFETY: `staged` holds the bytes of one accumulator the kernel wrote (a float or an
        // integer: every bit pattern is a valid value), copied byte for byte.
        Ok(unsafe { staged.as_ptr().cast::<T::Acc>().read_unaligned() })
    }
}
