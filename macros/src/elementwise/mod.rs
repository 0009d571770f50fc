//! `elementwise!`: an element-wise kernel written once, as a Rust function over scalars, run as
//! Rust on the CPU and translated to CUDA C++ for the GPU.
//!
//! `ast` reads the signature, `valid` checks the body against the subset (errors at the token),
//! `translate` writes the CUDA C++, `expand` the Rust items, `fallback` the output on error.

mod ast;
mod expand;
mod fallback;
mod torch;
mod translate;
mod valid;

use proc_macro2::TokenStream;
use syn::ItemFn;

/// The most view parameters of a kernel (`dlspan::kernel::MAX_VIEWS`; a test keeps them equal).
pub(crate) const MAX_VIEWS: usize = 8;

/// Parses, checks, translates and expands one kernel.
pub(crate) fn elementwise(tokens: TokenStream) -> TokenStream {
    let item: ItemFn = match syn::parse2(tokens) {
        Ok(item) => item,
        Err(error) => {
            let mut error = error;
            error.combine(syn::Error::new(
                error.span(),
                "elementwise! takes one function: `fn name<T: Scalar>(a: T, x: &T, out: &mut T) { ... }`",
            ));
            return error.to_compile_error();
        }
    };
    let mut kernel = match ast::Kernel::from_syn(&item) {
        Ok(kernel) => kernel,
        Err(error) => return fallback::unparsed(&item, error),
    };
    let result = valid::check(&mut kernel).and_then(|analysis| {
        let translation = translate::translate(&kernel, &analysis.reads_output)?;
        expand::expand(&kernel, &analysis, &translation, false)
    });
    result.unwrap_or_else(|error| fallback::stub(&kernel, error))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_view_limit_is_the_runtimes() {
        assert_eq!(super::MAX_VIEWS, dlspan::kernel::MAX_VIEWS);
    }
}
