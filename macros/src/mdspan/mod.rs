//! `mdspan!`: the type DSL for views.

mod ast;
mod expand;
mod valid;

use proc_macro2::TokenStream;

/// Parses, validates and expands; errors become `compile_error!` at the user's tokens.
///
/// In type position a failed `compile_error!` stands for `()`, and every use of the type then fails
/// again (`(): TryFrom<…>` is not satisfied, no method on `()`), burying the one error that matters.
/// The errors go inside an array length instead: the array's length is then an erroneous constant,
/// which makes the whole type an error type that silences those follow-on errors.
pub(crate) fn mdspan(tokens: TokenStream) -> TokenStream {
    let result = syn::parse2::<ast::Input>(tokens).and_then(|input| {
        valid::check(&input)?;
        Ok(expand::mdspan(&input))
    });
    result.unwrap_or_else(|error| {
        let errors = error.to_compile_error();
        quote::quote!([(); { #errors 0 }])
    })
}
