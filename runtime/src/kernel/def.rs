//! What `elementwise!` records of a kernel besides its Rust function: its parameters, its CUDA C++
//! translation with the lines it came from ([`ElementwiseDef`]), and the element types of one
//! instantiation ([`Instance`]). The CUDA generator builds modules from these; the CPU needs none
//! of it.

use crate::dtype::DlElement;
use crate::ffi::DLDataType;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::mem::{align_of, size_of};

/// The most view parameters an element-wise kernel takes.
///
/// ```
/// assert_eq!(dlspan::kernel::MAX_VIEWS, 8);
/// ```
pub const MAX_VIEWS: usize = 8;

/// How a kernel parameter is passed.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A scalar by value (`a: T`).
    Scalar,
    /// A view read element by element (`x: &T`).
    Read,
    /// A view written element by element (`out: &mut T`); `read` when the body also reads it or may
    /// leave it unwritten (then the GPU loads it first).
    Write {
        /// Whether the element's old value is needed.
        read: bool,
    },
}

/// One parameter of an element-wise kernel.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// The name in the Rust signature.
    pub name: &'static str,
    /// How it is passed.
    pub kind: ParamKind,
    /// Its element type, as an index into the instantiation's types.
    pub ty: usize,
}

/// An element-wise kernel as `elementwise!` records it for the GPU: the parameters, the CUDA C++
/// translation of the body, and where the kernel is declared. One `static` per kernel, so its
/// address identifies it (the module cache keys on it).
#[doc(hidden)]
#[derive(Debug)]
pub struct ElementwiseDef {
    /// The kernel's name (the Rust function's).
    pub name: &'static str,
    /// The Rust file that declares it (`file!()`).
    pub file: &'static str,
    /// The line of its declaration: the line of its `fn` (not of the macro's name, which may be
    /// lines above, after doc comments and attributes).
    pub line: u32,
    /// The parameters, in declaration order.
    pub params: &'static [Param],
    /// How many types the body names (`types` of an [`Instance`]); the C++ calls type `k` `dl_t{k}`.
    pub types: usize,
    /// The types that are targets of casts (their `dl_cast` conversions are generated).
    pub cast_targets: &'static [usize],
    /// Whether the body accesses fields (then derived types keep their field names in C++).
    pub fields: bool,
    /// The C++ of the body: `DL_DEV void dl_body(...)`, with `#line` directives naming the Rust file.
    pub source: &'static str,
    /// Each line of the Rust body the C++ refers to, with its text, for compile errors.
    pub lines: &'static [(u32, &'static str)],
}

/// Where a kernel is declared, and the lines of its Rust source that its CUDA C++ names through
/// `#line` directives: what NVRTC's errors are reported against, in the user's terms, by every
/// kind of kernel (`ElementwiseDef::declared`).
///
/// ```
/// let at = dlspan::kernel::Declared { what: "kernel", name: "k", file: "src/k.rs", line: 3, lines: &[] };
/// assert_eq!(at.to_string(), "kernel `k` declared at src/k.rs:3");
/// ```
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Declared {
    /// What the kernel is, for messages (`"element-wise kernel"`).
    pub what: &'static str,
    /// The kernel's name.
    pub name: &'static str,
    /// The Rust file that declares it (`file!()`), as its `#line` directives name it.
    pub file: &'static str,
    /// The line of its declaration: the line of its `fn` (not of the macro's name, which may be
    /// lines above, after doc comments and attributes).
    pub line: u32,
    /// Each line of `file` the CUDA C++ refers to, with its text.
    pub lines: &'static [(u32, &'static str)],
}

impl fmt::Display for Declared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}` declared at {}:{}", self.what, self.name, self.file, self.line)
    }
}

impl ElementwiseDef {
    /// Where the kernel is declared, and its lines, for compile errors.
    pub fn declared(&self) -> Declared {
        Declared { what: "element-wise kernel", name: self.name, file: self.file, line: self.line, lines: self.lines }
    }

    /// The index of the view whose shape the kernel runs over: its first written view.
    pub fn primary(&self) -> usize {
        self.views().position(|p| matches!(p.kind, ParamKind::Write { .. })).unwrap_or(0)
    }

    /// The view parameters, in declaration order.
    pub fn views(&self) -> impl Iterator<Item = &'static Param> + '_ {
        self.params.iter().filter(|p| p.kind != ParamKind::Scalar)
    }

    /// The scalar parameters, in declaration order.
    pub fn scalars(&self) -> impl Iterator<Item = &'static Param> + '_ {
        self.params.iter().filter(|p| p.kind == ParamKind::Scalar)
    }

    /// The views in the order a launch passes them: the primary view first, then the others in
    /// declaration order (the `k`-th item is the declaration index of slot `k`).
    pub fn slots(&self) -> impl Iterator<Item = usize> + '_ {
        let primary = self.primary();
        let count = self.views().count();
        core::iter::once(primary).chain((0..count).filter(move |&k| k != primary))
    }
}

// A kernel is identified by its `static`.
impl PartialEq for ElementwiseDef {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self, other)
    }
}

impl Eq for ElementwiseDef {}

impl Hash for ElementwiseDef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self as *const Self).hash(state);
    }
}

/// An element type as a kernel instantiation sees it: its data type, size and alignment (what the
/// CUDA C++ type is made of) and, for derived types, its fields' names.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TypeInfo {
    /// The DLPack data type.
    pub dtype: DLDataType,
    /// `size_of` the Rust type.
    pub size: usize,
    /// `align_of` the Rust type.
    pub align: usize,
    /// The fields' names of a derived type (`DlElement::FIELD_NAMES`).
    pub fields: &'static [&'static str],
}

impl TypeInfo {
    /// The type information of `T`.
    ///
    /// ```
    /// let t = dlspan::kernel::TypeInfo::of::<u16>();
    /// assert_eq!((t.size, t.align, t.fields.len()), (2, 2, 0));
    /// ```
    pub const fn of<T: DlElement>() -> Self {
        Self { dtype: T::DTYPE, size: size_of::<T>(), align: align_of::<T>(), fields: T::FIELD_NAMES }
    }

    /// The same type without field names (kernels that access no field share modules across
    /// derived types of one layout, as the built-in kernels do).
    pub const fn without_fields(self) -> Self {
        Self { fields: &[], ..self }
    }
}

impl fmt::Display for TypeInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.dtype, f)
    }
}

/// One instantiation of an element-wise kernel: the kernel and the element type of each type it
/// names. `elementwise!` gives it as `kernel::instance::<T, ..>()`; the CUDA tiers compile and run
/// the module of each.
///
/// ```
/// use dlspan::kernel::Scalar;
/// dlspan::elementwise! {
///     fn twice<T: Scalar>(x: &T, out: &mut T) { *out = *x + *x }
/// }
/// let instance = twice::instance::<f32>();
/// assert_eq!(instance.def().name, "twice");
/// assert_eq!(instance.types(), [dlspan::kernel::TypeInfo::of::<f32>()]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Instance {
    def: &'static ElementwiseDef,
    types: Types,
}

/// The types of an instantiation: a static list (what `elementwise!` builds at compile time), or one
/// type known at run time (the built-in kernels' element type).
#[derive(Clone, Copy, Debug)]
enum Types {
    Static(&'static [TypeInfo]),
    One(TypeInfo),
}

impl Instance {
    /// The instantiation of `def` with `types`, one per type the kernel names (with field names only
    /// when the kernel accesses fields: `elementwise!` builds them so).
    ///
    /// # Panics
    ///
    /// When `types` does not have one type per type of `def`.
    pub fn new(def: &'static ElementwiseDef, types: &'static [TypeInfo]) -> Self {
        assert_eq!(types.len(), def.types, "one type per type kernel `{}` names", def.name);
        Self { def, types: Types::Static(types) }
    }

    /// The instantiation of a kernel that names one type, known at run time (field names dropped
    /// unless the kernel accesses fields).
    ///
    /// # Panics
    ///
    /// When `def` names another number of types.
    pub fn of_one(def: &'static ElementwiseDef, ty: TypeInfo) -> Self {
        assert_eq!(def.types, 1, "kernel `{}` names one type", def.name);
        Self { def, types: Types::One(if def.fields { ty } else { ty.without_fields() }) }
    }

    /// The kernel.
    pub fn def(&self) -> &'static ElementwiseDef {
        self.def
    }

    /// The element types, one per type the kernel names.
    pub fn types(&self) -> &[TypeInfo] {
        match &self.types {
            Types::Static(types) => types,
            Types::One(ty) => core::slice::from_ref(ty),
        }
    }

    /// The element type of type `k`.
    pub fn ty(&self, k: usize) -> TypeInfo {
        self.types()[k]
    }
}

impl PartialEq for Instance {
    fn eq(&self, other: &Self) -> bool {
        self.def == other.def && self.types() == other.types()
    }
}

impl Eq for Instance {}

impl Hash for Instance {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.def.hash(state);
        self.types().hash(state);
    }
}

impl fmt::Display for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}<", self.def.name)?;
        for (k, t) in self.types().iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{t}")?;
        }
        f.write_str(">")
    }
}

/// What a kernel call hands its executor besides the views: the instantiation and the scalar
/// arguments' bytes, in declaration order.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// The kernel and its element types.
    pub instance: Instance,
    /// Each scalar argument's bytes.
    pub scalars: &'a [&'a [u8]],
}

/// The bytes of a scalar argument (element types have no padding: every byte is initialised).
#[doc(hidden)]
#[inline(always)]
pub fn scalar_bytes<T: DlElement>(value: &T) -> &[u8] {
    // SAFETY: `value` is a live `T` of `size_of::<T>()` initialised bytes (`DlElement`'s size rule:
    // no padding), read as bytes for the borrow.
    unsafe { core::slice::from_raw_parts((value as *const T).cast::<u8>(), size_of::<T>()) }
}
