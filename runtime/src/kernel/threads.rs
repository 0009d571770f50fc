//! The worker threads element-wise kernels use on the CPU: one pool for the process (rayon's
//! work-stealing pool, the ecosystem's standard, kept apart from the application's own rayon pool),
//! [`num_threads`] wide — `$DLSPAN_NUM_THREADS` ([`THREADS_ENV`]), else the cores the process may
//! run on (`std::thread::available_parallelism`, which counts the CPU affinity mask and cgroup
//! quota: `taskset -c 1` gives one) — and settable with [`set_num_threads`].
//!
//! A call splits its output's index space over the threads when it has at least
//! [`PARALLEL_ELEMENTS`] elements; smaller calls run on the caller's thread. Each element is
//! computed by the same code whichever thread computes it, so the results are the same bits for
//! every thread count. A call made from inside one of the pool's threads (a kernel run from code the
//! pool runs) queues its parts on the same pool, which the calling thread helps run: no thread is
//! added, so nested calls do not oversubscribe the cores.

use std::sync::{Arc, OnceLock, RwLock};

/// The environment variable that sets the number of threads (a positive integer); read when the
/// pool is first needed. Any other value is ignored (the default holds).
pub const THREADS_ENV: &str = "DLSPAN_NUM_THREADS";

/// The number of elements from which a call is split over the threads, 2¹⁷: below it, handing
/// the work to other threads costs about what it saves. Measured on two cores with a GELU (tanh
/// form) of `x + b`, `f32`, through JAX: 2¹⁶ elements (about 70 µs on one core) no faster on
/// two, 2¹⁸ 1.4× faster, 2²⁰ 1.65×, 2²² 2.0×.
pub const PARALLEL_ELEMENTS: usize = 1 << 17;

/// The pool, once made (`None` while it is one thread).
fn slot() -> &'static RwLock<Option<Arc<rayon::ThreadPool>>> {
    static POOL: OnceLock<RwLock<Option<Arc<rayon::ThreadPool>>>> = OnceLock::new();
    POOL.get_or_init(|| RwLock::new(build(default_threads())))
}

/// The default number of threads: [`THREADS_ENV`] when it is a positive integer, else the cores
/// the process may run on.
fn default_threads() -> usize {
    std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// A pool of `threads` (none for one: the caller's thread does the work). A pool the system
/// cannot make (no threads left) leaves the work on the caller's thread.
fn build(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    if threads <= 1 {
        return None;
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|k| format!("dlspan-cpu-{k}"))
        .build()
        .ok()
        .map(Arc::new)
}

/// The number of threads element-wise kernels use on the CPU (1: the caller's thread only).
///
/// ```
/// assert!(dlspan::kernel::num_threads() >= 1);
/// ```
pub fn num_threads() -> usize {
    let pool = slot().read().unwrap_or_else(std::sync::PoisonError::into_inner);
    pool.as_ref().map_or(1, |p| p.current_num_threads())
}

/// Sets the number of threads element-wise kernels use on the CPU from now on (`1`: the caller's
/// thread only; `0` is taken as 1). Calls running meanwhile finish on the pool they started on.
///
/// ```
/// let before = dlspan::kernel::num_threads();
/// dlspan::kernel::set_num_threads(1);
/// assert_eq!(dlspan::kernel::num_threads(), 1);
/// dlspan::kernel::set_num_threads(before);
/// ```
pub fn set_num_threads(threads: usize) {
    let pool = build(threads.max(1));
    *slot().write().unwrap_or_else(std::sync::PoisonError::into_inner) = pool;
}

/// The pool to split a call over, when there is one of more than one thread.
pub(crate) fn pool() -> Option<Arc<rayon::ThreadPool>> {
    slot().read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
}
