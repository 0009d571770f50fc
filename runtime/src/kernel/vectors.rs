//! The vector instructions the CPU's element-wise walk is compiled for: the walk has one build per
//! [`CpuVectors`] level (on x86-64: the baseline's SSE2, AVX2 with FMA, AVX-512), the widest the
//! CPU has picked at run time, capped by `$DLSPAN_CPU_VECTORS` ([`VECTORS_ENV`]) or
//! [`set_max_cpu_vectors`]. Every build runs the same operations in the same order (no build
//! contracts `a * b + c`, and `mul_add` is fused on all), so every level computes the same bits;
//! the cap exists to compare them, and to keep a process off wide vectors (a CPU whose clock
//! drops under AVX-512, a profiler).

use std::sync::atomic::{AtomicU8, Ordering};

/// The environment variable that caps the CPU walk's vectors: `baseline`, `avx2` or `avx512`
/// (ASCII case ignored), read when the first call needs it. Any other value is ignored (no cap).
pub const VECTORS_ENV: &str = "DLSPAN_CPU_VECTORS";

/// A build of the CPU walk, by the widest vector instructions it is compiled for. Ordered from
/// the narrowest.
///
/// ```
/// use dlspan::kernel::{CpuVectors, cpu_vectors};
/// // The build element-wise kernels use on this CPU, at least the baseline.
/// assert!(cpu_vectors() >= CpuVectors::Baseline);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum CpuVectors {
    /// The target's baseline (on x86-64: SSE2, four `f32` lanes).
    Baseline,
    /// AVX2 and FMA (x86-64): eight `f32` lanes.
    Avx2,
    /// AVX-512 (F, VL, BW, DQ) with AVX2 and FMA (x86-64): sixteen `f32` lanes.
    Avx512,
}

impl CpuVectors {
    fn code(self) -> u8 {
        match self {
            Self::Baseline => 1,
            Self::Avx2 => 2,
            Self::Avx512 => 3,
        }
    }

    fn from_code(code: u8) -> Self {
        match code {
            3 => Self::Avx512,
            2 => Self::Avx2,
            _ => Self::Baseline,
        }
    }

    /// The widest build this CPU can run.
    ///
    /// ```
    /// use dlspan::kernel::{CpuVectors, cpu_vectors};
    /// assert!(cpu_vectors() <= CpuVectors::widest());
    /// ```
    pub fn widest() -> Self {
        detected()
    }
}

/// What the CPU has.
#[cfg(target_arch = "x86_64")]
fn detected() -> CpuVectors {
    let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
    let avx512 = std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512vl")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512dq");
    match (avx2, avx512) {
        (true, true) => CpuVectors::Avx512,
        (true, false) => CpuVectors::Avx2,
        _ => CpuVectors::Baseline,
    }
}

/// Off x86-64 the walk has one build.
#[cfg(not(target_arch = "x86_64"))]
fn detected() -> CpuVectors {
    CpuVectors::Baseline
}

/// The cap's code (0: not read yet).
static CAP: AtomicU8 = AtomicU8::new(0);

/// The cap [`VECTORS_ENV`] sets, if any.
fn from_env() -> Option<CpuVectors> {
    let value = std::env::var(VECTORS_ENV).ok()?;
    match value.trim().to_ascii_lowercase().as_str() {
        "baseline" => Some(CpuVectors::Baseline),
        "avx2" => Some(CpuVectors::Avx2),
        "avx512" => Some(CpuVectors::Avx512),
        _ => None,
    }
}

/// The build element-wise kernels on the CPU use now: the widest the CPU has
/// ([`CpuVectors::widest`]), at most the cap ([`VECTORS_ENV`], [`set_max_cpu_vectors`]).
///
/// ```
/// use dlspan::kernel::{CpuVectors, cpu_vectors, set_max_cpu_vectors};
/// set_max_cpu_vectors(CpuVectors::Baseline);
/// assert_eq!(cpu_vectors(), CpuVectors::Baseline);
/// set_max_cpu_vectors(CpuVectors::Avx512); // no cap: the widest the CPU has
/// assert_eq!(cpu_vectors(), CpuVectors::widest());
/// ```
#[inline]
pub fn cpu_vectors() -> CpuVectors {
    let mut code = CAP.load(Ordering::Relaxed);
    if code == 0 {
        let level = detected().min(from_env().unwrap_or(CpuVectors::Avx512));
        code = level.code();
        // A racing `set_max_cpu_vectors` wins: only an unread cap is replaced.
        if let Err(set) = CAP.compare_exchange(0, code, Ordering::Relaxed, Ordering::Relaxed) {
            code = set;
        }
    }
    CpuVectors::from_code(code)
}

/// Caps the build later calls use at `max` (the widest the CPU has where it has less): the same
/// bits at every level, so this changes speed only.
///
/// ```
/// use dlspan::kernel::{CpuVectors, cpu_vectors, set_max_cpu_vectors};
/// set_max_cpu_vectors(CpuVectors::Avx2);
/// assert!(cpu_vectors() <= CpuVectors::Avx2);
/// # set_max_cpu_vectors(CpuVectors::Avx512);
/// ```
pub fn set_max_cpu_vectors(max: CpuVectors) {
    CAP.store(detected().min(max).code(), Ordering::Relaxed);
}
