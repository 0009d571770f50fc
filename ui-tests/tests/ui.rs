//! Compile-fail and must-compile cases: one rule per file, a `// Rule:` line on top.
//!
//! The expected compiler output (`.stderr`) is pinned to the rustc in `rustc-version`: other
//! compilers word their errors differently, so on another version the cases are skipped with a
//! message. Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p dlspan-ui-tests` and
//! review every changed `.stderr` before committing it.

use std::process::Command;

#[test]
fn ui() {
    let pinned = include_str!("../rustc-version").trim();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = Command::new(rustc).arg("--version").output().expect("rustc --version runs");
    let found = String::from_utf8_lossy(&output.stdout);
    let found = found.split_whitespace().nth(1).unwrap_or("unknown");
    if found != pinned {
        eprintln!("skipped: the UI snapshots are pinned to rustc {pinned}; this is rustc {found}");
        return;
    }
    let cases = trybuild::TestCases::new();
    cases.pass("pass/*/*.rs");
    cases.compile_fail("fail/*/*.rs");
    // rustc prints a trait's full path when another crate in the build has an item of the same
    // name (cudarc brings a second `Copy`), so these cases keep one snapshot per feature set.
    if cfg!(feature = "cuda") {
        cases.compile_fail("cuda/fail/*.rs");
        cases.compile_fail("features/cuda/*.rs");
    } else {
        cases.compile_fail("features/default/*.rs");
    }
    if cfg!(feature = "torch") {
        cases.compile_fail("features/torch/*.rs");
    }
    if cfg!(feature = "jax") {
        cases.compile_fail("features/jax/*.rs");
    }
}
