//! The stacks of the threads of raw kernels on the CPU (rule [K9](crate::rules#k9)): one set per
//! worker of a launch, each stack above a guard page, kept for the process between launches (a
//! fresh set costs a mapping, a `mprotect` per stack, page faults on first use and an unmapping:
//! most of a small launch's time).
//!
//! A set is one anonymous mapping made without reserving memory (only the pages a thread touches
//! cost any): `[guard][stack][guard][stack]…`, each guard a page that faults. Every guard is made
//! before the set is used: a set whose guards cannot all be made (each is a mapping of its own,
//! within `vm.max_map_count`) is unmapped and not used. Idle sets are kept while they hold at
//! most [`KEPT_MAPPINGS`] mappings in all; the pages their threads touched are handed back to the
//! system lazily (`MADV_FREE`) when a launch returns them, at most once per [`RELEASE_EVERY`] per
//! set (the call costs about as much as a small launch): a kernel with large frames leaves its
//! pages to the system after it, launches in a loop do not pay for it each time.

use std::sync::Mutex;

/// The most mappings (two per stack: the stack and its guard) the idle sets may hold: enough for
/// two workers of 1024-thread blocks, a small part of the usual `vm.max_map_count` (65 530).
pub(crate) const KEPT_MAPPINGS: usize = 4 * 1024 + 2;

/// How often, at most, a set's touched pages are handed back to the system.
const RELEASE_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// One worker's stacks as the launch passes them (`dl_cpu_stack_set`, dlspan.cuh).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct CpuStacks {
    /// The lowest byte of the first stack (its guard page is the page below).
    pub(crate) base: *mut u8,
    /// From one stack's lowest byte to the next one's.
    pub(crate) stride: u64,
    /// Each stack's bytes.
    pub(crate) bytes: u64,
    /// How many stacks the set holds.
    pub(crate) threads: u32,
    /// Zero.
    pub(crate) reserved: u32,
}

/// A set of stacks: a mapping this value owns, unmapped when dropped.
#[derive(Debug)]
pub(crate) struct StackSet {
    /// The mapping's first byte (the first guard page).
    start: *mut u8,
    /// The mapping's length.
    len: usize,
    /// The system's page size.
    page: usize,
    /// How many stacks.
    threads: u32,
    /// Each stack's bytes (a multiple of the page size).
    bytes: usize,
    /// When its pages were last handed back (`None`: never).
    released: Option<std::time::Instant>,
}

// SAFETY: a set owns its mapping and nothing else: no other value has its address until a launch
// borrows it (for the launch, from the one thread that leased it), so it may move between threads.
unsafe impl Send for StackSet {}

impl StackSet {
    /// A new set of `threads` stacks of `bytes` each (rounded up to pages), every one guarded;
    /// `None` when the mapping or a guard cannot be made.
    #[cfg(unix)]
    fn new(threads: u32, bytes: usize) -> Option<Self> {
        // SAFETY: sysconf only reads a system value.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok().filter(|&p| p > 0)?;
        let bytes = bytes.checked_next_multiple_of(page)?;
        let stride = bytes.checked_add(page)?;
        let len = stride.checked_mul(threads as usize)?;
        // SAFETY: a fresh anonymous private mapping at an address the system chooses: it overlaps
        // nothing of the process.
        let start = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if start == libc::MAP_FAILED {
            return None;
        }
        let set = Self { start: start.cast(), len, page, threads, bytes, released: None };
        for t in 0..threads as usize {
            // SAFETY: the page at `t·stride` lies in the mapping this set owns (t < threads).
            let guard = unsafe { set.start.add(t * stride) };
            // SAFETY: `guard` is a page-aligned page of the set's own mapping, not in use.
            if unsafe { libc::mprotect(guard.cast(), page, libc::PROT_NONE) } != 0 {
                return None; // dropping `set` unmaps it
            }
        }
        Some(set)
    }

    /// Sets need Unix's mappings: elsewhere there are none (every launch is `OutOfMemory`).
    #[cfg(not(unix))]
    fn new(_threads: u32, _bytes: usize) -> Option<Self> {
        None
    }

    /// The set as a launch passes it.
    pub(crate) fn c(&self) -> CpuStacks {
        CpuStacks {
            // SAFETY: one page past the start lies in the mapping (it holds at least one guard and
            // one stack when threads > 0; an empty set's base is never used).
            base: unsafe { self.start.add(self.page) },
            stride: (self.bytes + self.page) as u64,
            bytes: self.bytes as u64,
            threads: self.threads,
            reserved: 0,
        }
    }

    /// The mappings the set holds: a stack and its guard for each thread.
    fn mappings(&self) -> usize {
        2 * self.threads as usize
    }

    /// Hands the pages the threads touched back to the system, lazily (they are reclaimed only
    /// under memory pressure, and reused as they are otherwise), unless it did within
    /// [`RELEASE_EVERY`].
    fn release_pages(&mut self) {
        let now = std::time::Instant::now();
        if self.released.is_some_and(|at| now.duration_since(at) < RELEASE_EVERY) {
            return;
        }
        self.released = Some(now);
        #[cfg(target_os = "linux")]
        // SAFETY: the range is this set's own mapping, which no launch uses while it is returned;
        // MADV_FREE discards contents only, never the mapping or its guards.
        unsafe {
            libc::madvise(self.start.cast(), self.len, libc::MADV_FREE);
        }
    }
}

impl Drop for StackSet {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: the mapping is this set's own, and no launch uses it any more.
        unsafe {
            libc::munmap(self.start.cast(), self.len);
        }
    }
}

/// The idle sets of the process.
static IDLE: Mutex<Vec<StackSet>> = Mutex::new(Vec::new());

/// The stacks of one launch: up to `workers` sets of at least `threads` stacks of `bytes` each,
/// idle ones first; fewer when no more can be made (`None` when not even one). They return to the
/// idle sets when the lease drops.
#[derive(Debug)]
pub(crate) struct Lease {
    sets: Vec<StackSet>,
}

impl Lease {
    /// Leases the stacks of a launch.
    pub(crate) fn take(workers: usize, threads: u32, bytes: usize) -> Option<Self> {
        let mut sets = Vec::with_capacity(workers);
        {
            let mut idle = IDLE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            while sets.len() < workers {
                // The smallest idle set that fits.
                let fits = idle
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.bytes >= bytes && s.threads >= threads)
                    .min_by_key(|(_, s)| (s.threads, s.bytes))
                    .map(|(k, _)| k);
                match fits {
                    Some(k) => sets.push(idle.swap_remove(k)),
                    None => break,
                }
            }
        }
        while sets.len() < workers {
            match StackSet::new(threads, bytes) {
                Some(set) => sets.push(set),
                None => break,
            }
        }
        (!sets.is_empty()).then_some(Self { sets })
    }

    /// The sets as the launch passes them, one per worker.
    pub(crate) fn c(&self) -> Vec<CpuStacks> {
        self.sets.iter().map(StackSet::c).collect()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut idle = IDLE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for mut set in self.sets.drain(..) {
            set.release_pages();
            idle.push(set);
        }
        // Within the bound: the smallest sets stay (they fit the most common launches cheaply).
        idle.sort_by_key(|s| (s.threads, s.bytes));
        let mut kept = 0;
        idle.retain(|s| {
            kept += s.mappings();
            kept <= KEPT_MAPPINGS
        });
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_set_has_a_faulting_guard_below_each_stack_and_sets_are_reused() {
        let lease = Lease::take(2, 3, 10_000).unwrap();
        let sets = lease.c();
        assert_eq!(sets.len(), 2);
        for set in &sets {
            assert_eq!(set.threads, 3);
            assert!(set.bytes >= 10_000 && set.stride > set.bytes);
            for t in 0..3 {
                // SAFETY: stack `t` lies in the set's mapping (t < threads).
                let stack = unsafe { set.base.add(t * set.stride as usize) };
                // SAFETY: the stack's bytes are the set's, used by nothing else.
                unsafe { stack.write_bytes(0xab, set.bytes as usize) };
                // SAFETY: the stack's last byte lies in it.
                let last = unsafe { stack.add(set.bytes as usize - 1) };
                // SAFETY: just written.
                assert_eq!(unsafe { *last }, 0xab);
            }
        }
        let bases: Vec<_> = sets.iter().map(|s| s.base).collect();
        drop(lease);
        // The same sets again, from the idle ones (a smaller launch fits them too).
        let again = Lease::take(2, 2, 4096).unwrap();
        let mut reused: Vec<_> = again.c().iter().map(|s| s.base).collect();
        reused.sort();
        let mut bases = bases;
        bases.sort();
        assert_eq!(reused, bases);
    }

    #[test]
    fn idle_sets_are_bounded() {
        let big = Lease::take(3, 1024, 4096).unwrap();
        drop(big);
        let idle = IDLE.lock().unwrap();
        assert!(idle.iter().map(StackSet::mappings).sum::<usize>() <= KEPT_MAPPINGS);
    }
}
