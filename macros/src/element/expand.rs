//! Code generation of `#[derive(DlElement)]`.
//!
//! The generated code is a module-level const holding the data type and the compile-time proofs, and
//! one `unsafe impl` that names it. Each proof is spanned at the user's token it is about (a field's type, the `#[dl]`
//! attribute, the struct's name), so a failure points there. Paths are absolute (`::core`, the
//! runtime crate's path), so the code compiles under `#![no_implicit_prelude]`.

use super::ast::Input;
use super::attr::{Code, Explicit};
use crate::repr::ReprKind;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Path;
use syn::spanned::Spanned;

/// Expands a validated input.
pub(crate) fn derive(input: &Input<'_>, krate: &Path) -> TokenStream {
    match (&input.dl.explicit, &input.repr.kind) {
        (Some(explicit), _) => explicit_dtype(input, explicit, krate),
        (None, ReprKind::Transparent) => transparent(input, krate),
        (None, _) => lanes(input, krate),
    }
}

/// `#[repr(transparent)]` newtype: the field's data type.
fn transparent(input: &Input<'_>, krate: &Path) -> TokenStream {
    let ident = input.ident;
    let field = input.fields[0];
    let is_element = assert_element(field, krate);
    // The `unsafe impl` below is sound because the struct is `#[repr(transparent)]` over its one
    // field (checked by the macro), so it has the field's size, layout and validity, and the field
    // implements `DlElement` (proven by `assert_element`), whose contract therefore carries over:
    // the field's `VALIDITY` is forwarded, so a newtype of `bool` is checked on import as `bool` is.
    let value = quote!(<#field as #krate::DlElement>::DTYPE);
    let validity = quote!(<#field as #krate::DlElement>::VALIDITY);
    with_proofs(ident, krate, &is_element, &value, Some(&validity), &input.names)
}

/// `#[repr(C)]` struct of N fields of one element type: N times the lanes of that type.
fn lanes(input: &Input<'_>, krate: &Path) -> TokenStream {
    let ident = input.ident;
    let first = input.fields[0];
    let count = input.fields.len();
    let is_element = input.fields.iter().map(|ty| assert_element(ty, krate));
    let same = input.fields.iter().skip(1).map(|ty| {
        quote_spanned! {ty.span()=>
            ::core::assert!(
                #krate::__private::same_element::<#first, #ty>(),
                "this field's DLPack data type or size differs from the first field's: the fields of an element are lanes of one type",
            );
        }
    });
    let lanes_fit = quote_spanned! {ident.span()=>
        ::core::assert!(
            #krate::__private::lanes_fit(<#first as #krate::DlElement>::DTYPE, #count),
            "too many lanes: DLPack counts lanes in a u16, so fields x lanes per field must not exceed 65535",
        );
    };
    let padding_span = input.repr.align.map_or(ident.span(), |(_, span)| span);
    let no_padding = quote_spanned! {padding_span=>
        ::core::assert!(
            ::core::mem::size_of::<#ident>() == #count * ::core::mem::size_of::<#first>(),
            "this element has padding bytes: its size must be the sum of its fields (remove align(N) or make it fit)",
        );
    };
    // The `unsafe impl` below is sound because: the struct is `#[repr(C)]`, so its fields are laid
    // out in order; every field implements `DlElement` (`assert_element`) with the first field's
    // data type and size (`same_element`), so the fields are consecutive lanes of that type with no
    // padding between them (equal sizes, equal alignment requirement of a repr(C) field sequence) and
    // none after them (`no_padding`); the lane count fits the u16 (`lanes_fit`). Size, layout,
    // validity and the absence of interior mutability follow from the fields' own contracts; the
    // validity is the strictest of the fields' (`and`), so lanes of `bool` are checked on import.
    let proofs = quote!(#(#is_element)* #(#same)* #lanes_fit #no_padding);
    let value = quote!(#krate::__private::lanes_dtype(<#first as #krate::DlElement>::DTYPE, #count));
    let fields = &input.fields;
    let validity = quote!(#krate::dtype::Validity::AnyBits #(.and(<#fields as #krate::DlElement>::VALIDITY))*);
    with_proofs(ident, krate, &proofs, &value, Some(&validity), &input.names)
}

/// `#[dl(code = ..., bits = ..., lanes = ...)]` over fields that accept any bytes.
fn explicit_dtype(input: &Input<'_>, explicit: &Explicit, krate: &Path) -> TokenStream {
    let ident = input.ident;
    let code = match &explicit.code {
        // The constant's own span makes an unknown name an error at the user's token.
        Code::Name(name) => quote!(#krate::ffi::DLDataTypeCode::#name),
        Code::Number(number) => quote_spanned!(number.span()=> #krate::ffi::DLDataTypeCode(#number)),
    };
    let bits = &explicit.bits;
    let lanes = explicit.lanes.as_ref().map_or_else(|| quote!(1u16), |lanes| quote!(#lanes));
    let plain = input.fields.iter().map(|ty| {
        quote_spanned! {ty.span()=>
            #krate::__private::assert_plain_bits::<#ty>();
        }
    });
    let fields = &input.fields;
    let no_padding = quote_spanned! {explicit.span=>
        ::core::assert!(
            ::core::mem::size_of::<#ident>() == #krate::__private::sum(&[#(::core::mem::size_of::<#fields>()),*]),
            "this type has padding bytes: its size must be the sum of its fields' sizes (every byte of the storage is data)",
        );
    };
    let size_matches = quote_spanned! {explicit.span=>
        ::core::assert!(
            #krate::__private::storage_matches(__dlspan_dtype, ::core::mem::size_of::<#ident>()),
            "the size of this type does not match its #[dl] data type: size in bits must equal bits x lanes (or, for padded sub-byte storage, bits < 8 and one byte per lane)",
        );
    };
    let width = quote_spanned! {explicit.span=>
        ::core::assert!(
            #krate::__private::width_matches(__dlspan_dtype),
            "DLPack gives this type code one width, and consumers must refuse any other: bits = 8 for kDLBool and the FP8 codes, 6 for FP6, 4 for FP4",
        );
    };
    // The `unsafe impl` below is sound because: the struct is `#[repr(C)]` or `#[repr(transparent)]`
    // (checked by the macro) over fields that accept every bit pattern and have no padding or
    // interior mutability of their own (`assert_plain_bits`), with no padding between or after them
    // (`no_padding`: the struct's size is the sum of theirs), so any bytes a producer writes are a
    // valid value and every byte is initialised data; its size matches the declared bits and lanes
    // (`size_matches`); the byte layout of the declared data type is the user's stated intent of
    // the `#[dl]` attribute, which cannot break validity. The proofs use only `::core` and the real
    // runtime crate (`::dlspan`, never a user-supplied path). Every byte is valid: the default
    // `VALIDITY`, `AnyBits`, holds.
    let proofs = quote!(#(#plain)* #no_padding #size_matches #width);
    let value = quote!(#krate::ffi::DLDataType::new(#code, #bits, #lanes));
    with_proofs(ident, krate, &proofs, &value, None, &[])
}

/// The impl, with the proofs in a named module-level const that holds the data type and the
/// validity: free consts are evaluated where they are defined (so a failed proof is an error even
/// if `DTYPE` is never used), all proofs share one body (so an unmet bound on a field is reported
/// once), and the impl only names the const (so a missing `Copy` is reported once). The proofs read
/// the value as `__dlspan_dtype`; reading `Self::DTYPE` there would be a cycle. `validity`, when
/// given, is the `VALIDITY` forwarded from the fields (the default, `AnyBits`, otherwise); `names`
/// are the fields' names, which element-wise kernels spell in their CUDA C++.
fn with_proofs(
    ident: &syn::Ident,
    krate: &Path,
    proofs: &TokenStream,
    value: &TokenStream,
    validity: Option<&TokenStream>,
    names: &[String],
) -> TokenStream {
    let holder = quote::format_ident!("__DLSPAN_DTYPE_OF_{}", ident);
    let validity = validity.map_or_else(|| quote!(#krate::dtype::Validity::AnyBits), Clone::clone);
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        const #holder: (#krate::ffi::DLDataType, #krate::dtype::Validity) = {
            let __dlspan_dtype: #krate::ffi::DLDataType = #value;
            #proofs
            (__dlspan_dtype, #validity)
        };
        #[automatically_derived]
        unsafe impl #krate::DlElement for #ident {
            const DTYPE: #krate::ffi::DLDataType = #holder.0;
            const VALIDITY: #krate::dtype::Validity = #holder.1;
            const FIELD_NAMES: &'static [&'static str] = &[#(#names),*];
        }
    }
}

/// A call that only compiles when `ty` implements `DlElement`, spanned at `ty`.
fn assert_element(ty: &syn::Type, krate: &Path) -> TokenStream {
    quote_spanned! {ty.span()=>
        #krate::__private::assert_element::<#ty>();
    }
}
