//! `#[derive(DlElement)]`.

mod ast;
mod attr;
mod expand;
mod fallback;
mod valid;

use proc_macro2::TokenStream;
use syn::DeriveInput;

/// Expands the derive: the impl and its proofs, or spanned errors plus a stub impl.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let result = ast::Input::from_syn(input).and_then(|parsed| {
        valid::check(&parsed)?;
        let krate = crate::default_crate_path();
        Ok(expand::derive(&parsed, &krate))
    });
    result.unwrap_or_else(|error| fallback::derive(input, error))
}
