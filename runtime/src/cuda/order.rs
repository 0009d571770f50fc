//! How a launch is ordered with the other uses of the memory it touches ([rule C6](crate::rules#c6)).
//!
//! A device view of a cudarc allocation carries one of the allocation's events: the read event for
//! a shared view, the write event for a mutable one, the single event of unified memory. Every use
//! chains on it: the stream that uses the memory first waits for the event's last record, then the
//! work is enqueued, then the event is recorded again on that stream. The event's last record thus
//! follows every use so far, on whatever streams they ran: cudarc's own operations wait for it, and
//! the allocation is freed on its own stream after waiting for it, so no stream reads memory
//! before its last writer, and no memory is freed under a kernel.
//!
//! Managed views index on the host, so an operation with a managed operand waits on the host for
//! its work before it returns. Device memory dlspan did not allocate (imported through DLPack, or
//! from raw parts) carries no event: the caller orders it, as DLPack's stream rules say.
//!
//! [`schedule`] is the pure part (which events a launch waits for and records, and whether the host
//! waits), [`run`] the sequence around the enqueued work over a [`Queue`]; the unit tests below run
//! both against a recording queue.

use super::abi::MAX_OPERANDS;
use super::error::CudaError;
use crate::space::OrderEvent;
use cudarc::driver::{CudaEvent, CudaStream, SyncOnDrop};

/// How one operand of an operation is ordered with the other uses of its memory.
///
/// Public only because the sealed device traits' hidden methods return it; not re-exported, it is
/// no part of the API (the unit tests below run it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order<E> {
    /// Device memory of a cudarc allocation, ordered by its event: the operation's stream waits
    /// for the event's last record before the work, and records the event after it.
    Tracked(E),
    /// Device memory dlspan did not allocate (imported through DLPack, or from raw parts): the
    /// caller orders it with the other streams that use it.
    Caller,
    /// Managed memory, indexable on the host: the operation waits for its work before returning.
    Blocking,
}

/// A cudarc event that orders an allocation's uses, compared by address.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct EventRef<'a>(pub(crate) &'a CudaEvent);

impl PartialEq for EventRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self.0, other.0)
    }
}

impl Eq for EventRef<'_> {}

/// What an operation does around its work: the events its stream waits for before the work and
/// records after it (each once, in operand order), and whether the host waits for the work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Schedule<E> {
    events: [Option<E>; MAX_OPERANDS],
    pub(crate) host_wait: bool,
}

impl<E: Copy> Schedule<E> {
    /// The events, in operand order.
    pub(crate) fn events(&self) -> impl Iterator<Item = E> + '_ {
        self.events.iter().map_while(|e| *e)
    }
}

/// The schedule of an operation over operands ordered by `orders` (at most [`MAX_OPERANDS`]).
pub(crate) fn schedule<E: Copy + Eq>(orders: &[Order<E>]) -> Schedule<E> {
    let mut events = [None; MAX_OPERANDS];
    let mut count = 0;
    let mut host_wait = false;
    for order in orders {
        match *order {
            Order::Tracked(event) if !events[..count].contains(&Some(event)) => {
                events[count] = Some(event);
                count += 1;
            }
            Order::Tracked(_) | Order::Caller => {}
            Order::Blocking => host_wait = true,
        }
    }
    Schedule { events, host_wait }
}

/// A stream as [`run`] uses it.
pub(crate) trait Queue<E> {
    /// Work enqueued from now on waits for the event's last record.
    fn wait(&self, event: E) -> Result<(), CudaError>;
    /// Records the event after the work enqueued so far.
    fn record(&self, event: E) -> Result<(), CudaError>;
    /// Blocks the host until the work enqueued so far has run.
    fn finish(&self) -> Result<(), CudaError>;
}

/// Enqueues work by `enqueue` under `schedule`: the waits, the work, the records, and the host's
/// wait. The records follow the work even when `enqueue` fails (it may have enqueued part of its
/// work); when a record fails the host waits for the work, so none is left in flight unordered with
/// the memory's later uses. Returns the first error.
pub(crate) fn run<E: Copy, Q: Queue<E>>(
    queue: &Q,
    schedule: &Schedule<E>,
    enqueue: impl FnOnce() -> Result<(), CudaError>,
) -> Result<(), CudaError> {
    for event in schedule.events() {
        queue.wait(event)?;
    }
    let enqueued = enqueue();
    let mut recorded = Ok(());
    for event in schedule.events() {
        let result = queue.record(event);
        if recorded.is_ok() {
            recorded = result;
        }
    }
    let finished = if schedule.host_wait || recorded.is_err() { queue.finish() } else { Ok(()) };
    enqueued.and(recorded).and(finished)
}

impl<'e> Queue<EventRef<'e>> for CudaStream {
    fn wait(&self, event: EventRef<'e>) -> Result<(), CudaError> {
        Ok(CudaStream::wait(self, event.0)?)
    }

    fn record(&self, event: EventRef<'e>) -> Result<(), CudaError> {
        Ok(event.0.record(self)?)
    }

    fn finish(&self) -> Result<(), CudaError> {
        // The driver's own calls: cudarc's would first return an error it kept for a later call
        // (an event's failed destruction, say) and not wait, and this wait is what keeps work whose
        // record failed from outliving the memory it uses.
        // SAFETY: the stream's context is live (the stream holds it); the stream is live.
        unsafe { cudarc::driver::result::ctx::set_current(self.context().cu_ctx()) }?;
        // SAFETY: as above, the stream's context current.
        unsafe { cudarc::driver::result::stream::synchronize(self.cu_stream()) }?;
        Ok(())
    }
}

/// The event of a cudarc access record, taken out of it: dropping the record then records nothing
/// (dlspan records the event itself, after waiting for it).
pub(crate) fn take_event<'a>(mut record: SyncOnDrop<'a>) -> Option<&'a CudaEvent> {
    match &mut record {
        SyncOnDrop::Record(target) => target.take().map(|(event, _)| event),
        SyncOnDrop::Sync(_) => None,
    }
}

/// Chains a new view's event on the allocation's own stream `home`: `home` waits for the event's
/// last record (the uses so far) and records it again, after the waits cudarc made `home` do for the
/// allocation's other event. Errors are recorded in the context, as cudarc records those of its own
/// waits, and returned by the next driver call through it (every operation's first).
pub(crate) fn chain(event: &CudaEvent, home: &CudaStream) {
    let context = home.context();
    context.record_err(home.wait(event));
    context.record_err(event.record(home));
}

/// The event an [`OrderEvent`] names.
///
/// # Safety
///
/// `order` was made by [`OrderEvent::of`] from an event that lives, unmoved, for `'a`.
pub(crate) unsafe fn event_of<'a>(order: OrderEvent) -> &'a CudaEvent {
    // SAFETY: the caller guarantees the event lives, unmoved, for `'a`; it is only read shared.
    unsafe { order.0.cast::<CudaEvent>().as_ref() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::RefCell;
    use cudarc::driver::sys::cudaError_enum;

    /// What a recording queue saw.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Call {
        Wait(char),
        Work,
        Record(char),
        Finish,
    }
    use Call::*;

    const FAILED: CudaError = CudaError::Driver { result: cudaError_enum::CUDA_ERROR_LAUNCH_FAILED };

    /// A queue that records its calls and fails the ones named.
    #[derive(Default)]
    struct Recorder {
        calls: RefCell<Vec<Call>>,
        fail: Vec<Call>,
    }

    impl Recorder {
        fn failing(fail: &[Call]) -> Self {
            Self { calls: RefCell::default(), fail: fail.to_vec() }
        }

        fn call(&self, call: Call) -> Result<(), CudaError> {
            self.calls.borrow_mut().push(call);
            if self.fail.contains(&call) { Err(FAILED) } else { Ok(()) }
        }

        fn run(&self, orders: &[Order<char>]) -> Result<(), CudaError> {
            run(self, &schedule(orders), || self.call(Work))
        }

        fn calls(&self) -> Vec<Call> {
            self.calls.borrow().clone()
        }
    }

    impl Queue<char> for Recorder {
        fn wait(&self, event: char) -> Result<(), CudaError> {
            self.call(Wait(event))
        }

        fn record(&self, event: char) -> Result<(), CudaError> {
            self.call(Record(event))
        }

        fn finish(&self) -> Result<(), CudaError> {
            self.call(Finish)
        }
    }

    #[test]
    fn each_allocation_event_is_waited_for_before_the_work_and_recorded_after_it() {
        let queue = Recorder::default();
        queue.run(&[Order::Tracked('y'), Order::Tracked('x')]).unwrap();
        assert_eq!(queue.calls(), [Wait('y'), Wait('x'), Work, Record('y'), Record('x')]);
    }

    #[test]
    fn an_event_shared_by_operands_is_waited_for_and_recorded_once() {
        // axpy's `y` is read and written; two shared views of one allocation share its read event.
        let queue = Recorder::default();
        queue.run(&[Order::Tracked('y'), Order::Tracked('x'), Order::Tracked('y')]).unwrap();
        assert_eq!(queue.calls(), [Wait('y'), Wait('x'), Work, Record('y'), Record('x')]);
    }

    #[test]
    fn memory_the_caller_orders_adds_nothing_and_launches_stay_asynchronous() {
        let queue = Recorder::default();
        queue.run(&[Order::Caller, Order::Tracked('a'), Order::Caller]).unwrap();
        assert_eq!(queue.calls(), [Wait('a'), Work, Record('a')]);
        let queue = Recorder::default();
        queue.run(&[Order::Caller]).unwrap();
        assert_eq!(queue.calls(), [Work]);
    }

    #[test]
    fn a_managed_operand_makes_the_host_wait_for_the_work_after_the_records() {
        for orders in
            [&[Order::Blocking][..], &[Order::Tracked('d'), Order::Blocking], &[Order::Blocking, Order::Tracked('d')]]
        {
            let queue = Recorder::default();
            queue.run(orders).unwrap();
            let expected: &[Call] =
                if orders.len() == 1 { &[Work, Finish] } else { &[Wait('d'), Work, Record('d'), Finish] };
            assert_eq!(queue.calls(), expected, "{orders:?}");
        }
    }

    #[test]
    fn a_failed_wait_enqueues_no_work() {
        let queue = Recorder::failing(&[Wait('b')]);
        assert_eq!(queue.run(&[Order::Tracked('a'), Order::Tracked('b')]), Err(FAILED));
        assert_eq!(queue.calls(), [Wait('a'), Wait('b')]);
    }

    #[test]
    fn failed_work_is_still_followed_by_every_record() {
        // The work may have been enqueued in part (a kernel before a copy).
        let queue = Recorder::failing(&[Work]);
        assert_eq!(queue.run(&[Order::Tracked('a'), Order::Tracked('b')]), Err(FAILED));
        assert_eq!(queue.calls(), [Wait('a'), Wait('b'), Work, Record('a'), Record('b')]);
    }

    #[test]
    fn a_failed_record_makes_the_host_wait_for_the_work() {
        let queue = Recorder::failing(&[Record('a')]);
        assert_eq!(queue.run(&[Order::Tracked('a'), Order::Tracked('b')]), Err(FAILED));
        assert_eq!(queue.calls(), [Wait('a'), Wait('b'), Work, Record('a'), Record('b'), Finish]);
    }

    #[test]
    fn the_first_error_is_returned() {
        let queue = Recorder::failing(&[Work, Finish]);
        assert_eq!(queue.run(&[Order::Blocking]), Err(FAILED));
        assert_eq!(queue.calls(), [Work, Finish]);
    }
}
