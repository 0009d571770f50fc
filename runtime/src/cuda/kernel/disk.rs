//! The on-disk PTX cache: modules compiled by one process are loaded, not compiled again, by the
//! next. An entry is keyed by everything NVRTC's output depends on ([`CacheKey`]: NVRTC's version,
//! the program's name, every option (the target architecture among them) and the full source); its
//! file is named by a stable 128-bit hash of that key ([`fnv1a_128`]) and holds the key's full
//! text, so that a collision of hashes can never load another module's code.
//!
//! The directory is `kernels` under `$DLSPAN_CACHE_DIR` when set ([`CACHE_ENV`]; `off` disables
//! the cache), else `$XDG_CACHE_HOME/dlspan/kernels`, else `$HOME/.cache/dlspan/kernels`
//! (`%LOCALAPPDATA%\dlspan\kernels` on Windows); with none of these, no disk cache. It is used
//! only when it is the user's own (rule K11: created `0700`, refused with one warning when
//! another user owns it or a directory above it, or can write to them); entries are read without
//! following symbolic links. Entries are written to a temporary file created exclusively, synced
//! and renamed into place, so concurrent processes see a whole entry or none; an entry that is
//! truncated, corrupt or of another key is ignored (and replaced by the next compilation), never
//! trusted; a directory that cannot be created, read or written only costs the compilations.
//! Entries are never evicted: the directory may be deleted at any time.

use crate::kernel::{cache_root_in, fnv1a_128, open_cache, publish, read_private, write_new};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The environment variable that moves the caches (a directory, the PTX in its `kernels/`) or
/// disables them (`off`): [`kernel::CACHE_ENV`](crate::kernel::CACHE_ENV), shared with the CPU's
/// cache of raw kernels.
///
/// ```
/// assert_eq!(dlspan::cuda::kernel::CACHE_ENV, "DLSPAN_CACHE_DIR");
/// ```
pub use crate::kernel::CACHE_ENV;

/// The first line of every entry: the format's name and version.
const MAGIC: &[u8] = b"dlspan-ptx 1\n";

/// The largest PTX an entry may hold (a larger file is not read: it is not one of ours).
const MAX_PTX: u64 = 1 << 28;

/// What a compiled module depends on: NVRTC's version, the program's name, its options (the target
/// architecture among them) and its source, as one text (each field length-prefixed, so no two
/// keys write the same text).
///
/// ```
/// use dlspan::cuda::kernel::CacheKey;
/// let options = ["--gpu-architecture=compute_90".to_owned()];
/// let key = CacheKey::new((13, 0), "k.cu", &options, "__global__ void k() {}");
/// assert!(key.text().contains("--gpu-architecture=compute_90"));
/// assert_eq!(key.file_name().len(), 32 + ".ptx".len());
/// let other = CacheKey::new((13, 0), "k.cu", &["--gpu-architecture=compute_80".to_owned()], "__global__ void k() {}");
/// assert_ne!(key.file_name(), other.file_name());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheKey {
    text: String,
    hash: u128,
}

impl CacheKey {
    /// The key of `source` compiled as `name` with `options` by NVRTC `nvrtc` (major, minor).
    pub fn new(nvrtc: (i32, i32), name: &str, options: &[String], source: &str) -> Self {
        use core::fmt::Write as _;
        let mut text = String::with_capacity(source.len() + 256);
        let _ = writeln!(text, "nvrtc {}.{}\nname {} {name}", nvrtc.0, nvrtc.1, name.len());
        for option in options {
            let _ = writeln!(text, "option {} {option}", option.len());
        }
        let _ = writeln!(text, "source {} {source}", source.len());
        let hash = fnv1a_128(text.as_bytes());
        Self { text, hash }
    }

    /// The key's full text (stored in the entry, and compared on loading).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The entry's file name: the key's [`fnv1a_128`] in hexadecimal, `.ptx`.
    pub fn file_name(&self) -> String {
        format!("{:032x}.ptx", self.hash)
    }
}

/// A directory of compiled modules shared by processes, or none (caching disabled).
///
/// ```
/// use dlspan::cuda::kernel::{CacheKey, DiskCache};
/// let dir = std::env::temp_dir().join(format!("dlspan-doc-disk-{}", std::process::id()));
/// let cache = DiskCache::at(&dir);
/// let key = CacheKey::new((13, 0), "k.cu", &[], "__global__ void k() {}");
/// assert_eq!(cache.load(&key), None);
/// cache.store(&key, ".version 9.0\n");
/// assert_eq!(cache.load(&key).as_deref(), Some(".version 9.0\n"));
/// assert_eq!(DiskCache::at(&dir).load(&key).as_deref(), Some(".version 9.0\n"));
/// assert_eq!((cache.hits(), cache.stores()), (1, 1));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug, Default)]
pub struct DiskCache {
    dir: Option<PathBuf>,
    /// The directory resolved and checked to be the user's own (rule K11), once it exists: `None`
    /// inside when it is refused.
    checked: OnceLock<Option<PathBuf>>,
    hits: AtomicUsize,
    misses: AtomicUsize,
    rejected: AtomicUsize,
    stores: AtomicUsize,
}

impl DiskCache {
    /// A cache in `dir` (created at the first store).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self { dir: Some(dir.into()), ..Self::default() }
    }

    /// No cache: every load misses, every store is dropped.
    ///
    /// ```
    /// assert_eq!(dlspan::cuda::kernel::DiskCache::off().dir(), None);
    /// ```
    pub fn off() -> Self {
        Self::default()
    }

    /// The cache the environment names: `kernels` under [`CACHE_ENV`]'s directory, else under
    /// the user's cache directory (`$XDG_CACHE_HOME/dlspan`, `$HOME/.cache/dlspan`); none for
    /// `off`, or with neither.
    ///
    /// ```
    /// let cache = dlspan::cuda::kernel::DiskCache::from_env();
    /// if let Some(dir) = cache.dir() {
    ///     assert!(dir.ends_with("kernels"));
    /// }
    /// ```
    pub fn from_env() -> Self {
        cache_root_in(|name| std::env::var_os(name)).map_or_else(Self::off, |root| Self::at(root.join("kernels")))
    }

    /// The process's cache, from the environment as it was at the first compilation.
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<DiskCache> = OnceLock::new();
        GLOBAL.get_or_init(Self::from_env)
    }

    /// The directory, or `None` when caching is disabled.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The directory to read and write, resolved, once it exists (`create`: made if missing) and
    /// only when it is the user's own; refused, it is never used by this cache (one warning).
    fn checked(&self, create: bool) -> Option<&Path> {
        let dir = self.dir.as_deref()?;
        if self.checked.get().is_none() && !create && !dir.exists() {
            return None;
        }
        self.checked.get_or_init(|| open_cache(dir, "the PTX cache")).as_deref()
    }

    /// The PTX stored under `key`, when a whole entry of this very key is there.
    pub fn load(&self, key: &CacheKey) -> Option<String> {
        self.dir.as_ref()?;
        let Some(dir) = self.checked(false) else {
            self.misses.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        match read_entry(&dir.join(key.file_name()), key) {
            Entry::Found(ptx) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(ptx)
            }
            Entry::Absent => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
            Entry::Rejected => {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Stores `ptx` under `key`, replacing any entry there; does nothing when the directory cannot
    /// be created or written, or is not the user's own (the next process compiles again).
    pub fn store(&self, key: &CacheKey, ptx: &str) {
        let Some(dir) = self.checked(true) else { return };
        if write_entry(dir, key, ptx).is_ok() {
            self.stores.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many loads found their entry.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::Relaxed)
    }

    /// How many loads found no entry (or no readable file).
    pub fn misses(&self) -> usize {
        self.misses.load(Ordering::Relaxed)
    }

    /// How many loads found a file they refused: truncated, corrupt, or of another key.
    pub fn rejected(&self) -> usize {
        self.rejected.load(Ordering::Relaxed)
    }

    /// How many entries this cache has written.
    pub fn stores(&self) -> usize {
        self.stores.load(Ordering::Relaxed)
    }
}

/// What a load found.
enum Entry {
    Found(String),
    Absent,
    Rejected,
}

/// The entry at `path`, checked: a regular file of this user's, not reached through a symbolic
/// link, whose bytes are a whole entry of `key` ([`parse_entry`]).
fn read_entry(path: &Path, key: &CacheKey) -> Entry {
    if fs::symlink_metadata(path).is_err() {
        return Entry::Absent;
    }
    let max = MAX_PTX + key.text.len() as u64 + 128;
    read_private(path, max).and_then(|bytes| parse_entry(&bytes, key)).map_or(Entry::Rejected, Entry::Found)
}

/// The PTX of an entry's bytes, when they are a whole entry of `key` and its PTX is text, not
/// empty, without NUL bytes.
fn parse_entry(bytes: &[u8], key: &CacheKey) -> Option<String> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let newline = rest.iter().position(|&b| b == b'\n')?;
    let header = core::str::from_utf8(&rest[..newline]).ok()?;
    let body = &rest[newline + 1..];
    let mut fields = header.split(' ');
    let key_len: usize = fields.next()?.parse().ok()?;
    let ptx_len: usize = fields.next()?.parse().ok()?;
    let checksum = u128::from_str_radix(fields.next()?, 16).ok()?;
    if fields.next().is_some() || key_len.checked_add(ptx_len)? != body.len() {
        return None;
    }
    let (text, ptx) = body.split_at(key_len);
    if text != key.text.as_bytes() || fnv1a_128(body) != checksum {
        return None;
    }
    // PTX is loaded as a C string: an interior NUL would cut it short (and cudarc refuses it); NVRTC
    // never makes an empty module.
    if ptx.is_empty() || ptx.contains(&0) {
        return None;
    }
    String::from_utf8(ptx.to_vec()).ok()
}

/// The bytes of `key`'s entry holding `ptx`.
fn entry_bytes(key: &CacheKey, ptx: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(key.text.len() + ptx.len());
    body.extend_from_slice(key.text.as_bytes());
    body.extend_from_slice(ptx.as_bytes());
    let header = format!("{} {} {:032x}\n", key.text.len(), ptx.len(), fnv1a_128(&body));
    let mut bytes = Vec::with_capacity(MAGIC.len() + header.len() + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&body);
    bytes
}

/// Writes `key`'s entry into `dir` atomically: a temporary file of this process, created
/// exclusively and synced, then renamed over the entry (readers in other processes see the old
/// file or the new one).
fn write_entry(dir: &Path, key: &CacheKey, ptx: &str) -> std::io::Result<()> {
    static SEQUENCE: AtomicUsize = AtomicUsize::new(0);
    let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let temporary = dir.join(format!(".{}.{}-{sequence}.tmp", key.file_name(), std::process::id()));
    let written = write_new(&temporary, &entry_bytes(key, ptx))
        .and_then(|()| publish(&temporary, &dir.join(key.file_name()), dir));
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CacheKey {
        CacheKey::new((13, 0), "k.cu", &["--fmad=false".to_owned()], "__global__ void k() {}")
    }

    #[test]
    fn an_entry_parses_back_and_any_damage_is_refused() {
        let key = key();
        let bytes = entry_bytes(&key, "ptx text");
        assert_eq!(parse_entry(&bytes, &key).as_deref(), Some("ptx text"));
        for cut in 0..bytes.len() {
            assert_eq!(parse_entry(&bytes[..cut], &key), None, "truncated at {cut}");
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x01;
            assert_eq!(parse_entry(&flipped, &key), None, "byte {at} flipped");
        }
        let other = CacheKey::new((13, 1), "k.cu", &["--fmad=false".to_owned()], "__global__ void k() {}");
        assert_eq!(parse_entry(&bytes, &other), None);
        // A NUL in the PTX is refused even under a matching checksum (the driver reads a C string).
        assert_eq!(parse_entry(&entry_bytes(&key, "ptx\0text"), &key), None);
        assert_eq!(parse_entry(&entry_bytes(&key, ""), &key), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_others_can_write_is_never_read_nor_written() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("dlspan-disk-shared-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let key = key();
        // An entry planted by whoever can write there: whole, of the very key asked for.
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join(key.file_name()), entry_bytes(&key, "planted")).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let cache = DiskCache::at(&dir);
        assert_eq!(cache.load(&key), None);
        cache.store(&key, "ours");
        assert_eq!(cache.stores(), 0);
        assert_eq!(fs::read(dir.join(key.file_name())).unwrap(), entry_bytes(&key, "planted"));
        // The same directory, private: the entry is used.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(DiskCache::at(&dir).load(&key).as_deref(), Some("planted"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn an_entry_reached_through_a_link_is_refused_and_the_link_replaced_not_followed() {
        let dir = std::env::temp_dir().join(format!("dlspan-disk-link-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).unwrap();
        let key = key();
        let victim = dir.join("victim");
        fs::write(&victim, entry_bytes(&key, "victim")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(key.file_name())).unwrap();
        let cache = DiskCache::at(&dir);
        assert_eq!(cache.load(&key), None);
        assert_eq!(cache.rejected(), 1);
        cache.store(&key, "ours");
        assert_eq!(fs::read(&victim).unwrap(), entry_bytes(&key, "victim"), "the link's target is untouched");
        assert_eq!(DiskCache::at(&dir).load(&key).as_deref(), Some("ours"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn keys_differ_in_every_field_and_fields_do_not_run_together() {
        let base = key();
        let options = ["--fmad=false".to_owned()];
        let variants = [
            CacheKey::new((12, 9), "k.cu", &options, "__global__ void k() {}"),
            CacheKey::new((13, 0), "j.cu", &options, "__global__ void k() {}"),
            CacheKey::new((13, 0), "k.cu", &[], "__global__ void k() {}"),
            CacheKey::new((13, 0), "k.cu", &options, "__global__ void k() { }"),
            CacheKey::new((13, 0), "k.cu", &["--fmad=false\noption 3 abc".to_owned()], "__global__ void k() {}"),
        ];
        for variant in &variants {
            assert_ne!(variant.text(), base.text());
            assert_ne!(variant.file_name(), base.file_name());
        }
        let split = CacheKey::new((13, 0), "k", &["a b".to_owned()], "");
        let joined = CacheKey::new((13, 0), "k", &["a".to_owned(), "b".to_owned()], "");
        assert_ne!(split.text(), joined.text());
    }
}
