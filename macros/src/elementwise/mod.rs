//! `elementwise!`: an element-wise kernel written once, as a Rust function over scalars, run as
//! Rust on the CPU and translated to CUDA C++ for the GPU.
//!
//! `ast` reads the signature, `valid` checks the body against the subset (errors at the token),
//! `translate` writes the CUDA C++, `expand` the Rust items, `fallback` the output on error, `diff`
//! the tangent and backward of a `#[differentiable]` kernel.

mod ast;
mod diff;
mod expand;
mod fallback;
mod jax;
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
        // `#[differentiable]`: the tangent and backward, derived and expanded as kernels of their
        // own; an error in the derivation is reported beside the kernel, which stays usable.
        let (derived, derive_error) = match diff::attribute(kernel.attrs) {
            Ok(None) => (None, None),
            Ok(Some(span)) => match diff::derive(&kernel, &analysis, span) {
                Ok(derived) => (Some(derived), None),
                Err(error) => (None, Some(error)),
            },
            Err(error) => (None, Some(error)),
        };
        let names = derived.as_ref().and_then(|d| Some((d.backward.as_ref()?, &d.tangent)));
        let mut tokens = expand::expand(&kernel, &analysis, &translation, false, names)?;
        if let Some(error) = derive_error {
            tokens.extend(error.to_compile_error());
        }
        for item in derived.iter().flat_map(|d| &d.items) {
            tokens.extend(derived_kernel(item));
        }
        tokens.extend(derived.iter().filter_map(|d| d.check.clone()));
        Ok(tokens)
    });
    result.unwrap_or_else(|error| fallback::stub(&kernel, error))
}

/// A derived kernel through the same check, translation and expansion as a written one. Its
/// errors are dlspan's (a body that checks has derivatives that check), reported as such.
fn derived_kernel(item: &ItemFn) -> TokenStream {
    let result = ast::Kernel::from_syn(item).and_then(|mut kernel| {
        let analysis = valid::check(&mut kernel)?;
        let translation = translate::translate(&kernel, &analysis.reads_output)?;
        expand::expand(&kernel, &analysis, &translation, false, None)
    });
    result.unwrap_or_else(|error| {
        let mut report = syn::Error::new(
            item.sig.fn_token.span,
            format!("the derived kernel `{}` does not compile (an error of dlspan's differentiation):", item.sig.ident),
        );
        report.combine(error);
        report.to_compile_error()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_view_limit_is_the_runtimes() {
        assert_eq!(super::MAX_VIEWS, dlspan::kernel::MAX_VIEWS);
    }
}
