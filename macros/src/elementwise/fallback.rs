//! Output on error: the spanned errors, plus the kernel's items with a body that is never called,
//! so that code calling the kernel does not report a second error for the same mistake.

use super::ast::Kernel;
use super::translate::Translation;
use super::valid::Analysis;
use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

/// The errors of a kernel whose signature was read: its items, stubbed.
pub(crate) fn stub(kernel: &Kernel<'_>, error: syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    let analysis = Analysis {
        cast_targets: Vec::new(),
        fields: false,
        reads_output: kernel.params.iter().map(|_| true).collect(),
        never_read: kernel.params.iter().map(|_| false).collect(),
    };
    let translation = Translation { pieces: Vec::new(), lines: Vec::new() };
    let items = super::expand::expand(kernel, &analysis, &translation, true, None).unwrap_or_default();
    quote!(#errors #items)
}

/// The errors of a kernel whose signature is outside the subset: a unit struct of its name.
pub(crate) fn unparsed(item: &ItemFn, error: syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    let (vis, ident) = (&item.vis, &item.sig.ident);
    quote! {
        #errors
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident;
    }
}
