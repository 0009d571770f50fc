//! Shared helpers of the CUDA tests: finding NVRTC and a C++ compiler, random layouts, element
//! values, and a host build of the generated kernels.
//!
//! `scripts/test.sh` installs the NVRTC wheel into `target/deps/nvrtc` and puts it on
//! `LD_LIBRARY_PATH`, and sets `DLSPAN_REQUIRE_NVRTC=1` so that CI never passes by skipping.
#![allow(dead_code, unreachable_pub)]

use dlspan::DlElement;
use dlspan::cuda::ModuleKey;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Prints why a tier is skipped, or fails when `variable=1` forbids skipping.
pub fn skip_or_fail(variable: &str, why: &str) {
    if std::env::var_os(variable).is_some_and(|v| v == "1") {
        panic!("{why} ({variable}=1 forbids skipping)");
    }
    eprintln!("skipped: {why}");
}

/// Whether NVRTC can be loaded (else prints why the test skips).
pub fn nvrtc_or_skip() -> bool {
    if dlspan::cuda::nvrtc_present() {
        return true;
    }
    skip_or_fail(
        "DLSPAN_REQUIRE_NVRTC",
        "NVRTC not found: run scripts/test.sh (it installs the nvidia-cuda-nvrtc wheel) or put libnvrtc.so.13 on LD_LIBRARY_PATH",
    );
    false
}

/// The C++ compiler (`$CXX` or `g++`), or `None` after printing why the test skips.
pub fn cxx_or_skip() -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_owned());
    match Command::new(&cxx).arg("--version").output() {
        Ok(out) if out.status.success() => Some(cxx),
        _ => {
            skip_or_fail("DLSPAN_REQUIRE_NVRTC", &format!("no C++ compiler `{cxx}` found"));
            None
        }
    }
}

/// A small deterministic generator (xorshift64*), seeded per test.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// One operand's memory: strides (elements), the offset of index 0 and the buffer length.
#[derive(Clone, Copy, Debug)]
pub struct Layout<const R: usize> {
    pub strides: [isize; R],
    pub offset: usize,
    pub len: usize,
}

/// A random layout of `extents`: a random axis order, gaps between axes, reversed axes, and for
/// inputs (`broadcast`) zero strides.
pub fn random_layout<const R: usize>(rng: &mut Rng, extents: [usize; R], broadcast: bool) -> Layout<R> {
    let mut order: Vec<usize> = (0..R).collect();
    for i in (1..R).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut strides = [0isize; R];
    let mut step = 1isize;
    let contiguous = rng.chance(35);
    for &axis in order.iter().rev() {
        if broadcast && rng.chance(20) {
            continue;
        }
        strides[axis] = step;
        let gap = if contiguous { 0 } else { rng.below(3) as isize };
        step *= extents[axis] as isize + gap;
    }
    let mut offset = 0usize;
    for axis in 0..R {
        if !contiguous && rng.chance(25) && strides[axis] != 0 {
            offset += (extents[axis] - 1) * strides[axis] as usize;
            strides[axis] = -strides[axis];
        }
    }
    let high: usize = (0..R).filter(|&a| strides[a] > 0).map(|a| (extents[a] - 1) * strides[a] as usize).sum();
    // A random lead before the first element, so addresses are not always aligned the same way.
    let lead = if contiguous { rng.below(2) * 8 } else { rng.below(3) };
    Layout { strides, offset: offset + lead, len: lead + offset + high + 1 + rng.below(3) }
}

/// Random extents of rank `R`, each `1..=max`.
pub fn random_extents<const R: usize>(rng: &mut Rng, max: usize) -> [usize; R] {
    core::array::from_fn(|_| 1 + rng.below(max))
}

/// Element values for tests: random values (finite for floats, so arithmetic results do not
/// depend on NaN propagation, which the hardware defines) and a bitwise view for comparing.
pub trait TestElement: DlElement + core::fmt::Debug {
    fn random(rng: &mut Rng) -> Self;
}

macro_rules! int_elements {
    ($($t:ty),*) => {$(
        impl TestElement for $t {
            fn random(rng: &mut Rng) -> Self {
                // Small values half the time (exact arithmetic), any bits otherwise (wrapping).
                if rng.chance(50) { (rng.below(200) as i64 - 100) as $t } else { rng.next_u64() as $t }
            }
        }
    )*};
}
int_elements!(i8, i16, i32, i64, u8, u16, u32, u64);

impl TestElement for bool {
    fn random(rng: &mut Rng) -> Self {
        rng.chance(50)
    }
}

impl TestElement for f32 {
    fn random(rng: &mut Rng) -> Self {
        loop {
            let v = if rng.chance(50) {
                (rng.below(2001) as f32 - 1000.0) / 8.0
            } else {
                f32::from_bits(rng.next_u64() as u32)
            };
            if v.is_finite() {
                return v;
            }
        }
    }
}

impl TestElement for f64 {
    fn random(rng: &mut Rng) -> Self {
        loop {
            let v =
                if rng.chance(50) { (rng.below(2001) as f64 - 1000.0) / 8.0 } else { f64::from_bits(rng.next_u64()) };
            if v.is_finite() {
                return v;
            }
        }
    }
}

impl TestElement for dlspan::half::f16 {
    fn random(rng: &mut Rng) -> Self {
        loop {
            let v = dlspan::half::f16::from_bits(rng.next_u64() as u16);
            if v.is_finite() {
                return v;
            }
        }
    }
}

impl TestElement for dlspan::half::bf16 {
    fn random(rng: &mut Rng) -> Self {
        loop {
            let v = dlspan::half::bf16::from_bits(rng.next_u64() as u16);
            if v.is_finite() {
                return v;
            }
        }
    }
}

/// Element types any of whose byte patterns is a valid value: random bytes.
macro_rules! byte_elements {
    ($($t:ty),*) => {$(
        impl TestElement for $t {
            fn random(rng: &mut Rng) -> Self {
                let mut value = <$t>::default();
                // SAFETY: every byte pattern is a valid value of this plain-bits type.
                let bytes = unsafe {
                    core::slice::from_raw_parts_mut((&mut value as *mut $t).cast::<u8>(), core::mem::size_of::<$t>())
                };
                for b in bytes {
                    *b = rng.next_u64() as u8;
                }
                value
            }
        }
    )*};
}
byte_elements!(
    dlspan::dtype::Float8E4m3fn,
    dlspan::dtype::Float8E5m2,
    dlspan::dtype::F32x4,
    dlspan::dtype::F64x4,
    dlspan::dtype::U8x4,
    dlspan::dtype::I16x2,
    dlspan::dtype::Float6E2m3fnX4
);

/// Arithmetic as the kernels define it: wrapping integers, one rounding per float operation.
pub trait Arith: TestElement {
    fn add(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
}

macro_rules! wrapping {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(self, other: Self) -> Self { self.wrapping_add(other) }
            fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
        }
    )*};
}
wrapping!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! rounding {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(self, other: Self) -> Self { self + other }
            fn mul(self, other: Self) -> Self { self * other }
        }
    )*};
}
rounding!(f32, f64, dlspan::half::f16, dlspan::half::bf16);

/// The bytes of a slice of elements.
pub fn bytes<T: DlElement>(values: &[T]) -> &[u8] {
    // SAFETY: element types have no padding bytes: the slice's bytes are initialised.
    unsafe { core::slice::from_raw_parts(values.as_ptr().cast::<u8>(), core::mem::size_of_val(values)) }
}

/// A host build of generated kernel modules: the preamble and the modules' bodies compiled by the
/// C++ compiler with `DLSPAN_HOST` (kernels become functions, a grid loop runs every block and
/// thread in turn), loaded as a shared library.
pub struct HostKernels {
    library: libloading::Library,
}

impl HostKernels {
    /// Builds `modules` into one library in `dir`.
    pub fn build(cxx: &str, dir: &Path, modules: &[ModuleKey]) -> Self {
        let mut source = String::from("#define DLSPAN_HOST 1\n");
        source.push_str(dlspan::cuda::preamble());
        for key in modules {
            source.push_str(&key.body());
            for shape in key.shapes() {
                for index in [dlspan::cuda::IndexWidth::U32, dlspan::cuda::IndexWidth::U64] {
                    let name = key.entry(shape, index);
                    let _ = writeln!(
                        source,
                        "extern \"C\" void run_{name}(const dl_params* p, unsigned grid, unsigned block) {{\n\
                         \x20 gridDim.x = grid; blockDim.x = block;\n\
                         \x20 for (unsigned b = 0; b < grid; ++b) for (unsigned t = 0; t < block; ++t) {{\n\
                         \x20   blockIdx.x = b; threadIdx.x = t; {name}(*p);\n  }}\n}}"
                    );
                }
            }
        }
        let src = dir.join("kernels.cpp");
        std::fs::write(&src, &source).expect("write the host kernel source");
        let lib: PathBuf = dir.join("libkernels.so");
        let out = Command::new(cxx)
            .args(["-std=c++17", "-O1", "-ffp-contract=off", "-fno-strict-aliasing", "-shared", "-fPIC", "-w"])
            .arg(&src)
            .arg("-o")
            .arg(&lib)
            .output()
            .expect("run the C++ compiler");
        assert!(
            out.status.success(),
            "host build of the kernels failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // SAFETY: the library was just built from the generated source; its initialisers are
        // plain static data.
        let library = unsafe { libloading::Library::new(&lib) }.expect("load the host kernels");
        Self { library }
    }

    /// Runs the kernel `entry` over `grid` blocks of `block` threads with `params`.
    pub fn run(&self, entry: &str, params: &dlspan::cuda::Params, grid: u32, block: u32) {
        type Runner = unsafe extern "C" fn(*const dlspan::cuda::Params, u32, u32);
        // SAFETY: every `run_*` symbol of the library has the `Runner` signature (generated above).
        let runner = unsafe { self.library.get::<Runner>(format!("run_{entry}").as_bytes()) }.expect("kernel runner");
        // SAFETY: `params` addresses only memory of live buffers the caller validated as views.
        unsafe { runner(params, grid, block) };
    }
}
