//! Shared helpers of the integration tests: locating a real `dlpack.h`, compiling C with gcc, and
//! running reference computations in Python.
//!
//! The header comes from the `apache-tvm-ffi` wheel on PyPI; `scripts/test.sh` downloads it into
//! `deps/include` of the target directory (honouring `CARGO_TARGET_DIR`) and sets
//! `DLSPAN_DLPACK_INCLUDE`. A plain `cargo test` without it skips the C tests with a message, unless
//! `DLSPAN_REQUIRE_DLPACK_H=1` turns the skip into a failure (the test command sets it, so CI never
//! passes by skipping). Likewise the reference Python (a virtual
//! environment with `ml_dtypes`, which the test command creates in `.venv`) is found through
//! `DLSPAN_PYTHON` or `.venv/bin/python`, and `DLSPAN_REQUIRE_ML_DTYPES=1` forbids skipping.
#![allow(dead_code, unreachable_pub)]

pub mod rng;
mod skip;

use skip::skip_or_fail;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The include directory holding `dlpack/dlpack.h`, or `None` (after printing why) to skip.
pub fn dlpack_include() -> Option<PathBuf> {
    // The target directory is the parent of this build's `CARGO_TARGET_TMPDIR` (`<target>/tmp`).
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().map(Path::to_path_buf);
    let candidates = std::env::var_os("DLSPAN_DLPACK_INCLUDE")
        .map(PathBuf::from)
        .into_iter()
        .chain(target_dir.map(|dir| dir.join("deps/include")));
    for dir in candidates {
        if dir.join("dlpack/dlpack.h").is_file() {
            return Some(dir);
        }
    }
    skip_or_fail(
        "no dlpack.h found: run scripts/test.sh (it fetches the header) or set DLSPAN_DLPACK_INCLUDE",
        "DLSPAN_REQUIRE_DLPACK_H",
    );
    None
}

/// The C compiler (`$CC` or `gcc`), or `None` (after printing why) to skip.
pub fn c_compiler() -> Option<String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".to_owned());
    match Command::new(&cc).arg("--version").output() {
        Ok(out) if out.status.success() => Some(cc),
        _ => {
            skip_or_fail(&format!("no C compiler `{cc}` found"), "DLSPAN_REQUIRE_DLPACK_H");
            None
        }
    }
}

/// A Python interpreter that imports `ml_dtypes` (and NumPy), or `None` (after printing why) to
/// skip.
pub fn ml_dtypes_python() -> Option<PathBuf> {
    let candidates = std::env::var_os("DLSPAN_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python")]);
    for python in candidates {
        let imports = Command::new(&python).args(["-c", "import ml_dtypes, numpy"]).output();
        if imports.is_ok_and(|out| out.status.success()) {
            return Some(python);
        }
    }
    skip_or_fail(
        "no Python with ml_dtypes found: run scripts/test.sh (it creates .venv) or set DLSPAN_PYTHON",
        "DLSPAN_REQUIRE_ML_DTYPES",
    );
    None
}

/// Runs `python` on a script of `tests/support` with `args`; panics with its output on failure.
pub fn run_python(python: &Path, script: &str, args: &[&Path]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support").join(script);
    let out = Command::new(python).arg(&script).args(args).output().expect("run Python");
    assert!(
        out.status.success(),
        "{} failed:\n{}{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh scratch directory for one test under the target directory.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Compiles `source` against the `dlpack.h` in `include` with `-std=c11 -Wall -Werror`, writing
/// `output`; `extra` adds flags and libraries after the source (`-c`, `-shared`, `-lm`, ...). Panics with the compiler's output on failure.
pub fn compile_c(cc: &str, include: &Path, source: &Path, output: &Path, extra: &[&str]) {
    let out = Command::new(cc)
        .args(["-std=c11", "-Wall", "-Werror"])
        .arg(format!("-I{}", include.display()))
        .arg(source)
        .arg("-o")
        .arg(output)
        .args(extra)
        .output()
        .expect("run the C compiler");
    assert!(
        out.status.success(),
        "C compilation failed: {cc} {extra:?} {}\n{}{}",
        source.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `DLTensor` under construction, owning its shape and strides arrays.
pub struct Crafted {
    pub data: *mut std::ffi::c_void,
    pub device: dlspan::ffi::DLDevice,
    pub ndim: i32,
    pub dtype: dlspan::ffi::DLDataType,
    pub shape: Option<Vec<i64>>,
    pub strides: Option<Vec<i64>>,
    pub byte_offset: u64,
}

impl Crafted {
    /// A CPU tensor of `T` over `data` with the given shape and strides.
    pub fn cpu<T: dlspan::DlElement>(data: *const T, shape: &[i64], strides: Option<&[i64]>) -> Self {
        Self {
            data: data as *mut std::ffi::c_void,
            device: dlspan::ffi::DLDevice { device_type: dlspan::ffi::DLDeviceType::kDLCPU, device_id: 0 },
            ndim: shape.len() as i32,
            dtype: T::DTYPE,
            shape: Some(shape.to_vec()),
            strides: strides.map(<[i64]>::to_vec),
            byte_offset: 0,
        }
    }

    /// The `DLTensor`, pointing into `self` for shape and strides.
    pub fn tensor(&mut self) -> dlspan::ffi::DLTensor {
        dlspan::ffi::DLTensor {
            data: self.data,
            device: self.device,
            ndim: self.ndim,
            dtype: self.dtype,
            shape: self.shape.as_mut().map_or(std::ptr::null_mut(), |s| s.as_mut_ptr()),
            strides: self.strides.as_mut().map_or(std::ptr::null_mut(), |s| s.as_mut_ptr()),
            byte_offset: self.byte_offset,
        }
    }
}

/// Every index of `extents` in row-major order, for views of at most `limit` elements.
pub fn indices<const R: usize>(extents: [usize; R], limit: usize) -> Vec<[usize; R]> {
    let size = if extents.contains(&0) {
        0
    } else {
        extents.iter().try_fold(1usize, |a, &e| a.checked_mul(e)).unwrap_or(usize::MAX)
    };
    if size > limit {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(size);
    let mut index = [0usize; R];
    for _ in 0..size {
        out.push(index);
        for axis in (0..R).rev() {
            index[axis] += 1;
            if index[axis] < extents[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    out
}
