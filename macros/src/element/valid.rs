//! The syntactic rules of `#[derive(DlElement)]`. Rules that need types (a field is an element,
//! fields share a data type, no padding, sizes, lane counts) are proven by the generated code at
//! compile time, spanned at the user's tokens.

use super::ast::Input;
use crate::repr::ReprKind;
use syn::spanned::Spanned;

/// Collects every syntactic error of the input.
pub(crate) fn check(input: &Input<'_>) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        errors.push(syn::Error::new(
            input.generics.span(),
            "DlElement cannot be derived for a generic type: the DLPack data type must be one constant",
        ));
    }
    match input.repr.kind {
        ReprKind::Missing => errors.push(syn::Error::new(
            input.ident.span(),
            "DlElement requires #[repr(transparent)] or #[repr(C)]: the default Rust layout is unspecified, \
             and DLPack needs the exact byte layout",
        )),
        ReprKind::Transparent if input.fields.len() > 1 => errors.push(syn::Error::new(
            input.fields[1].span(),
            "a #[repr(transparent)] element has exactly one field; use #[repr(C)] for an element of several lanes",
        )),
        ReprKind::Transparent | ReprKind::C => {}
    }
    if let (ReprKind::Transparent, Some((_, span))) = (&input.repr.kind, input.repr.align) {
        errors.push(syn::Error::new(span, "align(N) cannot be combined with repr(transparent)"));
    }
    if input.fields.is_empty() {
        errors.push(syn::Error::new(
            input.fields_span,
            "DlElement requires at least one field: an element without bytes has no DLPack data type",
        ));
    }
    match errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    }) {
        Some(all) => Err(all),
        None => Ok(()),
    }
}
