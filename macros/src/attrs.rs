//! The attributes a kernel macro (`elementwise!`, `kernel!`) accepts on its `fn`.

use syn::Attribute;
use syn::spanned::Spanned;

/// Sorts `attrs` into doc comments (for the kernel's struct) and lint attributes (`allow`, `warn`,
/// `deny`, `expect`, for the generated code); attributes named in `own` are the macro's (read
/// elsewhere, skipped here); any other attribute is `refusal`, at the attribute.
pub(crate) fn docs_and_lints<'a>(
    attrs: &'a [Attribute],
    own: &[&str],
    refusal: &str,
) -> syn::Result<(Vec<&'a Attribute>, Vec<&'a Attribute>)> {
    let (mut docs, mut lints) = (Vec::new(), Vec::new());
    for attr in attrs {
        let path = attr.path();
        if own.iter().any(|name| path.is_ident(name)) {
            continue;
        }
        if path.is_ident("doc") {
            docs.push(attr);
        } else if ["allow", "warn", "deny", "expect"].iter().any(|lint| path.is_ident(lint)) {
            lints.push(attr);
        } else {
            return Err(syn::Error::new(attr.span(), refusal));
        }
    }
    Ok((docs, lints))
}
