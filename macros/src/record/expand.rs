//! Code generation of `#[derive(DlRecord)]`: one `Member` constant per field, proven at compile
//! time (spanned at the field), and a `const` item that forces every proof where the type is
//! defined.

use super::ast::{Field, Input};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Path;

pub(crate) fn derive(input: &Input<'_>, krate: &Path) -> TokenStream {
    let ident = input.ident;
    let constants = input.fields.iter().map(|field| member_constant(ident, field, krate));
    // Each forcing use is spanned at its field, so notes about a failed proof point there too.
    let forced = input.fields.iter().map(|field| {
        let name = &field.constant;
        quote_spanned!(field.span=> let _ = #ident::#name;)
    });
    quote! {
        #[automatically_derived]
        impl #ident {
            #(#constants)*
        }
        const _: () = {
            #(#forced)*
        };
    }
}

fn member_constant(record: &syn::Ident, field: &Field<'_>, krate: &Path) -> TokenStream {
    let Field { member, vis, ty, constant, span } = field;
    let name = match member {
        syn::Member::Named(ident) => ident.to_string(),
        syn::Member::Unnamed(index) => index.index.to_string(),
    };
    let doc =
        format!("The `{name}` member of `{record}`: `view.member({record}::{constant})` views it in every record.");
    let proofs = quote_spanned! {*span=>
        let __dlspan_problem = #krate::__private::member_problem::<#record, #ty>(::core::mem::offset_of!(#record, #member));
        ::core::assert!(
            !::core::matches!(__dlspan_problem, #krate::__private::MemberProblem::ZeroSized),
            "this member has no size, so it cannot be viewed (skip it with #[dl(skip)])",
        );
        ::core::assert!(
            !::core::matches!(__dlspan_problem, #krate::__private::MemberProblem::SizeDoesNotDivide),
            "this member's size does not divide the record's size, so the records are not a whole number of members apart (skip it with #[dl(skip)])",
        );
        ::core::assert!(
            !::core::matches!(__dlspan_problem, #krate::__private::MemberProblem::OffsetNotMultiple),
            "this member's offset is not a multiple of its size, so it is not a whole element of the record buffer (reorder the fields, or skip it with #[dl(skip)])",
        );
    };
    // The `unsafe` call below is sound because `offset_of!(Record, member)` is the offset of the
    // field `member`, whose type is `ty`: exactly `Member::new_unchecked`'s contract.
    quote! {
        #[doc = #doc]
        #[allow(non_upper_case_globals)]
        #vis const #constant: #krate::record::Member<#record, #ty> = {
            #proofs
            unsafe { #krate::record::Member::new_unchecked(::core::mem::offset_of!(#record, #member)) }
        };
    }
}
