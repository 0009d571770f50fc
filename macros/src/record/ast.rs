//! The parsed input of `#[derive(DlRecord)]`, keeping the user's tokens for spans.

use super::attr;
use crate::repr::Repr;
use proc_macro2::Span;
use syn::{Data, DeriveInput, Fields, Generics, Ident, Member, Type, Visibility};

/// One field that gets a member constant.
pub(crate) struct Field<'a> {
    pub(crate) member: Member,
    pub(crate) vis: &'a Visibility,
    pub(crate) ty: &'a Type,
    /// The constant's name: the field name in upper case (`FIELD_<n>` for tuple fields).
    pub(crate) constant: Ident,
    pub(crate) span: Span,
}

/// A struct deriving `DlRecord`.
pub(crate) struct Input<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a Generics,
    pub(crate) repr: Repr,
    pub(crate) fields: Vec<Field<'a>>,
    /// Fields before `#[dl(skip)]` filtering, for the "no fields" rule.
    pub(crate) field_count: usize,
}

impl<'a> Input<'a> {
    pub(crate) fn from_syn(node: &'a DeriveInput) -> syn::Result<Self> {
        let data = match &node.data {
            Data::Struct(data) => data,
            Data::Enum(data) => {
                return Err(syn::Error::new(
                    data.enum_token.span,
                    "DlRecord cannot be derived for an enum: members need a fixed layout",
                ));
            }
            Data::Union(data) => {
                return Err(syn::Error::new(
                    data.union_token.span,
                    "DlRecord cannot be derived for a union: its fields overlap",
                ));
            }
        };
        let repr = Repr::from_attrs(&node.attrs)?;
        attr::check_type_attrs(&node.attrs)?;
        let all: Vec<&syn::Field> = match &data.fields {
            Fields::Named(named) => named.named.iter().collect(),
            Fields::Unnamed(unnamed) => unnamed.unnamed.iter().collect(),
            Fields::Unit => Vec::new(),
        };
        let mut fields = Vec::new();
        for (index, field) in all.iter().enumerate() {
            if attr::skipped(&field.attrs)? {
                continue;
            }
            let (member, constant) = match &field.ident {
                Some(ident) => {
                    let name = ident.to_string();
                    let name = name.strip_prefix("r#").unwrap_or(&name);
                    (Member::Named(ident.clone()), Ident::new(&name.to_uppercase(), ident.span()))
                }
                None => (Member::Unnamed(index.into()), Ident::new(&format!("FIELD_{index}"), Span::call_site())),
            };
            let span = field.ident.as_ref().map_or_else(|| syn::spanned::Spanned::span(&field.ty), Ident::span);
            fields.push(Field { member, vis: &field.vis, ty: &field.ty, constant, span });
        }
        Ok(Self { ident: &node.ident, generics: &node.generics, repr, fields, field_count: all.len() })
    }
}
