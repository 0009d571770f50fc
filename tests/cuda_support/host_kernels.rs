//! A host build of generated kernel modules: the preamble and the modules' kernels compiled by the
//! C++ compiler with `DLSPAN_HOST` (kernels become functions; a grid loop runs every block and
//! thread in turn), loaded as a shared library.

use dlspan::cuda::KernelKind;
use dlspan::cuda::kernel::{IndexWidth, KernelShape, ModuleKey, Params};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct HostKernels {
    library: libloading::Library,
}

impl HostKernels {
    /// Builds every kernel of `modules` into one library in `dir`.
    pub fn build(cxx: &str, dir: &Path, modules: &[ModuleKey]) -> Self {
        let all: Vec<(ModuleKey, Vec<KernelShape>)> = modules.iter().map(|key| (*key, key.shapes())).collect();
        Self::build_shapes(cxx, dir, &all)
    }

    /// Builds the kernels of the given shapes of each module into one library in `dir`.
    pub fn build_shapes(cxx: &str, dir: &Path, modules: &[(ModuleKey, Vec<KernelShape>)]) -> Self {
        std::fs::create_dir_all(dir).expect("scratch dir");
        let mut source = String::from("#define DLSPAN_HOST 1\n");
        source.push_str(dlspan::cuda::kernel::preamble());
        for (key, shapes) in modules {
            source.push_str(&key.body_of(shapes));
            for &shape in shapes {
                for index in [IndexWidth::I32, IndexWidth::I64] {
                    let name = key.entry(shape, index);
                    // Kernels with barriers (tiled copies and casts, sums) run each phase for every
                    // thread themselves: called once per block.
                    let barriers = shape == KernelShape::Tiled || key.kind() == Some(KernelKind::Sum);
                    let threads = if barriers {
                        "blockIdx.x = b;"
                    } else {
                        "for (unsigned t = 0; t < block; ++t) { blockIdx.x = b; threadIdx.x = t;"
                    };
                    let close = if barriers { "" } else { " }" };
                    let _ = writeln!(
                        source,
                        "extern \"C\" void run_{name}(const dl_params* p, unsigned grid, unsigned block) {{\n\
                         \x20 gridDim.x = grid; blockDim.x = block;\n\
                         \x20 for (unsigned b = 0; b < grid; ++b) {{ {threads} {name}(*p);{close} }}\n}}"
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
    pub fn run(&self, entry: &str, params: &Params, grid: u32, block: u32) {
        type Runner = unsafe extern "C" fn(*const Params, u32, u32);
        // SAFETY: every `run_*` symbol of the library has the `Runner` signature (generated above).
        let runner = unsafe { self.library.get::<Runner>(format!("run_{entry}").as_bytes()) }.expect("kernel runner");
        // SAFETY: `params` addresses only memory of live buffers the caller validated as views.
        unsafe { runner(params, grid, block) };
    }
}
