//! Device memory: zeroed allocations of any element type ([`Stream::alloc_zeros`]), and views of
//! cudarc memory: `CudaSlice`, `CudaView`, `CudaViewMut` and the unified twins as device views
//! borrowing the allocation, and managed (unified) memory as host-indexable views.
//!
//! A view borrows the cudarc object it was made from, so it cannot outlive the allocation; shared
//! views take `&`, mutable views `&mut`, so the borrow checker keeps one writer. The view's ordinal
//! is the allocation's device, and it carries the allocation's event that orders its uses on
//! streams ([`order`](super::order), [rule C6](crate::rules#c6)).

use super::error::CudaError;
use super::order::{chain, take_event};
use super::stream::Stream;
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::space::{Device, DeviceOrigin, Managed, OrderEvent};
use crate::view::{Dims, Extents, Layout, LayoutRight, LayoutStride, LayoutStrideRelaxed, Mapping, Mdspan, MdspanMut};
use core::ptr::NonNull;
use cudarc::driver::{
    CudaSlice, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice, HostSlice, UnifiedSlice, UnifiedView,
    UnifiedViewMut,
};

mod sealed {
    pub trait Sealed {}
}

/// cudarc's memory objects device views are made from: `CudaSlice`, `CudaView`, `CudaViewMut`,
/// `UnifiedSlice`, `UnifiedView` and `UnifiedViewMut`. Sealed: dlspan trusts their addresses,
/// lengths and ordering events, which an implementation of cudarc's open `DevicePtr` trait could
/// make up.
///
/// ```no_run
/// use dlspan::DeviceMdspan;
/// use dlspan::cuda::CudaMemory;
/// fn row<S: CudaMemory<f32> + cudarc::driver::DevicePtr<f32>>(memory: &S) -> Result<DeviceMdspan<'_, f32, 1>, dlspan::DlpackError> {
///     DeviceMdspan::<f32, 1>::from_cuda(memory, [memory.len()])
/// }
/// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
/// let buffer = stream.alloc_zeros::<f32>(8)?;
/// assert_eq!(row(&buffer.slice(2..6))?.extents(), [4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A type of one's own that implements `DevicePtr` makes no view:
///
/// ```compile_fail,E0277
/// use cudarc::driver::{CudaStream, DevicePtr, DeviceSlice, SyncOnDrop, sys::CUdeviceptr};
/// use std::sync::Arc;
/// struct Forged(Arc<CudaStream>);
/// impl DeviceSlice<f32> for Forged {
///     fn len(&self) -> usize { 1 << 30 }
///     fn stream(&self) -> &Arc<CudaStream> { &self.0 }
/// }
/// impl DevicePtr<f32> for Forged {
///     fn device_ptr<'a>(&'a self, _: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
///         (0x1000, SyncOnDrop::Sync(None))
///     }
/// }
/// fn forge(forged: &Forged) -> dlspan::DeviceMdspan<'_, f32, 1> {
///     dlspan::DeviceMdspan::<f32, 1>::from_cuda(forged, [1 << 30]).unwrap()
/// }
/// ```
pub trait CudaMemory<T>: DeviceSlice<T> + sealed::Sealed {}

macro_rules! cuda_memory {
    ($($memory:ident $(<$life:lifetime>)?),*) => {$(
        impl<$($life,)? T> sealed::Sealed for $memory<$($life,)? T> {}
        impl<$($life,)? T> CudaMemory<T> for $memory<$($life,)? T> {}
    )*};
}

cuda_memory!(CudaSlice, CudaView<'a>, CudaViewMut<'a>, UnifiedSlice, UnifiedView<'a>, UnifiedViewMut<'a>);

/// The pointer of an allocation of `len` elements at `address` for a view of `mapping`: checks
/// that the mapping fits, and gives empty allocations a dangling pointer.
fn checked_pointer<T, const R: usize, E: Extents<R>, L: Layout>(
    address: u64,
    len: usize,
    mapping: &Mapping<R, E, L>,
) -> Result<NonNull<T>, DlpackError> {
    let required = mapping.required_span_size();
    if required > len {
        return Err(DlpackError::TooFewElements { required, found: len });
    }
    // Device addresses carry no host provenance; managed ones are host addresses the driver
    // mapped, exposed to us as integers.
    let ptr = core::ptr::with_exposed_provenance_mut::<T>(address as usize);
    Ok(NonNull::new(ptr).unwrap_or(NonNull::dangling()))
}

/// The device ordinal of a cudarc allocation.
fn ordinal_of<T, S: DeviceSlice<T> + ?Sized>(slice: &S) -> i32 {
    slice.stream().context().ordinal() as i32
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout> Mdspan<'a, T, R, E, L, Device> {
    /// A shared device view of `mapping` over cudarc memory ([`CudaMemory`](crate::cuda::CudaMemory)),
    /// borrowing it: the view cannot outlive the allocation. The view carries the allocation's
    /// read event (the event of unified memory), which every operation on the view waits for and
    /// records again ([rule C6](crate::rules#c6)); the allocation's own stream waits here for
    /// the pending writes and reads and records it, so that its last record follows them. Driver
    /// errors of these calls are recorded in the context, as cudarc records those of its own, and
    /// returned by the next operation.
    ///
    /// # Errors
    ///
    /// [`DlpackError::TooFewElements`] when the mapping reaches past the allocation.
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, LayoutStride, Mapping};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let buffer = stream.cudarc().alloc_zeros::<f32>(8)?;
    /// let padded = Mapping::from_strides([2, 3], [4, 1])?;
    /// let view = DeviceMdspan::<f32, 2, LayoutStride>::from_cuda_mapping(&buffer, padded)?;
    /// assert_eq!(view.ordinal(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_cuda_mapping<S: CudaMemory<T> + DevicePtr<T>>(
        slice: &'a S,
        mapping: Mapping<R, E, L>,
    ) -> Result<Self, DlpackError> {
        let home = slice.stream();
        // cudarc makes `home` wait for the pending writes.
        let (address, record) = slice.device_ptr(home);
        let event = take_event(record);
        let ptr = checked_pointer(address, slice.len(), &mapping)?;
        if let Some(event) = event {
            chain(event, home);
        }
        let origin = DeviceOrigin { ordinal: ordinal_of(slice), order: event.map(OrderEvent::of) };
        // SAFETY: the allocation holds every element the mapping reaches (checked), is device
        // memory of the allocation's device, aligned for `T` (cudarc allocates whole `T`s from an
        // aligned base), and stays allocated and unwritten by safe code while borrowed for `'a`;
        // the event lives in the allocation (or the one it views), borrowed for `'a`.
        Ok(unsafe { Self::from_parts_unchecked(ptr, mapping, origin) })
    }
}

impl<'a, T: DlElement, const R: usize> Mdspan<'a, T, R, Dims<R>, LayoutRight, Device> {
    /// A shared row-major device view of all of a cudarc allocation.
    ///
    /// # Errors
    ///
    /// [`DlpackError::LengthMismatch`] when the allocation's length differs from the number of
    /// elements; [`DlpackError::SpanOverflow`].
    ///
    /// ```no_run
    /// use dlspan::DeviceMdspan;
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let buffer = stream.cudarc().alloc_zeros::<u8>(6)?;
    /// let view = DeviceMdspan::<u8, 2>::from_cuda(&buffer, [2, 3])?;
    /// assert_eq!(view.extents(), [2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_cuda<S: CudaMemory<T> + DevicePtr<T>>(slice: &'a S, extents: [usize; R]) -> Result<Self, DlpackError> {
        let mapping = Mapping::compact(extents)?;
        if mapping.size() != slice.len() {
            return Err(DlpackError::LengthMismatch { expected: mapping.size(), found: slice.len() });
        }
        Self::from_cuda_mapping(slice, mapping)
    }
}

impl<'a, T: DlElement, const R: usize> Mdspan<'a, T, R, Dims<R>, LayoutStride, Device> {
    /// A shared strided device view (positive strides in elements, the first element at the
    /// allocation's start).
    ///
    /// # Errors
    ///
    /// The stride rules of [`LayoutStride`]; [`DlpackError::TooFewElements`].
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, LayoutStride};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let buffer = stream.cudarc().alloc_zeros::<f32>(6)?;
    /// let transposed = DeviceMdspan::<f32, 2, LayoutStride>::from_cuda_strided(&buffer, [3, 2], [1, 3])?;
    /// assert_eq!(transposed.strides(), [1, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_cuda_strided<S: CudaMemory<T> + DevicePtr<T>>(
        slice: &'a S,
        extents: [usize; R],
        strides: [isize; R],
    ) -> Result<Self, DlpackError> {
        Self::from_cuda_mapping(slice, Mapping::from_strides(extents, strides)?)
    }
}

impl<'a, T: DlElement, const R: usize> Mdspan<'a, T, R, Dims<R>, LayoutStrideRelaxed, Device> {
    /// A shared relaxed device view: any strides (zero broadcasts, negative reverses) and the
    /// element offset of index 0 from the allocation's start.
    ///
    /// # Errors
    ///
    /// [`DlpackError::NegativeReach`], [`DlpackError::SpanOverflow`], [`DlpackError::TooFewElements`].
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspan, LayoutStrideRelaxed};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let row = stream.cudarc().alloc_zeros::<f32>(4)?;
    /// let rows = DeviceMdspan::<f32, 2, LayoutStrideRelaxed>::from_cuda_relaxed(&row, [3, 4], [0, 1], 0)?;
    /// let reversed = DeviceMdspan::<f32, 1, LayoutStrideRelaxed>::from_cuda_relaxed(&row, [4], [-1], 3)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_cuda_relaxed<S: CudaMemory<T> + DevicePtr<T>>(
        slice: &'a S,
        extents: [usize; R],
        strides: [isize; R],
        offset: usize,
    ) -> Result<Self, DlpackError> {
        Self::from_cuda_mapping(slice, Mapping::from_parts(extents, strides, offset)?)
    }
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout> MdspanMut<'a, T, R, E, L, Device> {
    /// A mutable device view of `mapping` over cudarc memory, borrowing it uniquely. The view
    /// carries the allocation's write event (the event of unified memory), which every operation on
    /// the view waits for and records again ([rule C6](crate::rules#c6)); the allocation's own
    /// stream waits here for the pending reads and writes and records it. Driver errors of these
    /// calls are recorded in the context and returned by the next operation.
    ///
    /// # Errors
    ///
    /// [`DlpackError::TooFewElements`]; [`DlpackError::OverlappingStrides`] when two indices share
    /// an element.
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspanMut, LayoutLeft, Mapping};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let mut buffer = stream.cudarc().alloc_zeros::<f64>(6)?;
    /// let view = DeviceMdspanMut::<f64, 2, LayoutLeft>::from_cuda_mapping(&mut buffer, Mapping::compact([2, 3])?)?;
    /// assert_eq!(view.strides(), [1, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_cuda_mapping<S: CudaMemory<T> + DevicePtrMut<T>>(
        slice: &'a mut S,
        mapping: Mapping<R, E, L>,
    ) -> Result<Self, DlpackError> {
        if !mapping.is_unique() {
            return Err(DlpackError::OverlappingStrides);
        }
        let (len, ordinal) = (slice.len(), ordinal_of(slice));
        let home = std::sync::Arc::clone(slice.stream());
        let (ptr, order) = {
            // cudarc makes `home` wait for the pending reads and writes.
            let (address, record) = slice.device_ptr_mut(&home);
            let event = take_event(record);
            let ptr = checked_pointer(address, len, &mapping)?;
            if let Some(event) = event {
                chain(event, &home);
            }
            (ptr, event.map(OrderEvent::of))
        };
        let origin = DeviceOrigin { ordinal, order };
        // SAFETY: as for the shared view, with the allocation borrowed uniquely for `'a` and a
        // unique mapping; the event lives in the allocation (or the one it views), which cannot
        // move or drop while borrowed for `'a`.
        Ok(unsafe { Self::from_parts_unchecked(ptr, mapping, origin) })
    }
}

impl<'a, T: DlElement, const R: usize> MdspanMut<'a, T, R, Dims<R>, LayoutRight, Device> {
    /// A mutable row-major device view of all of a cudarc allocation.
    ///
    /// # Errors
    ///
    /// [`DlpackError::LengthMismatch`] when the allocation's length differs from the number of
    /// elements; [`DlpackError::SpanOverflow`].
    ///
    /// ```no_run
    /// use dlspan::DeviceMdspanMut;
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let mut buffer = stream.cudarc().alloc_zeros::<i32>(12)?;
    /// let mut view = DeviceMdspanMut::<i32, 3>::from_cuda(&mut buffer, [2, 2, 3])?;
    /// stream.fill(&mut view, 7)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_cuda<S: CudaMemory<T> + DevicePtrMut<T>>(
        slice: &'a mut S,
        extents: [usize; R],
    ) -> Result<Self, DlpackError> {
        let mapping = Mapping::compact(extents)?;
        if mapping.size() != slice.len() {
            return Err(DlpackError::LengthMismatch { expected: mapping.size(), found: slice.len() });
        }
        Self::from_cuda_mapping(slice, mapping)
    }
}

impl<'a, T: DlElement, const R: usize> MdspanMut<'a, T, R, Dims<R>, LayoutStride, Device> {
    /// A mutable strided device view (positive, non-overlapping strides).
    ///
    /// # Errors
    ///
    /// The stride rules of [`LayoutStride`]; [`DlpackError::TooFewElements`];
    /// [`DlpackError::OverlappingStrides`].
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspanMut, LayoutStride};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let mut buffer = stream.cudarc().alloc_zeros::<f32>(6)?;
    /// let view = DeviceMdspanMut::<f32, 2, LayoutStride>::from_cuda_strided(&mut buffer, [3, 2], [1, 3])?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_cuda_strided<S: CudaMemory<T> + DevicePtrMut<T>>(
        slice: &'a mut S,
        extents: [usize; R],
        strides: [isize; R],
    ) -> Result<Self, DlpackError> {
        Self::from_cuda_mapping(slice, Mapping::from_strides(extents, strides)?)
    }
}

impl<'a, T: DlElement, const R: usize> MdspanMut<'a, T, R, Dims<R>, LayoutStrideRelaxed, Device> {
    /// A mutable relaxed device view: negative strides and an offset (no zero strides: a mutable
    /// view is unique).
    ///
    /// # Errors
    ///
    /// [`DlpackError::NegativeReach`], [`DlpackError::SpanOverflow`],
    /// [`DlpackError::TooFewElements`], [`DlpackError::OverlappingStrides`].
    ///
    /// ```no_run
    /// use dlspan::{DeviceMdspanMut, LayoutStrideRelaxed};
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let mut buffer = stream.cudarc().alloc_zeros::<u16>(4)?;
    /// let reversed = DeviceMdspanMut::<u16, 1, LayoutStrideRelaxed>::from_cuda_relaxed(&mut buffer, [4], [-1], 3)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_cuda_relaxed<S: CudaMemory<T> + DevicePtrMut<T>>(
        slice: &'a mut S,
        extents: [usize; R],
        strides: [isize; R],
        offset: usize,
    ) -> Result<Self, DlpackError> {
        Self::from_cuda_mapping(slice, Mapping::from_parts(extents, strides, offset)?)
    }
}

/// Managed (unified) memory read and written on the host: views of a `UnifiedSlice`, taken after
/// the GPU work that touches it has run. An operation with a managed operand waits for its work
/// before it returns ([rule C3](crate::rules#c3)), so the host never indexes memory a kernel is
/// using; for asynchronous GPU work on unified memory use device views of the `UnifiedSlice`, which
/// chain on its event like any cudarc allocation, and take a managed view after them.
impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout> Mdspan<'a, T, R, E, L, Managed> {
    /// A shared managed view of `mapping` over a `UnifiedSlice`, host-indexable. Waits (on the host)
    /// for the work of `stream` and for the slice's recorded work, so the host reads what the GPU
    /// wrote.
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`] when the host may not access the memory (attached to another stream)
    /// or a wait fails; [`CudaError::View`] with [`DlpackError::TooFewElements`].
    ///
    /// ```no_run
    /// use dlspan::{ManagedMdspan, Mapping};
    /// let gpu = dlspan::cuda::Gpu::new(0)?;
    /// let stream = gpu.new_stream()?;
    /// // SAFETY: zero bytes are valid `u32`s; the memory is zeroed below before it is read.
    /// let mut unified = unsafe { gpu.context().alloc_unified::<u32>(6, true) }?;
    /// unified.as_mut_slice()?.fill(5);
    /// let view = ManagedMdspan::<u32, 2>::from_unified_mapping(&unified, Mapping::compact([2, 3])?, &stream)?;
    /// assert_eq!(view[[1, 2]], 5);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_unified_mapping(
        slice: &'a UnifiedSlice<T>,
        mapping: Mapping<R, E, L>,
        stream: &Stream,
    ) -> Result<Self, CudaError> {
        slice.check_host_access()?;
        // SAFETY: the slice is only read through the view after the synchronisation below, and the
        // record made at the end of this block covers no further work.
        let (host, record) = unsafe { slice.stream_synced_slice(stream.cudarc()) };
        drop(record);
        stream.synchronize()?;
        let ptr = checked_pointer(host.as_ptr() as usize as u64, host.len(), &mapping)?;
        // SAFETY: managed memory is host-accessible (checked); the GPU work touching it has run
        // (synchronised); the slice is borrowed for `'a`, so safe code does not free or write it.
        Ok(unsafe { Self::from_parts_unchecked(ptr, mapping, ()) })
    }
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout> MdspanMut<'a, T, R, E, L, Managed> {
    /// A mutable managed view of `mapping` over a `UnifiedSlice`, host-indexable and writable.
    ///
    /// # Errors
    ///
    /// As [`Mdspan::from_unified_mapping`], and [`DlpackError::OverlappingStrides`].
    ///
    /// ```no_run
    /// use dlspan::{ManagedMdspanMut, Mapping};
    /// let gpu = dlspan::cuda::Gpu::new(0)?;
    /// let stream = gpu.new_stream()?;
    /// // SAFETY: zero bytes are valid `f32`s and the memory is written before it is read.
    /// let mut unified = unsafe { gpu.context().alloc_unified::<f32>(4, true) }?;
    /// let mut view = ManagedMdspanMut::<f32, 1>::from_unified_mapping(&mut unified, Mapping::compact([4])?, &stream)?;
    /// view[[3]] = 1.0;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_unified_mapping(
        slice: &'a mut UnifiedSlice<T>,
        mapping: Mapping<R, E, L>,
        stream: &Stream,
    ) -> Result<Self, CudaError> {
        if !mapping.is_unique() {
            return Err(DlpackError::OverlappingStrides.into());
        }
        slice.check_host_access()?;
        // SAFETY: as for the shared view.
        let (host, record) = unsafe { slice.stream_synced_mut_slice(stream.cudarc()) };
        drop(record);
        stream.synchronize()?;
        let (address, len) = (host.as_mut_ptr() as usize as u64, host.len());
        let ptr = checked_pointer(address, len, &mapping)?;
        // SAFETY: as for the shared view, with the slice borrowed uniquely and a unique mapping.
        Ok(unsafe { Self::from_parts_unchecked(ptr, mapping, ()) })
    }
}

impl Stream {
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
        let bytes = len.checked_mul(size_of::<T>()).ok_or(CudaError::View(DlpackError::SpanOverflow))?;
        let raw = self.cudarc().alloc_zeros::<u8>(bytes)?;
        let address = raw.leak();
        // SAFETY: `address` is a live allocation of `len * size_of::<T>()` zeroed bytes (cudarc
        // allocates with 256-byte alignment), now owned by the returned slice; zero bytes are a
        // valid value of every element type (DLPack's zero of each dtype; `false` for bool).
        Ok(unsafe { self.cudarc().upgrade_device_ptr::<T>(address, len) })
    }
}
