//! `Mdspan::sum` on one thread, contiguous and at stride 2, beside the generic pairwise sum of the
//! same values (`sum_with` with the plain addition: the same bits, without the explicit vector
//! code that `sum` takes for `f32` and `f64`) and the floor of a plain loop of eight accumulators
//! (`chunks_exact(8)`, one vector of eight partial sums: what a compiler makes of the simplest
//! fast sum), on 10⁶ values (in the last-level cache) and 5·10⁴ (in L2), timed in interleaved
//! rounds:
//!
//!     cargo run --release -p dlspan-benches --bin sum_time [-- ROUNDS]
//!
//! Prints each variant's best time per call (µs) over the rounds; NumPy's and PyTorch's sums of
//! the same data are timed from Python (`benches/python/sum.py`), not here. Run it pinned
//! (`taskset -c 1`).

use dlspan::*;
use std::hint::black_box;
use std::time::Instant;

/// Eight partial sums over chunks of eight, combined at the end: the floor.
fn floor<T: Copy + Default + std::ops::Add<Output = T> + std::iter::Sum>(values: &[T]) -> T {
    let mut lanes = [T::default(); 8];
    let (chunks, rest) = values.as_chunks::<8>();
    for chunk in chunks {
        for k in 0..8 {
            lanes[k] = lanes[k] + chunk[k];
        }
    }
    lanes.iter().copied().sum::<T>() + rest.iter().copied().sum::<T>()
}

type Variant<'a> = (String, Box<dyn Fn() -> f64 + 'a>);

/// The variants for `n` values of `T` (made from `data`, which holds `2n`).
fn variants<'a, T>(name: &str, n: usize, data: &'a [T]) -> Vec<Variant<'a>>
where
    T: Copy + Default + std::ops::Add<Output = T> + std::iter::Sum + Into<f64>,
{
    let contiguous = HostMdspan::<T, 1>::from_slice(&data[..n], [n]).unwrap();
    let strided = HostMdspan::<T, 1, LayoutStride>::from_slice_strided(data, [n], [2]).unwrap();
    vec![
        (format!("{name} {n}: sum"), Box::new(move || black_box(&contiguous).sum().into())),
        (
            format!("{name} {n}: generic pairwise"),
            Box::new(move || black_box(&contiguous).sum_with(T::default(), |&v| v, |a, b| a + b).into()),
        ),
        (format!("{name} {n}: sum, stride 2"), Box::new(move || black_box(&strided).sum().into())),
        (format!("{name} {n}: floor (8 accumulators)"), Box::new(move || floor(black_box(&data[..n])).into())),
    ]
}

fn main() {
    let rounds = std::env::args().nth(1).and_then(|r| r.parse().ok()).unwrap_or(15);
    dlspan::kernel::set_num_threads(1);
    let f32s: Vec<f32> = (0..2_000_000).map(|i| ((i % 4093) as f32 / 4093.0 - 0.5) * 2.0).collect();
    let f64s: Vec<f64> = f32s.iter().map(|&v| f64::from(v)).collect();
    let mut all = Vec::new();
    for n in [1_000_000, 50_000] {
        all.extend(variants("f32", n, &f32s));
        all.extend(variants("f64", n, &f64s));
    }
    let mut best = vec![f64::INFINITY; all.len()];
    for round in 0..rounds {
        for k in (0..all.len()).map(|k| (k + round) % all.len()) {
            // About 10^8 values per variant and round.
            let calls = if all[k].0.contains(" 50000") { 2000 } else { 100 };
            let start = Instant::now();
            for _ in 0..calls {
                black_box(all[k].1());
            }
            best[k] = best[k].min(start.elapsed().as_secs_f64() / calls as f64 * 1e6);
        }
    }
    println!("best of {rounds} rounds, one thread, µs per call");
    for ((name, _), time) in all.iter().zip(best) {
        println!("{name:<36} {time:>8.1}");
    }
}
