//! The CPU's emulator of raw kernels (rule K9) fails loudly where it would have corrupted memory
//! or hidden a kernel's bug: a thread's stack holds what a GPU thread's local memory holds (512
//! KiB), a larger frame faults at its guard page instead of writing another thread's stack, a
//! guard page that cannot be made is never skipped, a `throw` does not compile (device code has no
//! exceptions), and threads of a block waiting at different `__syncthreads()` are an error.
//! Cases that end a process run this test binary again as a child (`child`, which does nothing
//! unless asked). Needs a host C++ compiler (`c++`, `g++` or `$CXX`).
#![allow(missing_docs)]

use dlspan::kernel::{Cpu, KernelError, LaunchConfig};
use dlspan::{HostMdspan, HostMdspanMut};
use std::process::Command;

dlspan::kernel! {
    /// Each thread fills a local array of 35 000 floats (140 000 bytes, legal on a GPU) and sums it.
    pub fn big_frame(out: &mut [f32; 1]) {
        r#"
        volatile float local[35000];
        const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
        for (int k = 0; k < 35000; ++k) local[k] = (float)(t + k % 7);
        float sum = 0.0f;
        for (int k = 0; k < 35000; ++k) sum += local[k];
        __syncthreads();
        out(t) = sum;
        "#
    }
}

dlspan::kernel! {
    /// A frame of 640 000 bytes: more than any thread's stack.
    pub fn huge_frame(out: &mut [f32; 1]) {
        r#"
        volatile float local[160000];
        for (int k = 0; k < 160000; ++k) local[k] = (float)k;
        out(threadIdx.x) = local[threadIdx.x];
        "#
    }
}

dlspan::kernel! {
    /// Half the block waits at one barrier, half at another.
    pub fn divergent(out: &mut [i32; 1]) {
        r#"
        if (threadIdx.x < 32) {
            __syncthreads();
        } else {
            __syncthreads();
        }
        out(threadIdx.x) = 1;
        "#
    }
}

dlspan::kernel! {
    /// Threads that finish early, the others meeting at one barrier: as on a GPU, finished
    /// threads do not hold a barrier up.
    pub fn early_exit(out: &mut [i32; 1]) {
        r#"
        if (threadIdx.x >= out.extent(0)) return;
        __syncthreads();
        out(threadIdx.x) = (int)threadIdx.x;
        "#
    }
}

dlspan::kernel! {
    /// `out(i) = i`, over 1024-thread blocks: the launch with the most stacks.
    pub fn iota(out: &mut [u32; 1]) {
        r#"
        const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        __syncthreads();
        if (i < out.extent(0)) out(i) = i;
        "#
    }
}

/// The 1-based line of this file that ends with `suffix` (the `n`th such line).
fn line_of(suffix: &str, n: usize) -> u32 {
    let (index, _) =
        include_str!("cpu_emulator.rs").lines().enumerate().filter(|(_, l)| l.ends_with(suffix)).nth(n).unwrap();
    index as u32 + 1
}

#[test]
fn a_frame_a_gpu_allows_fits_every_threads_stack() {
    let mut out = vec![0.0f32; 128];
    let mut ov = HostMdspanMut::<f32, 1>::from_slice(&mut out, [128]).unwrap();
    // SAFETY: each of the 128 threads writes its own element.
    unsafe { big_frame.launch(Cpu, LaunchConfig::new([2, 1, 1], [64, 1, 1]), &mut ov) }.unwrap();
    let expected: Vec<f32> = (0..128u32).map(|t| (35000 * t + 105_000) as f32).collect();
    assert_eq!(out, expected, "a thread's frame overwrote another's");
}

#[test]
fn a_throw_does_not_compile() {
    dlspan::kernel! {
        fn throws(out: &mut [f32; 1]) {
            r#"
            if (out.extent(0) > 100) throw 1;
            out(0) = 1.0f;
            "#
        }
    }
    let mut out = [0.0f32; 1];
    let mut ov = HostMdspanMut::<f32, 1>::from_slice(&mut out, [1]).unwrap();
    // SAFETY: it does not compile, so it does not run.
    let error = unsafe { throws.launch(Cpu, LaunchConfig::new([1, 1, 1], [1, 1, 1]), &mut ov) }.unwrap_err();
    let KernelError::Compile { log, .. } = error else { panic!("{error}") };
    assert!(log.contains("exception handling disabled"), "{log}");
}

#[test]
fn threads_at_different_barriers_are_an_error() {
    let mut out = vec![0i32; 64];
    let mut ov = HostMdspanMut::<i32, 1>::from_slice(&mut out, [64]).unwrap();
    // SAFETY: each thread writes its own element (if it gets there).
    let error = unsafe { divergent.launch(Cpu, LaunchConfig::new([3, 1, 1], [64, 1, 1]), &mut ov) }.unwrap_err();
    let KernelError::DivergentBarrier { kernel, file, block, threads, lines } = &error else { panic!("{error}") };
    assert!(kernel.starts_with("divergent"), "{kernel}");
    assert!(file.ends_with("cpu_emulator.rs"), "{file}");
    assert_eq!(block[1..], [0, 0]);
    assert_eq!(*threads, [[0, 0, 0], [32, 0, 0]]);
    assert_eq!(*lines, [line_of("__syncthreads();", 1), line_of("__syncthreads();", 2)]);
    let message = error.to_string();
    assert!(message.contains(&format!("cpu_emulator.rs:{}", lines[1])), "{message}");
}

#[test]
fn finished_threads_do_not_hold_a_barrier_up() {
    let mut out = vec![-1i32; 40];
    let mut ov = HostMdspanMut::<i32, 1>::from_slice(&mut out, [40]).unwrap();
    // SAFETY: each thread below 40 writes its own element.
    unsafe { early_exit.launch(Cpu, LaunchConfig::new([1, 1, 1], [64, 1, 1]), &mut ov) }.unwrap();
    assert_eq!(out, (0..40).collect::<Vec<i32>>());
}

/// Set in a child: the case it runs.
const CHILD: &str = "DLSPAN_CPU_EMULATOR_TEST_CHILD";

/// Run as a child by the tests below (does nothing in a plain run).
#[test]
fn child() {
    let Ok(case) = std::env::var(CHILD) else { return };
    match case.as_str() {
        "huge-frame" => {
            let mut out = vec![0.0f32; 64];
            let mut ov = HostMdspanMut::<f32, 1>::from_slice(&mut out, [64]).unwrap();
            // SAFETY: each thread writes its own element; its frame does not fit its stack, which
            // must end the process.
            let result = unsafe { huge_frame.launch(Cpu, LaunchConfig::new([1, 1, 1], [64, 1, 1]), &mut ov) };
            println!("child: returned {result:?}");
        }
        "mappings" => mappings_child(),
        other => panic!("unknown case {other}"),
    }
}

/// This binary run as a child on `case`.
fn run_child(case: &str) -> std::process::Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env(CHILD, case)
        .output()
        .unwrap()
}

#[cfg(unix)]
#[test]
fn a_frame_larger_than_the_stack_ends_the_process_instead_of_corrupting_another_stack() {
    use std::os::unix::process::ExitStatusExt as _;
    let output = run_child("huge-frame");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains("child: returned"), "the launch returned: {stdout}");
    // The first probe below the stack hits its guard page.
    assert_eq!(output.status.signal(), Some(11), "SIGSEGV at the guard page: {:?}\n{stdout}", output.status);
}

#[cfg(target_os = "linux")]
mod mappings {
    unsafe extern "C" {
        fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, offset: i64) -> *mut u8;
        fn munmap(addr: *mut u8, len: usize) -> i32;
    }
    const PROT_NONE: i32 = 0;
    const PROT_READ: i32 = 1;
    const MAP_PRIVATE: i32 = 2;
    const MAP_ANONYMOUS: i32 = 0x20;

    /// The process's mappings now.
    pub(super) fn count() -> usize {
        std::fs::read_to_string("/proc/self/maps").unwrap().lines().count()
    }

    /// Maps single pages (alternately readable and not, so that none merges with the one beside
    /// it) until `free` mappings are left under `max`; the pages, to unmap some later.
    pub(super) fn fill(max: usize, free: usize) -> Vec<usize> {
        let (mut pages, mut prot) = (Vec::new(), PROT_READ);
        while count() + free < max {
            let batch = (max - free - count()).min(4096);
            for _ in 0..batch {
                // SAFETY: a fresh anonymous page nothing else uses.
                let page = unsafe { mmap(std::ptr::null_mut(), 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) };
                assert!(page as isize != -1, "mmap failed before the limit");
                pages.push(page as usize);
                prot = if prot == PROT_READ { PROT_NONE } else { PROT_READ };
            }
        }
        pages
    }

    /// Unmaps `n` of `pages` (every other one from the end, so that their neighbours do not merge).
    pub(super) fn unmap(pages: &mut Vec<usize>, n: usize) {
        for _ in 0..n {
            let page = pages.pop().unwrap();
            // SAFETY: a page `fill` mapped, used by nothing.
            assert_eq!(unsafe { munmap(page as *mut u8, 4096) }, 0);
        }
    }
}

/// In a child: the process's mappings filled to near `vm.max_map_count`, so that the guard pages
/// of a launch's stacks (one mapping each) cannot all be made.
fn mappings_child() {
    #[cfg(target_os = "linux")]
    {
        let max: usize = std::fs::read_to_string("/proc/sys/vm/max_map_count").unwrap().trim().parse().unwrap();
        let blocks = 8u32;
        let n = blocks as usize * 1024;
        let mut out = vec![0u32; n];
        // Built and loaded (mappings of their own) before the mappings run out, on a block of one
        // thread (whose stacks, kept for later launches, do not fit a block of 1024).
        {
            let mut ov = HostMdspanMut::<u32, 1>::from_slice(&mut out, [n]).unwrap();
            // SAFETY: each thread writes its own element.
            unsafe { iota.launch(Cpu, LaunchConfig::new([1, 1, 1], [1, 1, 1]), &mut ov) }.unwrap();
        }
        let config = LaunchConfig::new([blocks, 1, 1], [1024, 1, 1]);
        // No room for one worker's 1024 stacks and guards (2048 mappings): an error, never
        // unguarded stacks.
        let mut pages = mappings::fill(max, 300);
        let mut ov = HostMdspanMut::<u32, 1>::from_slice(&mut out, [n]).unwrap();
        // SAFETY: as above.
        let none = unsafe { iota.launch(Cpu, config, &mut ov) };
        // Room for one worker's and a little more, not for two: the launch runs on fewer workers,
        // every stack guarded.
        mappings::unmap(&mut pages, 2400);
        out.iter_mut().for_each(|v| *v = 0);
        let mut ov = HostMdspanMut::<u32, 1>::from_slice(&mut out, [n]).unwrap();
        // SAFETY: as above.
        let fewer = unsafe { iota.launch(Cpu, config, &mut ov) };
        let right = out.iter().enumerate().all(|(i, &v)| v == i as u32);
        println!("child: fewer={fewer:?} right={right} none={none:?}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn guard_pages_that_cannot_be_made_fail_the_launch_or_shrink_it_never_skipped() {
    let max: usize = std::fs::read_to_string("/proc/sys/vm/max_map_count").unwrap().trim().parse().unwrap();
    if max > 1 << 20 {
        eprintln!("skipped: vm.max_map_count is {max}, too many mappings to fill in a test");
        return;
    }
    let output = run_child("mappings");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("child: fewer=Ok(()) right=true none=Err(OutOfMemory)"), "{stdout}");
}

#[test]
fn many_switches_keep_every_threads_registers() {
    dlspan::kernel! {
        /// Each thread keeps values in locals across 200 barriers and combines them at the end.
        fn keep(x: &[u64; 1], out: &mut [u64; 1]) {
            r#"
            const unsigned int t = threadIdx.x;
            unsigned long long a = x(t), b = a * 3 + 1, c = a ^ 0x5555, d = 0;
            double f = (double)a * 0.5;
            for (int round = 0; round < 200; ++round) {
                __syncthreads();
                d += a + round;
                a = b ^ (c << (round % 7));
                b = c + d;
                c = a * 2654435761ull;
                f = f * 1.0000001 + (double)(round & 3);
            }
            out(t) = a ^ b ^ c ^ d ^ (unsigned long long)f;
            "#
        }
    }
    let x: Vec<u64> = (0..256).map(|i| i * 7919 + 13).collect();
    let mut out = vec![0u64; 256];
    let xv = HostMdspan::<u64, 1>::from_slice(&x, [256]).unwrap();
    let mut ov = HostMdspanMut::<u64, 1>::from_slice(&mut out, [256]).unwrap();
    // SAFETY: each thread reads and writes its own element.
    unsafe { keep.launch(Cpu, LaunchConfig::new([1, 1, 1], [256, 1, 1]), &xv, &mut ov) }.unwrap();
    let expected: Vec<u64> = x
        .iter()
        .map(|&x0| {
            let (mut a, mut b, mut c, mut d) = (x0, x0.wrapping_mul(3).wrapping_add(1), x0 ^ 0x5555, 0u64);
            let mut f = x0 as f64 * 0.5;
            for round in 0..200u64 {
                d = d.wrapping_add(a).wrapping_add(round);
                a = b ^ (c << (round % 7));
                b = c.wrapping_add(d);
                c = a.wrapping_mul(2654435761);
                f = f * 1.0000001 + (round & 3) as f64;
            }
            a ^ b ^ c ^ d ^ (f as u64)
        })
        .collect();
    assert_eq!(out, expected);
}
