//! Memory spaces: where a view's data lives, as a type parameter.
//!
//! [`Host`] and [`Managed`] memory is readable from the host: their views index, iterate and print
//! values. [`Device`] memory is not: device views have no host accessors at all, so reading GPU
//! memory on the CPU is a compile error rather than a crash. Device views are for kernels and for
//! exchange.
//!
//! ```
//! use dlspan::{Device, Host, MemorySpace, ffi::DLDeviceType};
//! assert!(Host::HOST_ACCESSIBLE);
//! assert!(!Device::HOST_ACCESSIBLE);
//! assert_eq!(Device::device(3).device_type, DLDeviceType::kDLCUDA);
//! ```

use crate::check;
use crate::error::DlpackError;
use crate::ffi::{DLDevice, DLDeviceType};
use core::ffi::c_void;
use core::fmt::Debug;
use core::hash::Hash;
use core::ptr::NonNull;

mod sealed {
    pub trait Sealed {}
}

/// A memory space: which DLPack devices its views accept, and how they export.
///
/// ```
/// use dlspan::{Device, Host, MemorySpace, ffi::{DLDevice, DLDeviceType}};
/// let cpu = DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 };
/// assert_eq!(Host::accept(cpu), Ok(()));
/// assert!(Device::accept(cpu).is_err());
/// assert_eq!(Device::device(2), DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 2 });
/// ```
pub trait MemorySpace: sealed::Sealed + Copy + Default + Debug + Send + Sync + 'static {
    /// What a view remembers about its device: nothing for host and managed memory, the CUDA
    /// ordinal for device memory.
    ///
    /// ```
    /// use dlspan::{Device, Host, MemorySpace};
    /// let _host: <Host as MemorySpace>::Ordinal = ();
    /// let _cuda: <Device as MemorySpace>::Ordinal = 3i32;
    /// ```
    type Ordinal: Copy + Debug + Default + Eq + Hash + Send + Sync + 'static;

    /// The device type a view of this space exports, and the one errors name.
    ///
    /// ```
    /// use dlspan::{Managed, MemorySpace, ffi::DLDeviceType};
    /// assert_eq!(Managed::DEVICE_TYPE, DLDeviceType::kDLCUDAManaged);
    /// ```
    const DEVICE_TYPE: DLDeviceType;

    /// Whether the host may read and write this memory directly.
    ///
    /// ```
    /// use dlspan::{Device, Host, Managed, MemorySpace};
    /// assert!(Host::HOST_ACCESSIBLE && Managed::HOST_ACCESSIBLE && !Device::HOST_ACCESSIBLE);
    /// ```
    const HOST_ACCESSIBLE: bool;

    /// Accepts a tensor's device, or says why not ([rules I1 and I2](crate::rules#i1)).
    ///
    /// # Errors
    ///
    /// [`DlpackError::DeviceMismatch`] for a device type this space does not accept;
    /// [`DlpackError::NegativeDeviceId`] for a negative CUDA ordinal (device and managed memory).
    ///
    /// ```
    /// use dlspan::{Device, DlpackError, Host, MemorySpace, ffi::{DLDevice, DLDeviceType}};
    /// // Pinned host memory is host memory.
    /// let pinned = DLDevice { device_type: DLDeviceType::kDLCUDAHost, device_id: 0 };
    /// assert_eq!(Host::accept(pinned), Ok(()));
    /// let gpu1 = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 1 };
    /// assert_eq!(Device::accept(gpu1), Ok(1));
    /// assert!(matches!(Host::accept(gpu1), Err(DlpackError::DeviceMismatch { .. })));
    /// let no_ordinal = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: -1 };
    /// assert!(matches!(Device::accept(no_ordinal), Err(DlpackError::NegativeDeviceId { .. })));
    /// ```
    fn accept(device: DLDevice) -> Result<Self::Ordinal, DlpackError>;

    /// The device a view of this space exports.
    ///
    /// ```
    /// use dlspan::{Host, MemorySpace, ffi::{DLDevice, DLDeviceType}};
    /// assert_eq!(Host::device(()), DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 });
    /// ```
    fn device(ordinal: Self::Ordinal) -> DLDevice;

    /// What a view carries about its memory: its [`Ordinal`](Self::Ordinal), and for device memory
    /// allocated through cudarc the event that orders the allocation's uses on streams
    /// ([rule C6](crate::rules#c6)). Every view made from another view keeps it.
    #[doc(hidden)]
    type Origin: Copy + Debug + Send + Sync + 'static;

    /// The origin of memory with no ordering event: imported, or from raw parts.
    #[doc(hidden)]
    fn origin(ordinal: Self::Ordinal) -> Self::Origin;

    /// The ordinal an origin records.
    #[doc(hidden)]
    fn ordinal_of(origin: Self::Origin) -> Self::Ordinal;

    /// `origin` with its device memory ordered by `order` (the event a managed tensor keeps for the
    /// device views it lends, [rule C6](crate::rules#c6)); host and managed origins carry no event
    /// and are returned as they are.
    #[doc(hidden)]
    #[inline]
    fn with_order(origin: Self::Origin, order: OrderEvent) -> Self::Origin {
        let _ = order;
        origin
    }

    /// The common case of [`accept`](Self::accept), for the fast import path: the space's own device
    /// type. `None` sends the tensor to the ordered checks (which may still accept it, as host views
    /// accept pinned memory).
    #[doc(hidden)]
    #[inline(always)]
    fn fast_accept(device: DLDevice) -> Option<Self::Ordinal> {
        if device.device_type == Self::DEVICE_TYPE { Self::accept(device).ok() } else { None }
    }
}

/// Memory spaces whose data the host may read and write directly: [`Host`] and [`Managed`].
///
/// ```
/// use dlspan::{Dims, HostAccessible, HostMdspan, LayoutRight, Mdspan};
/// // Host and managed views index on the host; device views do not compile here.
/// fn first<S: HostAccessible>(view: Mdspan<'_, i32, 1, Dims<1>, LayoutRight, S>) -> i32 {
///     view[[0]]
/// }
/// let data = [7, 8];
/// assert_eq!(first(HostMdspan::<i32, 1>::from_slice(&data, [2])?), 7);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub trait HostAccessible: MemorySpace {}

/// Host memory: `kDLCPU`, and pinned host memory (`kDLCUDAHost`, `kDLROCMHost`), which is ordinary
/// host-addressable memory. Views export as `kDLCPU`, device 0.
///
/// CCCL rejects pinned memory for host views; dlspan accepts it because the host reads it like any
/// other host memory. The device id is not checked ([rule I2](crate::rules#i2)): JAX numbers its
/// host devices, and no view of host memory uses the id.
///
/// ```
/// use dlspan::{Host, MemorySpace, ffi::{DLDevice, DLDeviceType}};
/// let pinned = DLDevice { device_type: DLDeviceType::kDLCUDAHost, device_id: 0 };
/// assert!(Host::accept(pinned).is_ok());
/// let second_jax_cpu = DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 1 };
/// assert!(Host::accept(second_jax_cpu).is_ok());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Host;

/// CUDA device memory (`kDLCUDA`). Views remember the device ordinal and export it; a negative
/// ordinal is refused ([rule I2](crate::rules#i2)).
///
/// ```
/// use dlspan::{Device, MemorySpace, ffi::{DLDevice, DLDeviceType}};
/// let gpu1 = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 1 };
/// assert_eq!(Device::accept(gpu1), Ok(1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Device;

/// CUDA managed (unified) memory (`kDLCUDAManaged`): readable from the host. The device id, the
/// CUDA device whose context allocated it, must not be negative ([rule I2](crate::rules#i2)). Views
/// export as `kDLCUDAManaged`, device 0.
///
/// ```
/// use dlspan::{Managed, MemorySpace, ffi::DLDeviceType};
/// assert_eq!(Managed::device(()).device_type, DLDeviceType::kDLCUDAManaged);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Managed;

impl sealed::Sealed for Host {}
impl sealed::Sealed for Device {}
impl sealed::Sealed for Managed {}

impl MemorySpace for Host {
    type Ordinal = ();
    type Origin = ();
    const DEVICE_TYPE: DLDeviceType = DLDeviceType::kDLCPU;
    const HOST_ACCESSIBLE: bool = true;

    #[inline]
    fn accept(device: DLDevice) -> Result<(), DlpackError> {
        match device.device_type {
            // Rule I2: host memory's device id names nothing a view uses, so any is tolerated.
            DLDeviceType::kDLCPU | DLDeviceType::kDLCUDAHost | DLDeviceType::kDLROCMHost => Ok(()),
            _ => Err(DlpackError::DeviceMismatch { expected: Self::DEVICE_TYPE, found: device }),
        }
    }

    #[inline]
    fn device((): ()) -> DLDevice {
        DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 }
    }

    #[inline]
    fn origin((): ()) {}

    #[inline]
    fn ordinal_of((): ()) {}
}

impl MemorySpace for Device {
    type Ordinal = i32;
    type Origin = DeviceOrigin;
    const DEVICE_TYPE: DLDeviceType = DLDeviceType::kDLCUDA;
    const HOST_ACCESSIBLE: bool = false;

    #[inline]
    fn accept(device: DLDevice) -> Result<i32, DlpackError> {
        // The view keeps the ordinal and exports it (rule E3).
        if device.device_type == DLDeviceType::kDLCUDA {
            check::device_id(device)
        } else {
            Err(DlpackError::DeviceMismatch { expected: Self::DEVICE_TYPE, found: device })
        }
    }

    #[inline]
    fn device(ordinal: i32) -> DLDevice {
        DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: ordinal }
    }

    #[inline]
    fn origin(ordinal: i32) -> DeviceOrigin {
        DeviceOrigin { ordinal, order: None }
    }

    #[inline]
    fn ordinal_of(origin: DeviceOrigin) -> i32 {
        origin.ordinal
    }

    #[inline]
    fn with_order(origin: DeviceOrigin, order: OrderEvent) -> DeviceOrigin {
        DeviceOrigin { order: Some(order), ..origin }
    }
}

impl MemorySpace for Managed {
    type Ordinal = ();
    type Origin = ();
    const DEVICE_TYPE: DLDeviceType = DLDeviceType::kDLCUDAManaged;
    const HOST_ACCESSIBLE: bool = true;

    #[inline]
    fn accept(device: DLDevice) -> Result<(), DlpackError> {
        if device.device_type == DLDeviceType::kDLCUDAManaged {
            check::device_id(device).map(|_| ())
        } else {
            Err(DlpackError::DeviceMismatch { expected: Self::DEVICE_TYPE, found: device })
        }
    }

    #[inline]
    fn device((): ()) -> DLDevice {
        DLDevice { device_type: DLDeviceType::kDLCUDAManaged, device_id: 0 }
    }

    #[inline]
    fn origin((): ()) {}

    #[inline]
    fn ordinal_of((): ()) {}
}

/// The origin of a device view: the CUDA ordinal, and for memory allocated through cudarc (feature
/// `cuda`) the allocation's ordering event, which the `cuda` module reads ([rule C6](crate::rules#c6)).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceOrigin {
    pub(crate) ordinal: i32,
    pub(crate) order: Option<OrderEvent>,
}

/// The address of the cudarc event (`cudarc::driver::CudaEvent`) that orders an allocation's uses,
/// opaque outside the `cuda` module. Valid for as long as a view that carries it: a view carries it
/// only while it borrows the allocation that holds the event.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderEvent(pub(crate) NonNull<c_void>);

#[cfg(feature = "cuda")]
impl OrderEvent {
    /// The opaque form of `event`, carried by views; the `cuda` module reads it back as `event`
    /// while the view borrows the event's owner.
    #[inline]
    pub(crate) fn of(event: &cudarc::driver::CudaEvent) -> Self {
        Self(NonNull::from(event).cast())
    }
}

// SAFETY: the address is only ever read as a shared reference to a cudarc event, which is `Send` and
// `Sync` (its driver calls are thread-safe), while the view carrying it borrows the event's owner.
unsafe impl Send for OrderEvent {}
// SAFETY: as for `Send`.
unsafe impl Sync for OrderEvent {}

impl HostAccessible for Host {}
impl HostAccessible for Managed {}
