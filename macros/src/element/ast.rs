//! The parsed input of `#[derive(DlElement)]`, keeping the user's tokens for spans.

use super::attr::{self, DlAttrs};
use crate::repr::Repr;
use proc_macro2::Span;
use syn::{Data, DeriveInput, Fields, Generics, Ident, Type};

/// A struct deriving `DlElement`.
pub(crate) struct Input<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a Generics,
    pub(crate) repr: Repr,
    pub(crate) dl: DlAttrs,
    /// The fields in declaration order; empty for a unit struct or empty braces.
    pub(crate) fields: Vec<&'a Type>,
    /// The fields' names in declaration order (`"0"`, `"1"`, ... for tuple fields).
    pub(crate) names: Vec<String>,
    /// Span of the field list (or of the identifier for a unit struct).
    pub(crate) fields_span: Span,
}

impl<'a> Input<'a> {
    /// Parses a derive input; enums and unions are errors spanned at their keyword.
    pub(crate) fn from_syn(node: &'a DeriveInput) -> syn::Result<Self> {
        let data = match &node.data {
            Data::Struct(data) => data,
            Data::Enum(data) => {
                return Err(syn::Error::new(
                    data.enum_token.span,
                    "DlElement cannot be derived for an enum: a DLPack element is a plain struct, and an enum \
                     would turn foreign bytes into invalid discriminants",
                ));
            }
            Data::Union(data) => {
                return Err(syn::Error::new(
                    data.union_token.span,
                    "DlElement cannot be derived for a union: a DLPack element has one meaning per byte; \
                     use a #[repr(transparent)] struct around integer storage with #[dl(code = ..., bits = ...)]",
                ));
            }
        };
        let repr = Repr::from_attrs(&node.attrs)?;
        let dl = attr::parse(&node.attrs)?;
        let names = data
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| f.ident.as_ref().map_or_else(|| i.to_string(), ToString::to_string))
            .collect();
        let (fields, fields_span) = match &data.fields {
            Fields::Named(named) => (named.named.iter().map(|f| &f.ty).collect(), named.brace_token.span.join()),
            Fields::Unnamed(unnamed) => {
                (unnamed.unnamed.iter().map(|f| &f.ty).collect(), unnamed.paren_token.span.join())
            }
            Fields::Unit => (Vec::new(), node.ident.span()),
        };
        Ok(Self { ident: &node.ident, generics: &node.generics, repr, dl, fields, names, fields_span })
    }
}
