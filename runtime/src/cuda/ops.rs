//! The element-wise operations of a [`Stream`]: `copy`, `fill`, `add`, `scale`, `axpy` and
//! `cast` on device and managed views of any layout, in the crate's one vocabulary: operations
//! that write an output take their inputs first and the output last (`copy(&src, &mut dst)`,
//! `add(&a, &b, &mut out)`, `cast(&src, &mut dst)`); operations that update a view in place with
//! a scalar take the view first (`fill(&mut dst, value)`, `scale(&mut x, alpha)`,
//! `axpy(&mut y, alpha, &x)`). Each is enqueued on the stream and returns
//! before the GPU runs it, except on managed views, which wait for their work
//! ([rule C3](crate::rules#c3)); each is ordered with the other uses of its operands' allocations
//! ([rule C6](crate::rules#c6)).

use super::abi::KernelKind;
use super::elementwise::device_operand;
use super::error::CudaError;
use super::kernel::ModuleKey;
use super::launch::bytes_of;
use super::operand::{DeviceRead, DeviceWrite};
use super::stream::Stream;
use crate::dtype::DlElement;
use crate::kernel::Instance;

impl Stream {
    /// Copies `src` into `dst`, element by element: views of one shape with any strides on either
    /// side (make-contiguous, transposes, layout left ↔ right, broadcast reads, negative strides).
    ///
    /// # Errors
    ///
    /// [`DlpackError::ShapeMismatch`](crate::DlpackError::ShapeMismatch), [`CudaError::WrongDevice`], and the driver's and compiler's
    /// errors.
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, DeviceMdspanMut, LayoutLeft, LayoutStride};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let src = stream.alloc_zeros::<f32>(6)?;
    /// let mut dst = stream.alloc_zeros::<f32>(6)?;
    /// let rows = DeviceMdspan::<f32, 2>::from_cuda(&src, [2, 3])?;
    /// let mut columns = DeviceMdspanMut::<f32, 2, LayoutLeft>::from_cuda_mapping(&mut dst, dlspan::Mapping::compact([2, 3])?)?;
    /// stream.copy(&rows, &mut columns)?; // row-major to column-major
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn copy<T: DlElement, const R: usize>(
        &self,
        src: &impl DeviceRead<T, R>,
        dst: &mut impl DeviceWrite<T, R>,
    ) -> Result<(), CudaError> {
        let extents = dst.kernel_extents();
        self.check(extents, &[(&extents, dst.kernel_ordinal()), (&src.kernel_extents(), src.kernel_ordinal())])?;
        let key = ModuleKey::new::<T, T>(KernelKind::Copy)?;
        let orders = [dst.kernel_order(), src.kernel_order()];
        self.launch(&key, extents, &[dst.kernel_operand(), src.kernel_operand()], &orders, &[])
    }

    /// Sets every element of `dst` to `value`.
    ///
    /// # Errors
    ///
    /// [`CudaError::WrongDevice`]; [`CudaError::ScalarTooLarge`] for elements above 64 bytes.
    ///
    /// ```no_run
    /// use dlspan::DeviceMdspanMut;
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let mut buffer = stream.alloc_zeros::<u16>(10)?;
    /// stream.fill(&mut DeviceMdspanMut::<u16, 1>::from_cuda(&mut buffer, [10])?, 7)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fill<T: DlElement, const R: usize>(
        &self,
        dst: &mut impl DeviceWrite<T, R>,
        value: T,
    ) -> Result<(), CudaError> {
        let instance = builtin(ModuleKey::new::<T, T>(KernelKind::Fill)?);
        self.launch_elementwise(instance, &mut [device_operand(dst, true)], &[bytes_of(&value)])
    }

    /// `out = a + b` element-wise (integers wrap; floats round once; `f16`/`bf16` compute in `f32`
    /// and round back, as `half` does). Broadcast an input with zero strides (a relaxed view).
    ///
    /// # Errors
    ///
    /// [`DlpackError::ShapeMismatch`](crate::DlpackError::ShapeMismatch), [`CudaError::WrongDevice`], [`CudaError::Unsupported`] for
    /// types without arithmetic.
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, DeviceMdspanMut, LayoutStrideRelaxed};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let (a, bias) = (stream.alloc_zeros::<f32>(12)?, stream.alloc_zeros::<f32>(4)?);
    /// let mut out = stream.alloc_zeros::<f32>(12)?;
    /// let a = DeviceMdspan::<f32, 2>::from_cuda(&a, [3, 4])?;
    /// let bias = DeviceMdspan::<f32, 2, LayoutStrideRelaxed>::from_cuda_relaxed(&bias, [3, 4], [0, 1], 0)?;
    /// stream.add(&a, &bias, &mut DeviceMdspanMut::<f32, 2>::from_cuda(&mut out, [3, 4])?)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add<T: DlElement, const R: usize>(
        &self,
        a: &impl DeviceRead<T, R>,
        b: &impl DeviceRead<T, R>,
        out: &mut impl DeviceWrite<T, R>,
    ) -> Result<(), CudaError> {
        let instance = builtin(ModuleKey::new::<T, T>(KernelKind::Add)?);
        let mut operands = [device_operand(a, false), device_operand(b, false), device_operand(out, true)];
        self.launch_elementwise(instance, &mut operands, &[])
    }

    /// `x = alpha * x` element-wise, in place (the view first, then the scalar, as
    /// [`fill`](Self::fill)). A scaled copy into another view is a [`copy`](Self::copy) followed by
    /// this.
    ///
    /// # Errors
    ///
    /// [`CudaError::WrongDevice`]; [`CudaError::Unsupported`] for types without arithmetic.
    ///
    /// ```no_run
    /// use dlspan::DeviceMdspanMut;
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let mut x = stream.alloc_zeros::<f64>(8)?;
    /// stream.scale(&mut DeviceMdspanMut::<f64, 1>::from_cuda(&mut x, [8])?, 2.0)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scale<T: DlElement, const R: usize>(
        &self,
        x: &mut impl DeviceWrite<T, R>,
        alpha: T,
    ) -> Result<(), CudaError> {
        let instance = builtin(ModuleKey::new::<T, T>(KernelKind::Scale)?);
        self.launch_elementwise(instance, &mut [device_operand(x, true)], &[bytes_of(&alpha)])
    }

    /// `y = alpha * x + y` element-wise, in place, unfused (two roundings, as Rust's `a * x + y`):
    /// the updated view first, then the scalar and the input.
    ///
    /// # Errors
    ///
    /// As [`add`](Self::add).
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, DeviceMdspanMut};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let x = stream.alloc_zeros::<f32>(1024)?;
    /// let mut y = stream.alloc_zeros::<f32>(1024)?;
    /// let x = DeviceMdspan::<f32, 1>::from_cuda(&x, [1024])?;
    /// stream.axpy(&mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut y, [1024])?, 0.5, &x)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn axpy<T: DlElement, const R: usize>(
        &self,
        y: &mut impl DeviceWrite<T, R>,
        alpha: T,
        x: &impl DeviceRead<T, R>,
    ) -> Result<(), CudaError> {
        let instance = builtin(ModuleKey::new::<T, T>(KernelKind::Axpy)?);
        let mut operands = [device_operand(x, false), device_operand(y, true)];
        self.launch_elementwise(instance, &mut operands, &[bytes_of(&alpha)])
    }

    /// `dst = src` converted element by element to `dst`'s type: what
    /// [`dtype::cast`](crate::dtype::cast) gives on the CPU, bit for bit (one rounding to nearest
    /// even, each FP8 format's overflow rule, Rust `as` into integers, NaN as the target's quiet NaN
    /// with the input's sign). Between `bool`, the 8- to 128-bit integers, `f16`, `bf16`, `f32`,
    /// `f64` and the eight FP8 codes ([rule C5](crate::rules#c5)); any strides on either side (a
    /// transpose goes through shared-memory tiles).
    ///
    /// # Errors
    ///
    /// [`DlpackError::ShapeMismatch`](crate::DlpackError::ShapeMismatch), [`CudaError::WrongDevice`], [`CudaError::Unsupported`] for
    /// other types (vectors, complex numbers, FP6/FP4, opaque types).
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, DeviceMdspanMut};
    /// use dlspan::half::f16;
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let src = stream.alloc_zeros::<f32>(16)?;
    /// let mut dst = stream.alloc_zeros::<f16>(16)?;
    /// stream.cast(&DeviceMdspan::<f32, 1>::from_cuda(&src, [16])?, &mut DeviceMdspanMut::<f16, 1>::from_cuda(&mut dst, [16])?)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cast<T: DlElement, U: DlElement, const R: usize>(
        &self,
        src: &impl DeviceRead<U, R>,
        dst: &mut impl DeviceWrite<T, R>,
    ) -> Result<(), CudaError> {
        let extents = dst.kernel_extents();
        self.check(extents, &[(&extents, dst.kernel_ordinal()), (&src.kernel_extents(), src.kernel_ordinal())])?;
        let key = ModuleKey::new::<T, U>(KernelKind::Cast)?;
        let orders = [dst.kernel_order(), src.kernel_order()];
        self.launch(&key, extents, &[dst.kernel_operand(), src.kernel_operand()], &orders, &[])
    }
}

/// The instantiation of a built-in element-wise kernel's module.
fn builtin(key: ModuleKey) -> Instance {
    match key {
        ModuleKey::Elementwise(instance) => instance,
        ModuleKey::Builtin { .. } | ModuleKey::Raw(_) => {
            unreachable!("fill, add, scale and axpy are element-wise kernels")
        }
    }
}
