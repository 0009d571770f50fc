//! The Rust side of `kernel!`: a unit struct named as the kernel, with
//!
//! - `def()`: the `static` record the runtime generates C++ from (`dlspan::kernel::RawDef`);
//! - `instance::<T..>(views)`: one instantiation, as the NVRTC tier compiles it;
//! - `launch(on, config, args..)` (`unsafe`: the body is C++): the kernel over views, on
//!   `dlspan::kernel::Cpu` or a CUDA stream, with the kernel's own parameter list.
//!
//! Every path is absolute (`::dlspan`, `::core`).

use super::ast::{Body, Kernel, Kind};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

pub(crate) fn expand(kernel: &Kernel<'_>) -> syn::Result<TokenStream> {
    let ident = kernel.ident;
    let vis = kernel.vis;
    let (docs, lints) =
        crate::attrs::docs_and_lints(kernel.attrs, &[], "a raw kernel takes doc comments and lint attributes only")?;
    let def_name = format_ident!("__DLSPAN_KERNEL_{}", ident);
    let name = ident.to_string();
    let line = match kernel.fn_span.start().line {
        0 => quote!(::core::line!()),
        line => {
            let line = line as u32;
            quote!(#line)
        }
    };
    let params = kernel.params.iter().map(|p| {
        let name = p.ident.to_string();
        let (rank, ty) = (p.rank, p.ty);
        let kind = match p.kind {
            Kind::Scalar => quote!(::dlspan::kernel::RawKind::Scalar),
            Kind::Read => quote!(::dlspan::kernel::RawKind::Read),
            Kind::Write => quote!(::dlspan::kernel::RawKind::Write),
        };
        quote!(::dlspan::kernel::RawParam { name: #name, kind: #kind, rank: #rank, ty: #ty })
    });
    let type_names = kernel.types.iter().map(|(_, generic)| match generic {
        Some(g) => {
            let g = g.to_string();
            quote!(::core::option::Option::Some(#g))
        }
        None => quote!(::core::option::Option::None),
    });
    let (source, body_file, body_line) = match &kernel.body {
        Body::Literal { expr, line } => {
            let line = match *line {
                0 => quote!(::core::line!()),
                line => {
                    let line = line as u32;
                    quote!(#line)
                }
            };
            (quote!(#expr), quote!(::core::file!()), line)
        }
        Body::Include { expr, path } => (quote!(#expr), quote!(#path), quote!(1u32)),
    };
    let type_params: Vec<&syn::Ident> = kernel
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(&t.ident),
            _ => None,
        })
        .collect();
    let generics = kernel.generics.params.iter().collect::<Vec<_>>();
    let user_where = kernel.generics.where_clause.as_ref().map(|w| {
        let predicates = &w.predicates;
        quote!(#predicates,)
    });
    let where_clause = quote!(#user_where #(#type_params: ::dlspan::DlElement,)*);
    let infos = kernel.types.iter().map(|(ty, _)| quote!(::dlspan::kernel::TypeInfo::of::<#ty>().without_fields()));
    let asserts = kernel.types.iter().map(|(ty, _)| {
        quote_spanned! {ty.span()=>
            ::dlspan::__private::assert_element::<#ty>();
        }
    });

    // `launch`.
    let executor = format_ident!("__DlspanE");
    let mut view_types = Vec::new();
    let mut bounds = Vec::new();
    let mut args = Vec::new();
    let mut operands = Vec::new();
    let mut scalars = Vec::new();
    let mut view_type_infos = Vec::new();
    for (k, p) in kernel.params.iter().enumerate() {
        let (pident, elem, rank) = (&p.ident, &p.elem, p.rank);
        match p.kind {
            Kind::Scalar => {
                args.push(quote!(#pident: #elem));
                scalars.push(quote_spanned!(elem.span()=> ::dlspan::kernel::scalar_bytes(&#pident)));
            }
            Kind::Read | Kind::Write => {
                let x = format_ident!("__DlspanX{}", k);
                let (reference, role, operand) = match p.kind {
                    Kind::Read => (quote!(&), quote!(Read), quote!(operand)),
                    _ => (quote!(&mut), quote!(Write), quote!(operand_mut)),
                };
                args.push(quote!(#pident: #reference #x));
                bounds.push(quote_spanned!(pident.span()=>
                    #x: ::dlspan::kernel::#role<#executor, #rank, Elem = #elem> + ::dlspan::kernel::RawView<#rank>));
                operands.push(quote!(::dlspan::kernel::RawArg::of(
                    <#x as ::dlspan::kernel::#role<#executor, #rank>>::#operand(#pident))));
                view_type_infos.push(quote!(::dlspan::kernel::ViewType::of::<#x, #rank>()));
                view_types.push(x);
            }
        }
    }
    Ok(quote! {
        #(#docs)*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #vis struct #ident;

        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        static #def_name: ::dlspan::kernel::RawDef = ::dlspan::kernel::RawDef {
            name: #name,
            file: ::core::file!(),
            line: #line,
            params: &[#(#params),*],
            types: &[#(#type_names),*],
            source: #source,
            body_file: #body_file,
            body_line: #body_line,
        };

        #(#lints)*
        impl #ident {
            /// The kernel as the generators read it (its body and parameters).
            #[doc(hidden)]
            #vis fn def() -> &'static ::dlspan::kernel::RawDef {
                &#def_name
            }

            /// The kernel instantiated with these element types and `views` (one per view
            /// parameter, of its rank), as the NVRTC tier compiles it.
            ///
            /// # Panics
            ///
            /// When `views` does not have one view type of the declared rank per view parameter.
            #[allow(clippy::multiple_bound_locations)]
            #vis fn instance<#(#generics),*>(
                views: &'static [::dlspan::kernel::ViewType],
            ) -> ::dlspan::kernel::RawInstance where #where_clause {
                #(#asserts)*
                ::dlspan::kernel::RawInstance::new(Self::def(), const { &[#(#infos),*] }, views)
            }

            /// Launches the kernel with `config` over views and scalars: on
            /// [`dlspan::kernel::Cpu`] (host and managed views; blocks in parallel, returns when
            /// done) or on a CUDA stream (`&dlspan::cuda::Stream`: device and managed views;
            /// asynchronous).
            ///
            /// # Safety
            ///
            /// The body is C++ that Rust does not check: it must access only elements of its
            /// views within their extents, write only the views it takes by `&mut`, and its
            /// threads must not race on an element but through atomics.
            #[allow(clippy::too_many_arguments, clippy::multiple_bound_locations)]
            #vis unsafe fn launch<#executor, #(#generics,)* #(#view_types),*>(
                self,
                __dlspan_on: #executor,
                __dlspan_config: ::dlspan::kernel::LaunchConfig,
                #(#args),*
            ) -> ::core::result::Result<(), <#executor as ::dlspan::kernel::Executor>::RawError>
            where
                #executor: ::dlspan::kernel::Executor,
                #where_clause
                #(#bounds,)*
            {
                let __dlspan_instance = Self::instance::<#(#type_params),*>(const { &[#(#view_type_infos),*] });
                let mut __dlspan_views = [#(#operands),*];
                // SAFETY: the caller's contract, forwarded.
                unsafe {
                    ::dlspan::kernel::Executor::run_raw(
                        __dlspan_on,
                        __dlspan_instance,
                        &__dlspan_config,
                        &mut __dlspan_views,
                        &[#(#scalars),*],
                    )
                }
            }
        }
    })
}
