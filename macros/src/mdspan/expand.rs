//! Code generation of `mdspan!`: the runtime's view type with absolute paths.

use super::ast::{Extent, Input};
use super::valid::{LAYOUTS, SPACES};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

/// Expands a validated input to `Mdspan<..>` or `MdspanMut<..>`, wrapped in `Aligned<.., N>` for
/// `align = N`.
pub(crate) fn mdspan(input: &Input) -> TokenStream {
    let krate = input.krate.clone().unwrap_or_else(crate::default_crate_path);
    let view = if input.mutable.is_some() { quote!(MdspanMut) } else { quote!(Mdspan) };
    let lifetime = match &input.lifetime {
        Some(lifetime) => quote!(#lifetime),
        None => quote!('_),
    };
    let elem = &input.elem;
    let rank = input.extents.len();
    let extents = if input.extents.iter().all(|e| matches!(e, Extent::Dynamic(_))) {
        quote!(#krate::Dims<#rank>)
    } else {
        let axes = input.extents.iter().map(|extent| match extent {
            Extent::Literal(lit) => {
                let value = lit.base10_parse::<usize>().unwrap_or_default();
                quote!(#krate::Static<#value>)
            }
            Extent::Dynamic(_) => quote!(#krate::Dyn),
            Extent::Const(block) => quote!(#krate::Static<#block>),
        });
        quote!((#(#axes,)*))
    };
    let layout = named_type(&input.layout, &LAYOUTS, "LayoutRight");
    let space = named_type(&input.space, &SPACES, "Host");
    let view = quote! {
        #krate::#view<#lifetime, #elem, #rank, #extents, #krate::#layout, #krate::#space>
    };
    match &input.align {
        Some(align) => quote!(#krate::Aligned<#view, #align>),
        None => view,
    }
}

/// The runtime type an option's value names (validated), or the default.
fn named_type(value: &Option<syn::Ident>, table: &[(&str, &str)], default: &str) -> syn::Ident {
    let name = value.as_ref().and_then(|v| table.iter().find(|(key, _)| v == key)).map_or(default, |(_, ty)| *ty);
    let span = value.as_ref().map_or_else(Span::call_site, syn::Ident::span);
    format_ident!("{}", name, span = span)
}
