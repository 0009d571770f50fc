//! What dlspan's two on-disk kernel caches share: where they live (one variable, [`CACHE_ENV`],
//! and dlspan's directory in the user's cache), the checked directory of each
//! ([`private`](super::private)'s rules), and the stable hash their files are named by. NVRTC's PTX
//! lives in `kernels/` (`cuda::kernel::DiskCache`, rule K10), the host C++ compiler's libraries of
//! raw kernels in `cpu/` (`kernel::cxx`, rule K9).

use super::private::{Refused, create_private};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable that moves dlspan's kernel caches, or disables them: a directory
/// (NVRTC's PTX in its `kernels/`, the CPU's raw-kernel libraries in its `cpu/`), or `off`. Unset
/// or empty, the caches live in the user's cache directory (`$XDG_CACHE_HOME/dlspan`, else
/// `$HOME/.cache/dlspan`); with neither, nothing is cached on disk. The caches are read and
/// written only when the directory is the user's own (rule [K11](crate::rules#k11)).
///
/// ```
/// assert_eq!(dlspan::kernel::CACHE_ENV, "DLSPAN_CACHE_DIR");
/// ```
pub const CACHE_ENV: &str = "DLSPAN_CACHE_DIR";

/// FNV-1a with 128-bit state (the published offset basis and prime): a stable hash, the same on
/// every platform and Rust version, that names the caches' files. Not a defence against
/// collisions: both caches check their entries against their full key.
///
/// ```
/// use dlspan::kernel::fnv1a_128;
/// assert_eq!(fnv1a_128(b""), 0x6c62272e07bb014262b821756295c58d);
/// assert_eq!(fnv1a_128(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
/// ```
pub fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;
    bytes.iter().fold(OFFSET, |hash, &byte| (hash ^ u128::from(byte)).wrapping_mul(PRIME))
}

/// dlspan's directory in the user's cache, in the environment `var` gives:
/// `$XDG_CACHE_HOME/dlspan`, else `$HOME/.cache/dlspan` (`%LOCALAPPDATA%\dlspan` on Windows); a
/// relative path does not count (the XDG rule). `None` when there is none: then nothing is cached
/// on disk (never in a directory shared with other users, such as the temporary one).
pub(crate) fn user_cache_in(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let base = if cfg!(windows) {
        absolute("LOCALAPPDATA")
    } else {
        absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|home| home.join(".cache")))
    };
    base.map(|base| base.join("dlspan"))
}

/// The caches' root in the environment `var` gives: [`CACHE_ENV`]'s directory, none for `off`,
/// else (unset or empty) [`user_cache_in`].
pub(crate) fn cache_root_in(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    match var(CACHE_ENV) {
        Some(value) if value == "off" => None,
        Some(value) if !value.is_empty() => Some(PathBuf::from(value)),
        _ => user_cache_in(var),
    }
}

/// The caches' root in the process's environment ([`cache_root_in`]).
pub(crate) fn cache_root() -> Option<PathBuf> {
    cache_root_in(|name| std::env::var_os(name))
}

/// The cache directory `dir`, created (`0700`) when missing and checked to be the user's own: its
/// resolved path, or `None` after one warning on standard error naming the cache (`what`) and
/// why it is not used.
pub(crate) fn open_cache(dir: &Path, what: &str) -> Option<PathBuf> {
    create_private(dir).map_err(|refused: Refused| warn_refused(&refused, what)).ok()
}

/// Says once per process and directory, on standard error, that `refused` is not used.
fn warn_refused(refused: &Refused, what: &str) {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static WARNED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let mut warned = WARNED.get_or_init(Default::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if warned.insert(refused.path.clone()) {
        eprintln!(
            "dlspan: warning: not using {} as {what}: {}; kernels are compiled without it \
             (set {} to a directory of your own, or to `off`)",
            refused.path.display(),
            refused.reason,
            CACHE_ENV,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(windows))]
    #[test]
    fn the_root_is_the_variable_then_the_users_cache_and_never_a_shared_directory() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.into())
        };
        let root = |vars| cache_root_in(env(vars));
        assert_eq!(root(&[("DLSPAN_CACHE_DIR", "/c"), ("HOME", "/h")]), Some(PathBuf::from("/c")));
        assert_eq!(root(&[("DLSPAN_CACHE_DIR", "off"), ("HOME", "/h")]), None);
        assert_eq!(root(&[("DLSPAN_CACHE_DIR", ""), ("HOME", "/h")]), Some(PathBuf::from("/h/.cache/dlspan")));
        assert_eq!(root(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]), Some(PathBuf::from("/x/dlspan")));
        // No absolute home: no disk cache at all (before, the shared temporary directory).
        assert_eq!(root(&[("HOME", "relative")]), None);
        assert_eq!(root(&[]), None);
    }
}
