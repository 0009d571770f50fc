//! The parsed input of `mdspan!`, keeping the user's tokens for spans.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Block, Ident, LitInt, Path, Token, Type};

/// One extent: a literal, `dyn`, or a braced const expression.
pub(crate) enum Extent {
    Literal(LitInt),
    Dynamic(Token![dyn]),
    Const(Block),
}

/// `mdspan!([&'a] [mut] T; extents [; options])`.
pub(crate) struct Input {
    pub(crate) lifetime: Option<syn::Lifetime>,
    pub(crate) mutable: Option<Token![mut]>,
    pub(crate) elem: Type,
    pub(crate) extents: Vec<Extent>,
    /// Span of the extents list, for rank errors.
    pub(crate) extents_span: Span,
    pub(crate) layout: Option<Ident>,
    pub(crate) space: Option<Ident>,
    /// `align = N`: the view type states that its first element is aligned to `N` bytes.
    pub(crate) align: Option<LitInt>,
    pub(crate) krate: Option<Path>,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let (lifetime, mutable) = if input.peek(Token![&]) {
            let amp: Token![&] = input.parse()?;
            if !input.peek(syn::Lifetime) {
                return Err(syn::Error::new(
                    amp.span,
                    "a reference element needs a lifetime: write `&'a T` (or `T` for an elided one)",
                ));
            }
            (Some(input.parse()?), input.parse()?)
        } else {
            (None, input.parse()?)
        };
        let elem: Type = input.parse()?;
        let semi: Option<Token![;]> = input.parse()?;
        if semi.is_none() && !input.is_empty() {
            return Err(input.error("expected `;` between the element type and the extents"));
        }
        let mut extents = Vec::new();
        let start_span = input.span();
        while !input.is_empty() && !input.peek(Token![;]) {
            let extent = if input.peek(Token![dyn]) {
                Extent::Dynamic(input.parse()?)
            } else if input.peek(LitInt) {
                Extent::Literal(input.parse()?)
            } else if input.peek(syn::token::Brace) {
                Extent::Const(input.parse()?)
            } else {
                return Err(input.error("an extent is an integer literal, `dyn`, or a `{ const expression }`"));
            };
            extents.push(extent);
            if input.is_empty() || input.peek(Token![;]) {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        let extents_span = extents
            .iter()
            .map(|e| match e {
                Extent::Literal(lit) => lit.span(),
                Extent::Dynamic(d) => d.span,
                Extent::Const(b) => b.span(),
            })
            .reduce(|a, b| a.join(b).unwrap_or(a))
            .unwrap_or(start_span);
        let mut parsed = Input {
            lifetime,
            mutable,
            elem,
            extents,
            extents_span,
            layout: None,
            space: None,
            align: None,
            krate: None,
        };
        if input.parse::<Option<Token![;]>>()?.is_some() {
            parse_options(input, &mut parsed)?;
        }
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the options"));
        }
        Ok(parsed)
    }
}

/// `key = value` pairs separated by commas: `layout`, `space`, `align`, `crate`.
fn parse_options(input: ParseStream<'_>, parsed: &mut Input) -> syn::Result<()> {
    while !input.is_empty() {
        let key: Ident = if input.peek(Token![crate]) {
            let token: Token![crate] = input.parse()?;
            Ident::new("crate", token.span)
        } else {
            input.parse()?
        };
        input.parse::<Token![=]>()?;
        let duplicate = || syn::Error::new(key.span(), format!("duplicate option `{key}`"));
        match key.to_string().as_str() {
            "layout" => {
                if parsed.layout.is_some() {
                    return Err(duplicate());
                }
                parsed.layout = Some(input.parse()?);
            }
            "space" => {
                if parsed.space.is_some() {
                    return Err(duplicate());
                }
                parsed.space = Some(input.parse()?);
            }
            "align" => {
                if parsed.align.is_some() {
                    return Err(duplicate());
                }
                parsed.align = Some(input.parse()?);
            }
            "crate" => {
                if parsed.krate.is_some() {
                    return Err(duplicate());
                }
                parsed.krate = Some(input.parse()?);
            }
            _ => {
                return Err(syn::Error::new(
                    key.span(),
                    format!("unknown option `{key}`: mdspan! takes `layout`, `space`, `align` and `crate`"),
                ));
            }
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(())
}
