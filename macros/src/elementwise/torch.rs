//! `#[torch("ns::name")]` on an element-wise kernel: the kernel becomes a PyTorch operator
//! (`dlspan::torch::Operator`) whose schema, checks, Meta kernel and CPU and CUDA kernels follow
//! from its signature (`dlspan::torch::elementwise` does the work at run time).
//!
//! - `x: &T` is a `Tensor` argument; `x: &mut T` that the body reads (or may leave unwritten) is a
//!   `Tensor(a!)` argument, written in place; `out: &mut T` that it only writes is a new result,
//!   returned in declaration order;
//! - a scalar is a `float` (a float type, or the type parameter), an `int` (an integer type) or a
//!   `bool`;
//! - the kernel has at most one type parameter, bounded by `Float` or `Scalar` (the dtypes the
//!   operator dispatches over), and some tensor argument of that type (where its dtype comes from).

use super::ast::{Kernel, Kind};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{Attribute, GenericParam, LitStr, Type, TypeParamBound, WherePredicate};

/// The operator a kernel declares with `#[torch("ns::name")]`.
pub(crate) struct TorchAttr {
    /// The qualified name.
    pub(crate) name: LitStr,
    /// The attribute's span, for errors about the whole declaration.
    pub(crate) span: Span,
    /// `backward = path`: the operator computing the gradients.
    pub(crate) backward: Option<syn::Path>,
    /// The operator computing the forward-mode derivative (`#[differentiable]`'s tangent).
    pub(crate) tangent: Option<syn::Path>,
    /// `strict`: the arguments have one shape (no broadcasting).
    pub(crate) strict: bool,
}

/// `"ns::name"` then optional `backward = path` and `strict`.
struct Args {
    name: LitStr,
    backward: Option<syn::Path>,
    strict: bool,
}

impl syn::parse::Parse for Args {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let name: LitStr = input.parse()?;
        let (mut backward, mut strict) = (None, false);
        while !input.is_empty() {
            input.parse::<syn::Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: syn::Ident = input.parse()?;
            if key == "backward" && backward.is_none() {
                input.parse::<syn::Token![=]>()?;
                backward = Some(input.parse()?);
            } else if key == "strict" && !strict {
                strict = true;
            } else {
                return Err(syn::Error::new(
                    key.span(),
                    "`#[torch(..)]` takes the operator's name, then `backward = <the kernel of its gradients>` and `strict` (no broadcasting), each once",
                ));
            }
        }
        Ok(Self { name, backward, strict })
    }
}

/// Whether `attr` is `#[torch(...)]`.
pub(crate) fn is_torch(attr: &Attribute) -> bool {
    attr.path().is_ident("torch")
}

/// Reads the kernel's `#[torch(...)]` attribute, if any (one at most).
pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<Option<TorchAttr>> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| is_torch(a)) {
        if found.is_some() {
            return Err(syn::Error::new(attr.span(), "a kernel is one operator: one `#[torch(\"ns::name\")]`"));
        }
        let Args { name, backward, strict } = attr.parse_args().map_err(|error: syn::Error| {
            let mut refusal =
                syn::Error::new(attr.span(), "write `#[torch(\"namespace::name\")]`: the operator's qualified name");
            refusal.combine(error);
            refusal
        })?;
        let text = name.value();
        let valid = text.split_once("::").is_some_and(|(ns, op)| {
            let ident = |s: &str| {
                !s.is_empty()
                    && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !s.starts_with(|c: char| c.is_ascii_digit())
            };
            ident(ns) && ident(op)
        });
        if !valid {
            return Err(syn::Error::new(
                name.span(),
                format!("`{text}` is not `namespace::name` (identifiers of letters, digits and `_`)"),
            ));
        }
        found = Some(TorchAttr { name, span: attr.span(), backward, tangent: None, strict });
    }
    Ok(found)
}

/// The type parameter's bound, as the operator dispatches on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bound {
    Float,
    Scalar,
    Fixed,
}

/// The bound of type parameter `ident` (inline or in the where clause): `Float` wins over
/// `Scalar` (it implies it).
fn bound_of(kernel: &Kernel<'_>, ident: &syn::Ident) -> Option<Bound> {
    let mut bounds: Vec<&TypeParamBound> = Vec::new();
    for param in &kernel.generics.params {
        if let GenericParam::Type(t) = param
            && t.ident == *ident
        {
            bounds.extend(&t.bounds);
        }
    }
    if let Some(clause) = &kernel.generics.where_clause {
        for predicate in &clause.predicates {
            if let WherePredicate::Type(p) = predicate
                && let Type::Path(path) = &p.bounded_ty
                && path.path.is_ident(ident)
            {
                bounds.extend(&p.bounds);
            }
        }
    }
    let named = |name: &str| {
        bounds.iter().any(|b| match b {
            TypeParamBound::Trait(t) => t.path.segments.last().is_some_and(|s| s.ident == name),
            _ => false,
        })
    };
    if named("Float") {
        Some(Bound::Float)
    } else if named("Scalar") {
        Some(Bound::Scalar)
    } else {
        None
    }
}

/// The last segment of a path type (`f32`, `half::f16` → `f16`).
fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Paren(p) => last_ident(&p.elem),
        _ => None,
    }
}

/// The framework an entry point is derived for: where its generated code's runtime items live.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framework {
    /// `#[torch("ns::name")]`: `dlspan::torch::elementwise`.
    Torch,
    /// `#[jax]`: `dlspan::jax::elementwise`.
    Jax,
}

impl Framework {
    /// The runtime module of its element-wise entry points.
    fn module(self) -> TokenStream {
        match self {
            Self::Torch => quote!(::dlspan::torch::elementwise),
            Self::Jax => quote!(::dlspan::jax::elementwise),
        }
    }

    /// Its error type.
    fn error(self) -> TokenStream {
        match self {
            Self::Torch => quote!(::dlspan::torch::TorchError),
            Self::Jax => quote!(::dlspan::jax::JaxError),
        }
    }

    /// What its entry points are called, in messages.
    fn what(self) -> &'static str {
        match self {
            Self::Torch => "a PyTorch operator",
            Self::Jax => "a JAX kernel",
        }
    }
}

/// What an entry point derives from a kernel's signature, for either framework.
pub(crate) struct Signature {
    /// The PyTorch schema's arguments (`Tensor x`, `float s`, …).
    pub(crate) schema_args: Vec<String>,
    /// The number of results.
    pub(crate) returns: usize,
    /// The `ViewSpec`s, in declaration order.
    pub(crate) views: Vec<TokenStream>,
    /// The `ScalarSpec`s, in declaration order.
    pub(crate) scalars: Vec<TokenStream>,
    /// Per parameter: a view (`true`) or a scalar.
    pub(crate) order: Vec<bool>,
    /// The `Bound` variant's name.
    pub(crate) bound: TokenStream,
    /// The body of the generated `run`: the visitor type and the dispatch to it.
    pub(crate) run: TokenStream,
}

/// Reads `kernel`'s signature as `framework`'s entry point (`span`: the attribute's, for errors
/// about the whole declaration).
pub(crate) fn signature(
    kernel: &Kernel<'_>,
    reads_output: &[bool],
    span: Span,
    framework: Framework,
) -> syn::Result<Signature> {
    let what = framework.what();
    let type_params = super::expand::type_params(kernel);
    if type_params.len() > 1 {
        return Err(syn::Error::new(
            kernel.generics.span(),
            format!(
                "a kernel that is {what} has at most one type parameter (the dtype it dispatches on); give the others fixed types"
            ),
        ));
    }
    let param = type_params.first().copied();
    let bound = match param {
        None => Bound::Fixed,
        Some(t) => bound_of(kernel, t).ok_or_else(|| {
            syn::Error::new(
                t.span(),
                format!(
                    "the type parameter of {what}'s kernel is bounded by `Float` (float16, bfloat16, float32, float64) or `Scalar` (those and the integers): write `{t}: Float`"
                ),
            )
        })?,
    };
    let is_param = |ty: &Type| match (param, ty) {
        (Some(t), Type::Path(p)) => p.qself.is_none() && p.path.is_ident(t),
        _ => false,
    };
    let module = framework.module();
    let signature_mod = quote!(::dlspan::kernel::signature);
    let mut args = Vec::new();
    let mut returns = 0usize;
    let mut views = Vec::new();
    let mut scalars = Vec::new();
    let mut order = Vec::new();
    let mut typed_input = false;
    let mut in_place = 0u8;
    let mut any_input = false;
    for (k, p) in kernel.params.iter().enumerate() {
        let name = syn::ext::IdentExt::unraw(&p.ident).to_string();
        order.push(p.kind != Kind::Scalar);
        match p.kind {
            Kind::Scalar => {
                let (kind, schema) = if is_param(&p.elem) {
                    (quote!(Float), "float")
                } else {
                    match last_ident(&p.elem).as_deref() {
                        Some("f16" | "bf16" | "f32" | "f64") => (quote!(Float), "float"),
                        Some("i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64") => (quote!(Int), "int"),
                        Some("bool") => (quote!(Bool), "bool"),
                        _ => {
                            return Err(syn::Error::new(
                                p.elem.span(),
                                format!(
                                    "{what}'s scalar is a float type, an integer type (up to 64 bits), `bool` or the type parameter"
                                ),
                            ));
                        }
                    }
                };
                args.push(format!("{schema} {name}"));
                scalars.push(quote!(#signature_mod::ScalarSpec {
                    name: #name,
                    kind: #signature_mod::ScalarKind::#kind,
                }));
            }
            Kind::Read | Kind::Write => {
                let (role, input) = match (p.kind, reads_output[k]) {
                    (Kind::Read, _) => {
                        args.push(format!("Tensor {name}"));
                        (quote!(Input), true)
                    }
                    (_, true) => {
                        if framework == Framework::Jax {
                            return Err(syn::Error::new(
                                p.ident.span(),
                                format!(
                                    "`{name}` is read and written (updated in place): a JAX kernel cannot update an array (JAX arrays are immutable); take `{name}: &T` and write a new output"
                                ),
                            ));
                        }
                        let alias = char::from(b'a' + in_place % 26);
                        in_place += 1;
                        args.push(format!("Tensor({alias}!) {name}"));
                        (quote!(InPlace), true)
                    }
                    (_, false) => {
                        returns += 1;
                        (quote!(Output), false)
                    }
                };
                any_input |= input;
                let dtype = if is_param(&p.elem) {
                    typed_input |= input;
                    quote!(::core::option::Option::None)
                } else {
                    let elem = &p.elem;
                    quote!(::core::option::Option::Some(<#elem as ::dlspan::DlElement>::DTYPE))
                };
                views.push(quote!(#signature_mod::ViewSpec {
                    name: #name,
                    role: #signature_mod::Role::#role,
                    dtype: #dtype,
                }));
            }
        }
    }
    if !any_input {
        return Err(syn::Error::new(
            span,
            match framework {
                Framework::Torch => {
                    "a PyTorch operator's kernel reads some view (`x: &T`, or `x: &mut T` it updates): its results take that shape and device"
                }
                Framework::Jax => {
                    "a JAX kernel reads some array (`x: &T`): its results take the arguments' broadcast shape"
                }
            },
        ));
    }
    if let (Some(t), false) = (param, typed_input) {
        return Err(syn::Error::new(
            t.span(),
            match framework {
                Framework::Torch => {
                    format!("some tensor argument of the operator has element type `{t}`: its dtype is the operator's")
                }
                Framework::Jax => {
                    format!("some array argument of the JAX kernel has element type `{t}`: its dtype is the kernel's")
                }
            },
        ));
    }
    // The body of the visitor: typed views of the buffers, the scalars, the kernel's `run`.
    let ident = kernel.ident;
    let error = framework.error();
    let count = views.len();
    let tensors: Vec<_> = (0..count).map(|k| format_ident!("__dlspan_t{}", k)).collect();
    let mut scalar_lets = Vec::new();
    let mut lets = Vec::new();
    let mut call_args = Vec::new();
    let (mut view_k, mut scalar_k) = (0usize, 0usize);
    for p in &kernel.params {
        let (pid, elem) = (&p.ident, &p.elem);
        match p.kind {
            Kind::Scalar => {
                scalar_lets.push(quote!(let #pid: #elem = self.args.scalar::<#elem>(#scalar_k)?;));
                call_args.push(quote!(#pid));
                scalar_k += 1;
            }
            Kind::Read => {
                let t = &tensors[view_k];
                lets.push(quote!(let #pid = <__DlspanE as #module::Exec>::input::<#elem, __DLSPAN_R>(&*#t)?;));
                call_args.push(quote!(&#pid));
                view_k += 1;
            }
            Kind::Write => {
                let t = &tensors[view_k];
                lets.push(quote!(let mut #pid = <__DlspanE as #module::Exec>::output::<#elem, __DLSPAN_R>(#t)?;));
                call_args.push(quote!(&mut #pid));
                view_k += 1;
            }
        }
    }
    let take = match framework {
        Framework::Torch => quote!(tensors),
        Framework::Jax => quote!(buffers),
    };
    let body = quote! {
        #(#scalar_lets)*
        let [#(#tensors),*] = self.args.#take::<#count>()?;
        #(#lets)*
        #ident.run(self.on, #(#call_args),*).map_err(<__DlspanE as #module::Exec>::error)
    };
    let (visitor, dispatch, bound_tokens) = match (bound, param) {
        (Bound::Fixed, _) | (_, None) => (
            quote! {
                impl<__DlspanE: #module::Exec> ::dlspan::dtype::RankVisitor for __DlspanVisit<'_, '_, __DlspanE> {
                    type Output = ::core::result::Result<(), #error>;
                    #[allow(unused_variables, clippy::let_unit_value)]
                    fn visit<const __DLSPAN_R: usize>(self) -> Self::Output { #body }
                }
            },
            quote!(::dlspan::dtype::dispatch_rank(
                __dlspan_rank,
                __DlspanVisit { on, args, _frame: ::core::marker::PhantomData }
            )),
            quote!(Fixed),
        ),
        (b, Some(t)) => {
            let (visitor, bound_trait, dispatch, tokens) = match b {
                Bound::Float => (quote!(FloatVisitor), quote!(Float), quote!(dispatch_float), quote!(Float)),
                _ => (quote!(ScalarVisitor), quote!(Scalar), quote!(dispatch_scalar), quote!(Scalar)),
            };
            (
                quote! {
                    impl<__DlspanE: #module::Exec> ::dlspan::kernel::#visitor for __DlspanVisit<'_, '_, __DlspanE> {
                        type Output = ::core::result::Result<(), #error>;
                        #[allow(unused_variables)]
                        fn visit<#t: ::dlspan::kernel::#bound_trait, const __DLSPAN_R: usize>(self) -> Self::Output { #body }
                    }
                },
                quote!(::dlspan::kernel::#dispatch(__dlspan_dtype, __dlspan_rank, __DlspanVisit { on, args, _frame: ::core::marker::PhantomData })),
                tokens,
            )
        }
    };
    let args_type = match framework {
        Framework::Torch => quote!(#module::Args),
        Framework::Jax => quote!(#module::Args<'__dlspan_f>),
    };
    let run = quote! {
        #[allow(dead_code)]
        struct __DlspanVisit<'__dlspan, '__dlspan_f, __DlspanE> {
            on: __DlspanE,
            args: &'__dlspan mut #args_type,
            _frame: ::core::marker::PhantomData<&'__dlspan_f ()>,
        }
        #visitor
        let (__dlspan_dtype, __dlspan_rank) = (args.dtype(), args.rank());
        let _ = __dlspan_dtype;
        #dispatch.map_err(|error| #module::dispatch_error::<Self>(error))?
    };
    Ok(Signature { schema_args: args, returns, views, scalars, order, bound: bound_tokens, run })
}

/// The operator items of `kernel`: its `Kernel` and `Operator` implementations, inside
/// `dlspan::__torch!` (which refuses them, with a clear error, without feature `torch`).
pub(crate) fn expand(kernel: &Kernel<'_>, attr: &TorchAttr, reads_output: &[bool]) -> syn::Result<TokenStream> {
    let ident = kernel.ident;
    let Signature { schema_args: args, returns, views, scalars, bound: bound_tokens, run, .. } =
        signature(kernel, reads_output, attr.span, Framework::Torch)?;
    let schema = format!(
        "({}) -> {}",
        args.join(", "),
        match returns {
            0 => "()".to_owned(),
            1 => "Tensor".to_owned(),
            n => format!("({})", vec!["Tensor"; n].join(", ")),
        }
    );
    let name = &attr.name;
    let strict = attr.strict;
    let operator_name = |path: &Option<syn::Path>| match path {
        Some(path) => quote!(::core::option::Option::Some(<#path as ::dlspan::torch::Operator>::NAME)),
        None => quote!(::core::option::Option::None),
    };
    let (backward, tangent) = (operator_name(&attr.backward), operator_name(&attr.tangent));
    // `#[differentiable]`'s kernels are registered wherever the forward is.
    let derived: Vec<_> = match (&attr.backward, &attr.tangent) {
        (Some(b), Some(t)) => vec![quote!(::dlspan::torch::op::<#b>()), quote!(::dlspan::torch::op::<#t>())],
        _ => Vec::new(),
    };
    Ok(quote! {
        ::dlspan::__torch! {
            impl ::dlspan::torch::elementwise::Kernel for #ident {
                const SPEC: ::dlspan::torch::elementwise::Spec = ::dlspan::torch::elementwise::Spec {
                    name: #name,
                    views: &[#(#views),*],
                    scalars: &[#(#scalars),*],
                    bound: ::dlspan::torch::elementwise::Bound::#bound_tokens,
                    strict: #strict,
                };

                fn run<__DlspanE: ::dlspan::torch::elementwise::Exec>(
                    on: __DlspanE,
                    args: &mut ::dlspan::torch::elementwise::Args,
                ) -> ::core::result::Result<(), ::dlspan::torch::TorchError> {
                    #run
                }
            }

            impl ::dlspan::torch::Operator for #ident {
                const NAME: &'static str = #name;
                const SCHEMA: &'static str = #schema;
                const CUDA: bool = ::dlspan::torch::elementwise::CUDA;
                const BACKWARD: ::core::option::Option<&'static str> = #backward;
                const TANGENT: ::core::option::Option<&'static str> = #tangent;
                const DERIVED: &'static [::dlspan::torch::Registration] = &[#(#derived),*];

                fn cpu(call: &mut ::dlspan::torch::Call) -> ::core::result::Result<(), ::dlspan::torch::TorchError> {
                    ::dlspan::torch::elementwise::cpu::<Self>(call)
                }

                fn meta(call: &mut ::dlspan::torch::Call) -> ::core::result::Result<(), ::dlspan::torch::TorchError> {
                    ::dlspan::torch::elementwise::meta::<Self>(call)
                }

                fn cuda(call: &mut ::dlspan::torch::Call) -> ::core::result::Result<(), ::dlspan::torch::TorchError> {
                    ::dlspan::torch::elementwise::cuda::<Self>(call)
                }
            }
        }
    })
}
