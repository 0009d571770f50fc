//! The operations: element-wise kernels on device views, host↔device copies between views of any
//! strides, and allocation of device memory for any element type. Every operation is enqueued on
//! a [`Stream`] and returns before the GPU runs it, except the copies to the host, which wait for
//! their data, and operations on managed views, which wait for their work. Each is ordered with
//! the other uses of its operands' allocations ([`order`](super::order)).

use super::abi::KernelKind;
use super::error::CudaError;
use super::kernel::{ModuleKey, Operand, Plan, plan};
use super::order::{EventRef, Order, event_of, run, schedule};
use super::stream::Stream;
use crate::dtype::DlElement;
use crate::space::{Device, DeviceOrigin, HostAccessible, Managed, MemorySpace};
use crate::view::{Extents, Layout, Mdspan, MdspanMut};
use core::mem::size_of;
use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

mod sealed {
    pub trait Sealed {}
}

/// Views a kernel reads: shared and mutable views of device or managed memory.
///
/// ```no_run
/// use dlspan::DeviceMdspan;
/// use dlspan::cuda::DeviceRead;
/// fn extents_of<V: DeviceRead<f32, 2>>(view: &V) -> [usize; 2] { view.kernel_extents() }
/// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
/// let buffer = stream.alloc_zeros::<f32>(6)?;
/// assert_eq!(extents_of(&DeviceMdspan::<f32, 2>::from_cuda(&buffer, [2, 3])?), [2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait DeviceRead<T, const R: usize>: sealed::Sealed {
    /// The extents.
    fn kernel_extents(&self) -> [usize; R];
    /// The operand as a kernel sees it: the address of index 0 and the strides.
    #[doc(hidden)]
    fn kernel_operand(&self) -> Operand<R>;
    /// The CUDA device the memory belongs to (`None` for managed memory, reachable from every
    /// device).
    fn kernel_ordinal(&self) -> Option<i32>;
    /// How an operation orders its use of the memory with the memory's other uses.
    #[doc(hidden)]
    fn kernel_order(&self) -> Order<EventRef<'_>>;
}

/// Views a kernel writes: mutable views of device or managed memory.
///
/// ```no_run
/// use dlspan::DeviceMdspanMut;
/// use dlspan::cuda::DeviceWrite;
/// fn zero<V: DeviceWrite<u8, 1>>(stream: &dlspan::cuda::Stream, view: &mut V) -> Result<(), dlspan::cuda::CudaError> {
///     stream.fill(view, 0)
/// }
/// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
/// let mut buffer = stream.alloc_zeros::<u8>(4)?;
/// zero(&stream, &mut DeviceMdspanMut::<u8, 1>::from_cuda(&mut buffer, [4])?)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait DeviceWrite<T, const R: usize>: DeviceRead<T, R> {}

/// A space kernels reach: device memory (with its ordinal) and managed memory.
pub trait KernelSpace: MemorySpace {
    /// The ordinal a launch checks, if any.
    #[doc(hidden)]
    fn kernel_ordinal(ordinal: Self::Ordinal) -> Option<i32>;
    /// How a launch orders the memory of a view of this origin ([rule C6](crate::rules#c6)).
    #[doc(hidden)]
    fn kernel_order(origin: Self::Origin) -> Order<crate::space::OrderEvent>;
}

impl KernelSpace for Device {
    fn kernel_ordinal(ordinal: i32) -> Option<i32> {
        Some(ordinal)
    }

    fn kernel_order(origin: DeviceOrigin) -> Order<crate::space::OrderEvent> {
        origin.order.map_or(Order::Caller, Order::Tracked)
    }
}

impl KernelSpace for Managed {
    fn kernel_ordinal((): ()) -> Option<i32> {
        None
    }

    fn kernel_order((): ()) -> Order<crate::space::OrderEvent> {
        Order::Blocking
    }
}

/// The operand of a view: its first element's address and its strides.
fn operand_of<T, const R: usize, E: Extents<R>, L: Layout>(
    base: *const T,
    mapping: &crate::view::Mapping<R, E, L>,
) -> Operand<R> {
    let first = base.wrapping_add(mapping.offset());
    Operand::new(first.addr() as u64, mapping.strides(), size_of::<T>())
}

macro_rules! device_view_traits {
    ($view:ident) => {
        impl<T, const R: usize, E: Extents<R>, L: Layout, S: KernelSpace> sealed::Sealed for $view<'_, T, R, E, L, S> {}

        impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: KernelSpace> DeviceRead<T, R>
            for $view<'_, T, R, E, L, S>
        {
            fn kernel_extents(&self) -> [usize; R] {
                self.extents()
            }

            fn kernel_operand(&self) -> Operand<R> {
                operand_of(self.data_handle(), self.mapping())
            }

            fn kernel_ordinal(&self) -> Option<i32> {
                S::kernel_ordinal(self.ordinal())
            }

            fn kernel_order(&self) -> Order<EventRef<'_>> {
                match S::kernel_order(self.origin()) {
                    // SAFETY: a view carries an event only while it borrows the allocation that
                    // holds it, for the view's lifetime, which outlives this borrow of the view.
                    Order::Tracked(event) => Order::Tracked(EventRef(unsafe { event_of(event) })),
                    Order::Caller => Order::Caller,
                    Order::Blocking => Order::Blocking,
                }
            }
        }
    };
}

device_view_traits!(Mdspan);
device_view_traits!(MdspanMut);

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: KernelSpace> DeviceWrite<T, R>
    for MdspanMut<'_, T, R, E, L, S>
{
}

/// The bytes of a value of an element type (no padding: [`DlElement`]'s size rule).
fn bytes_of<T: DlElement>(value: &T) -> &[u8] {
    // SAFETY: `value` is a live `T` of `size_of::<T>()` initialised bytes (element types have no
    // padding), read as bytes for the borrow.
    unsafe { core::slice::from_raw_parts((value as *const T).cast::<u8>(), size_of::<T>()) }
}

/// The bytes of a slice of element values.
fn slice_bytes<T: DlElement>(values: &[T]) -> &[u8] {
    // SAFETY: as for `bytes_of`, for `values.len()` consecutive elements.
    unsafe { core::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values)) }
}

impl Stream {
    /// Checks that every operand has the output's extents and lives on this stream's device.
    fn check<const R: usize>(
        &self,
        extents: [usize; R],
        operands: &[(&[usize; R], Option<i32>)],
    ) -> Result<(), CudaError> {
        let expected = self.gpu().ordinal() as i32;
        for &(found, ordinal) in operands {
            if let Some(axis) = (0..R).find(|&axis| found[axis] != extents[axis]) {
                let (expected, found) = (extents[axis], found[axis]);
                return Err(CudaError::View(crate::DlpackError::ShapeMismatch { axis, expected, found }));
            }
            if let Some(found) = ordinal.filter(|&o| o != expected) {
                return Err(CudaError::WrongDevice { expected, found });
            }
        }
        Ok(())
    }

    /// The kernel of `key` over `operands` (output first) and its plan, compiling the module on
    /// first use; `None` when there are no elements.
    fn kernel<const R: usize>(
        &self,
        key: ModuleKey,
        extents: [usize; R],
        operands: &[Operand<R>],
        scalar: Option<&[u8]>,
    ) -> Result<Option<(CudaFunction, Plan)>, CudaError> {
        let Some(mut plan) = plan(extents, operands)? else {
            return Ok(None);
        };
        if let Some(bytes) = scalar {
            plan.params.scalar.0[0][..bytes.len()].copy_from_slice(bytes);
        }
        let function = self.gpu().function(&key, &plan)?;
        Ok(Some((function, plan)))
    }

    /// Enqueues a kernel on this stream, unordered: callers order it with [`run`].
    fn enqueue(&self, function: &CudaFunction, plan: &Plan) -> Result<(), CudaError> {
        let config = LaunchConfig { grid_dim: (plan.grid, 1, 1), block_dim: (plan.block, 1, 1), shared_mem_bytes: 0 };
        let mut launch = self.cudarc().launch_builder(function);
        launch.arg(&plan.params);
        // SAFETY: the kernel takes one `dl_params` by value, which `Params` mirrors; every address
        // in it is a validated view's first element whose mapping reaches only elements of its
        // allocation (the merged strides and extents are the views' own); outputs are unique
        // mutable views, so no two threads write one element; the element types are the module's;
        // the caller orders the launch with the memory's other uses.
        unsafe { launch.launch(config) }?;
        Ok(())
    }

    /// Plans and enqueues one kernel of `key` over `operands` (output first), ordered with the
    /// other uses of their memory by `orders` (one per operand).
    fn launch<const R: usize>(
        &self,
        key: ModuleKey,
        extents: [usize; R],
        operands: &[Operand<R>],
        orders: &[Order<EventRef<'_>>],
        scalar: Option<&[u8]>,
    ) -> Result<(), CudaError> {
        let Some((function, plan)) = self.kernel(key, extents, operands, scalar)? else {
            return Ok(());
        };
        run(&**self.cudarc(), &schedule(orders), || self.enqueue(&function, &plan))
    }

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
        self.launch(key, extents, &[dst.kernel_operand(), src.kernel_operand()], &orders, None)
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
        let extents = dst.kernel_extents();
        self.check(extents, &[(&extents, dst.kernel_ordinal())])?;
        let key = ModuleKey::new::<T, T>(KernelKind::Fill)?;
        self.launch(key, extents, &[dst.kernel_operand()], &[dst.kernel_order()], Some(bytes_of(&value)))
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
        let extents = out.kernel_extents();
        self.check(
            extents,
            &[
                (&extents, out.kernel_ordinal()),
                (&a.kernel_extents(), a.kernel_ordinal()),
                (&b.kernel_extents(), b.kernel_ordinal()),
            ],
        )?;
        let key = ModuleKey::new::<T, T>(KernelKind::Add)?;
        let orders = [out.kernel_order(), a.kernel_order(), b.kernel_order()];
        self.launch(key, extents, &[out.kernel_operand(), a.kernel_operand(), b.kernel_operand()], &orders, None)
    }

    /// `out = alpha * x` element-wise.
    ///
    /// # Errors
    ///
    /// As [`add`](Self::add).
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, DeviceMdspanMut};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let x = stream.alloc_zeros::<f64>(8)?;
    /// let mut out = stream.alloc_zeros::<f64>(8)?;
    /// stream.scale(2.0, &DeviceMdspan::<f64, 1>::from_cuda(&x, [8])?, &mut DeviceMdspanMut::<f64, 1>::from_cuda(&mut out, [8])?)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scale<T: DlElement, const R: usize>(
        &self,
        alpha: T,
        x: &impl DeviceRead<T, R>,
        out: &mut impl DeviceWrite<T, R>,
    ) -> Result<(), CudaError> {
        let extents = out.kernel_extents();
        self.check(extents, &[(&extents, out.kernel_ordinal()), (&x.kernel_extents(), x.kernel_ordinal())])?;
        let key = ModuleKey::new::<T, T>(KernelKind::Scale)?;
        let orders = [out.kernel_order(), x.kernel_order()];
        self.launch(key, extents, &[out.kernel_operand(), x.kernel_operand()], &orders, Some(bytes_of(&alpha)))
    }

    /// `y = alpha * x + y` element-wise, in place, unfused (two roundings, as Rust's `a * x + y`).
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
    /// stream.axpy(0.5, &DeviceMdspan::<f32, 1>::from_cuda(&x, [1024])?, &mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut y, [1024])?)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn axpy<T: DlElement, const R: usize>(
        &self,
        alpha: T,
        x: &impl DeviceRead<T, R>,
        y: &mut impl DeviceWrite<T, R>,
    ) -> Result<(), CudaError> {
        let extents = y.kernel_extents();
        self.check(extents, &[(&extents, y.kernel_ordinal()), (&x.kernel_extents(), x.kernel_ordinal())])?;
        let key = ModuleKey::new::<T, T>(KernelKind::Axpy)?;
        let (y_operand, orders) = (y.kernel_operand(), [y.kernel_order(), x.kernel_order()]);
        self.launch(key, extents, &[y_operand, x.kernel_operand(), y_operand], &orders, Some(bytes_of(&alpha)))
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
        self.launch(key, extents, &[dst.kernel_operand(), src.kernel_operand()], &orders, None)
    }

    /// A zeroed device allocation of `len` elements of any element type, freed on this stream.
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`] (out of memory).
    ///
    /// ```no_run
    /// use dlspan::dtype::Float8E4m3fn;
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let fp8 = stream.alloc_zeros::<Float8E4m3fn>(1 << 20)?;
    /// assert_eq!(fp8.len(), 1 << 20);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn alloc_zeros<T: DlElement>(&self, len: usize) -> Result<CudaSlice<T>, CudaError> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or(CudaError::View(crate::DlpackError::SpanOverflow))?;
        let raw = self.cudarc().alloc_zeros::<u8>(bytes)?;
        let address = raw.leak();
        // SAFETY: `address` is a live allocation of `len * size_of::<T>()` zeroed bytes (cudarc
        // allocates with 256-byte alignment), now owned by the returned slice; zero bytes are a
        // valid value of every element type (DLPack's zero of each dtype; `false` for bool).
        Ok(unsafe { self.cudarc().upgrade_device_ptr::<T>(address, len) })
    }

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
        let compact = crate::check::compact_strides(&extents, crate::LayoutKind::Right)?;
        let key = ModuleKey::new::<T, T>(KernelKind::Copy)?;
        let operands = [target, Operand::new(address, compact, size_of::<T>())];
        let Some((function, plan)) = self.kernel(key, extents, &operands, None)? else {
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
    unsafe fn download(&self, address: u64, bytes: &mut [u8]) -> Result<(), CudaError> {
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
            let compact = crate::check::compact_strides(&extents, crate::LayoutKind::Right)?;
            let key = ModuleKey::new::<T, T>(KernelKind::Copy)?;
            let operands = [Operand::new(address, compact, size_of::<T>()), source];
            if let Some((function, plan)) = self.kernel(key, extents, &operands, None)? {
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
