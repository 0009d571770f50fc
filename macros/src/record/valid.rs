//! The syntactic rules of `#[derive(DlRecord)]`; member sizes and offsets are proven by the
//! generated code at compile time.

use super::ast::Input;
use crate::repr::ReprKind;
use syn::spanned::Spanned;

pub(crate) fn check(input: &Input<'_>) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        errors.push(syn::Error::new(
            input.generics.span(),
            "DlRecord cannot be derived for a generic type: member offsets must be constants",
        ));
    }
    if !matches!(input.repr.kind, ReprKind::C) {
        errors.push(syn::Error::new(
            input.ident.span(),
            "DlRecord requires #[repr(C)]: member views are shared with C and DLPack consumers, which need the C layout",
        ));
    }
    if input.field_count == 0 {
        errors.push(syn::Error::new(input.ident.span(), "DlRecord requires at least one field"));
    }
    match errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    }) {
        Some(all) => Err(all),
        None => Ok(()),
    }
}
