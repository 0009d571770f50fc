//! Output on error: the spanned errors, plus a stub impl so that code using the type does not
//! report a second, misleading "not a DLPack element" error for the same mistake.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput};

/// The errors, and a stub impl when the input is a non-generic struct.
pub(crate) fn derive(input: &DeriveInput, error: syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    let stub_possible = matches!(input.data, Data::Struct(_)) && input.generics.params.is_empty();
    if !stub_possible {
        return errors;
    }
    let ident = &input.ident;
    let krate = crate::default_crate_path();
    // The stub only exists alongside a `compile_error!`, so the crate never compiles with it and no
    // value of the type is ever read through it.
    quote! {
        #errors
        #[automatically_derived]
        unsafe impl #krate::DlElement for #ident {
            const DTYPE: #krate::ffi::DLDataType = #krate::ffi::DLDataType { code: 0, bits: 8, lanes: 1 };
        }
    }
}
