//! The element-wise operations of a [`Stream`]: `copy`, `fill`, `add`, `mul`, `scale`, `axpy`
//! and `cast` on device and managed views of any layout, in the crate's one vocabulary: operations
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
use super::kernel::{ElementType, ModuleKey, Operand};
use super::launch::bytes_of;
use super::operand::{DeviceRead, DeviceWrite, KernelSpace};
use super::order::{EventRef, Order, event_of};
use super::stream::Stream;
use crate::dtype::{DlElement, Numeric, NumericVisitor, RankVisitor, dispatch, dispatch_rank};
use crate::error::DlpackError;
use crate::ffi::DLDataType;
use crate::kernel::Instance;
use crate::view::{DynMdspan, DynMdspanMut};

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
    /// [`DlpackError::KernelShapeMismatch`](crate::DlpackError::KernelShapeMismatch) (in
    /// [`CudaError::View`]) naming the view (`a`, `b` or `out`) whose shape neither is `out`'s nor
    /// broadcasts to it, [`CudaError::WrongDevice`], [`CudaError::Unsupported`] for types without
    /// arithmetic.
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

    /// `out = a * b` element-wise (integers wrap; floats round once; `f16`/`bf16` compute in `f32`
    /// and round back, as `half` does). Broadcast an input with zero strides (a relaxed view).
    ///
    /// # Errors
    ///
    /// As [`add`](Self::add).
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, DeviceMdspanMut};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let (a, b) = (stream.alloc_zeros::<i32>(6)?, stream.alloc_zeros::<i32>(6)?);
    /// let mut out = stream.alloc_zeros::<i32>(6)?;
    /// let (a, b) = (DeviceMdspan::<i32, 2>::from_cuda(&a, [2, 3])?, DeviceMdspan::<i32, 2>::from_cuda(&b, [2, 3])?);
    /// stream.mul(&a, &b, &mut DeviceMdspanMut::<i32, 2>::from_cuda(&mut out, [2, 3])?)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mul<T: DlElement, const R: usize>(
        &self,
        a: &impl DeviceRead<T, R>,
        b: &impl DeviceRead<T, R>,
        out: &mut impl DeviceWrite<T, R>,
    ) -> Result<(), CudaError> {
        let instance = builtin(ModuleKey::new::<T, T>(KernelKind::Mul)?);
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
    /// As [`add`](Self::add); a shape error names `x` (the input) or `y`.
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

impl Stream {
    /// [`copy`](Self::copy) between dynamic views (data type and rank known at run time, as
    /// Python arguments are): `src` into `dst`, of one data type and shape, any strides on either
    /// side. One kernel per data type, whatever the rank: no dispatch over types in the caller.
    ///
    /// # Errors
    ///
    /// [`DlpackError::DtypeMismatch`], [`DlpackError::RankMismatch`] and
    /// [`DlpackError::ShapeMismatch`] (in [`CudaError::View`]); [`DlpackError::Underaligned`] for a
    /// first element not aligned to its type; [`CudaError::WrongDevice`]; [`CudaError::Unsupported`]
    /// for packed sub-byte data and data types dlspan does not hold; the driver's and compiler's
    /// errors.
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, DeviceMdspanMut, DynMdspan, DynMdspanMut, Device};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let (src, mut dst) = (stream.alloc_zeros::<u16>(6)?, stream.alloc_zeros::<u16>(6)?);
    /// let src: DynMdspan<'_, Device> = DeviceMdspan::<u16, 2>::from_cuda(&src, [2, 3])?.into();
    /// let mut dst: DynMdspanMut<'_, Device> = DeviceMdspanMut::<u16, 2>::from_cuda(&mut dst, [2, 3])?.into();
    /// stream.copy_dynamic(&src, &mut dst)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn copy_dynamic<S: KernelSpace>(
        &self,
        src: &DynMdspan<'_, S>,
        dst: &mut DynMdspanMut<'_, S>,
    ) -> Result<(), CudaError> {
        if src.dtype() != dst.dtype() {
            return Err(CudaError::View(DlpackError::DtypeMismatch { expected: dst.dtype(), found: src.dtype() }));
        }
        self.convert_dynamic(KernelKind::Copy, src, dst)
    }

    /// [`cast`](Self::cast) between dynamic views: `src` converted element by element into `dst`'s
    /// data type (the rules of [`dtype::cast`](crate::dtype::cast), bit for bit), one shape, any
    /// strides on either side. One kernel per pair of data types, whatever the rank.
    ///
    /// # Errors
    ///
    /// As [`copy_dynamic`](Self::copy_dynamic), but for the data types, which may differ:
    /// [`CudaError::Unsupported`] for types without a scalar format (vectors, complex numbers,
    /// FP6/FP4, opaque types).
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, DeviceMdspanMut, DynMdspan, DynMdspanMut, Device};
    /// use dlspan::half::bf16;
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let (src, mut dst) = (stream.alloc_zeros::<f32>(6)?, stream.alloc_zeros::<bf16>(6)?);
    /// let src: DynMdspan<'_, Device> = DeviceMdspan::<f32, 2>::from_cuda(&src, [2, 3])?.into();
    /// let mut dst: DynMdspanMut<'_, Device> = DeviceMdspanMut::<bf16, 2>::from_cuda(&mut dst, [2, 3])?.into();
    /// stream.cast_dynamic(&src, &mut dst)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cast_dynamic<S: KernelSpace>(
        &self,
        src: &DynMdspan<'_, S>,
        dst: &mut DynMdspanMut<'_, S>,
    ) -> Result<(), CudaError> {
        self.convert_dynamic(KernelKind::Cast, src, dst)
    }

    /// A copy or cast between dynamic views: the checks, the module of the two data types, and
    /// the launch at the views' rank.
    fn convert_dynamic<S: KernelSpace>(
        &self,
        kind: KernelKind,
        src: &DynMdspan<'_, S>,
        dst: &mut DynMdspanMut<'_, S>,
    ) -> Result<(), CudaError> {
        let rank = dst.rank();
        if src.rank() != rank {
            let found = i32::try_from(src.rank()).unwrap_or(i32::MAX);
            return Err(CudaError::View(DlpackError::RankMismatch { expected: rank, found }));
        }
        if let Some(axis) = (0..rank).find(|&axis| src.shape()[axis] != dst.shape()[axis]) {
            let (expected, found) = (dst.shape()[axis], src.shape()[axis]);
            return Err(CudaError::View(DlpackError::ShapeMismatch { axis, expected, found }));
        }
        let unsupported = || CudaError::Unsupported { kernel: kind, output: dst.dtype(), input: Some(src.dtype()) };
        let (Some(out), Some(input)) = (whole_element(&dst.as_view()), whole_element(src)) else {
            return Err(unsupported());
        };
        let key = ModuleKey::from_types(kind, out, input)?;
        let operands = [dynamic_operand(&dst.as_view(), out)?, dynamic_operand(src, input)?];
        let expected = self.gpu().ordinal() as i32;
        for ordinal in [S::kernel_ordinal(dst.ordinal()), S::kernel_ordinal(src.ordinal())] {
            if let Some(found) = ordinal.filter(|&o| o != expected) {
                return Err(CudaError::WrongDevice { expected, found });
            }
        }
        // SAFETY: a view carries an event only while it borrows the allocation that holds it,
        // for the view's lifetime, which outlives these borrows of the views.
        let orders = [unsafe { order_of::<S>(dst.origin()) }, unsafe { order_of::<S>(src.origin()) }];
        dispatch_rank(rank, DynamicLaunch { stream: self, key, shape: dst.shape(), operands, orders })
            .map_err(CudaError::View)?
    }
}

/// The element type of a dynamic view's data type, when its elements are whole bytes (packed
/// sub-byte data has no kernels): the Rust type's size and alignment, as `ElementType::of` gives
/// them, for the types dlspan holds.
fn whole_element<S: KernelSpace>(view: &DynMdspan<'_, S>) -> Option<ElementType> {
    if view.element_bits() < 8 && !view.is_subbyte_padded() {
        return None;
    }
    element_type(view.dtype())
}

/// The element type dlspan holds for `dtype`.
fn element_type(dtype: DLDataType) -> Option<ElementType> {
    struct Of;
    impl NumericVisitor for Of {
        type Output = ElementType;
        fn visit<T: Numeric>(self) -> ElementType {
            ElementType::of::<T>()
        }
    }
    dispatch(dtype, Of).ok()
}

/// A dynamic view's operand, made of rank `R` by [`DynamicLaunch`]: the first element's address
/// (checked aligned to its type) and the strides.
fn dynamic_operand<S: KernelSpace>(
    view: &DynMdspan<'_, S>,
    ty: ElementType,
) -> Result<(u64, Vec<isize>, usize), CudaError> {
    let address = (view.data_handle() as usize).wrapping_add(view.byte_offset() as usize);
    if !view.is_empty() && !address.is_multiple_of(ty.align.max(1)) {
        let found = 1usize << address.trailing_zeros().min(63);
        return Err(CudaError::View(DlpackError::Underaligned { address, required: ty.align, found }));
    }
    Ok((address as u64, view.strides().to_vec(), ty.size))
}

/// How an operation orders a view of origin `origin`.
///
/// # Safety
///
/// The view that gave `origin` outlives the returned order.
unsafe fn order_of<'a, S: KernelSpace>(origin: S::Origin) -> Order<EventRef<'a>> {
    match S::kernel_order(origin) {
        // SAFETY: the caller's contract.
        Order::Tracked(event) => Order::Tracked(EventRef(unsafe { event_of(event) })),
        Order::Caller => Order::Caller,
        Order::Blocking => Order::Blocking,
    }
}

/// The launch of a dynamic copy or cast, at the views' rank.
struct DynamicLaunch<'s, 'v> {
    stream: &'s Stream,
    key: ModuleKey,
    shape: &'v [usize],
    operands: [(u64, Vec<isize>, usize); 2],
    orders: [Order<EventRef<'v>>; 2],
}

impl RankVisitor for DynamicLaunch<'_, '_> {
    type Output = Result<(), CudaError>;

    fn visit<const R: usize>(self) -> Self::Output {
        let extents: [usize; R] = core::array::from_fn(|axis| self.shape[axis]);
        let operand = |(address, strides, size): &(u64, Vec<isize>, usize)| {
            Operand::new(*address, core::array::from_fn(|axis| strides[axis]), *size)
        };
        let operands = [operand(&self.operands[0]), operand(&self.operands[1])];
        self.stream.launch(&self.key, extents, &operands, &self.orders, &[])
    }
}

/// The instantiation of a built-in element-wise kernel's module.
fn builtin(key: ModuleKey) -> Instance {
    match key {
        ModuleKey::Elementwise(instance) => instance,
        ModuleKey::Builtin { .. } | ModuleKey::Raw(_) => {
            unreachable!("fill, add, mul, scale and axpy are element-wise kernels")
        }
    }
}
