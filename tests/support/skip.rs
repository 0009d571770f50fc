//! Skipping a test tier that lacks a tool, unless the test command forbids it (shared by `support`
//! and `cuda_support`).

/// Prints why a tier is skipped, or panics when `require=1` forbids skipping (the test command
/// sets these variables, so CI never passes by skipping).
pub fn skip_or_fail(why: &str, require: &str) {
    if std::env::var_os(require).is_some_and(|v| v == "1") {
        panic!("{why} ({require}=1 forbids skipping)");
    }
    eprintln!("skipped: {why}");
}
