//! The Rust side of `elementwise!`: a unit struct named as the kernel, with
//!
//! - `element`: the body as Rust, operators and math methods rewritten into calls of
//!   `dlspan::kernel::ops` (spanned at the user's tokens, so rustc's type errors point there), so
//!   that the CPU computes exactly what the CUDA translation computes;
//! - `run(on, args...)`: the kernel over views, on `dlspan::kernel::Cpu` or a CUDA stream, with the
//!   kernel's own parameter list (scalars by value, `&view`, `&mut view`);
//! - `instance::<T..>()` and `def()`: the instantiation and the record the CUDA generator reads,
//!   whose `static` (`ElementwiseDef`) holds the translation.
//!
//! Every path is absolute (`::dlspan`, `::core`).

use super::ast::{Kernel, Kind};
use super::translate::{Piece, Translation};
use super::valid::{Analysis, Scope, Var, class, compound, path_name};
use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{BinOp, Block, Expr, GenericParam, Stmt, UnOp};

/// Expands a checked and translated kernel; a `stub` (for a kernel with errors, beside them) has
/// the same items with an `element` that is never called, so that uses report nothing further.
pub(crate) fn expand(
    kernel: &Kernel<'_>,
    analysis: &Analysis,
    translation: &Translation,
    stub: bool,
    derived: Option<(&syn::Ident, &syn::Ident)>,
) -> syn::Result<TokenStream> {
    let ident = kernel.ident;
    let vis = kernel.vis;
    let (docs, lints) = attributes(kernel)?;
    let def_name = format_ident!("__DLSPAN_ELEMENTWISE_{}", ident);
    let def = definition(kernel, analysis, translation, &def_name);
    let element = element(kernel, &lints, stub);
    let (instance, run, body_impl) = (instance(kernel, analysis), run(kernel), body_impl(kernel));
    // An operator's error is reported beside the kernel's items, which stay usable.
    let torch = super::torch::parse(kernel.attrs)
        .and_then(|attr| match (attr, derived) {
            (Some(attr), Some(_)) if attr.backward.is_some() => Err(syn::Error::new(
                attr.span,
                "`#[differentiable]` derives this operator's backward: leave out `backward = ...`",
            )),
            (Some(mut attr), Some((backward, tangent))) => {
                attr.backward = Some(backward.clone().into());
                attr.tangent = Some(tangent.clone().into());
                Ok(Some(attr))
            }
            (attr, _) => Ok(attr),
        })
        .and_then(|attr| attr.map(|attr| super::torch::expand(kernel, &attr, &analysis.reads_output)).transpose())
        .map_or_else(|error| error.to_compile_error(), Option::unwrap_or_default);
    let jax = super::jax::parse(kernel.attrs)
        .map(|attr| {
            attr.map(|mut attr| {
                attr.backward = derived.map(|(backward, _)| backward.clone().into());
                attr
            })
        })
        .and_then(|attr| attr.map(|attr| super::jax::expand(kernel, &attr, &analysis.reads_output)).transpose())
        .map_or_else(|error| error.to_compile_error(), Option::unwrap_or_default);
    Ok(quote! {
        #(#docs)*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #vis struct #ident;

        #def

        #body_impl

        impl #ident {
            #element

            /// The kernel as the CUDA generator reads it (its translation and parameters).
            #[doc(hidden)]
            #vis fn def() -> &'static ::dlspan::kernel::ElementwiseDef {
                &#def_name
            }

            #instance

            #run
        }

        #torch

        #jax
    })
}

/// The user's doc attributes (for the struct) and lint attributes (for `element`).
fn attributes<'a>(kernel: &'a Kernel<'_>) -> syn::Result<(Vec<&'a syn::Attribute>, Vec<&'a syn::Attribute>)> {
    crate::attrs::docs_and_lints(
        kernel.attrs,
        &["torch", "jax", "differentiable"],
        "an element-wise kernel takes doc comments, lint attributes (`#[allow(...)]`), `#[differentiable]`, `#[torch(\"ns::name\")]` and `#[jax]` only",
    )
}

/// The `static` record of the kernel.
fn definition(
    kernel: &Kernel<'_>,
    analysis: &Analysis,
    translation: &Translation,
    def_name: &syn::Ident,
) -> TokenStream {
    let name = kernel.ident.to_string();
    let line = match kernel.fn_span.start().line {
        0 => quote!(::core::line!()),
        line => {
            let line = line as u32;
            quote!(#line)
        }
    };
    let params = kernel.params.iter().zip(&analysis.reads_output).map(|(p, &read)| {
        let name = p.ident.to_string();
        let ty = p.ty;
        let kind = match p.kind {
            Kind::Scalar => quote!(::dlspan::kernel::ParamKind::Scalar),
            Kind::Read => quote!(::dlspan::kernel::ParamKind::Read),
            Kind::Write => quote!(::dlspan::kernel::ParamKind::Write { read: #read }),
        };
        quote!(::dlspan::kernel::Param { name: #name, kind: #kind, ty: #ty })
    });
    let types = kernel.types.types.len();
    let cast_targets = &analysis.cast_targets;
    let fields = analysis.fields;
    let pieces = translation.pieces.iter().map(|piece| match piece {
        Piece::Text(text) => quote!(#text),
        Piece::File => quote!(::core::file!()),
    });
    let lines = translation.lines.iter().map(|(line, text)| quote!((#line, #text)));
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        static #def_name: ::dlspan::kernel::ElementwiseDef = ::dlspan::kernel::ElementwiseDef {
            name: #name,
            file: ::core::file!(),
            line: #line,
            params: &[#(#params),*],
            types: #types,
            cast_targets: &[#(#cast_targets),*],
            fields: #fields,
            source: ::core::concat!(#(#pieces),*),
            lines: &[#(#lines),*],
        };
    }
}

/// The names of the user's type parameters.
pub(super) fn type_params<'a>(kernel: &Kernel<'a>) -> Vec<&'a syn::Ident> {
    kernel
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(&t.ident),
            _ => None,
        })
        .collect()
}

/// `element`: the body as Rust.
fn element(kernel: &Kernel<'_>, lints: &[&syn::Attribute], stub: bool) -> TokenStream {
    let vis = kernel.vis;
    let generics = kernel.generics.params.iter();
    let where_clause = where_clause(kernel);
    let params = kernel.params.iter().map(param);
    let body = if stub {
        quote!({ ::core::unreachable!("this kernel did not compile") })
    } else {
        Rewriter { scope: Scope::of(kernel) }.block(kernel.body)
    };
    quote! {
        /// The kernel's body for one element, as Rust: what `run` calls on the CPU, and the
        /// reference the CUDA translation is tested against.
        #(#lints)*
        #[inline(always)]
        #[allow(unused_mut, unused_parens, unused_variables, clippy::all, clippy::multiple_bound_locations)]
        #vis fn element<#(#generics),*>(#(#params),*) where #where_clause #body
    }
}

/// A parameter as the kernel declares it: `mut a: T`, `x: &T`, `out: &mut T`.
pub(super) fn param(p: &super::ast::Param) -> TokenStream {
    let (ident, elem) = (&p.ident, &p.elem);
    let mutable = p.mutable.then(|| quote!(mut));
    match p.kind {
        Kind::Scalar => quote!(#mutable #ident: #elem),
        Kind::Read => quote!(#ident: &#elem),
        Kind::Write => quote!(#ident: &mut #elem),
    }
}

/// The user's where-clause predicates, each followed by a comma (nothing without a where clause).
pub(super) fn user_predicates(kernel: &Kernel<'_>) -> TokenStream {
    let predicates = kernel.generics.where_clause.iter().flat_map(|w| w.predicates.iter());
    quote!(#(#predicates,)*)
}

/// The where clause of the generated functions: the user's, and every type parameter an element
/// type.
fn where_clause(kernel: &Kernel<'_>) -> TokenStream {
    let params = type_params(kernel);
    let user = user_predicates(kernel);
    quote!(#user #(#params: ::dlspan::DlElement,)*)
}

/// `instance::<T..>()`.
fn instance(kernel: &Kernel<'_>, analysis: &Analysis) -> TokenStream {
    let vis = kernel.vis;
    let params = kernel.generics.params.iter();
    let where_clause = where_clause(kernel);
    let without_fields = (!analysis.fields).then(|| quote!(.without_fields()));
    let infos = kernel.types.types.iter().map(|ty| quote!(::dlspan::kernel::TypeInfo::of::<#ty>() #without_fields));
    let asserts = kernel.types.types.iter().map(|ty| {
        quote_spanned! {ty.span()=>
            ::dlspan::__private::assert_element::<#ty>();
        }
    });
    quote! {
        /// The kernel instantiated with these types, as the CUDA tiers compile it.
        #[allow(clippy::multiple_bound_locations)]
        #vis fn instance<#(#params),*>() -> ::dlspan::kernel::Instance where #where_clause {
            #(#asserts)*
            ::dlspan::kernel::Instance::new(Self::def(), const { &[#(#infos),*] })
        }
    }
}

/// `run(on, args...)`.
fn run(kernel: &Kernel<'_>) -> TokenStream {
    let vis = kernel.vis;
    let user_params: Vec<_> = kernel.generics.params.iter().collect();
    let type_params = type_params(kernel);
    let where_clause = where_clause(kernel);
    let executor = format_ident!("__DlspanE");
    let rank = format_ident!("__DLSPAN_R");
    let mut view_types = Vec::new();
    let mut bounds = Vec::new();
    let mut params = Vec::new();
    let mut views = Vec::new();
    let mut scalars = Vec::new();
    let (mut scalar_types, mut scalar_names) = (Vec::new(), Vec::new());
    for (k, p) in kernel.params.iter().enumerate() {
        let (ident, elem) = (&p.ident, &p.elem);
        match p.kind {
            Kind::Scalar => {
                scalar_types.push(elem);
                scalar_names.push(ident);
                params.push(quote!(#ident: #elem));
                scalars.push(quote_spanned!(elem.span()=> ::dlspan::kernel::scalar_bytes(&#ident)));
            }
            Kind::Read | Kind::Write => {
                let x = format_ident!("__DlspanX{}", k);
                let (reference, role) = match p.kind {
                    Kind::Read => (quote!(&), quote!(Read)),
                    _ => (quote!(&mut), quote!(Write)),
                };
                params.push(quote!(#ident: #reference #x));
                bounds.push(quote_spanned!(ident.span()=> #x: ::dlspan::kernel::#role<#executor, #rank, Elem = #elem>));
                view_types.push(x);
                views.push(ident);
            }
        }
    }
    let count = views.len();
    let method = |name: &str, doc: &str| {
        let name = format_ident!("{}", name);
        quote! {
            #[doc = #doc]
            #[allow(clippy::too_many_arguments, clippy::multiple_bound_locations)]
            #vis fn #name<#executor, #(#user_params,)* #(#view_types,)* const #rank: usize>(
                self,
                __dlspan_on: #executor,
                #(#params),*
            ) -> ::core::result::Result<(), <#executor as ::dlspan::kernel::Executor>::Error>
            where
                #executor: ::dlspan::kernel::Executor,
                #where_clause
                #(#bounds,)*
            {
                let __dlspan_call = ::dlspan::kernel::Call {
                    instance: Self::instance::<#(#type_params),*>(),
                    scalars: &[#(#scalars),*],
                };
                ::dlspan::kernel::ViewArgs::<#executor, #rank, #count>::#name(
                    (#(#views,)*),
                    __dlspan_on,
                    &__dlspan_call,
                    ::dlspan::kernel::Bound::<Self, (#(#type_params,)*), (#(#scalar_types,)*)>::new(
                        &self,
                        (#(#scalar_names,)*),
                    ),
                )
            }
        }
    };
    let run = method(
        "run",
        " Runs the kernel over views: on [`dlspan::kernel::Cpu`] (host and managed views), or on a\n \
         CUDA stream (`&dlspan::cuda::Stream`: device and managed views). Read views are\n \
         broadcast to the shape of the first written view (NumPy's rule).",
    );
    let run_exact = method(
        "run_exact",
        " As `run`, but broadcasting no axis a view has: each is the first written view's extent\n \
         (`DlpackError::KernelBroadcastRefused` for an extent of 1 that `run` would broadcast); a\n \
         read view of fewer axes still broadcasts along the leading axes it lacks (a `[D]` bias\n \
         over `[N, D]` rows, never a `[1]` one).",
    );
    quote!(#run #run_exact)
}

/// `impl Body for` the kernel's struct: the body on one element as the CPU walk calls it (rule
/// K13), `element` with the scalar arguments and the references to each view's element.
fn body_impl(kernel: &Kernel<'_>) -> TokenStream {
    let ident = kernel.ident;
    let user_params = kernel.generics.params.iter();
    let type_params = type_params(kernel);
    let where_clause = where_clause(kernel);
    let lifetime = quote!('__dlspan_a);
    let (mut scalar_types, mut scalar_names, mut item_types, mut item_names) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for p in &kernel.params {
        let (name, elem) = (&p.ident, &p.elem);
        match p.kind {
            Kind::Scalar => {
                scalar_types.push(elem);
                scalar_names.push(name);
            }
            Kind::Read => {
                item_types.push(quote!(&#lifetime #elem));
                item_names.push(name);
            }
            Kind::Write => {
                item_types.push(quote!(&#lifetime mut #elem));
                item_names.push(name);
            }
        }
    }
    // Scalars cloned out of the tuple, not moved: an element type is `Copy` (so the clone is a
    // copy), and a scalar that is not an element type (refused at the kernel's `run`) reports no
    // second error here.
    let args = kernel.params.iter().map(|p| {
        let name = &p.ident;
        match p.kind {
            Kind::Scalar => quote!(::core::clone::Clone::clone(#name)),
            _ => quote!(#name),
        }
    });
    quote! {
        #[allow(clippy::multiple_bound_locations, clippy::unused_unit, unused_parens)]
        impl<#lifetime, #(#user_params),*> ::dlspan::kernel::Body<
            (#(#type_params,)*),
            (#(#scalar_types,)*),
            (#(#item_types,)*),
        > for #ident
        where
            #where_clause
        {
            #[inline(always)]
            fn call(&self, __dlspan_scalars: &(#(#scalar_types,)*), (#(#item_names,)*): (#(#item_types,)*)) {
                let (#(#scalar_names,)*) = __dlspan_scalars;
                Self::element::<#(#type_params),*>(#(#args),*)
            }
        }
    }
}

/// Rewrites a checked body into Rust whose operators are `dlspan::kernel::ops` calls.
struct Rewriter {
    scope: Scope,
}

impl Rewriter {
    fn block(&mut self, block: &Block) -> TokenStream {
        self.scope.push();
        let stmts: Vec<TokenStream> = block.stmts.iter().map(|s| self.stmt(s)).collect();
        self.scope.pop();
        let mut out = TokenStream::new();
        block.brace_token.surround(&mut out, |tokens| tokens.extend(stmts));
        out
    }

    fn stmt(&mut self, stmt: &Stmt) -> TokenStream {
        match stmt {
            Stmt::Local(local) => {
                let init = local.init.as_ref().expect("checked");
                let value = self.value(&init.expr);
                let (let_token, pat, eq, semi) = (&local.let_token, &local.pat, &init.eq_token, &local.semi_token);
                let mutable = match pat {
                    syn::Pat::Ident(p) => p.mutability.is_some(),
                    syn::Pat::Type(t) => matches!(&*t.pat, syn::Pat::Ident(p) if p.mutability.is_some()),
                    _ => false,
                };
                let name = match pat {
                    syn::Pat::Ident(p) => p.ident.to_string(),
                    syn::Pat::Type(t) => match &*t.pat {
                        syn::Pat::Ident(p) => p.ident.to_string(),
                        _ => String::new(),
                    },
                    _ => String::new(),
                };
                self.scope.bind(name, Var::Local { mutable });
                quote!(#let_token #pat #eq #value #semi)
            }
            Stmt::Expr(expr, semi) => {
                let expr = self.statement(expr);
                quote!(#expr #semi)
            }
            Stmt::Item(_) | Stmt::Macro(_) => unreachable!("checked"),
        }
    }

    fn statement(&mut self, expr: &Expr) -> TokenStream {
        match expr {
            Expr::Assign(a) => {
                let (left, eq, right) = (self.place(&a.left), &a.eq_token, self.value(&a.right));
                quote!(#left #eq #right)
            }
            Expr::Binary(b) => {
                let op = compound(&b.op).expect("checked");
                let f = format_ident!("{}", op, span = b.op.span());
                let (left, right) = (self.place(&b.left), self.value(&b.right));
                quote_spanned!(b.op.span()=> #left = ::dlspan::kernel::ops::#f(#left, #right))
            }
            Expr::If(i) => {
                let (if_token, cond) = (&i.if_token, self.value(&i.cond));
                let then = self.block(&i.then_branch);
                let otherwise = i.else_branch.as_ref().map(|(else_token, e)| {
                    let e = match &**e {
                        Expr::Block(b) => self.block(&b.block),
                        other => self.statement(other),
                    };
                    quote!(#else_token #e)
                });
                quote!(#if_token #cond #then #otherwise)
            }
            Expr::Paren(p) => self.statement(&p.expr),
            _ => unreachable!("checked"),
        }
    }

    /// A place, as written (views dereferenced by the user, fields auto-dereferenced by Rust).
    fn place(&mut self, expr: &Expr) -> TokenStream {
        expr.to_token_stream()
    }

    fn value(&mut self, expr: &Expr) -> TokenStream {
        match expr {
            Expr::Lit(syn::ExprLit { lit, .. }) => typed_literal(lit, None).unwrap_or_else(|| expr.to_token_stream()),
            Expr::Path(_) => expr.to_token_stream(),
            Expr::Paren(p) => {
                let inner = self.value(&p.expr);
                let mut out = TokenStream::new();
                p.paren_token.surround(&mut out, |tokens| tokens.extend(inner));
                out
            }
            Expr::Unary(u) => match u.op {
                UnOp::Deref(_) => expr.to_token_stream(),
                UnOp::Neg(minus) => {
                    if is_literal(&u.expr) {
                        literal_of(&u.expr)
                            .and_then(|lit| typed_literal(lit, Some(minus.span)))
                            .unwrap_or_else(|| expr.to_token_stream())
                    } else {
                        let inner = self.value(&u.expr);
                        quote_spanned!(minus.span=> ::dlspan::kernel::ops::neg(#inner))
                    }
                }
                UnOp::Not(not) => {
                    let inner = self.value(&u.expr);
                    quote_spanned!(not.span=> ::dlspan::kernel::ops::not(#inner))
                }
                _ => unreachable!("checked"),
            },
            Expr::Binary(b) => {
                let (l, r) = (self.value(&b.left), self.value(&b.right));
                let span = b.op.span();
                match b.op {
                    BinOp::And(op) => quote!((#l #op #r)),
                    BinOp::Or(op) => quote!((#l #op #r)),
                    op => {
                        class(&op).expect("checked");
                        let f = format_ident!("{}", function(&op), span = span);
                        quote_spanned!(span=> ::dlspan::kernel::ops::#f(#l, #r))
                    }
                }
            }
            Expr::Cast(c) => {
                // A literal cast with `as` is typed as Rust types it (`f64`, `i32`), before the cast.
                let inner = if is_literal(&c.expr) { c.expr.to_token_stream() } else { self.value(&c.expr) };
                let ty = &c.ty;
                quote_spanned!(c.as_token.span=> ::dlspan::kernel::ops::cast::<#ty, _>(#inner))
            }
            Expr::If(i) => {
                let (if_token, cond) = (&i.if_token, self.value(&i.cond));
                let then = self.branch(&i.then_branch);
                let otherwise = match &i.else_branch {
                    Some((else_token, e)) => {
                        let e = match &**e {
                            Expr::Block(b) => self.branch(&b.block),
                            other => {
                                let v = self.value(other);
                                quote!(#v)
                            }
                        };
                        quote!(#else_token #e)
                    }
                    None => unreachable!("checked"),
                };
                quote!(#if_token #cond #then #otherwise)
            }
            Expr::MethodCall(m) => {
                let receiver = self.receiver(&m.receiver);
                let args: Vec<TokenStream> = m.args.iter().map(|a| self.value(a)).collect();
                let method = &m.method;
                quote_spanned!(method.span()=> ::dlspan::kernel::ops::#method(#receiver #(, #args)*))
            }
            Expr::Field(f) => {
                let base = self.field_base(&f.base);
                let (dot, member) = (&f.dot_token, &f.member);
                quote!(#base #dot #member)
            }
            _ => unreachable!("checked"),
        }
    }

    /// A branch of an `if` value: `{ value }`.
    fn branch(&mut self, block: &Block) -> TokenStream {
        let value = match block.stmts.as_slice() {
            [Stmt::Expr(e, None)] => self.value(e),
            _ => unreachable!("checked"),
        };
        let mut out = TokenStream::new();
        block.brace_token.surround(&mut out, |tokens| tokens.extend(value));
        out
    }

    /// A method's receiver: a view parameter is dereferenced (`x.sqrt()` is `sqrt(*x)`).
    fn receiver(&mut self, expr: &Expr) -> TokenStream {
        if let Some(name) = path_name(expr)
            && matches!(self.scope.get(&name), Some(Var::Read | Var::Write))
        {
            return quote_spanned!(expr.span()=> (*#expr));
        }
        self.value(expr)
    }

    /// The base of a field: a view parameter or another place as written (Rust auto-dereferences),
    /// another value rewritten.
    fn field_base(&mut self, expr: &Expr) -> TokenStream {
        match expr {
            Expr::Path(_) | Expr::Unary(_) => expr.to_token_stream(),
            Expr::Field(f) => {
                let base = self.field_base(&f.base);
                let (dot, member) = (&f.dot_token, &f.member);
                quote!(#base #dot #member)
            }
            Expr::Paren(p) => {
                let inner = self.field_base(&p.expr);
                let mut out = TokenStream::new();
                p.paren_token.surround(&mut out, |tokens| tokens.extend(inner));
                out
            }
            other => self.value(other),
        }
    }
}

/// Whether an expression is a numeric literal (through parentheses).
fn is_literal(expr: &Expr) -> bool {
    literal_of(expr).is_some()
}

/// The numeric literal an expression is (through parentheses).
fn literal_of(expr: &Expr) -> Option<&syn::Lit> {
    match expr {
        Expr::Lit(l) if matches!(l.lit, syn::Lit::Int(_) | syn::Lit::Float(_)) => Some(&l.lit),
        Expr::Paren(p) => literal_of(&p.expr),
        _ => None,
    }
}

/// An unsuffixed numeric literal (negated when `minus` is its `-`), as a call whose type Rust
/// infers from the operand the literal meets, so that literals take the operand's type in generic
/// bodies as in concrete ones (rule K2): `ops::flit(2.5f64, 2.5f32)` for a float (each value as
/// Rust parses the literal for that type; `ops::flit64` when the value is out of `f32`'s range),
/// `ops::ilit::<_, 300, false>()` for an integer (checked at compile time against the type it
/// takes). `None` for a suffixed literal (its own type) or anything else.
fn typed_literal(lit: &syn::Lit, minus: Option<proc_macro2::Span>) -> Option<TokenStream> {
    let span = lit.span();
    let sign = if minus.is_some() { "-" } else { "" };
    match lit {
        syn::Lit::Float(f) if f.suffix().is_empty() => {
            let digits = f.base10_digits();
            let wide = syn::LitFloat::new(&format!("{digits}f64"), span);
            let narrow = syn::LitFloat::new(&format!("{digits}f32"), span);
            let minus = minus.map(|m| quote_spanned!(m=> -));
            Some(match digits.parse::<f32>() {
                Ok(v) if v.is_finite() => {
                    quote_spanned!(span=> ::dlspan::kernel::ops::flit(#minus #wide, #minus #narrow))
                }
                _ => quote_spanned!(span=> ::dlspan::kernel::ops::flit64(#minus #wide)),
            })
        }
        syn::Lit::Int(i) if i.suffix().is_empty() => {
            let value: u128 = i.base10_parse().ok()?;
            let value = syn::LitInt::new(&format!("{value}u128"), span);
            let negative = syn::LitBool::new(!sign.is_empty(), span);
            Some(quote_spanned!(span=> ::dlspan::kernel::ops::ilit::<_, #value, #negative>()))
        }
        _ => None,
    }
}

/// The `dlspan::kernel::ops` function of a binary operator.
fn function(op: &BinOp) -> &'static str {
    match op {
        BinOp::Add(_) => "add",
        BinOp::Sub(_) => "sub",
        BinOp::Mul(_) => "mul",
        BinOp::Div(_) => "div",
        BinOp::Rem(_) => "rem",
        BinOp::Eq(_) => "eq",
        BinOp::Ne(_) => "ne",
        BinOp::Lt(_) => "lt",
        BinOp::Le(_) => "le",
        BinOp::Gt(_) => "gt",
        BinOp::Ge(_) => "ge",
        _ => unreachable!("checked"),
    }
}
