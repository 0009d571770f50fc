//! `kernel!`: a raw kernel — a Rust signature of typed views and scalars, and a CUDA C++ body —
//! compiled by NVRTC for a stream and by the host C++ compiler for the CPU.
//!
//! `ast` reads the signature and the body, `expand` writes the Rust items (the record of the
//! kernel, `instance`, `launch`); the C++ around the body is generated at run time, per
//! instantiation, by `dlspan::kernel::RawInstance`.

mod ast;
mod expand;

use proc_macro2::TokenStream;
use syn::ItemFn;

/// Parses and expands one raw kernel.
pub(crate) fn kernel(tokens: TokenStream) -> TokenStream {
    let item: ItemFn = match syn::parse2(tokens) {
        Ok(item) => item,
        Err(mut error) => {
            error.combine(syn::Error::new(
                error.span(),
                "kernel! takes one function: `fn name<T>(x: &[T; 2], out: &mut [T; 2], a: T) { r#\"CUDA C++\"# }`",
            ));
            return error.to_compile_error();
        }
    };
    match ast::Kernel::from_syn(&item).and_then(|kernel| expand::expand(&kernel)) {
        Ok(tokens) => tokens,
        Err(error) => {
            // The kernel's name stays defined, so that its uses report nothing further.
            let (vis, ident) = (&item.vis, &item.sig.ident);
            let error = error.to_compile_error();
            quote::quote! {
                #error
                #[allow(non_camel_case_types, dead_code)]
                #vis struct #ident;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_limits_are_the_runtimes() {
        assert_eq!(super::ast::MAX_VIEWS, dlspan::kernel::MAX_VIEWS);
        assert_eq!(super::ast::MAX_RANK, dlspan::kernel::MAX_RAW_RANK);
    }
}
