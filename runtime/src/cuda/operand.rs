//! Views as kernel operands: the sealed device traits [`DeviceRead`] and [`DeviceWrite`] that
//! every operation takes, implemented by shared and mutable views of device and managed memory
//! ([`KernelSpace`]), each giving its extents, its address and strides, its device and how its
//! memory is ordered ([rule C6](crate::rules#c6)).

use super::kernel::Operand;
use super::order::{EventRef, Order, event_of};
use crate::dtype::DlElement;
use crate::space::{Device, DeviceOrigin, Managed, MemorySpace, OrderEvent};
use crate::view::{Extents, Layout, Mapping, Mdspan, MdspanMut};
use core::mem::size_of;

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

/// A space kernels reach: device memory (with its ordinal) and managed memory. Host memory is
/// not one: host views reach the GPU through [`Stream::copy_from_host`](crate::cuda::Stream::copy_from_host).
///
/// ```
/// use dlspan::cuda::KernelSpace;
/// use dlspan::{Device, Managed};
/// fn reaches_kernels<S: KernelSpace>() {}
/// reaches_kernels::<Device>();
/// reaches_kernels::<Managed>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` memory is not reached by kernels on a stream",
    label = "a view of `{Self}` memory",
    note = "kernels on a `cuda::Stream` take device and managed views; host views run on `dlspan::kernel::Cpu`",
    note = "copy host data to the device first (`Stream::copy_from_host`)"
)]
pub trait KernelSpace: MemorySpace {
    /// The ordinal a launch checks, if any.
    #[doc(hidden)]
    fn kernel_ordinal(ordinal: Self::Ordinal) -> Option<i32>;
    /// How a launch orders the memory of a view of this origin ([rule C6](crate::rules#c6)).
    #[doc(hidden)]
    fn kernel_order(origin: Self::Origin) -> Order<OrderEvent>;
}

impl KernelSpace for Device {
    fn kernel_ordinal(ordinal: i32) -> Option<i32> {
        Some(ordinal)
    }

    fn kernel_order(origin: DeviceOrigin) -> Order<OrderEvent> {
        origin.order.map_or(Order::Caller, Order::Tracked)
    }
}

impl KernelSpace for Managed {
    fn kernel_ordinal((): ()) -> Option<i32> {
        None
    }

    fn kernel_order((): ()) -> Order<OrderEvent> {
        Order::Blocking
    }
}

/// The operand of a view: its first element's address and its strides.
fn operand_of<T, const R: usize, E: Extents<R>, L: Layout>(base: *const T, mapping: &Mapping<R, E, L>) -> Operand<R> {
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
