//! Element-wise kernels on a [`Stream`]: `&Stream` is a [`kernel::Executor`](crate::kernel::Executor)
//! over device and managed views, and [`Stream::launch_elementwise`] is the one launch path of
//! element-wise kernels — a user's (`kernel.run(&stream, ..)`) and the built-in `fill`, `add`,
//! `scale` and `axpy` alike: views checked against the stream's device, inputs broadcast to the
//! primary view's shape, the module of the instantiation fetched (compiled once per device), the
//! launch planned and ordered with each view's other uses ([rule C6](crate::rules#c6)).

use super::error::CudaError;
use super::kernel::{ModuleKey, Plan, elementwise_plan_into};
use super::operand::KernelSpace;
use super::order::{EventRef, Order, event_of, run, schedule};
use super::stream::Stream;
use crate::dtype::DlElement;
use crate::kernel::{
    Call, Executor, Instance, LaunchConfig, RawArg, RawInstance, RawOperand, Read, ViewArgs, Write, sealed, widen,
};
use crate::view::{Extents, Layout, Mdspan, MdspanMut};

const _: () = assert!(crate::kernel::MAX_VIEWS == super::kernel::MAX_OPERANDS);

/// What a stream needs of a view besides its memory: its device and how it is ordered.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct DeviceExtra<'a> {
    /// The CUDA device of the memory (`None` for managed memory).
    pub ordinal: Option<i32>,
    /// How a launch orders its use of the memory.
    pub order: Order<EventRef<'a>>,
}

/// One view of an element-wise launch on a stream, in declaration order.
pub(super) type DeviceOperand<'a, 's, const R: usize> = crate::kernel::Operand<'a, &'s Stream, R>;

impl sealed::Sealed for &Stream {}

impl<'s> Executor for &'s Stream {
    type Error = CudaError;
    type Extra<'a> = DeviceExtra<'a>;

    fn run_views<const R: usize, const N: usize, V: ViewArgs<Self, R, N>>(
        self,
        call: &Call<'_>,
        mut operands: [DeviceOperand<'_, 's, R>; N],
        _body: impl for<'a> crate::kernel::Element<V::Items<'a>>,
    ) -> Result<(), CudaError> {
        self.launch_elementwise(call.instance, &mut operands, call.scalars)
    }

    type RawError = CudaError;

    unsafe fn run_raw(
        self,
        instance: RawInstance,
        config: &LaunchConfig,
        views: &mut [RawArg<'_, Self>],
        scalars: &[&[u8]],
    ) -> Result<(), CudaError> {
        // SAFETY: forwarded: the caller's contract.
        unsafe { self.launch_raw(instance, config, views, scalars) }
    }
}

/// The device operand of a view the built-in operations take (declaration order).
pub(super) fn device_operand<'a, T, const R: usize>(
    view: &'a impl super::operand::DeviceRead<T, R>,
    writes: bool,
) -> DeviceOperand<'a, 'static, R> {
    let op = view.kernel_operand();
    let raw = RawOperand {
        ptr: core::ptr::without_provenance_mut(op.address as usize),
        extents: view.kernel_extents(),
        strides: op.strides,
        size: op.size,
    };
    crate::kernel::Operand {
        raw,
        writes,
        rank: R,
        extra: DeviceExtra { ordinal: view.kernel_ordinal(), order: view.kernel_order() },
    }
}

impl Stream {
    /// Launches an element-wise kernel's instantiation over `operands` (declaration order) with
    /// `scalars` (declaration order): asynchronous, but for managed views, whose operations wait for
    /// their work ([rule C3](crate::rules#c3)).
    ///
    /// # Errors
    ///
    /// [`CudaError::WrongDevice`]; [`DlpackError::KernelShapeMismatch`](crate::DlpackError::KernelShapeMismatch)
    /// for a view that is not the primary view's shape (written views) or does not broadcast to it
    /// (read views); [`CudaError::RankTooLarge`], [`CudaError::ScalarTooLarge`]; NVRTC's and the
    /// driver's errors.
    pub(super) fn launch_elementwise<const R: usize>(
        &self,
        instance: Instance,
        operands: &mut [DeviceOperand<'_, '_, R>],
        scalars: &[&[u8]],
    ) -> Result<(), CudaError> {
        let expected = self.gpu().ordinal() as i32;
        if let Some(found) = operands.iter().find_map(|op| op.extra.ordinal.filter(|&o| o != expected)) {
            return Err(CudaError::WrongDevice { expected, found });
        }
        let mut plan = Plan::EMPTY;
        if !elementwise_plan_into(instance, operands, scalars, &mut plan)? {
            return Ok(());
        }
        let function = self.gpu().function(&ModuleKey::Elementwise(instance), &plan)?;
        // Ordered by each view, in slot order (an event shared by two views is waited for once).
        let mut orders = [Order::Caller; crate::kernel::MAX_VIEWS];
        for (slot, k) in instance.def().slots().enumerate() {
            orders[slot] = operands[k].extra.order;
        }
        run(&**self.cudarc(), &schedule(&orders[..operands.len()]), || self.enqueue(&function, &plan))
    }
}

/// The device extra of a view of space `S`, for a borrow `'a` of the view.
fn extra<'a, S: KernelSpace>(ordinal: S::Ordinal, origin: S::Origin) -> DeviceExtra<'a> {
    let order = match S::kernel_order(origin) {
        // SAFETY: a view carries an event only while it borrows the allocation that holds it, for
        // the view's lifetime, which outlives the borrow `'a` of the view.
        Order::Tracked(event) => Order::Tracked(EventRef(unsafe { event_of(event) })),
        Order::Caller => Order::Caller,
        Order::Blocking => Order::Blocking,
    };
    DeviceExtra { ordinal: S::kernel_ordinal(ordinal), order }
}

impl<'s, T: DlElement, const Q: usize, const R: usize, E: Extents<Q>, L: Layout, S: KernelSpace> Read<&'s Stream, R>
    for Mdspan<'_, T, Q, E, L, S>
{
    type Elem = T;

    fn operand(&self) -> DeviceOperand<'_, 's, R> {
        let raw = widen(self.data_handle(), self.mapping());
        crate::kernel::Operand { raw, writes: false, rank: Q, extra: extra::<S>(self.ordinal(), self.origin()) }
    }
}

impl<'s, T: DlElement, const Q: usize, const R: usize, E: Extents<Q>, L: Layout, S: KernelSpace> Read<&'s Stream, R>
    for MdspanMut<'_, T, Q, E, L, S>
{
    type Elem = T;

    fn operand(&self) -> DeviceOperand<'_, 's, R> {
        let raw = widen(self.data_handle().cast_const(), self.mapping());
        crate::kernel::Operand { raw, writes: false, rank: Q, extra: extra::<S>(self.ordinal(), self.origin()) }
    }
}

impl<'s, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: KernelSpace> Write<&'s Stream, R>
    for MdspanMut<'_, T, R, E, L, S>
{
    fn operand_mut(&mut self) -> DeviceOperand<'_, 's, R> {
        let raw = widen(self.data_handle().cast_const(), self.mapping());
        crate::kernel::Operand { raw, writes: true, rank: R, extra: extra::<S>(self.ordinal(), self.origin()) }
    }
}
