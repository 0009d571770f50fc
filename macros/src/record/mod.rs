//! `#[derive(DlRecord)]`.

mod ast;
mod attr;
mod expand;
mod valid;

use proc_macro2::TokenStream;
use syn::DeriveInput;

/// Expands the derive, or returns the spanned errors.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let result = ast::Input::from_syn(input).and_then(|parsed| {
        valid::check(&parsed)?;
        attr::check_type_attrs(&input.attrs)?;
        let krate = crate::default_crate_path();
        Ok(expand::derive(&parsed, &krate))
    });
    result.unwrap_or_else(|error| error.to_compile_error())
}
