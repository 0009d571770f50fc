//! The `#[dl(...)]` attributes of `#[derive(DlElement)]`.

use proc_macro2::Span;
use syn::{Attribute, Ident, LitInt};

/// A type code given in `#[dl(code = ...)]`.
pub(crate) enum Code {
    /// A `DLDataTypeCode` constant name such as `kDLFloat8_e4m3fn`.
    Name(Ident),
    /// A numeric code.
    Number(LitInt),
}

/// An explicit data type: `#[dl(code = ..., bits = ..., lanes = ...)]`.
pub(crate) struct Explicit {
    pub(crate) code: Code,
    pub(crate) bits: LitInt,
    pub(crate) lanes: Option<LitInt>,
    /// Span of the `dl` attribute, where a size mismatch is reported.
    pub(crate) span: Span,
}

/// Everything found in `#[dl(...)]` on the type.
///
/// There is deliberately no `crate = path` key: the generated `unsafe impl` is only sound because
/// its compile-time proofs are the real runtime crate's, so the path is always `::dlspan`.
#[derive(Default)]
pub(crate) struct DlAttrs {
    pub(crate) explicit: Option<Explicit>,
}

/// Parses every `#[dl(...)]`; unknown keys, duplicates, and incomplete data types are errors at the
/// offending token.
pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<DlAttrs> {
    let mut out = DlAttrs::default();
    let mut code: Option<Code> = None;
    let mut bits: Option<LitInt> = None;
    let mut lanes: Option<LitInt> = None;
    let mut span: Option<Span> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("dl")) {
        attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
            let duplicate = || meta.error(format_args!("duplicate `{key}` in #[dl(...)]"));
            match key.as_str() {
                "code" => {
                    if code.is_some() {
                        return Err(duplicate());
                    }
                    let value = meta.value()?;
                    code = Some(if value.peek(LitInt) {
                        Code::Number(value.parse()?)
                    } else {
                        Code::Name(value.parse()?)
                    });
                    span.get_or_insert(meta.path.get_ident().map_or_else(Span::call_site, Ident::span));
                }
                "bits" => {
                    if bits.is_some() {
                        return Err(duplicate());
                    }
                    let lit: LitInt = meta.value()?.parse()?;
                    match lit.base10_parse::<u8>() {
                        Ok(1..) => bits = Some(lit),
                        _ => return Err(syn::Error::new(lit.span(), "`bits` must be an integer from 1 to 255")),
                    }
                }
                "lanes" => {
                    if lanes.is_some() {
                        return Err(duplicate());
                    }
                    let lit: LitInt = meta.value()?.parse()?;
                    match lit.base10_parse::<u16>() {
                        Ok(1..) => lanes = Some(lit),
                        _ => return Err(syn::Error::new(lit.span(), "`lanes` must be an integer from 1 to 65535")),
                    }
                }
                _ => {
                    return Err(meta.error("unknown #[dl(...)] key: DlElement takes `code`, `bits` and `lanes`"));
                }
            }
            Ok(())
        })?;
    }
    match (code, bits) {
        (Some(code), Some(bits)) => {
            out.explicit = Some(Explicit { code, bits, lanes, span: span.unwrap_or_else(Span::call_site) });
        }
        (None, None) => {
            if let Some(lanes) = lanes {
                return Err(syn::Error::new(lanes.span(), "`lanes` needs `code` and `bits` in the same #[dl(...)]"));
            }
        }
        (Some(code), None) => {
            let span = match &code {
                Code::Name(ident) => ident.span(),
                Code::Number(lit) => lit.span(),
            };
            return Err(syn::Error::new(span, "`code` needs `bits`: an explicit data type is (code, bits, lanes)"));
        }
        (None, Some(bits)) => {
            return Err(syn::Error::new(
                bits.span(),
                "`bits` needs `code`: an explicit data type is (code, bits, lanes)",
            ));
        }
    }
    Ok(out)
}
