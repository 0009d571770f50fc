//! Raw kernels ([`kernel!`](crate::kernel!)): what the macro records of a kernel ([`RawDef`]),
//! one instantiation ([`RawInstance`]: element types, and each view's layout and static extents),
//! the launch configuration ([`LaunchConfig`]), the argument block both targets read, the C++
//! source of a module for NVRTC or the host compiler, and [`KernelError`].

use super::ctype::ElementType;
use super::def::TypeInfo;
use crate::error::{DlpackError, LayoutKind};
use crate::view::{Extents, Layout, Mdspan, MdspanMut};
use core::fmt;
use core::fmt::Write as _;
use core::hash::{Hash, Hasher};

/// The device header every raw kernel is compiled with (`dlspan.cuh`): the views (`dl::view`),
/// dynamic shared memory (`dl::shared_memory<T>()`), the element storage types (`dl_f16`,
/// `dl_bf16`, ..) and their conversions (`dl::to_float`, `dl::from_float<T>`), and the CPU build
/// (`-DDLSPAN_CPU`). Include it in your own CUDA files to use the same types; it is also the
/// file `dlspan.cuh` of [`INCLUDE_DIR`].
///
/// ```
/// assert!(dlspan::kernel::HEADER.contains("namespace dl {"));
/// assert!(dlspan::kernel::HEADER.contains("struct view"));
/// ```
pub const HEADER: &str = include_str!("../cuda/include/dlspan.cuh");

/// The directory holding [`HEADER`] as `dlspan.cuh`, for `-I` options of nvcc or a host compiler
/// (a path in this crate's sources).
///
/// ```
/// let path = std::path::Path::new(dlspan::kernel::INCLUDE_DIR).join("dlspan.cuh");
/// assert_eq!(std::fs::read_to_string(path).unwrap(), dlspan::kernel::HEADER);
/// ```
pub const INCLUDE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cuda/include");

/// The most bytes of a raw kernel's arguments (views and scalars): CUDA's limit on a kernel's
/// parameters.
///
/// ```
/// assert_eq!(dlspan::kernel::MAX_ARGUMENT_BYTES, 4096);
/// ```
pub const MAX_ARGUMENT_BYTES: usize = 4096;

/// The most axes of a raw kernel's view parameter.
///
/// ```
/// assert_eq!(dlspan::kernel::MAX_RAW_RANK, 16);
/// ```
pub const MAX_RAW_RANK: usize = 16;

/// The most dynamic shared memory of a launch ([`LaunchConfig::shared_bytes`]): 48 KiB, what every
/// CUDA device gives without opting in.
///
/// ```
/// assert_eq!(dlspan::kernel::MAX_SHARED_BYTES, 48 * 1024);
/// ```
pub const MAX_SHARED_BYTES: u32 = 48 * 1024;

/// Why a raw kernel did not run.
///
/// ```
/// use dlspan::kernel::{KernelError, LaunchConfig};
/// let error = LaunchConfig::new([1, 1, 1], [2048, 1, 1]).check().unwrap_err();
/// assert!(matches!(error, KernelError::InvalidLaunch { .. }));
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelError {
    /// A view argument was refused (its shape, or a view of another kind).
    View(DlpackError),
    /// No host C++ compiler was found to run a raw kernel on the CPU.
    CompilerMissing {
        /// The compilers looked for (`$CXX`, then `c++` and `g++`).
        tried: String,
    },
    /// The host C++ compiler refused the kernel (its log names the kernel's lines).
    Compile {
        /// The kernel and its instantiation.
        kernel: String,
        /// The compiler's output.
        log: String,
    },
    /// The compiled kernel could not be written, loaded or found in its library.
    Load {
        /// The library.
        library: String,
        /// What failed.
        message: String,
    },
    /// The arguments do not fit [`MAX_ARGUMENT_BYTES`].
    ArgumentsTooLarge {
        /// Their size in bytes.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The launch configuration is not one CUDA accepts.
    InvalidLaunch {
        /// What is wrong.
        reason: String,
    },
    /// The CPU could not allocate the threads' stacks (or their guard pages: each is a mapping of
    /// its own, within the system's `vm.max_map_count`) or the shared memory of a launch.
    OutOfMemory,
    /// On the CPU, threads of one block waited at different `__syncthreads()` (a barrier in
    /// divergent code: undefined on a GPU, where it hangs or pairs barriers that do not belong
    /// together). The launch stopped; what the block wrote until then stays written.
    DivergentBarrier {
        /// The kernel and its instantiation.
        kernel: String,
        /// The file of the kernel's body (the Rust file, or the `.cu` file it includes).
        file: String,
        /// The block (x, y, z).
        block: [u32; 3],
        /// Two of its threads (x, y, z) that waited at different barriers.
        threads: [[u32; 3]; 2],
        /// The lines of `file` of their barriers.
        lines: [u32; 2],
    },
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::View(e) => write!(f, "{e}"),
            Self::CompilerMissing { tried } => write!(
                f,
                "no C++ compiler to run a raw kernel on the CPU (tried {tried}): install g++ or clang++ \
                 (e.g. `apt-get install g++`), or name one in $CXX"
            ),
            Self::Compile { kernel, log } => write!(f, "raw kernel {kernel} did not compile for the CPU:\n{log}"),
            Self::Load { library, message } => write!(f, "raw kernel library {library}: {message}"),
            Self::ArgumentsTooLarge { size, max } => {
                write!(f, "raw kernel arguments take {size} bytes, above the limit of {max}")
            }
            Self::InvalidLaunch { reason } => write!(f, "invalid launch configuration: {reason}"),
            Self::OutOfMemory => f.write_str(
                "could not allocate the stacks (or their guard pages: vm.max_map_count) or the shared memory of a CPU launch",
            ),
            Self::DivergentBarrier { kernel, file, block, threads, lines } => write!(
                f,
                "raw kernel {kernel}: in block {block:?}, thread {:?} waits at the __syncthreads() of {file}:{} and \
                 thread {:?} at the one of {file}:{} (a barrier must be reached by every thread of a block, or by \
                 none: on a GPU this hangs or misbehaves)",
                threads[0], lines[0], threads[1], lines[1]
            ),
        }
    }
}

impl std::error::Error for KernelError {}

impl From<DlpackError> for KernelError {
    fn from(e: DlpackError) -> Self {
        Self::View(e)
    }
}

/// How a raw kernel's parameter is passed.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RawKind {
    /// A scalar by value.
    Scalar,
    /// A view the kernel reads (`x: &[T; R]`): `const` elements in C++.
    Read,
    /// A view the kernel may write (`out: &mut [T; R]`).
    Write,
}

/// One parameter of a raw kernel.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RawParam {
    /// The name in the signature (and in the C++ body).
    pub name: &'static str,
    /// How it is passed.
    pub kind: RawKind,
    /// The rank of a view (0 for scalars).
    pub rank: usize,
    /// Its element type, as an index into the instantiation's types.
    pub ty: usize,
}

/// A raw kernel as `kernel!` records it: its parameters, the C++ body and where it is declared.
/// One `static` per kernel, so its address identifies it.
#[doc(hidden)]
#[derive(Debug)]
pub struct RawDef {
    /// The kernel's name.
    pub name: &'static str,
    /// The Rust file that declares it.
    pub file: &'static str,
    /// The line of its declaration: the line of its `fn` (not of the macro's name, which may be
    /// lines above, after doc comments and attributes).
    pub line: u32,
    /// The parameters, in declaration order.
    pub params: &'static [RawParam],
    /// For each type the signature names: the name of its C++ template parameter when it is one of
    /// the kernel's type parameters, `None` for a concrete type.
    pub types: &'static [Option<&'static str>],
    /// The CUDA C++ body.
    pub source: &'static str,
    /// The file the body's lines belong to (the Rust file, or the `.cu` file of `include_str!`).
    pub body_file: &'static str,
    /// The line of `body_file` where the body starts.
    pub body_line: u32,
}

impl RawDef {
    /// The path of the body's file: the Rust file, or the `.cu` file of `include_str!` beside it.
    pub fn body_path(&self) -> String {
        let body = std::path::Path::new(self.body_file);
        if self.body_file == self.file || body.is_absolute() {
            return self.body_file.to_owned();
        }
        match std::path::Path::new(self.file).parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.join(body).display().to_string(),
            _ => self.body_file.to_owned(),
        }
    }
}

impl PartialEq for RawDef {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self, other)
    }
}

impl Eq for RawDef {}

impl Hash for RawDef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self as *const Self).hash(state);
    }
}

/// A view parameter's type as the C++ body sees it: the layout and each axis's static extent.
///
/// ```
/// use dlspan::kernel::ViewType;
/// use dlspan::{HostMdspan, LayoutLeft};
/// let t = ViewType::of::<HostMdspan<'_, f32, 2, LayoutLeft>, 2>();
/// assert_eq!(t.cpp("float"), "dl::view<float, 2, dl::layout_left, dl::dyn, dl::dyn>");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ViewType {
    /// The layout.
    pub layout: LayoutKind,
    /// Each axis's static extent (`None`: dynamic).
    pub statics: &'static [Option<usize>],
}

impl ViewType {
    /// The view type of `V`, a view of rank `R`.
    pub const fn of<V: RawView<R>, const R: usize>() -> Self {
        Self { layout: V::LAYOUT, statics: V::STATIC }
    }

    /// The C++ type of the view with elements `elem` (`const float` for a shared view).
    pub fn cpp(&self, elem: &str) -> String {
        let layout = match self.layout {
            LayoutKind::Right => "dl::layout_right",
            LayoutKind::Left => "dl::layout_left",
            LayoutKind::Stride | LayoutKind::StrideRelaxed => "dl::layout_stride",
        };
        let mut s = format!("dl::view<{elem}, {}, {layout}", self.statics.len());
        for e in self.statics {
            match e {
                Some(n) => write!(s, ", {n}").expect("a string"),
                None => s.push_str(", dl::dyn"),
            }
        }
        s.push('>');
        s
    }
}

/// A view type a raw kernel takes for a view parameter of rank `R`: dlspan's views of rank `R`,
/// whose layout and static extents become the C++ view's.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a view of rank {R}",
    label = "the kernel declares this parameter as a view of rank {R}",
    note = "raw kernels take dlspan's views (`Mdspan`, `MdspanMut`) of exactly the rank they declare"
)]
pub trait RawView<const R: usize>: seal::Sealed {
    /// The layout.
    const LAYOUT: LayoutKind;
    /// Each axis's static extent.
    const STATIC: &'static [Option<usize>];
}

mod seal {
    /// Seals [`RawView`](super::RawView): dlspan's views only.
    pub trait Sealed {}
}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: crate::space::MemorySpace> seal::Sealed
    for Mdspan<'_, T, R, E, L, S>
{
}
impl<T, const R: usize, E: Extents<R>, L: Layout, S: crate::space::MemorySpace> seal::Sealed
    for MdspanMut<'_, T, R, E, L, S>
{
}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: crate::space::MemorySpace> RawView<R>
    for Mdspan<'_, T, R, E, L, S>
{
    const LAYOUT: LayoutKind = L::KIND;
    const STATIC: &'static [Option<usize>] = &E::STATIC;
}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: crate::space::MemorySpace> RawView<R>
    for MdspanMut<'_, T, R, E, L, S>
{
    const LAYOUT: LayoutKind = L::KIND;
    const STATIC: &'static [Option<usize>] = &E::STATIC;
}

/// One instantiation of a raw kernel: its element types (one per type the signature names) and
/// each view parameter's type. The CUDA tiers compile the module of each; the CPU builds a library
/// of each.
///
/// ```
/// use dlspan::kernel::{RawInstance, ViewType};
/// use dlspan::{HostMdspan, HostMdspanMut};
/// dlspan::kernel! {
///     fn copy<T>(x: &[T; 1], out: &mut [T; 1]) {
///         r#"for (dl::index_t i = 0; i < x.extent(0); ++i) out(i) = x(i);"#
///     }
/// }
/// const VIEWS: &[ViewType] =
///     &[ViewType::of::<HostMdspan<'static, u8, 1>, 1>(), ViewType::of::<HostMdspanMut<'static, u8, 1>, 1>()];
/// let instance: RawInstance = copy::instance::<u8>(VIEWS);
/// assert!(instance.source_cpu().contains("dl::view<const T, 1, dl::layout_right, dl::dyn> x"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RawInstance {
    def: &'static RawDef,
    types: &'static [TypeInfo],
    views: &'static [ViewType],
}

impl PartialEq for RawInstance {
    fn eq(&self, other: &Self) -> bool {
        self.def == other.def && self.types == other.types && self.views == other.views
    }
}

impl Eq for RawInstance {}

impl Hash for RawInstance {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.def.hash(state);
        self.types.hash(state);
        self.views.hash(state);
    }
}

impl fmt::Display for RawInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}<", self.def.name)?;
        for (k, t) in self.types.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{t}")?;
        }
        f.write_str(">")
    }
}

/// Which compiler a module's source is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Cuda,
    Cpu,
}

impl RawInstance {
    /// The instantiation of `def` with `types` and `views`.
    ///
    /// # Panics
    ///
    /// When `types` or `views` do not match the kernel's signature (`kernel!` builds them so).
    pub fn new(def: &'static RawDef, types: &'static [TypeInfo], views: &'static [ViewType]) -> Self {
        assert_eq!(types.len(), def.types.len(), "one type per type kernel `{}` names", def.name);
        let ranks = def.params.iter().filter(|p| p.kind != RawKind::Scalar).map(|p| p.rank);
        assert!(
            ranks.clone().eq(views.iter().map(|v| v.statics.len())),
            "one view type of the declared rank per view of kernel `{}`",
            def.name
        );
        Self { def, types, views }
    }

    /// The kernel.
    pub fn def(&self) -> &'static RawDef {
        self.def
    }

    /// The element types.
    pub fn types(&self) -> &'static [TypeInfo] {
        self.types
    }

    /// The view types, in declaration order.
    pub fn views(&self) -> &'static [ViewType] {
        self.views
    }

    /// The name of the CUDA kernel of this instantiation's module.
    ///
    /// ```
    /// dlspan::kernel! { fn zero(out: &mut [f32; 1]) { r#"out(threadIdx.x) = 0.0f;"# } }
    /// const VIEWS: &[dlspan::kernel::ViewType] = &[dlspan::kernel::ViewType::of::<dlspan::HostMdspanMut<'static, f32, 1>, 1>()];
    /// assert_eq!(zero::instance(VIEWS).entry(), "dlspan_raw_zero");
    /// ```
    pub fn entry(&self) -> String {
        format!("dlspan_raw_{}", self.def.name)
    }

    /// The offset of each parameter in the argument block (declaration order) and the block's size
    /// (a multiple of 16, at least 16): a view is its first element's address, then its extents,
    /// then its strides (8 bytes each, at a multiple of 8); a scalar is its bytes, at a multiple of
    /// its alignment.
    ///
    /// # Errors
    ///
    /// [`KernelError::ArgumentsTooLarge`] above [`MAX_ARGUMENT_BYTES`].
    pub fn argument_layout(&self) -> Result<(Vec<usize>, usize), KernelError> {
        let mut end = 0usize;
        let mut offsets = Vec::with_capacity(self.def.params.len());
        for p in self.def.params {
            let (align, size) = match p.kind {
                RawKind::Scalar => {
                    let t = self.types[p.ty];
                    (t.align.clamp(1, 16), t.size)
                }
                RawKind::Read | RawKind::Write => (8, 8 + 16 * p.rank),
            };
            let offset = end.next_multiple_of(align);
            offsets.push(offset);
            end = offset + size;
        }
        let size = end.next_multiple_of(16).max(16);
        if size > MAX_ARGUMENT_BYTES {
            return Err(KernelError::ArgumentsTooLarge { size, max: MAX_ARGUMENT_BYTES });
        }
        Ok((offsets, size))
    }

    /// The CUDA C++ source of the module NVRTC compiles: the header, the body as a function
    /// template over the kernel's type parameters, and one `extern "C" __global__` kernel
    /// ([`entry`](Self::entry)) taking the argument block by value.
    ///
    /// # Errors
    ///
    /// As [`argument_layout`](Self::argument_layout).
    pub fn source_cuda(&self) -> Result<String, KernelError> {
        self.source(Target::Cuda)
    }

    /// The C++ source of the library the host compiler builds (`-DDLSPAN_CPU`): the same body, and
    /// `extern "C" int dlspan_raw_launch(const dl_cpu_launch*, const void* args)`, which runs the
    /// grid.
    pub fn source_cpu(&self) -> String {
        // A layout too large for a launch still has a source (the launch refuses it).
        self.source(Target::Cpu).unwrap_or_default()
    }

    fn source(&self, target: Target) -> Result<String, KernelError> {
        let (offsets, size) = self.argument_layout()?;
        let def = self.def;
        let ns = format!("dlspan_raw_ns_{}", def.name);
        let mut s = String::with_capacity(HEADER.len() + def.source.len() + 2048);
        if target == Target::Cpu {
            s.push_str("#define DLSPAN_CPU 1\n");
        }
        // The compilers' notes into the shipped header name it (the file compiled is a temporary
        // one, deleted after), and the glue generated around the body names itself.
        s.push_str("#line 1 \"dlspan.cuh\"\n");
        s.push_str(HEADER);
        s.push_str("\n#line 1 \"dlspan-generated-launch-code\"\n");
        let c_names: Vec<String> = self.types.iter().map(|t| ElementType::from(*t).c_name()).collect();
        // The body's parameters, with the kernel's type parameters as C++ template parameters.
        let elem = |ty: usize| def.types[ty].map_or_else(|| c_names[ty].clone(), str::to_owned);
        let mut params = Vec::new();
        let mut views = self.views.iter();
        for p in def.params {
            let ty = elem(p.ty);
            params.push(match p.kind {
                RawKind::Scalar => format!("{ty} {}", p.name),
                RawKind::Read => format!("{} {}", views.next().expect("checked").cpp(&format!("const {ty}")), p.name),
                RawKind::Write => format!("{} {}", views.next().expect("checked").cpp(&ty), p.name),
            });
        }
        let generic: Vec<(usize, &str)> =
            def.types.iter().enumerate().filter_map(|(k, name)| name.map(|n| (k, n))).collect();
        let _ = writeln!(s, "\nnamespace {ns} {{");
        if !generic.is_empty() {
            let names: Vec<String> = generic.iter().map(|(_, n)| format!("class {n}")).collect();
            let _ = writeln!(s, "template <{}>", names.join(", "));
        }
        let _ = writeln!(s, "DL_MEMBER void body({}) {{", params.join(", "));
        let _ = writeln!(s, "#line {} \"{}\"", def.body_line, def.body_path().replace('\\', "/"));
        s.push_str(def.source);
        // The generated code after the body is the module's own again.
        let line = s.matches('\n').count() + 3;
        let _ = writeln!(s, "\n#line {line} \"{}.cu\"\n}}\n}}  // namespace {ns}", self.entry());
        // The call of the body from an argument block.
        let args_of = |b: &str| {
            let mut views = self.views.iter();
            def.params
                .iter()
                .zip(&offsets)
                .map(|(p, off)| {
                    let ty = &c_names[p.ty];
                    match p.kind {
                        RawKind::Scalar => format!("dl::load_scalar<{ty} >({b} + {off})"),
                        RawKind::Read => {
                            format!(
                                "dl::load_view<{} >({b} + {off})",
                                views.next().expect("checked").cpp(&format!("const {ty}"))
                            )
                        }
                        RawKind::Write => {
                            format!("dl::load_view<{} >({b} + {off})", views.next().expect("checked").cpp(ty))
                        }
                    }
                })
                .collect::<Vec<_>>()
                .join(",\n      ")
        };
        let instantiation = if generic.is_empty() {
            String::new()
        } else {
            let names: Vec<&str> = generic.iter().map(|(k, _)| c_names[*k].as_str()).collect();
            format!("<{} >", names.join(", "))
        };
        match target {
            Target::Cuda => {
                let _ = writeln!(
                    s,
                    "extern \"C\" __global__ void {}(dl::args<{size}> a) {{\n  {ns}::body{instantiation}(\n      {});\n}}",
                    self.entry(),
                    args_of("a.b")
                );
            }
            Target::Cpu => {
                let _ = writeln!(
                    s,
                    "static void dlspan_raw_entry(const void* p) {{\n  const unsigned char* b = (const unsigned char*)p;\n  \
                     {ns}::body{instantiation}(\n      {});\n}}\n\
                     extern \"C\" __attribute__((visibility(\"default\"))) int dlspan_raw_launch(const dl_cpu_launch* l, const void* args) {{\n  \
                     return dl_cpu_run_kernel(l, dlspan_raw_entry, args);\n}}",
                    args_of("b")
                );
            }
        }
        Ok(s)
    }
}

/// How a raw kernel is launched: the grid of blocks, the threads of a block, and the dynamic
/// shared memory of each block (`dl::shared_memory<T>()`). `x` is the fastest axis: the helpers
/// map the last axis of an extent to `x`.
///
/// ```
/// use dlspan::kernel::LaunchConfig;
/// let c = LaunchConfig::for_elements(1000, 256)?;
/// assert_eq!((c.grid, c.block), ([4, 1, 1], [256, 1, 1]));
/// let c = LaunchConfig::for_extent_2d([100, 50], [16, 32])?; // rows by y, columns by x
/// assert_eq!((c.grid, c.block), ([2, 7, 1], [32, 16, 1]));
/// # Ok::<(), dlspan::kernel::KernelError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks along x, y and z.
    pub grid: [u32; 3],
    /// Threads of a block along x, y and z.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// A grid of `grid` blocks of `block` threads, without dynamic shared memory.
    pub const fn new(grid: [u32; 3], block: [u32; 3]) -> Self {
        Self { grid, block, shared_bytes: 0 }
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    ///
    /// ```
    /// let c = dlspan::kernel::LaunchConfig::new([1, 1, 1], [64, 1, 1]).with_shared_bytes(256);
    /// assert_eq!(c.shared_bytes, 256);
    /// ```
    pub const fn with_shared_bytes(self, bytes: u32) -> Self {
        Self { shared_bytes: bytes, ..self }
    }

    /// Blocks of `block` threads along x covering `n` elements (the last block partly).
    ///
    /// # Errors
    ///
    /// [`KernelError::InvalidLaunch`] for a block of 0 or more than 1024 threads, or more blocks
    /// than a grid's x holds.
    pub fn for_elements(n: usize, block: u32) -> Result<Self, KernelError> {
        let c = Self::new([blocks(n, block, GRID_X)?, 1, 1], [block, 1, 1]);
        c.check_block()?;
        Ok(c)
    }

    /// Blocks of `block` (`[y, x]`) threads covering a 2-D `extent` (`[rows, columns]`): columns
    /// along x, rows along y.
    ///
    /// # Errors
    ///
    /// As [`for_elements`](Self::for_elements), per axis.
    pub fn for_extent_2d(extent: [usize; 2], block: [u32; 2]) -> Result<Self, KernelError> {
        let c = Self::new(
            [blocks(extent[1], block[1], GRID_X)?, blocks(extent[0], block[0], GRID_YZ)?, 1],
            [block[1], block[0], 1],
        );
        c.check_block()?;
        Ok(c)
    }

    /// Blocks of `block` (`[z, y, x]`) threads covering a 3-D `extent`: its last axis along x.
    ///
    /// ```
    /// let c = dlspan::kernel::LaunchConfig::for_extent_3d([3, 20, 70], [1, 8, 32])?;
    /// assert_eq!((c.grid, c.block), ([3, 3, 3], [32, 8, 1]));
    /// # Ok::<(), dlspan::kernel::KernelError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`for_elements`](Self::for_elements), per axis.
    pub fn for_extent_3d(extent: [usize; 3], block: [u32; 3]) -> Result<Self, KernelError> {
        let c = Self::new(
            [
                blocks(extent[2], block[2], GRID_X)?,
                blocks(extent[1], block[1], GRID_YZ)?,
                blocks(extent[0], block[0], GRID_YZ)?,
            ],
            [block[2], block[1], block[0]],
        );
        c.check_block()?;
        Ok(c)
    }

    /// The number of threads of a block.
    pub const fn threads_per_block(&self) -> u64 {
        self.block[0] as u64 * self.block[1] as u64 * self.block[2] as u64
    }

    /// The number of blocks.
    pub const fn blocks(&self) -> u64 {
        self.grid[0] as u64 * self.grid[1] as u64 * self.grid[2] as u64
    }

    fn check_block(&self) -> Result<(), KernelError> {
        let invalid = |reason: String| Err(KernelError::InvalidLaunch { reason });
        let threads = self.threads_per_block();
        if threads == 0 || threads > 1024 {
            return invalid(format!("a block of {threads} threads (1 to 1024)"));
        }
        if self.block[2] > 64 {
            return invalid(format!("a block of {} threads along z (at most 64)", self.block[2]));
        }
        Ok(())
    }

    /// Checks the configuration against CUDA's limits: 1 to 1024 threads per block (at most 64
    /// along z), at most 2³¹−1 blocks along x and 65535 along y and z, at most
    /// [`MAX_SHARED_BYTES`] of dynamic shared memory. A grid with no block is valid: the launch
    /// runs nothing.
    ///
    /// # Errors
    ///
    /// [`KernelError::InvalidLaunch`] saying which limit.
    pub fn check(&self) -> Result<(), KernelError> {
        self.check_block()?;
        let invalid = |reason: String| Err(KernelError::InvalidLaunch { reason });
        if self.grid[0] > GRID_X || self.grid[1] > GRID_YZ || self.grid[2] > GRID_YZ {
            return invalid(format!("a grid of {:?} blocks (at most 2^31-1 along x, 65535 along y and z)", self.grid));
        }
        if self.shared_bytes > MAX_SHARED_BYTES {
            return invalid(format!(
                "{} bytes of dynamic shared memory (at most {MAX_SHARED_BYTES})",
                self.shared_bytes
            ));
        }
        Ok(())
    }
}

const GRID_X: u32 = i32::MAX as u32;
const GRID_YZ: u32 = 65535;

/// Blocks of `block` covering `n`, at most `max`.
fn blocks(n: usize, block: u32, max: u32) -> Result<u32, KernelError> {
    if block == 0 {
        return Err(KernelError::InvalidLaunch { reason: "a block of 0 threads".to_owned() });
    }
    let count = n.div_ceil(block as usize);
    u32::try_from(count).ok().filter(|&c| c <= max).ok_or_else(|| KernelError::InvalidLaunch {
        reason: format!("{n} elements need {count} blocks of {block}, above the grid's {max}"),
    })
}
