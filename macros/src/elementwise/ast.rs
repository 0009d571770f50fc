//! The parsed input of `elementwise!`: one function over scalars, its parameters sorted into
//! scalars, read views (`&T`) and written views (`&mut T`), and the table of the types it names.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Block, FnArg, GenericParam, Generics, Ident, ItemFn, Pat, Type, Visibility};

/// How a parameter is passed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `a: T`, by value.
    Scalar,
    /// `x: &T`, a view read element by element.
    Read,
    /// `out: &mut T`, a view written element by element.
    Write,
}

/// One parameter of the kernel.
pub(crate) struct Param {
    pub(crate) ident: Ident,
    /// `mut a: T` (scalars only).
    pub(crate) mutable: bool,
    pub(crate) kind: Kind,
    /// The element type (`T` of `&T`).
    pub(crate) elem: Type,
    /// The index of `elem` in the type table.
    pub(crate) ty: usize,
}

/// The distinct types a kernel names (parameters, `let` annotations, casts), in order of first
/// appearance; the C++ calls type `k` `dl_t{k}`, and each instantiation gives one element type per
/// entry.
#[derive(Default)]
pub(crate) struct Types {
    pub(crate) types: Vec<Type>,
    keys: Vec<String>,
}

impl Types {
    /// The index of `ty`, added when new (types compare by their tokens).
    pub(crate) fn index(&mut self, ty: &Type) -> usize {
        let key = quote::quote!(#ty).to_string();
        if let Some(k) = self.keys.iter().position(|k| *k == key) {
            return k;
        }
        self.keys.push(key);
        self.types.push(ty.clone());
        self.types.len() - 1
    }

    /// The index of a type already in the table.
    pub(crate) fn find(&self, ty: &Type) -> Option<usize> {
        let key = quote::quote!(#ty).to_string();
        self.keys.iter().position(|k| *k == key)
    }
}

/// A kernel: the function as written and its parameters.
pub(crate) struct Kernel<'a> {
    pub(crate) attrs: &'a [Attribute],
    pub(crate) vis: &'a Visibility,
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a Generics,
    pub(crate) params: Vec<Param>,
    pub(crate) body: &'a Block,
    pub(crate) types: Types,
    /// The span of `fn`, where errors about the whole kernel point.
    pub(crate) fn_span: Span,
    item: &'a ItemFn,
}

impl<'a> Kernel<'a> {
    /// Reads the signature; what the subset leaves out of signatures is an error at its token.
    pub(crate) fn from_syn(item: &'a ItemFn) -> syn::Result<Self> {
        let sig = &item.sig;
        let unsupported = |span: Span, what: &str| {
            syn::Error::new(span, format!("an element-wise kernel cannot be {what}: it is a plain `fn` over scalars"))
        };
        if let Some(token) = &sig.constness {
            return Err(unsupported(token.span, "`const`"));
        }
        if let Some(token) = &sig.asyncness {
            return Err(unsupported(token.span, "`async`"));
        }
        if let Some(token) = &sig.unsafety {
            return Err(unsupported(token.span, "`unsafe`"));
        }
        if let Some(abi) = &sig.abi {
            return Err(unsupported(abi.span(), "`extern`"));
        }
        if let Some(variadic) = &sig.variadic {
            return Err(unsupported(variadic.span(), "variadic"));
        }
        if let syn::ReturnType::Type(arrow, _) = &sig.output {
            return Err(syn::Error::new(
                arrow.spans[0],
                "an element-wise kernel returns nothing: it writes its results through `&mut` parameters",
            ));
        }
        for param in &sig.generics.params {
            match param {
                GenericParam::Type(_) => {}
                GenericParam::Lifetime(l) => {
                    return Err(syn::Error::new(
                        l.span(),
                        "an element-wise kernel takes no lifetime parameters: its references are elements, elided",
                    ));
                }
                GenericParam::Const(c) => {
                    return Err(syn::Error::new(
                        c.span(),
                        "an element-wise kernel takes type parameters only (pass numbers as scalar parameters)",
                    ));
                }
            }
        }
        let mut types = Types::default();
        let mut params = Vec::new();
        for input in &sig.inputs {
            let FnArg::Typed(typed) = input else {
                return Err(syn::Error::new(input.span(), "an element-wise kernel takes no `self`"));
            };
            let (ident, mutable) = match &*typed.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => (p.ident.clone(), p.mutability.is_some()),
                other => {
                    return Err(syn::Error::new(
                        other.span(),
                        "a kernel parameter is one name (`x: &T`, `a: T`, `mut a: T`): patterns are not in the subset",
                    ));
                }
            };
            let (kind, elem) = match &*typed.ty {
                Type::Reference(r) => {
                    if let Some(lifetime) = &r.lifetime {
                        return Err(syn::Error::new(
                            lifetime.span(),
                            "a view parameter is `&T` or `&mut T`, without a lifetime",
                        ));
                    }
                    if mutable {
                        return Err(syn::Error::new(
                            ident.span(),
                            "a view parameter is not `mut`: write `out: &mut T`",
                        ));
                    }
                    let kind = if r.mutability.is_some() { Kind::Write } else { Kind::Read };
                    (kind, (*r.elem).clone())
                }
                other => (Kind::Scalar, other.clone()),
            };
            check_element_type(&elem)?;
            let ty = types.index(&elem);
            params.push(Param { ident, mutable, kind, elem, ty });
        }
        if !params.iter().any(|p| p.kind == Kind::Write) {
            return Err(syn::Error::new(
                sig.paren_token.span.join(),
                "an element-wise kernel writes at least one view: give it a `&mut T` parameter",
            ));
        }
        let views = params.iter().filter(|p| p.kind != Kind::Scalar).count();
        if views > crate::elementwise::MAX_VIEWS {
            return Err(syn::Error::new(
                sig.paren_token.span.join(),
                format!("an element-wise kernel takes at most {} view parameters", crate::elementwise::MAX_VIEWS),
            ));
        }
        Ok(Self {
            attrs: &item.attrs,
            vis: &item.vis,
            ident: &sig.ident,
            generics: &sig.generics,
            params,
            body: &item.block,
            types,
            fn_span: sig.fn_token.span,
            item,
        })
    }

    /// The signature's and the body's tokens (without attributes).
    pub(crate) fn fn_token_stream(&self, tokens: &mut proc_macro2::TokenStream) {
        use quote::ToTokens;
        self.item.sig.to_tokens(tokens);
        self.item.block.to_tokens(tokens);
    }
}

/// An element type in a signature, a `let` or a cast: a path (`T`, `f32`, `Rgba`, `half::f16`).
pub(crate) fn check_element_type(ty: &Type) -> syn::Result<()> {
    match ty {
        Type::Path(p) if p.qself.is_none() => Ok(()),
        Type::Paren(p) => check_element_type(&p.elem),
        Type::Reference(r) => Err(syn::Error::new(
            r.and_token.span,
            "views are parameters only: a kernel's values are element types (`T`, `f32`, a derived type)",
        )),
        other => Err(syn::Error::new(
            other.span(),
            "a kernel's types are element types named by a path (`T`, `f32`, `half::f16`, a derived type)",
        )),
    }
}
