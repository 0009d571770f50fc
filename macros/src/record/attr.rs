//! The `#[dl(...)]` attributes of `#[derive(DlRecord)]`: `#[dl(skip)]` on fields, `#[dl(crate =
//! path)]` on the type.

use syn::{Attribute, Path};

/// Whether a field carries `#[dl(skip)]`; any other key is an error at its token.
pub(crate) fn skipped(attrs: &[Attribute]) -> syn::Result<bool> {
    let mut skip = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("dl")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                skip = true;
                Ok(())
            } else {
                Err(meta.error("unknown #[dl(...)] key on a field: DlRecord takes `skip`"))
            }
        })?;
    }
    Ok(skip)
}

/// Checks the type-level `#[dl(...)]` keys DlRecord understands (`crate`), returning the path.
pub(crate) fn check_type_attrs(attrs: &[Attribute]) -> syn::Result<Option<Path>> {
    let mut krate = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("dl")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                krate = Some(meta.value()?.parse()?);
                Ok(())
            } else if meta.path.is_ident("code") || meta.path.is_ident("bits") || meta.path.is_ident("lanes") {
                // DlElement's keys, when both derives share the attribute.
                let _: syn::Expr = meta.value()?.parse()?;
                Ok(())
            } else {
                Err(meta.error("unknown #[dl(...)] key: DlRecord takes `crate` (and `skip` on fields)"))
            }
        })?;
    }
    Ok(krate)
}
