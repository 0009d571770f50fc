//! Instruction counts of managed export + release, for callgrind (deterministic where timings are
//! noisy):
//!
//!     cargo build --release -p dlspan-benches --bin export_instructions
//!     valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/export_instructions
//!     callgrind_annotate --inclusive=yes cg.out | grep export_instructions::
//!
//! Each variant exports a pre-made 64x64 `Vec<f32>` owner `ITERATIONS` times and calls the deleter
//! as a C consumer would; the owner's allocation happens before, its free inside (as in the bench).

use dlspan_benches::managed;
use std::hint::black_box;

const ITERATIONS: usize = 10_000;

/// One variant: exports and releases every owner, returns a checksum.
type Variant = fn(Vec<Vec<f32>>) -> usize;

#[inline(never)]
fn dlspan_export(owners: Vec<Vec<f32>>) -> usize {
    let mut acc = 0usize;
    for owner in owners {
        let Some(raw) = managed::dlspan_export(owner) else { continue };
        let raw = black_box(raw);
        acc = acc.wrapping_add(raw as usize);
        // SAFETY: a live export we own, released once.
        unsafe { managed::release(raw) };
    }
    acc
}

#[inline(never)]
fn boxed_only(owners: Vec<Vec<f32>>) -> usize {
    // The floor's allocation pattern: one box with the owner inside, freed at once.
    let mut acc = 0usize;
    for owner in owners {
        let boxed = black_box(Box::new(([0u64; 14], owner)));
        acc = acc.wrapping_add(&*boxed as *const _ as usize);
        drop(boxed);
    }
    acc
}

#[inline(never)]
fn dlpark_export(owners: Vec<Vec<f32>>) -> usize {
    let mut acc = 0usize;
    for owner in owners {
        let Some(raw) = managed::dlpark_export(owner) else { continue };
        let raw = black_box(raw);
        acc = acc.wrapping_add(raw as usize);
        // SAFETY: a live export we own, released once.
        unsafe { managed::release_dlpark(raw) };
    }
    acc
}

#[inline(never)]
fn hand_export(owners: Vec<Vec<f32>>) -> usize {
    let mut acc = 0usize;
    for owner in owners {
        let raw = black_box(managed::hand_export(owner));
        acc = acc.wrapping_add(raw as usize);
        // SAFETY: a live export we own, released once.
        unsafe { managed::release(raw) };
    }
    acc
}

fn owners() -> Vec<Vec<f32>> {
    (0..ITERATIONS).map(|_| vec![1.0f32; managed::SHAPE[0] * managed::SHAPE[1]]).collect()
}

fn main() {
    let results = [dlspan_export(owners()), boxed_only(owners()), dlpark_export(owners()), hand_export(owners())];
    assert!(results.iter().all(|&r| r != 0));
    println!("{ITERATIONS} iterations per variant");
    // `--time`: wall-clock per export, variants alternated over several rounds (owners made before).
    if std::env::args().any(|a| a == "--time") {
        let variants: [(&str, Variant); 3] =
            [("hand box", hand_export), ("dlspan", dlspan_export), ("dlpark", dlpark_export)];
        for round in 0..9 {
            for (name, f) in variants {
                let owners = owners();
                let start = std::time::Instant::now();
                black_box(f(owners));
                let per = start.elapsed().as_nanos() as f64 / ITERATIONS as f64;
                println!("round {round} {name:<9} {per:6.1} ns per export + release");
            }
        }
    }
}
