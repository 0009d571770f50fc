//! Parsing of `#[repr(...)]`, shared by the derives.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, LitInt};

/// The layout a derive found in `#[repr(...)]` attributes.
pub(crate) enum ReprKind {
    /// No `#[repr]` naming a layout.
    Missing,
    /// `#[repr(transparent)]`.
    Transparent,
    /// `#[repr(C)]`, optionally with `align(N)`.
    C,
}

/// The `#[repr(...)]` of a struct.
pub(crate) struct Repr {
    pub(crate) kind: ReprKind,
    /// `align(N)` with its span, when present.
    pub(crate) align: Option<(u64, Span)>,
    /// Span of the first `#[repr]` attribute naming a layout, for diagnostics.
    pub(crate) span: Option<Span>,
}

impl Repr {
    /// Reads every `#[repr(...)]`; `packed`, integer reprs and `Rust` are errors at their token.
    pub(crate) fn from_attrs(attrs: &[Attribute]) -> syn::Result<Self> {
        let mut repr = Self { kind: ReprKind::Missing, align: None, span: None };
        for attr in attrs.iter().filter(|a| a.path().is_ident("repr")) {
            attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if path.is_ident("C") {
                    repr.kind = ReprKind::C;
                    repr.span.get_or_insert(attr.span());
                } else if path.is_ident("transparent") {
                    repr.kind = ReprKind::Transparent;
                    repr.span.get_or_insert(attr.span());
                } else if path.is_ident("align") {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    let lit: LitInt = content.parse()?;
                    repr.align = Some((lit.base10_parse()?, lit.span()));
                } else if path.is_ident("packed") {
                    return Err(meta.error(
                        "repr(packed) is not supported: a DLPack element must keep the alignment its \
                         lanes need; use #[repr(C)] or #[repr(transparent)]",
                    ));
                } else {
                    return Err(meta.error(
                        "unsupported repr: a DLPack element needs #[repr(C)] (optionally with align(N)) or \
                         #[repr(transparent)]",
                    ));
                }
                if meta.input.peek(syn::token::Paren) {
                    return Err(meta.error("unexpected arguments in repr"));
                }
                Ok(())
            })?;
        }
        Ok(repr)
    }
}
