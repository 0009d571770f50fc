//! `check_gradients`, generated on a differentiable kernel.

use super::Elem;
use crate::elementwise::ast::{Kernel, Kind};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// `check_gradients`, on the forward kernel: its backward and tangent against central finite
/// differences of its `element`, through `dlspan::kernel::check_gradients` (the kernel's type
/// parameters are the method's: instantiate them with `f64` for an exact check). Scalars and the
/// views not differentiated are the method's arguments, by value.
pub(super) fn checker(kernel: &Kernel<'_>, classes: &[Elem]) -> TokenStream {
    let ident = kernel.ident;
    let (tangent, backward) = (format_ident!("{}_tangent", ident), format_ident!("{}_backward", ident));
    let vis = kernel.vis;
    let generics: Vec<_> = kernel.generics.params.iter().collect();
    let floats = crate::elementwise::expand::type_params(kernel);
    let user_where = crate::elementwise::expand::user_predicates(kernel);
    let cast = quote!(::dlspan::kernel::ops::cast);
    let mut args = Vec::new();
    let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
    // Per parameter: the local holding it in each closure, and how it is made.
    let mut x_lets = Vec::new();
    let mut t_lets = Vec::new();
    let mut o_lets = Vec::new();
    let mut o_stores = Vec::new();
    let mut to_lets = Vec::new();
    let mut to_stores = Vec::new();
    let mut g_lets = Vec::new();
    let mut gx_lets = Vec::new();
    let mut gx_stores = Vec::new();
    let (mut forward_args, mut tangent_in, mut tangent_out, mut backward_grads) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut common, mut outs) = (Vec::new(), Vec::new());
    let (mut i, mut o) = (0usize, 0usize);
    for (p, class) in kernel.params.iter().zip(classes) {
        let (name, elem) = (&p.ident, &p.elem);
        let local = format_ident!("__dlgc_{}", name);
        match (p.kind, class) {
            (Kind::Read, Elem::Float) => {
                inputs.push(name.to_string());
                x_lets.push(quote!(let #local: #elem = #cast::<#elem, f64>(__dlg_x[#i]);));
                let t = format_ident!("__dlgc_tangent_{}", name);
                t_lets.push(quote!(let #t: #elem = #cast::<#elem, f64>(__dlg_v[#i]);));
                tangent_in.push(quote!(&#t));
                let g = format_ident!("__dlgc_grad_{}", name);
                gx_lets.push(quote!(let mut #g: #elem = #cast::<#elem, f64>(0.0);));
                gx_stores.push(quote!(__dlg_gx[#i] = #cast::<f64, #elem>(#g);));
                backward_grads.push(quote!(&mut #g));
                forward_args.push(quote!(&#local));
                common.push(quote!(&#local));
                i += 1;
            }
            (Kind::Read, _) => {
                args.push(quote!(#name: #elem));
                forward_args.push(quote!(&#name));
                common.push(quote!(&#name));
            }
            (Kind::Scalar, _) => {
                args.push(quote!(#name: #elem));
                forward_args.push(quote!(#name));
                common.push(quote!(#name));
            }
            (Kind::Write, Elem::Float) => {
                outputs.push(name.to_string());
                o_lets.push(quote!(let mut #local: #elem = #cast::<#elem, f64>(0.0);));
                o_stores.push(quote!(__dlg_out[#o] = #cast::<f64, #elem>(#local);));
                let t = format_ident!("__dlgc_tangent_{}", name);
                to_lets.push(quote!(let mut #t: #elem = #cast::<#elem, f64>(0.0);));
                to_stores.push(quote!(__dlg_tout[#o] = #cast::<f64, #elem>(#t);));
                tangent_out.push(quote!(&mut #t));
                let g = format_ident!("__dlgc_grad_{}", name);
                g_lets.push(quote!(let #g: #elem = #cast::<#elem, f64>(__dlg_g[#o]);));
                forward_args.push(quote!(&mut #local));
                outs.push(quote!(&mut #local));
                backward_grads.insert(o, quote!(&#g));
                o += 1;
            }
            (Kind::Write, _) => {
                o_lets.push(quote!(let mut #local: #elem = ::core::default::Default::default();));
                forward_args.push(quote!(&mut #local));
                outs.push(quote!(&mut #local));
            }
        }
    }
    let turbofish = quote!(::<#(#floats),*>);
    quote! {
        impl #ident {
            /// Checks this kernel's derived backward and tangent against central finite
            /// differences of the kernel itself, at random points
            /// ([`dlspan::kernel::check_gradients`]): instantiate it with `f64` for an exact check.
            /// Scalar parameters, and views that are not differentiated, are given by value.
            #[allow(clippy::too_many_arguments, clippy::multiple_bound_locations, unused_mut)]
            #vis fn check_gradients<#(#generics),*>(
                self,
                #(#args,)*
                __dlg_check: &::dlspan::kernel::GradientCheck,
            ) -> ::core::result::Result<::dlspan::kernel::GradientReport, ::dlspan::kernel::GradientMismatch>
            where #user_where #(#floats: ::dlspan::kernel::Float,)*
            {
                let __dlg_forward = |__dlg_x: &[f64], __dlg_out: &mut [f64]| {
                    #(#x_lets)*
                    #(#o_lets)*
                    Self::element #turbofish(#(#forward_args),*);
                    #(#o_stores)*
                };
                let __dlg_backward = |__dlg_x: &[f64], __dlg_g: &[f64], __dlg_gx: &mut [f64]| {
                    #(#x_lets)*
                    #(#g_lets)*
                    #(#gx_lets)*
                    #backward::element #turbofish(#(#common,)* #(#backward_grads),*);
                    #(#gx_stores)*
                };
                let __dlg_tangent = |__dlg_x: &[f64], __dlg_v: &[f64], __dlg_out: &mut [f64], __dlg_tout: &mut [f64]| {
                    #(#x_lets)*
                    #(#t_lets)*
                    #(#o_lets)*
                    #(#to_lets)*
                    #tangent::element #turbofish(#(#common,)* #(#tangent_in,)* #(#outs,)* #(#tangent_out),*);
                    #(#o_stores)*
                    #(#to_stores)*
                };
                ::dlspan::kernel::check_gradients(
                    &::dlspan::kernel::Functions {
                        inputs: &[#(#inputs),*],
                        outputs: &[#(#outputs),*],
                        forward: &__dlg_forward,
                        backward: &__dlg_backward,
                        tangent: &__dlg_tangent,
                    },
                    __dlg_check,
                )
            }
        }
    }
}
