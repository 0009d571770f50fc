//! `mdspan!`: the type DSL for views.

mod ast;
mod expand;
mod valid;

use proc_macro2::TokenStream;

/// Parses, validates and expands; errors become `compile_error!` at the user's tokens.
pub(crate) fn mdspan(tokens: TokenStream) -> TokenStream {
    let result = syn::parse2::<ast::Input>(tokens).and_then(|input| {
        valid::check(&input)?;
        Ok(expand::mdspan(&input))
    });
    result.unwrap_or_else(|error| error.to_compile_error())
}
