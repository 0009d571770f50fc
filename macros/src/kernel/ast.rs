//! The parsed input of `kernel!`: a signature of scalars (`a: T`), read views (`x: &[T; R]`) and
//! written views (`out: &mut [T; R]`), and a CUDA C++ body (a string literal, or `include_str!`).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, FnArg, GenericParam, Generics, Ident, ItemFn, Lit, Pat, Stmt, Type, Visibility};

/// The most view parameters of a raw kernel (`dlspan::kernel::MAX_VIEWS`).
pub(crate) const MAX_VIEWS: usize = 8;
/// The most axes of a view parameter (`dlspan::kernel::MAX_RAW_RANK`).
pub(crate) const MAX_RANK: usize = 16;

/// Names a parameter cannot have: C++ keywords Rust allows as identifiers, and the CUDA built-ins
/// (macros in the CPU build).
const CPP_RESERVED: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "case",
    "catch",
    "char",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "const_cast",
    "constexpr",
    "decltype",
    "default",
    "delete",
    "double",
    "dynamic_cast",
    "explicit",
    "export",
    "float",
    "friend",
    "goto",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "short",
    "signed",
    "sizeof",
    "static_assert",
    "static_cast",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "xor",
    "xor_eq",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "dl",
];

/// How a parameter is passed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `a: T`.
    Scalar,
    /// `x: &[T; R]`.
    Read,
    /// `out: &mut [T; R]`.
    Write,
}

/// One parameter.
pub(crate) struct Param {
    pub(crate) ident: Ident,
    pub(crate) kind: Kind,
    /// The element type.
    pub(crate) elem: Type,
    /// The rank of a view (0 for scalars).
    pub(crate) rank: usize,
    /// The index of `elem` among the types the signature names.
    pub(crate) ty: usize,
}

/// The body: a string literal at a line of the Rust file, or `include_str!("file.cu")`.
pub(crate) enum Body {
    Literal { expr: Expr, line: usize },
    Include { expr: Expr, path: String },
}

/// A raw kernel.
pub(crate) struct Kernel<'a> {
    pub(crate) attrs: &'a [Attribute],
    pub(crate) vis: &'a Visibility,
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a Generics,
    pub(crate) params: Vec<Param>,
    /// The distinct types of the signature, in order of first appearance, with the name of the type
    /// parameter each is (when it is one).
    pub(crate) types: Vec<(Type, Option<Ident>)>,
    pub(crate) body: Body,
    pub(crate) fn_span: Span,
}

fn error(span: Span, message: impl std::fmt::Display) -> syn::Error {
    syn::Error::new(span, message)
}

impl<'a> Kernel<'a> {
    /// Reads the signature and the body; anything else is an error at its token.
    pub(crate) fn from_syn(item: &'a ItemFn) -> syn::Result<Self> {
        let sig = &item.sig;
        let unsupported = |span: Span, what: &str| {
            error(
                span,
                format!(
                    "a raw kernel cannot be {what}: it is `fn name<T>(x: &[T; R], out: &mut [T; R], a: T) {{ \"CUDA C++\" }}`"
                ),
            )
        };
        if let Some(t) = &sig.constness {
            return Err(unsupported(t.span(), "`const`"));
        }
        if let Some(t) = &sig.asyncness {
            return Err(unsupported(t.span(), "`async`"));
        }
        if let Some(t) = &sig.unsafety {
            return Err(unsupported(t.span(), "declared `unsafe` (its `launch` is)"));
        }
        if let Some(t) = &sig.abi {
            return Err(unsupported(t.span(), "`extern`"));
        }
        if let Some(v) = &sig.variadic {
            return Err(unsupported(v.span(), "variadic"));
        }
        if let syn::ReturnType::Type(arrow, _) = &sig.output {
            return Err(error(arrow.span(), "a raw kernel returns nothing: it writes its `&mut` views"));
        }
        let mut type_params = Vec::new();
        for p in &sig.generics.params {
            match p {
                GenericParam::Type(t) => type_params.push(t.ident.clone()),
                other => {
                    return Err(error(
                        other.span(),
                        "a raw kernel has type parameters only (element types, each a C++ template parameter)",
                    ));
                }
            }
        }
        let mut params = Vec::new();
        let mut types: Vec<(Type, Option<Ident>)> = Vec::new();
        let mut keys: Vec<String> = Vec::new();
        let mut views = 0usize;
        for input in &sig.inputs {
            let FnArg::Typed(arg) = input else {
                return Err(error(input.span(), "a raw kernel has no `self`"));
            };
            let Pat::Ident(pat) = &*arg.pat else {
                return Err(error(arg.pat.span(), "a raw kernel's parameter is a name"));
            };
            if pat.by_ref.is_some() || pat.mutability.is_some() || pat.subpat.is_some() {
                return Err(error(pat.span(), "a raw kernel's parameter is a plain name (the body is C++)"));
            }
            let name = pat.ident.to_string();
            if CPP_RESERVED.contains(&name.as_str()) || name.starts_with("dl_") || name.starts_with("__") {
                return Err(error(
                    pat.ident.span(),
                    format!(
                        "`{name}` cannot name a parameter of a raw kernel: the C++ body would not see it \
                         (a C++ keyword, a CUDA built-in, or a name reserved by dlspan.cuh: `dl_*`, `__*`)"
                    ),
                ));
            }
            let (kind, elem, rank) = match &*arg.ty {
                Type::Reference(r) => {
                    let Type::Array(array) = &*r.elem else {
                        return Err(error(
                            r.elem.span(),
                            "a view parameter is `&[T; R]` (read) or `&mut [T; R]` (written): its element type and rank",
                        ));
                    };
                    if let Some(l) = &r.lifetime {
                        return Err(error(l.span(), "a view parameter takes no lifetime"));
                    }
                    let rank = match &array.len {
                        Expr::Lit(syn::ExprLit { lit: Lit::Int(n), .. }) => n.base10_parse::<usize>()?,
                        other => return Err(error(other.span(), "a view's rank is an integer literal")),
                    };
                    if rank > MAX_RANK {
                        return Err(error(array.len.span(), format!("a view parameter has at most {MAX_RANK} axes")));
                    }
                    views += 1;
                    if views > MAX_VIEWS {
                        return Err(error(arg.span(), format!("a raw kernel takes at most {MAX_VIEWS} views")));
                    }
                    let kind = if r.mutability.is_some() { Kind::Write } else { Kind::Read };
                    (kind, (*array.elem).clone(), rank)
                }
                ty => (Kind::Scalar, ty.clone(), 0),
            };
            let key = quote::quote!(#elem).to_string();
            let ty = match keys.iter().position(|k| *k == key) {
                Some(k) => k,
                None => {
                    let generic = match &elem {
                        Type::Path(p) if p.qself.is_none() => {
                            p.path.get_ident().filter(|i| type_params.contains(i)).cloned()
                        }
                        _ => None,
                    };
                    keys.push(key);
                    types.push((elem.clone(), generic));
                    types.len() - 1
                }
            };
            params.push(Param { ident: pat.ident.clone(), kind, elem, rank, ty });
        }
        for t in &type_params {
            if !types.iter().any(|(_, g)| g.as_ref() == Some(t)) {
                return Err(error(t.span(), "a raw kernel's type parameter is the element type of a parameter"));
            }
        }
        let body = body(item)?;
        Ok(Self {
            attrs: &item.attrs,
            vis: &item.vis,
            ident: &sig.ident,
            generics: &sig.generics,
            params,
            types,
            body,
            fn_span: sig.fn_token.span(),
        })
    }
}

/// The body: one string literal or one `include_str!("file.cu")`.
fn body(item: &ItemFn) -> syn::Result<Body> {
    let wrong = |span: Span| {
        error(
            span,
            "a raw kernel's body is its CUDA C++: one string literal (`{ r#\"...\"# }`) or `{ include_str!(\"kernel.cu\") }`",
        )
    };
    let [stmt] = item.block.stmts.as_slice() else {
        return Err(wrong(item.block.span()));
    };
    let expr = match stmt {
        Stmt::Expr(expr, None) => expr,
        Stmt::Macro(m) if m.semi_token.is_none() => {
            return include(&Expr::Macro(syn::ExprMacro { attrs: m.attrs.clone(), mac: m.mac.clone() }));
        }
        other => return Err(wrong(other.span())),
    };
    match expr {
        Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => {
            Ok(Body::Literal { expr: expr.clone(), line: s.span().start().line })
        }
        Expr::Macro(_) => include(expr),
        other => Err(wrong(other.span())),
    }
}

fn include(expr: &Expr) -> syn::Result<Body> {
    let Expr::Macro(m) = expr else { unreachable!("a macro") };
    if !m.mac.path.is_ident("include_str") {
        return Err(error(
            m.mac.path.span(),
            "a raw kernel's body is a string literal or `include_str!(\"kernel.cu\")`",
        ));
    }
    let path: syn::LitStr = m.mac.parse_body()?;
    Ok(Body::Include { expr: expr.clone(), path: path.value() })
}
