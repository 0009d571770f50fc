//! The `#[dl(...)]` attributes of `#[derive(DlRecord)]`: `#[dl(skip)]` on fields.

use syn::Attribute;

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

/// Checks the type-level `#[dl(...)]` keys: DlRecord takes none of its own (there is deliberately no
/// `crate = path`: the generated `unsafe` call relies on the real runtime crate), but tolerates
/// DlElement's when both derives share the attribute.
pub(crate) fn check_type_attrs(attrs: &[Attribute]) -> syn::Result<()> {
    for attr in attrs.iter().filter(|a| a.path().is_ident("dl")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("code") || meta.path.is_ident("bits") || meta.path.is_ident("lanes") {
                let _: syn::Expr = meta.value()?.parse()?;
                Ok(())
            } else {
                Err(meta.error("unknown #[dl(...)] key: DlRecord takes `skip` on fields"))
            }
        })?;
    }
    Ok(())
}
