//! Build script: the target triple (`DLSPAN_TARGET`); with the `python` feature, the cfgs of the
//! Python the build targets (`Py_LIMITED_API`, `Py_GIL_DISABLED`, `Py_3_11`, …), as PyO3's own
//! crates see them.

fn main() {
    // The target triple, part of the key of the raw kernels the CPU builds (kernel::cxx): a cache
    // shared by machines of two architectures never loads the other's library.
    println!("cargo::rustc-env=DLSPAN_TARGET={}", std::env::var("TARGET").unwrap_or_default());
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
    #[cfg(not(feature = "python"))]
    for cfg in ["Py_LIMITED_API", "Py_GIL_DISABLED", "Py_3_11"] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
}
