//! What dlspan's two on-disk kernel caches share: the user's cache directory (`dlspan/` under it)
//! and the stable hash their files are named by. NVRTC's PTX lives in `kernels/`
//! (`cuda::kernel::DiskCache`, rule K10), the host C++ compiler's libraries of raw kernels in `cpu/`
//! (`kernel::cxx`, rule K9).

use std::ffi::OsString;
use std::path::PathBuf;

/// FNV-1a with 128-bit state (the published offset basis and prime): a stable hash, the same on
/// every platform and Rust version, that names the caches' files. Not a defence against
/// collisions: the PTX cache checks its entries against their full key.
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
/// relative path does not count (the XDG rule). `None` when there is none.
pub(crate) fn user_cache_in(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let base = if cfg!(windows) {
        absolute("LOCALAPPDATA")
    } else {
        absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|home| home.join(".cache")))
    };
    base.map(|base| base.join("dlspan"))
}
