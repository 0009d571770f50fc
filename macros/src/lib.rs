//! Procedural macros of [dlspan](https://docs.rs/dlspan). Use them through `dlspan`, which
//! re-exports them next to the traits and types they generate code for.

mod attrs;
mod element;
mod elementwise;
mod kernel;
mod mdspan;
mod record;
mod repr;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `dlspan::DlElement`: maps a type to its DLPack data type, with every condition proven at
/// compile time.
///
/// Three forms:
/// - `#[repr(transparent)]` newtype: the field's data type (`struct Meters(f32)` is `float32`).
/// - `#[repr(C)]` (optionally `align(N)`) struct of N fields sharing one data type: N times its lanes
///   (`struct Rgba { r: u8, g: u8, b: u8, a: u8 }` is `uint8x4`).
/// - `#[dl(code = <DLDataTypeCode name or number>, bits = B, lanes = L)]`: opaque storage of a
///   declared data type, over fields that accept any bytes (`struct E4m3(u8)` as `kDLFloat8_e4m3fn`).
///
/// The first two forms forward their fields' `DlElement::VALIDITY` (the strictest field's, for
/// lanes), so an element made of `bool`s (`struct Flag(bool)`) is imported only after its bytes were
/// checked, as `bool` is; `#[dl]` storage accepts every byte.
///
/// The generated code names the runtime crate `::dlspan` (there is no option to rename it: the
/// `unsafe impl` is sound only because its compile-time proofs are the real crate's).
///
/// Errors (each at the offending token): an enum or union, generics, no `repr(C)`/`repr(transparent)`,
/// `repr(packed)`, no fields, a field that is not an element, fields of different data types,
/// padding, a size that does not match `#[dl]`, more than 65535 lanes, an unknown `#[dl]` key.
///
/// ```
/// use dlspan::DlElement;
///
/// #[derive(Clone, Copy, DlElement)]
/// #[repr(C, align(4))]
/// struct Rgba8 { r: u8, g: u8, b: u8, a: u8 }
///
/// assert_eq!(Rgba8::DTYPE.to_string(), "uint8x4");
/// ```
#[proc_macro_derive(DlElement, attributes(dl))]
pub fn derive_dl_element(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    element::derive(&input).into()
}

/// Derives member views for a `#[repr(C)]` record: one `dlspan::record::Member` constant per field
/// (the field's name in upper case, `FIELD_<n>` for tuple fields, with the field's visibility), so
/// that `view.member(Record::FIELD)` views that field of every record, zero-copy.
///
/// Every member's size must divide the record's size and the member's offset (then records are a
/// whole number of members apart): otherwise it is a compile error at the field; leave such fields
/// out with `#[dl(skip)]`. Zero-sized fields are errors too. Requires `#[repr(C)]`, no generics.
///
/// ```
/// use dlspan::{DlRecord, HostMdspan};
///
/// #[derive(Clone, Copy, DlRecord)]
/// #[repr(C)]
/// struct Sample {
///     time: f64,
///     value: f32,
///     #[dl(skip)]
///     flags: [u8; 3],
///     quality: u8,
/// }
///
/// let samples = [Sample { time: 0.5, value: 2.0, flags: [0; 3], quality: 9 }; 3];
/// let view = HostMdspan::<Sample, 1>::from_slice(&samples, [3]).unwrap();
/// assert_eq!(view.member(Sample::VALUE).to_vec(), [2.0; 3]);
/// assert_eq!(view.member(Sample::QUALITY).stride(0), 16);
/// ```
#[proc_macro_derive(DlRecord, attributes(dl))]
pub fn derive_dl_record(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    record::derive(&input).into()
}

/// Spells a view type: element, extents (literals, `dyn`, `{ const expression }`), and options.
///
/// ```text
/// mdspan!([&'a] [mut] T; e0, e1, ... [; layout = right|left|stride|stride_relaxed,
///                                       space = host|device|managed, align = N, crate = path])
/// ```
///
/// It expands to `dlspan::Mdspan<'a, T, R, E, L, S>` (or `MdspanMut` with `mut`), with `R` the
/// number of extents, `E` a tuple of `Static<N>` / `Dyn` axes (or `Dims<R>` when every extent is
/// `dyn`: the type the `DLTensor` conversions return), layout `LayoutRight` and space `Host` by
/// default. `align = N` (a power of two) wraps the view in `dlspan::Aligned<_, N>`: its first
/// element is aligned to `N` bytes, checked when it is made. Without `&'a`, the lifetime is elided
/// (`'_`), as in function signatures; type aliases name it. Static extents go up to rank 12.
///
/// ```
/// use dlspan::{mdspan, HostMdspan};
///
/// type Tile<'a> = mdspan!(&'a f32; 16, 16);
/// type Rows<'a> = mdspan!(&'a mut u8; dyn, 4; layout = left);
/// type OnGpu<'a> = mdspan!(&'a f32; dyn, dyn; space = device, layout = stride);
/// type Simd<'a> = mdspan!(&'a mut f32; dyn, 16; align = 64); // dlspan::Aligned<.., 64>
///
/// let data = [0.5f32; 256];
/// let tile = Tile::from_array(&data); // a wrong array length would not compile
/// assert_eq!(tile.extent(0), 16);
///
/// let dynamic = HostMdspan::<f32, 2>::from_slice(&data, [16, 16]).unwrap();
/// let checked: Tile<'_> = dynamic.try_into().unwrap(); // static extents checked at run time
/// assert_eq!(checked[[15, 15]], 0.5);
/// # let _: Option<(Rows<'_>, OnGpu<'_>, Simd<'_>)> = None;
/// ```
#[proc_macro]
pub fn mdspan(input: TokenStream) -> TokenStream {
    mdspan::mdspan(input.into()).into()
}

/// Declares an element-wise kernel: a function over scalars, written once in a subset of Rust, run
/// over views of any rank and layout on the CPU (as Rust) and on CUDA streams (translated to CUDA
/// C++, compiled by NVRTC).
///
/// ```text
/// elementwise! {
///     /// docs
///     pub fn name<T: Scalar, ..>(a: T, x: &T, y: &U, out: &mut T, ..) { body }
/// }
/// ```
///
/// Parameters are scalars by value (`a: T`: element types), views read element by element
/// (`x: &T`) and views written (`out: &mut T`, at least one). It expands to a unit struct `name`
/// with `name.run(on, args..)` (`on` is `dlspan::kernel::Cpu` or a `&cuda::Stream`; each view
/// argument `&view` or `&mut view`; inputs broadcast to the first written view's shape),
/// `name::element(..)` (the body on one element, as Rust) and `name::instance::<T..>()`.
///
/// The body's subset: `let` (one name, an optional type), assignments to `*out`, `out.field` and
/// `let mut` names (`=`, `+=`, `-=`, `*=`, `/=`, `%=`), `if`/`else` (statements, or values with one
/// expression per branch), literals, `+ - * / %`, unary `-`, comparisons, `&&`, `||`, `!`, `as`
/// casts, fields of derived element types, and the math methods `sqrt`, `exp`, `exp2`, `ln`,
/// `log2`, `log10`, `sin`, `cos`, `tan`, `tanh`, `floor`, `ceil`, `round`, `trunc`, `abs`, `min`,
/// `max`, `powf`, `mul_add`, `detach` (the value itself, whose derivative is taken as zero),
/// `zero_like` (the value of its type with all bytes zero). Anything
/// else is a compile error at its token saying what is allowed.
/// The semantics (the same bits on the CPU and the GPU) and the rest of the rules are
/// `dlspan::kernel`'s documentation and the rules page, section K.
///
/// `#[torch("namespace::name")]` on the function (dlspan's feature `torch`) also makes the kernel a
/// PyTorch operator, `dlspan::torch::Operator`, registered by `dlspan::torch_library!`: `&T`
/// parameters are `Tensor` arguments, `&mut T` parameters the body reads are `Tensor(a!)` arguments
/// written in place, `&mut T` parameters it only writes are new results (returned in order), and
/// scalars are `float`, `int` or `bool` arguments; its Meta, CPU and (with feature `cuda`) CUDA
/// kernels check one dtype, one device and broadcasting shapes, naming the argument (rules page,
/// section T). The kernel has at most one type parameter, bounded by `Float` or `Scalar`.
/// `#[torch("namespace::name", backward = other_kernel)]` names the operator of its gradients
/// (the forward's arguments then the results' gradients; a gradient per tensor argument), which
/// dlspan registers with PyTorch's autograd when the library is loaded into Python;
/// `#[torch("namespace::name", strict)]` takes tensors of one shape (no broadcasting):
///
/// ```ignore
/// dlspan::elementwise! {
///     #[torch("my_ops::gelu_bias")] // (Tensor x, Tensor b) -> Tensor
///     fn gelu_bias<T: Float>(x: &T, b: &T, out: &mut T) {
///         let v = *x + *b;
///         *out = 0.5 * v * (1.0 + (0.7978845608 * (v + 0.044715 * v * v * v)).tanh());
///     }
/// }
/// dlspan::torch_library!("my_ops", [gelu_bias]);
/// ```
///
/// `#[differentiable]` on the function derives its tangent (forward mode) and its backward
/// (reverse mode) from the body, at compile time, as two more element-wise kernels,
/// `name_tangent` and `name_backward`, and adds `name.check_gradients(..)`, which checks both
/// against central finite differences. With `#[torch(..)]`, the backward is the operator's
/// gradient in autograd. Values without a derivative (`floor`, comparisons, casts to integers)
/// that reach an output are compile errors unless marked `.detach()`; the rules page, section G,
/// has the rules and the conventions at kinks:
///
/// ```
/// use dlspan::kernel::{Float, GradientCheck};
///
/// dlspan::elementwise! {
///     #[differentiable]
///     fn softplus<T: Float>(x: &T, out: &mut T) {
///         *out = (1.0 + x.exp()).ln();
///     }
/// }
///
/// // The backward: the inputs, the output's gradient, the input's gradient written.
/// let mut grad_x = 0.0f64;
/// softplus_backward::element(&0.0, &1.0, &mut grad_x);
/// assert_eq!(grad_x, 0.5); // sigmoid(0)
/// // The tangent: the inputs, their tangents, the output and its tangent.
/// let (mut out, mut tangent_out) = (0.0f64, 0.0f64);
/// softplus_tangent::element(&0.0, &2.0, &mut out, &mut tangent_out);
/// assert_eq!((out, tangent_out), (2f64.ln(), 1.0));
/// softplus.check_gradients::<f64>(&GradientCheck::default())?;
/// # Ok::<(), dlspan::kernel::GradientMismatch>(())
/// ```
///
/// ```
/// use dlspan::kernel::{Cpu, Scalar};
/// use dlspan::{HostMdspan, HostMdspanMut};
///
/// dlspan::elementwise! {
///     /// `out = a·x + b·y`.
///     fn axpby<T: Scalar>(a: T, b: T, x: &T, y: &T, out: &mut T) {
///         *out = a * *x + b * *y;
///     }
/// }
///
/// let (x, y) = ([1.0f32, 2.0], [3.0f32, 4.0]);
/// let mut out = [0.0f32; 2];
/// axpby.run(
///     Cpu,
///     2.0,
///     1.0,
///     &HostMdspan::<f32, 1>::from_slice(&x, [2])?,
///     &HostMdspan::<f32, 1>::from_slice(&y, [2])?,
///     &mut HostMdspanMut::<f32, 1>::from_slice(&mut out, [2])?,
/// )?;
/// assert_eq!(out, [5.0, 8.0]);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
#[proc_macro]
pub fn elementwise(input: TokenStream) -> TokenStream {
    elementwise::elementwise(input.into()).into()
}

/// Declares a raw kernel: a Rust signature of typed views and scalars, and a CUDA C++ body, run on
/// a CUDA stream (NVRTC) or on the CPU (the host C++ compiler).
///
/// ```text
/// kernel! {
///     /// docs
///     pub fn name<T, ..>(x: &[T; 2], out: &mut [T; 1], a: T, ..) { r#"CUDA C++"# }
/// }
/// ```
///
/// Parameters are views read (`x: &[T; R]`: element type and rank), views written
/// (`out: &mut [T; R]`) and scalars by value (`a: T`: element types). The body is one string
/// literal or `include_str!("file.cu")`; in it each view is a `dl::view` (`x(i, j)`,
/// `x.extent(0)`, `x.stride(1)`, `x.size()`; `const` elements for `&` views) and each type
/// parameter a C++ template parameter. It expands to a unit struct `name` with
/// `unsafe name.launch(on, config, args..)` (`on` is `dlspan::kernel::Cpu` or a
/// `&cuda::Stream`; `config` a `dlspan::kernel::LaunchConfig`) and `name::instance::<T..>(views)`.
/// The rules are `dlspan::kernel`'s documentation and the rules page, section K.
///
/// ```
/// use dlspan::kernel::{Cpu, LaunchConfig};
/// use dlspan::{HostMdspan, HostMdspanMut};
///
/// dlspan::kernel! {
///     /// `out = a·x`, one thread per element.
///     fn scale<T>(a: T, x: &[T; 1], out: &mut [T; 1]) {
///         r#"
///         dl::index_t i = blockIdx.x * blockDim.x + threadIdx.x;
///         if (i < out.extent(0)) out(i) = a * x(i);
///         "#
///     }
/// }
///
/// let x = [1.0f32, 2.0, 3.0];
/// let mut out = [0.0f32; 3];
/// // SAFETY: the body reads and writes only elements within the views' extents.
/// unsafe {
///     scale.launch(
///         Cpu,
///         LaunchConfig::for_elements(3, 32)?,
///         2.0f32,
///         &HostMdspan::<f32, 1>::from_slice(&x, [3])?,
///         &mut HostMdspanMut::<f32, 1>::from_slice(&mut out, [3])?,
///     )?;
/// }
/// assert_eq!(out, [2.0, 4.0, 6.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[proc_macro]
pub fn kernel(input: TokenStream) -> TokenStream {
    kernel::kernel(input.into()).into()
}

/// The runtime crate's path in generated code when `#[dl(crate = ...)]` is absent.
fn default_crate_path() -> syn::Path {
    syn::parse_quote!(::dlspan)
}
