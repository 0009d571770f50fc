//! Build script: with the `python` feature, emits the cfgs of the Python the build targets
//! (`Py_LIMITED_API`, `Py_GIL_DISABLED`, `Py_3_11`, …), as PyO3's own crates see them.

fn main() {
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
    #[cfg(not(feature = "python"))]
    for cfg in ["Py_LIMITED_API", "Py_GIL_DISABLED", "Py_3_11"] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
}
