//! `Mdspan::sum` of 10⁶ `f32` on one thread, contiguous and at stride 2, beside the floor of a
//! plain loop of eight accumulators over the same slice (`chunks_exact(8)`, one vector of eight
//! partial sums: what a compiler makes of the simplest fast sum), timed in interleaved rounds:
//!
//!     cargo run --release -p dlspan-benches --bin sum_time [-- ROUNDS]
//!
//! Prints each variant's best time of 100 calls per round (µs per call); NumPy's and PyTorch's
//! sums of the same data are timed from Python (BENCHMARKS.md), not here. Run it pinned
//! (`taskset -c 1`).

use dlspan::*;
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1_000_000;

/// Eight partial sums over chunks of eight, combined at the end: the floor.
fn floor(values: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (chunks, rest) = values.as_chunks::<8>();
    for chunk in chunks {
        for k in 0..8 {
            lanes[k] += chunk[k];
        }
    }
    lanes.iter().sum::<f32>() + rest.iter().sum::<f32>()
}

fn main() {
    let rounds = std::env::args().nth(1).and_then(|r| r.parse().ok()).unwrap_or(15);
    dlspan::kernel::set_num_threads(1);
    let data: Vec<f32> = (0..2 * N).map(|i| ((i % 4093) as f32 / 4093.0 - 0.5) * 2.0).collect();
    let contiguous = HostMdspan::<f32, 1>::from_slice(&data[..N], [N]).unwrap();
    let strided = HostMdspan::<f32, 1, LayoutStride>::from_slice_strided(&data, [N], [2]).unwrap();
    type Variant<'a> = (&'static str, Box<dyn Fn() -> f32 + 'a>);
    let variants: [Variant<'_>; 3] = [
        ("sum, contiguous", Box::new(|| black_box(&contiguous).sum())),
        ("sum, stride 2", Box::new(|| black_box(&strided).sum())),
        ("floor: 8 accumulators", Box::new(|| floor(black_box(&data[..N])))),
    ];
    let mut best = [f64::INFINITY; 3];
    for round in 0..rounds {
        for k in (0..variants.len()).map(|k| (k + round) % variants.len()) {
            let start = Instant::now();
            for _ in 0..100 {
                black_box(variants[k].1());
            }
            best[k] = best[k].min(start.elapsed().as_secs_f64() / 100.0 * 1e6);
        }
    }
    println!("best of {rounds} rounds of 100 calls, 10^6 f32, one thread, µs per call");
    for ((name, _), time) in variants.iter().zip(best) {
        println!("{name:<24} {time:>8.1}");
    }
}
