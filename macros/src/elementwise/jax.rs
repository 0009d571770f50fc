//! `#[jax]` on an element-wise kernel: the kernel becomes a JAX kernel, an XLA FFI handler
//! (`dlspan::jax::elementwise::Kernel`) whose arguments, checks and CPU and CUDA handlers follow
//! from its signature, as `#[torch]`'s do (the same [`signature`] reading).
//!
//! - `x: &T` is an array argument; `out: &mut T` that the body only writes a result, in
//!   declaration order; a view the body reads and writes is refused (JAX arrays are immutable);
//! - a scalar is an XLA attribute of its name: a float, an integer or a `bool`;
//! - `#[jax(strict)]`: the arrays have one shape (no broadcasting).

use super::ast::Kernel;
use super::torch::{Framework, Signature, signature};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Attribute;
use syn::spanned::Spanned;

/// The JAX kernel a kernel declares with `#[jax]`.
pub(crate) struct JaxAttr {
    /// The attribute's span, for errors about the whole declaration.
    pub(crate) span: Span,
    /// `strict`: the arguments have one shape (no broadcasting).
    pub(crate) strict: bool,
    /// The derived backward (`#[differentiable]`'s), whose handlers are registered with the
    /// kernel's.
    pub(crate) backward: Option<syn::Path>,
}

/// Whether `attr` is `#[jax]` or `#[jax(...)]`.
pub(crate) fn is_jax(attr: &Attribute) -> bool {
    attr.path().is_ident("jax")
}

/// Reads the kernel's `#[jax]` attribute, if any (one at most).
pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<Option<JaxAttr>> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| is_jax(a)) {
        if found.is_some() {
            return Err(syn::Error::new(attr.span(), "a kernel is one JAX kernel: one `#[jax]`"));
        }
        let mut strict = false;
        if !matches!(attr.meta, syn::Meta::Path(_)) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("strict") && !strict {
                    strict = true;
                    Ok(())
                } else {
                    Err(meta.error("`#[jax(..)]` takes `strict` (no broadcasting), once"))
                }
            })?;
        }
        found = Some(JaxAttr { span: attr.span(), strict, backward: None });
    }
    Ok(found)
}

/// The JAX items of `kernel`: its `Kernel` implementation, inside `dlspan::__jax!` (which refuses
/// it, with a clear error, without feature `jax`).
pub(crate) fn expand(kernel: &Kernel<'_>, attr: &JaxAttr, reads_output: &[bool]) -> syn::Result<TokenStream> {
    let ident = kernel.ident;
    let Signature { views, scalars, order, bound, run, .. } =
        signature(kernel, reads_output, attr.span, Framework::Jax)?;
    let name = syn::ext::IdentExt::unraw(ident).to_string();
    let strict = attr.strict;
    let backward = match &attr.backward {
        Some(path) => quote! {
            const BACKWARD: ::core::option::Option<::dlspan::jax::elementwise::Entry> =
                ::core::option::Option::Some(::dlspan::jax::elementwise::Entry::of::<#path>());
        },
        None => TokenStream::new(),
    };
    Ok(quote! {
        ::dlspan::__jax! {
            impl ::dlspan::jax::elementwise::Kernel for #ident {
                const SPEC: ::dlspan::kernel::signature::Spec = ::dlspan::kernel::signature::Spec {
                    name: #name,
                    views: &[#(#views),*],
                    scalars: &[#(#scalars),*],
                    bound: ::dlspan::kernel::signature::Bound::#bound,
                    strict: #strict,
                };
                const ORDER: &'static [bool] = &[#(#order),*];
                #backward

                fn run<__DlspanE: ::dlspan::jax::elementwise::Exec>(
                    on: __DlspanE,
                    args: &mut ::dlspan::jax::elementwise::Args<'_>,
                ) -> ::core::result::Result<(), ::dlspan::jax::JaxError> {
                    #run
                }
            }
        }
    })
}
