//! The rules of `mdspan!` that need no types: known layout and space names, supported rank,
//! extents that fit `usize`, and an alignment that is a power of two.

use super::ast::{Extent, Input};

/// The layouts `layout = ...` accepts, with the runtime type each names.
pub(crate) const LAYOUTS: [(&str, &str); 4] = [
    ("right", "LayoutRight"),
    ("left", "LayoutLeft"),
    ("stride", "LayoutStride"),
    ("stride_relaxed", "LayoutStrideRelaxed"),
];

/// The spaces `space = ...` accepts, with the runtime type each names.
pub(crate) const SPACES: [(&str, &str); 3] = [("host", "Host"), ("device", "Device"), ("managed", "Managed")];

/// Highest rank of a tuple extents type in the runtime crate: a copy of
/// `dlspan::view::MAX_STATIC_EXTENTS_RANK` (this crate cannot depend on the runtime, which depends on
/// it), held equal to it by the test below.
pub(crate) const MAX_STATIC_EXTENTS_RANK: usize = 12;

/// Collects every error of the input.
pub(crate) fn check(input: &Input) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    if let Some(layout) = &input.layout
        && !LAYOUTS.iter().any(|(name, _)| layout == name)
    {
        errors.push(syn::Error::new(
            layout.span(),
            format!("unknown layout `{layout}`: expected `right`, `left`, `stride` or `stride_relaxed`"),
        ));
    }
    if let Some(space) = &input.space
        && !SPACES.iter().any(|(name, _)| space == name)
    {
        errors.push(syn::Error::new(
            space.span(),
            format!("unknown memory space `{space}`: expected `host`, `device` or `managed`"),
        ));
    }
    if let Some(align) = &input.align {
        match align.base10_parse::<usize>() {
            Ok(n) if n.is_power_of_two() => {}
            _ => errors.push(syn::Error::new(
                align.span(),
                "`align` is a byte alignment: a power of two (such as 16, 32 or 64)",
            )),
        }
    }
    let any_static = input.extents.iter().any(|e| !matches!(e, Extent::Dynamic(_)));
    if any_static && input.extents.len() > MAX_STATIC_EXTENTS_RANK {
        errors.push(syn::Error::new(
            input.extents_span,
            format!(
                "rank {} with static extents is not supported: static extents go up to rank {MAX_STATIC_EXTENTS_RANK} \
                 (all-`dyn` extents have no limit)",
                input.extents.len()
            ),
        ));
    }
    for extent in &input.extents {
        if let Extent::Literal(lit) = extent {
            if lit.base10_digits().starts_with('-') {
                errors.push(syn::Error::new(lit.span(), "an extent cannot be negative"));
            } else if let Err(e) = lit.base10_parse::<usize>() {
                errors.push(syn::Error::new(lit.span(), format!("a static extent must fit usize: {e}")));
            }
        }
    }
    match errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    }) {
        Some(all) => Err(all),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    /// The rank `mdspan!` refuses beyond is the rank the runtime's tuple extents types stop at.
    #[test]
    fn static_extents_rank_is_the_runtimes() {
        assert_eq!(super::MAX_STATIC_EXTENTS_RANK, dlspan::view::MAX_STATIC_EXTENTS_RANK);
    }
}
