//! Directories and files no other local user can reach (rule [K11](crate::rules#k11)): what the
//! kernel caches hold is code this process loads, so a directory is used only when nobody but
//! this user (and root) can write to it or to any directory above it, files are created
//! exclusively and never opened through a symbolic link, and the directories dlspan makes are
//! `0700`.
//!
//! The check is `ssh`'s `StrictModes`, made for a cache: the directory (resolved, so that no
//! symbolic link of its path can be swapped later) is owned by the process's effective user and
//! writable by nobody else; every directory above it is owned by that user or by root and writable
//! by nobody else, or is sticky (as `/tmp`) with the directory below it on the path owned by that
//! user or by root (in a sticky directory only a file's owner can rename or remove it).

use std::fs;
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

/// The effective user of the process.
#[cfg(unix)]
fn euid() -> u32 {
    // SAFETY: geteuid takes no argument, cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() }
}

/// Why `path` is not private to this user, or `None` when it is ([`check_private`]'s rule on one
/// directory): `meta` is the directory's own metadata (not followed through a link), `child_owner`
/// the owner of the directory below it on the path (`None` for the cache directory itself).
#[cfg(unix)]
fn refusal(meta: &fs::Metadata, me: u32, child_owner: Option<u32>) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let (owner, mode) = (meta.uid(), meta.mode());
    if !meta.is_dir() {
        return Some("it is not a directory".to_owned());
    }
    let writable_by_others = mode & 0o022 != 0;
    match child_owner {
        None if owner != me => Some(format!("it is owned by uid {owner}, not by this user (uid {me})")),
        None if writable_by_others => Some(format!("other users can write to it (mode {:o})", mode & 0o7777)),
        None => None,
        Some(_) if owner != me && owner != 0 => {
            Some(format!("a directory above it is owned by uid {owner}, neither this user (uid {me}) nor root"))
        }
        Some(child) if writable_by_others && (mode & 0o1000 == 0 || (child != me && child != 0)) => Some(format!(
            "other users can write to a directory above it (mode {:o}) and rename what is in it",
            mode & 0o7777
        )),
        Some(_) => None,
    }
}

/// Checks that `dir`, which exists, is private to this user (the module's rule), returning its
/// resolved path: the one to use from then on, whose every component was checked.
///
/// # Errors
///
/// [`Refused`] with the path and the reason.
pub(crate) fn check_private(dir: &Path) -> Result<PathBuf, Refused> {
    let refused = |path: &Path, reason: String| Refused { path: path.to_owned(), reason };
    let resolved = fs::canonicalize(dir).map_err(|e| refused(dir, e.to_string()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let me = euid();
        let mut child_owner = None;
        for component in resolved.ancestors() {
            let meta = fs::symlink_metadata(component).map_err(|e| refused(component, e.to_string()))?;
            if let Some(reason) = refusal(&meta, me, child_owner) {
                return Err(refused(dir, format!("{reason} ({})", component.display())));
            }
            child_owner = Some(meta.uid());
        }
    }
    Ok(resolved)
}

/// A directory refused as a cache, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    /// The directory asked for.
    pub(crate) path: PathBuf,
    /// Why it is not private.
    pub(crate) reason: String,
}

impl core::fmt::Display for Refused {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

/// Creates `dir` and the directories above it that are missing, each `0700`, then checks it
/// ([`check_private`]).
///
/// # Errors
///
/// [`Refused`]: the directory cannot be created, or is not private.
pub(crate) fn create_private(dir: &Path) -> Result<PathBuf, Refused> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| Refused { path: dir.to_owned(), reason: e.to_string() })?;
    check_private(dir)
}

/// The options of every file dlspan opens in a cache: never through a symbolic link, and (for a
/// FIFO or device planted there) without blocking.
fn options() -> fs::OpenOptions {
    #[allow(unused_mut)]
    let mut options = fs::OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    options
}

/// Creates `path`, which must not exist (not even as a dangling symbolic link), `0600`, writes
/// `bytes` to it and syncs it to the disk.
///
/// # Errors
///
/// The system's, `AlreadyExists` among them.
pub(crate) fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// The bytes of the regular file `path`, opened without following a symbolic link: `None` when
/// there is no such file, or when it is something else (a link, a directory, a FIFO), larger than
/// `max` bytes, or not owned by this user.
pub(crate) fn read_private(path: &Path, max: u64) -> Option<Vec<u8>> {
    let mut file = options().read(true).open(path).ok()?;
    let meta = file.metadata().ok()?;
    #[cfg(unix)]
    if std::os::unix::fs::MetadataExt::uid(&meta) != euid() {
        return None;
    }
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(usize::try_from(meta.len()).ok()?).ok()?;
    // One byte more than the length read: a file grown since is not taken whole.
    std::io::Read::by_ref(&mut file).take(max.saturating_add(1)).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= max).then_some(bytes)
}

/// Renames `from` over `to` (both in `dir`), then syncs `dir` so that the new name survives a
/// crash (best effort: a name lost in a crash is a cache miss, and the caches check every entry
/// they read).
///
/// # Errors
///
/// The rename's: then nothing moved.
pub(crate) fn publish(from: &Path, to: &Path, dir: &Path) -> io::Result<()> {
    fs::rename(from, to)?;
    // A directory is synced through a descriptor of it (read-only is enough on Unix); other
    // systems cannot open one, and their renames are durable as they are.
    #[cfg(unix)]
    let _ = fs::File::open(dir).and_then(|d| d.sync_all());
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// A fresh directory of this process, `0700`, made exclusively under a random name (as
/// `mkdtemp`), and removed with what it holds when dropped.
#[derive(Debug)]
pub(crate) struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// A new directory in `parent`, named `prefix` and random characters, checked private
    /// ([`check_private`]: in a shared parent such as `/tmp`, a directory of this user's own).
    ///
    /// # Errors
    ///
    /// [`Refused`] when it cannot be made, or is not private.
    pub(crate) fn new_in(parent: &Path, prefix: &str) -> Result<Self, Refused> {
        use std::hash::{BuildHasher as _, Hasher as _};
        use std::sync::atomic::{AtomicU64, Ordering};
        static SEQUENCE: AtomicU64 = AtomicU64::new(0);
        let refused = |reason: String| Refused { path: parent.to_owned(), reason };
        let mut builder = fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        for _ in 0..64 {
            // The standard library's random hash keys, the process, the time and a counter: a name
            // nobody can predict (and an existing one is only tried again).
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u32(std::process::id());
            hasher.write_u64(SEQUENCE.fetch_add(1, Ordering::Relaxed));
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            hasher.write_u128(nanos);
            let path = parent.join(format!("{prefix}{:016x}", hasher.finish()));
            match builder.create(&path) {
                Ok(()) => {
                    return match check_private(&path) {
                        Ok(resolved) => Ok(Self { path: resolved }),
                        Err(e) => {
                            let _ = fs::remove_dir(&path);
                            Err(refused(e.reason))
                        }
                    };
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(refused(e.to_string())),
            }
        }
        Err(refused("no fresh name for a temporary directory".to_owned()))
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt as _, symlink};

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dlspan-private-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn created_directories_are_0700_and_private() {
        use std::os::unix::fs::MetadataExt as _;
        let base = scratch("create");
        let dir = create_private(&base.join("a").join("b")).unwrap();
        for path in [base.join("a"), base.join("a").join("b")] {
            assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o700, "{}", path.display());
        }
        assert_eq!(dir, fs::canonicalize(base.join("a/b")).unwrap());
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_directory_others_can_write_is_refused_and_so_is_one_below_it() {
        let base = create_private(&scratch("mode")).unwrap();
        let shared = base.join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
        let error = check_private(&shared).unwrap_err();
        assert!(error.reason.contains("other users can write to it (mode 777)"), "{error}");
        // Below a directory others can write (not sticky): they could rename it away.
        let inner = shared.join("inner");
        fs::create_dir(&inner).unwrap();
        fs::set_permissions(&inner, fs::Permissions::from_mode(0o700)).unwrap();
        let error = check_private(&inner).unwrap_err();
        assert!(error.reason.contains("a directory above it (mode 777)"), "{error}");
        // Sticky, as /tmp: a directory of this user's own below it is fine.
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
        check_private(&inner).unwrap();
        // Group-writable counts as others.
        fs::set_permissions(&inner, fs::Permissions::from_mode(0o770)).unwrap();
        assert!(check_private(&inner).is_err());
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_link_is_resolved_and_its_target_checked() {
        let base = create_private(&scratch("link")).unwrap();
        let target = base.join("target");
        fs::create_dir(&target).unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o777)).unwrap();
        symlink(&target, base.join("link")).unwrap();
        assert!(check_private(&base.join("link")).is_err());
        fs::set_permissions(&target, fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(check_private(&base.join("link")).unwrap(), target);
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_directory_of_another_user_is_refused() {
        use std::os::unix::fs::MetadataExt as _;
        // Another uid's directory needs root to make (chown); other users get the same refusal
        // from the mode tests above.
        if euid() != 0 {
            eprintln!("skipped: making a directory of another user needs root (chown)");
            return;
        }
        let base = create_private(&scratch("owner")).unwrap();
        let foreign = base.join("foreign");
        fs::create_dir(&foreign).unwrap();
        std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
        assert_eq!(fs::metadata(&foreign).unwrap().uid(), 65534);
        let error = check_private(&foreign).unwrap_err();
        assert!(error.reason.contains("owned by uid 65534"), "{error}");
        // Above a directory of ours, another user's directory is refused too: its owner could
        // rename ours away.
        let ours = foreign.join("ours");
        fs::create_dir(&ours).unwrap();
        let error = check_private(&ours).unwrap_err();
        assert!(error.reason.contains("a directory above it is owned by uid 65534"), "{error}");
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn files_are_created_exclusively_never_through_a_link() {
        use std::os::unix::fs::MetadataExt as _;
        let base = create_private(&scratch("files")).unwrap();
        let victim = base.join("victim");
        fs::write(&victim, b"keep").unwrap();
        symlink(&victim, base.join("planted")).unwrap();
        // A planted link (or any file) at the name: refused, and the victim untouched.
        assert_eq!(write_new(&base.join("planted"), b"x").unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        symlink(base.join("absent"), base.join("dangling")).unwrap();
        assert!(write_new(&base.join("dangling"), b"x").is_err());
        assert!(!base.join("absent").exists());
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        // Reads do not follow links either.
        assert_eq!(read_private(&base.join("planted"), 100), None);
        assert_eq!(read_private(&victim, 100).as_deref(), Some(&b"keep"[..]));
        assert_eq!(read_private(&victim, 3), None, "larger than asked");
        write_new(&base.join("new"), b"bytes").unwrap();
        assert_eq!(fs::metadata(base.join("new")).unwrap().mode() & 0o777, 0o600);
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn temporary_directories_are_fresh_private_and_removed() {
        use std::os::unix::fs::MetadataExt as _;
        let base = create_private(&scratch("temp")).unwrap();
        let (a, b) = (TempDir::new_in(&base, "t-").unwrap(), TempDir::new_in(&base, "t-").unwrap());
        assert_ne!(a.path(), b.path());
        assert_eq!(fs::metadata(a.path()).unwrap().mode() & 0o777, 0o700);
        fs::write(a.path().join("file"), b"x").unwrap();
        let path = a.path().to_owned();
        drop(a);
        assert!(!path.exists());
        drop(b);
        // In a parent others can write (not sticky), the directory is refused and not left behind.
        fs::set_permissions(&base, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(TempDir::new_in(&base, "t-").is_err());
        assert_eq!(fs::read_dir(&base).unwrap().count(), 0);
        fs::remove_dir_all(&base).unwrap();
    }
}
