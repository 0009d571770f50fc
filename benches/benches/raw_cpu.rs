//! Raw kernels on the CPU (`dlspan::kernel::Cpu`, rule K9): the cost of a small launch (4 blocks
//! of 64 threads, one barrier: target ≤ 0.2 ms) and of a fiber switch (one block of 64 threads
//! meeting at 1000 barriers, each a switch into the thread and one back: target ≤ 20 ns), beside
//! the same grid run as plain loops over the threads (the floor: no fibers at all).
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{Criterion, criterion_group, criterion_main};
use dlspan::HostMdspanMut;
use dlspan::kernel::{Cpu, LaunchConfig};
use std::hint::black_box;

dlspan::kernel! {
    /// `out(i) = i` after one barrier.
    fn iota(out: &mut [u32; 1]) {
        r#"
        const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        __syncthreads();
        out(i) = i;
        "#
    }
}

dlspan::kernel! {
    /// `rounds` barriers, each thread adding its index to its element between them.
    fn barriers(rounds: u32, out: &mut [u32; 1]) {
        r#"
        unsigned int sum = 0;
        for (unsigned int r = 0; r < rounds; ++r) {
            sum += threadIdx.x;
            __syncthreads();
        }
        out(threadIdx.x) = sum;
        "#
    }
}

/// Barriers of the switch benchmark.
const ROUNDS: u32 = 1000;

fn benches(c: &mut Criterion) {
    let mut out = vec![0u32; 256];
    let mut group = c.benchmark_group("raw_cpu");
    group.bench_function("launch_4x64", |bench| {
        let mut o = HostMdspanMut::<u32, 1>::from_slice(&mut out, [256]).unwrap();
        // SAFETY: each of the 256 threads writes its own element.
        bench.iter(|| unsafe { iota.launch(Cpu, LaunchConfig::new([4, 1, 1], [64, 1, 1]), &mut o) }.unwrap())
    });
    group.bench_function("floor_4x64", |bench| {
        bench.iter(|| {
            for i in 0..256u32 {
                out[i as usize] = black_box(i);
            }
        })
    });
    group.bench_function("barriers_64x1000", |bench| {
        let mut o = HostMdspanMut::<u32, 1>::from_slice(&mut out[..64], [64]).unwrap();
        bench.iter(|| {
            // SAFETY: each of the 64 threads writes its own element.
            unsafe { barriers.launch(Cpu, LaunchConfig::new([1, 1, 1], [64, 1, 1]), black_box(ROUNDS), &mut o) }
                .unwrap()
        })
    });
    group.bench_function("barriers_64x1", |bench| {
        let mut o = HostMdspanMut::<u32, 1>::from_slice(&mut out[..64], [64]).unwrap();
        bench.iter(|| {
            // SAFETY: each of the 64 threads writes its own element.
            unsafe { barriers.launch(Cpu, LaunchConfig::new([1, 1, 1], [64, 1, 1]), black_box(1), &mut o) }.unwrap()
        })
    });
    group.finish();
    assert_eq!(out[63], 63, "the kernels ran");
}

criterion_group!(raw_cpu, benches);
criterion_main!(raw_cpu);
