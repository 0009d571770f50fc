//! [`Stream`] and [`Event`]: stream-ordered work, cross-stream ordering, and DLPack's stream rules;
//! the streams of a [`Gpu`] are made here ([`Gpu::new_stream`], [`Gpu::default_stream`]).
//!
//! Every dlspan operation is enqueued on a stream and returns before the GPU runs it; work on one
//! stream runs in order. Two streams are ordered with an [`Event`]: record it on one, make the
//! other wait for it. DLPack exchange uses the same mechanism ([rule C6](crate::rules#c6)): a
//! consumer names its stream with [`Stream::dlpack_stream`] when it calls
//! `__dlpack__(stream=...)`; a producer that receives a consumer's stream value makes that stream
//! wait on an event of its own stream with [`Stream::sync_for_consumer`], never with a device-wide
//! synchronisation.

use super::error::CudaError;
use super::gpu::Gpu;
use cudarc::driver::{CudaEvent, CudaStream, sys};
use std::sync::Arc;

/// A CUDA stream of a [`Gpu`]: the queue dlspan's operations run on.
///
/// ```no_run
/// use dlspan::cuda::Gpu;
/// let gpu = Gpu::new(0)?;
/// let (a, b) = (gpu.new_stream()?, gpu.new_stream()?);
/// let done = a.record()?; // everything enqueued on `a` so far...
/// b.wait(&done)?; // ...runs before what is enqueued on `b` from now on
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Stream {
    gpu: Gpu,
    inner: Arc<CudaStream>,
}

/// A point in a stream's work, for ordering another stream after it.
///
/// ```no_run
/// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
/// let event = stream.record()?;
/// event.synchronize()?;
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
#[derive(Debug)]
pub struct Event {
    inner: CudaEvent,
}

/// DLPack's stream value of the legacy default stream (also what `None` means;
/// [rule C6](crate::rules#c6)).
pub const DLPACK_LEGACY_STREAM: i64 = 1;
/// DLPack's stream value of the per-thread default stream.
pub const DLPACK_PER_THREAD_STREAM: i64 = 2;
/// DLPack's stream value asking the producer not to synchronise.
pub const DLPACK_NO_SYNC: i64 = -1;

// The streams of a device are made here, beside the type they build, so that `Gpu` knows nothing
// of `Stream`.
impl Gpu {
    /// A new stream on this device (non-blocking with respect to the legacy default stream).
    ///
    /// Making the first such stream of a device while none is alive waits on the host for all the
    /// device's pending work, every stream's (cudarc's switch of the context to ordering several
    /// streams; the streams of other libraries count for nothing there). An extension handed a
    /// caller's pending work should keep its streams for the process, not make one per call.
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`].
    ///
    /// ```no_run
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// stream.synchronize()?;
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn new_stream(&self) -> Result<Stream, CudaError> {
        Ok(Stream::from_cudarc(self.clone(), self.context().new_stream()?))
    }

    /// The legacy default stream (DLPack's stream value 1).
    ///
    /// ```no_run
    /// let stream = dlspan::cuda::Gpu::new(0)?.default_stream();
    /// assert_eq!(stream.dlpack_stream(), 1);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn default_stream(&self) -> Stream {
        Stream::from_cudarc(self.clone(), self.context().default_stream())
    }

    /// The calling thread's per-thread default stream (DLPack's stream value 2): dlspan's own
    /// stream for the tensors of producers that name none ([rule Y21](crate::rules#y21)).
    ///
    /// ```no_run
    /// let stream = dlspan::cuda::Gpu::new(0)?.per_thread_stream();
    /// assert_eq!(stream.dlpack_stream(), 2);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn per_thread_stream(&self) -> Stream {
        Stream::from_cudarc(self.clone(), self.context().per_thread_stream())
    }
}

impl Stream {
    fn from_cudarc(gpu: Gpu, inner: Arc<CudaStream>) -> Self {
        Self { gpu, inner }
    }

    /// A cudarc stream of `gpu`'s context as a dlspan stream (for example a `CudaSlice`'s own
    /// stream, on which it will be freed).
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`] with `CUDA_ERROR_INVALID_CONTEXT` when the stream belongs to another
    /// context.
    ///
    /// ```no_run
    /// use dlspan::cuda::{Gpu, Stream};
    /// let gpu = Gpu::new(0)?;
    /// let cudarc_stream = gpu.context().new_stream()?;
    /// let stream = Stream::wrap(&gpu, cudarc_stream)?;
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn wrap(gpu: &Gpu, stream: Arc<CudaStream>) -> Result<Self, CudaError> {
        if stream.context() != gpu.context() {
            return Err(CudaError::Driver { result: sys::cudaError_enum::CUDA_ERROR_INVALID_CONTEXT });
        }
        Ok(Self { gpu: gpu.clone(), inner: stream })
    }

    /// The device.
    ///
    /// ```no_run
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// assert_eq!(stream.gpu().ordinal(), 0);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The cudarc stream (for cudarc's own operations, ordered with dlspan's).
    ///
    /// ```no_run
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let zeros = stream.cudarc().alloc_zeros::<f32>(16)?;
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn cudarc(&self) -> &Arc<CudaStream> {
        &self.inner
    }

    /// Blocks the calling thread until every operation enqueued so far has run.
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`], including errors of earlier asynchronous work.
    ///
    /// ```no_run
    /// dlspan::cuda::Gpu::new(0)?.new_stream()?.synchronize()?;
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn synchronize(&self) -> Result<(), CudaError> {
        Ok(self.inner.synchronize()?)
    }

    /// Records an event after the work enqueued so far.
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`].
    ///
    /// ```no_run
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let _done = stream.record()?;
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn record(&self) -> Result<Event, CudaError> {
        Ok(Event { inner: self.inner.record_event(None)? })
    }

    /// Makes the work enqueued on this stream from now on wait for `event` (no host blocking).
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`].
    ///
    /// ```no_run
    /// let gpu = dlspan::cuda::Gpu::new(0)?;
    /// let (a, b) = (gpu.new_stream()?, gpu.new_stream()?);
    /// b.wait(&a.record()?)?;
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn wait(&self, event: &Event) -> Result<(), CudaError> {
        Ok(self.inner.wait(&event.inner)?)
    }

    /// The value a DLPack consumer passes as `__dlpack__(stream=...)` to name this stream: 1 for
    /// the legacy default stream, 2 for the per-thread default stream, otherwise the `CUstream`
    /// handle as an integer.
    ///
    /// ```no_run
    /// let gpu = dlspan::cuda::Gpu::new(0)?;
    /// assert_eq!(gpu.default_stream().dlpack_stream(), dlspan::cuda::DLPACK_LEGACY_STREAM);
    /// assert!(gpu.new_stream()?.dlpack_stream() > 2);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn dlpack_stream(&self) -> i64 {
        match self.inner.cu_stream() as usize {
            0 | 1 => DLPACK_LEGACY_STREAM,
            handle => handle as i64,
        }
    }

    /// The producer's side of DLPack's stream rule: makes the consumer's stream wait for the work
    /// enqueued on this stream so far (an event recorded here, waited on there; never a device-wide
    /// synchronisation). `consumer` is the `stream` argument the consumer passed to `__dlpack__`:
    /// `None` or 1 for the legacy default stream, 2 for the per-thread default stream, a `CUstream`
    /// handle above 2, and -1 for "do not synchronise".
    ///
    /// This orders the consumer after this stream's work only. Work on the exported memory may be
    /// pending on other streams: [`export_cuda`](crate::cuda::export_cuda) orders the allocation's
    /// own stream after every use of the memory, so call this on that stream
    /// (`Stream::wrap(&gpu, slice.stream().clone())`), or export and synchronise in one call with
    /// [`export_cuda_for_consumer`](crate::cuda::export_cuda_for_consumer) ([rule C7](crate::rules#c7)).
    ///
    /// # Errors
    ///
    /// [`CudaError::InvalidDlpackStream`] for 0 and for negative values other than -1;
    /// [`CudaError::Driver`].
    ///
    /// # Safety
    ///
    /// A value above 2 is a live `CUstream` of this stream's context (DLPack's contract for the
    /// consumer).
    ///
    /// ```no_run
    /// use dlspan::cuda::{CudaError, Gpu};
    /// let gpu = Gpu::new(0)?;
    /// let (producer, consumer) = (gpu.new_stream()?, gpu.new_stream()?);
    /// // SAFETY: the consumer's value names a live stream of this context.
    /// unsafe { producer.sync_for_consumer(Some(consumer.dlpack_stream())) }?;
    /// // SAFETY: 0 is refused before any use.
    /// assert!(matches!(unsafe { producer.sync_for_consumer(Some(0)) }, Err(CudaError::InvalidDlpackStream { value: 0 })));
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub unsafe fn sync_for_consumer(&self, consumer: Option<i64>) -> Result<(), CudaError> {
        // SAFETY: forwarded: a value above 2 names a live stream of this stream's context.
        unsafe { order_consumer(&self.inner, consumer) }
    }
}

/// Checks a DLPack consumer's stream value (`None` is the legacy default stream): the handle to
/// wait on, or `None` for -1 (do not synchronise).
pub(crate) fn consumer_handle(consumer: Option<i64>) -> Result<Option<sys::CUstream>, CudaError> {
    let value = consumer.unwrap_or(DLPACK_LEGACY_STREAM);
    if value == DLPACK_NO_SYNC {
        return Ok(None);
    }
    if value <= 0 {
        return Err(CudaError::InvalidDlpackStream { value });
    }
    // DLPack's values 1 and 2 are the driver's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD handles;
    // larger values are handles themselves.
    Ok(Some(value as usize as sys::CUstream))
}

/// Makes the DLPack consumer's stream wait for the work enqueued on `producer` so far, as
/// [`Stream::sync_for_consumer`] says.
///
/// # Safety
///
/// A value above 2 is a live `CUstream` of `producer`'s context.
pub(crate) unsafe fn order_consumer(producer: &CudaStream, consumer: Option<i64>) -> Result<(), CudaError> {
    let Some(handle) = consumer_handle(consumer)? else {
        return Ok(());
    };
    let legacy = handle as usize == DLPACK_LEGACY_STREAM as usize;
    if handle == producer.cu_stream() || (legacy && producer.cu_stream().is_null()) {
        return Ok(());
    }
    let event = producer.record_event(None)?;
    producer.context().bind_to_thread()?;
    // SAFETY: `handle` is a live stream of this context (the caller's contract, or one of the
    // driver's two special handles); the event is live; destroying it after the wait is enqueued
    // is allowed (the driver releases it when the wait completes).
    unsafe {
        cudarc::driver::result::stream::wait_event(
            handle,
            event.cu_event(),
            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
        )
    }?;
    Ok(())
}

/// Makes the DLPack consumer's stream wait for `event` (`None` or 1: the legacy default stream, 2:
/// the per-thread default stream, a `CUstream` handle above 2, -1: no wait).
///
/// # Safety
///
/// A value above 2 is a live `CUstream` of the event's context (DLPack's contract for the consumer).
#[cfg(feature = "python")]
pub(crate) unsafe fn order_consumer_after(event: &Event, consumer: Option<i64>) -> Result<(), CudaError> {
    let Some(handle) = consumer_handle(consumer)? else {
        return Ok(());
    };
    event.inner.context().bind_to_thread()?;
    // SAFETY: `handle` is a live stream of the event's context (the caller's contract, or one of
    // the driver's two special handles), and the event is live.
    unsafe {
        cudarc::driver::result::stream::wait_event(
            handle,
            event.inner.cu_event(),
            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
        )
    }?;
    Ok(())
}

impl Event {
    /// Blocks the calling thread until the recorded work has run.
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`].
    ///
    /// ```no_run
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// stream.record()?.synchronize()?;
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn synchronize(&self) -> Result<(), CudaError> {
        Ok(self.inner.synchronize()?)
    }

    /// Whether the recorded work has run (without blocking).
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`] for errors of the recorded work.
    ///
    /// ```no_run
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let event = stream.record()?;
    /// stream.synchronize()?;
    /// assert!(event.is_complete()?);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn is_complete(&self) -> Result<bool, CudaError> {
        Ok(self.inner.try_is_complete()?)
    }

    /// The cudarc event.
    ///
    /// ```no_run
    /// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
    /// let event = stream.record()?;
    /// stream.cudarc().wait(event.cudarc())?;
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn cudarc(&self) -> &CudaEvent {
        &self.inner
    }
}
