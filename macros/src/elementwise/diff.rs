//! `#[differentiable]`: the tangent (forward mode) and the backward (reverse mode) of an
//! element-wise body, derived at compile time as two more element-wise kernels, which the same
//! check, translation and expansion then make into CPU and CUDA kernels like any other.
//!
//! The derivation is forward-mode source transformation over the body, which is loop-free scalar
//! code:
//!
//! - every compound expression is bound to a `let` (`__dlg_p<n>`), so that each operation's
//!   derivative can name its operands and its result; the primal computes exactly what the body
//!   computes (the same operations in the same order, so the same bits);
//! - each value carries its tangent along each *direction*: one direction in the tangent kernel
//!   (the tangent views given), one per differentiable input in the backward (seeded with 1 for
//!   that input and 0 for the others), so that a backward is the tangents of the outputs along
//!   each input, dotted with the outputs' gradients. Tangents that are known constants (0, the
//!   seeds' 1, their sums) are folded here, so a direction only computes what depends on its
//!   input, and what two directions share compiles once (the compilers merge equal expressions);
//! - `let mut` bindings that receive a tangent get tangent variables, assigned beside them, and
//!   `if`/`else` keeps its structure: the derivative of the taken branch;
//! - values without a derivative (comparisons, `floor`, `ceil`, `round`, `trunc`, casts to
//!   integers and `bool`) are *discrete*: using one as a condition is fine, but one that reaches a
//!   differentiated output is a compile error at the token that made it, unless marked
//!   `.detach()` (a zero gradient, stated).
//!
//! The conventions where a derivative is undefined are PyTorch's: `abs` has derivative 0 at 0,
//! `min`/`max` split the gradient in halves at a tie, `sqrt` at 0 gives an infinite derivative,
//! `powf`'s exponent has derivative 0 where the base is 0 and the exponent non-negative.

use super::ast::{Kernel, Kind};
use super::valid::{Analysis, Class, class, compound, path_name};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::{HashMap, HashSet};
use syn::spanned::Spanned;
use syn::{Attribute, BinOp, Expr, Ident, ItemFn, Lit, Pat, Stmt, Type, UnOp};

/// `ln 2` and `ln 10`, as the literals the derivatives of `exp2`, `log2` and `log10` use.
const LN_2: f64 = std::f64::consts::LN_2;
const LN_10: f64 = std::f64::consts::LN_10;

/// The span of the kernel's `#[differentiable]` attribute, if it has one (it takes no arguments).
pub(crate) fn attribute(attrs: &[Attribute]) -> syn::Result<Option<Span>> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("differentiable")) {
        if !matches!(attr.meta, syn::Meta::Path(_)) {
            return Err(syn::Error::new(attr.span(), "`#[differentiable]` takes no arguments"));
        }
        if found.is_some() {
            return Err(syn::Error::new(attr.span(), "`#[differentiable]` is written once"));
        }
        found = Some(attr.span());
    }
    Ok(found)
}

/// What a view's element type is, for differentiation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Elem {
    /// `f16`, `bf16`, `f32`, `f64` or a type parameter (bounded by `Float` in the derived kernels).
    Float,
    /// A derived element type (its fields are differentiated in the tangent).
    Record,
    /// An integer, `bool` or FP8 type: not differentiated.
    Constant,
}

/// The class of an element type named by a path.
fn elem_class(ty: &Type, type_params: &[String]) -> Elem {
    match ty {
        Type::Paren(p) => elem_class(&p.elem, type_params),
        Type::Path(p) => {
            let Some(last) = p.path.segments.last() else { return Elem::Record };
            let name = last.ident.to_string();
            if p.path.segments.len() == 1 && type_params.contains(&name) {
                return Elem::Float;
            }
            match name.as_str() {
                "f16" | "bf16" | "f32" | "f64" => Elem::Float,
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128" | "usize"
                | "bool" | "Bool" => Elem::Constant,
                n if n.starts_with("Float8") => Elem::Constant,
                _ => Elem::Record,
            }
        }
        _ => Elem::Record,
    }
}

/// Whether a cast to `ty` keeps a derivative (a float target) or ends it (anything else).
fn cast_keeps_derivative(ty: &Type, type_params: &[String]) -> bool {
    elem_class(ty, type_params) == Elem::Float
}

/// One direction's tangent of a value.
#[derive(Clone)]
enum Lin {
    /// A known constant (0 when the value does not depend on the direction's input).
    Const(f64),
    /// An expression naming the tangent; `volatile` when it names a tangent variable that a later
    /// assignment may change (copied before it is kept).
    Val(TokenStream, bool),
}

impl Lin {
    fn is_zero(&self) -> bool {
        matches!(self, Lin::Const(c) if *c == 0.0)
    }
}

/// A value's tangents, one per direction, or the mark of a value without a derivative.
#[derive(Clone)]
enum Tan {
    Diff(Vec<Lin>),
    /// Depends on a differentiated input through an operation without a derivative: the span of
    /// that operation and its description.
    Discrete(Span, String),
}

/// A value of the body: the expression naming it, its numeric value when it is a bare literal,
/// and its tangent.
#[derive(Clone)]
struct Value {
    op: TokenStream,
    lit: Option<f64>,
    tan: Tan,
}

/// A multiplier or divisor of a tangent: a literal's value, or an expression of the body's type.
enum Factor {
    Known(f64),
    Atom(TokenStream),
}

/// A name in scope.
#[derive(Clone)]
enum Binding {
    /// A view parameter: its index among the kernel's parameters.
    View(usize),
    /// A scalar parameter or a `let`.
    Value {
        /// The tangent (zero for scalars), when not held in variables.
        tan: Tan,
        /// Tangent variables, one per direction, for a `let mut` that receives a tangent.
        vars: Option<Vec<Ident>>,
        /// The declaration's number (which `let mut` bindings get variables is decided by it).
        decl: usize,
        /// The scope frame it was declared in.
        frame: usize,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Tangent,
    Backward,
}

/// The state of one derivation (one pass: `let mut` bindings found to need tangent variables are
/// added to `active` and the pass is run again).
struct Differ<'k> {
    kernel: &'k Kernel<'k>,
    mode: Mode,
    /// The number of directions.
    dirs: usize,
    /// Per parameter: its element class, and its direction (differentiated read views).
    classes: Vec<Elem>,
    direction: Vec<Option<usize>>,
    type_params: Vec<String>,
    frames: Vec<HashMap<String, Binding>>,
    blocks: Vec<Vec<TokenStream>>,
    counter: usize,
    decls: usize,
    active: HashSet<usize>,
    changed: bool,
    errors: Vec<syn::Error>,
    /// Backward: per written view, its tangent variables (one per direction).
    outputs: HashMap<String, Vec<Ident>>,
}

/// The derived kernels of a `#[differentiable]` kernel: the tangent, and the backward (absent for
/// kernels with derived-type views, whose backward is not generated).
pub(crate) struct Derived {
    pub(crate) items: Vec<ItemFn>,
    /// The backward kernel's name.
    pub(crate) backward: Option<Ident>,
    /// The tangent kernel's name.
    pub(crate) tangent: Ident,
}

/// Derives the tangent and backward kernels of `kernel` (marked `#[differentiable]` at `span`).
pub(crate) fn derive(kernel: &Kernel<'_>, analysis: &Analysis, span: Span) -> syn::Result<Derived> {
    let type_params: Vec<String> = super::expand::type_params(kernel).iter().map(|i| i.to_string()).collect();
    let classes: Vec<Elem> = kernel.params.iter().map(|p| elem_class(&p.elem, &type_params)).collect();
    let mut errors: Vec<syn::Error> = Vec::new();
    for ((p, &reads), class) in kernel.params.iter().zip(&analysis.reads_output).zip(&classes) {
        if p.kind == Kind::Write && reads && *class != Elem::Constant {
            errors.push(syn::Error::new(
                p.ident.span(),
                format!(
                    "a differentiable kernel writes its outputs without reading them, and on every path: `{}` is read \
                     (or may be left unwritten); compute into a `let mut` and assign `*{}` once",
                    p.ident, p.ident
                ),
            ));
        }
    }
    let differentiated =
        |kind: Kind| kernel.params.iter().zip(&classes).filter(move |(p, c)| p.kind == kind && **c != Elem::Constant);
    if differentiated(Kind::Read).next().is_none() {
        errors.push(syn::Error::new(
            span,
            "nothing to differentiate: the kernel reads no float view (`x: &T` of a float type or a derived type of floats)",
        ));
    }
    if differentiated(Kind::Write).next().is_none() {
        errors.push(syn::Error::new(span, "nothing to differentiate: the kernel writes no float view"));
    }
    let names: HashSet<String> = kernel.params.iter().map(|p| p.ident.to_string()).collect();
    for (p, _) in differentiated(Kind::Read).chain(differentiated(Kind::Write)) {
        for prefix in ["tangent_", "grad_"] {
            let name = format!("{prefix}{}", p.ident);
            if names.contains(&name) {
                errors.push(syn::Error::new(
                    p.ident.span(),
                    format!("the derived kernels name a parameter `{name}`, which this kernel has: rename it"),
                ));
            }
        }
    }
    let count = |kind: Kind| kernel.params.iter().filter(|p| p.kind == kind).count();
    let (reads, writes) = (count(Kind::Read), count(Kind::Write));
    let (d_reads, d_writes) = (differentiated(Kind::Read).count(), differentiated(Kind::Write).count());
    for (what, views) in [("tangent", reads + d_reads + writes + d_writes), ("backward", reads + d_writes + d_reads)] {
        if views > super::MAX_VIEWS {
            errors.push(syn::Error::new(
                span,
                format!(
                    "the {what} of this kernel takes {views} views (its views, and a {} per float one), more than \
                     the {} a kernel takes: split it into kernels of fewer views",
                    if what == "tangent" { "tangent" } else { "gradient" },
                    super::MAX_VIEWS
                ),
            ));
        }
    }
    if let Some(error) = combine(errors) {
        return Err(error);
    }
    let tangent = run(kernel, Mode::Tangent, &classes, &type_params)?;
    let records = kernel.params.iter().zip(&classes).any(|(p, c)| p.kind != Kind::Scalar && *c == Elem::Record);
    let mut items = vec![tangent];
    let mut backward = None;
    if !records {
        items.push(run(kernel, Mode::Backward, &classes, &type_params)?);
        backward = Some(format_ident!("{}_backward", kernel.ident));
    }
    Ok(Derived { items, backward, tangent: format_ident!("{}_tangent", kernel.ident) })
}

fn combine(errors: Vec<syn::Error>) -> Option<syn::Error> {
    errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    })
}

/// Runs the derivation to its fixed point and writes the derived function.
fn run(kernel: &Kernel<'_>, mode: Mode, classes: &[Elem], type_params: &[String]) -> syn::Result<ItemFn> {
    let mut direction = vec![None; kernel.params.len()];
    let mut dirs = 0;
    for (k, p) in kernel.params.iter().enumerate() {
        if p.kind == Kind::Read && classes[k] != Elem::Constant {
            direction[k] = Some(dirs);
            dirs += 1;
        }
    }
    if mode == Mode::Tangent {
        dirs = 1;
    }
    let mut active = HashSet::new();
    loop {
        let mut differ = Differ {
            kernel,
            mode,
            dirs,
            classes: classes.to_vec(),
            direction: direction.clone(),
            type_params: type_params.to_vec(),
            frames: Vec::new(),
            blocks: vec![Vec::new()],
            counter: 0,
            decls: 0,
            active: active.clone(),
            changed: false,
            errors: Vec::new(),
            outputs: HashMap::new(),
        };
        let body = differ.body();
        if differ.changed {
            active = differ.active;
            continue;
        }
        if let Some(error) = combine(std::mem::take(&mut differ.errors)) {
            return Err(error);
        }
        return Ok(differ.function(body));
    }
}

/// A float literal of `c` (negative ones as `-` and the literal).
fn literal(c: f64) -> TokenStream {
    let text = format!("{:?}", c.abs());
    let lit = syn::LitFloat::new(&text, Span::call_site());
    if c.is_sign_negative() && c != 0.0 { quote!(-#lit) } else { quote!(#lit) }
}

impl Differ<'_> {
    // ----- the derived function -----

    fn function(&self, body: Vec<TokenStream>) -> ItemFn {
        let kernel = self.kernel;
        let suffix = match self.mode {
            Mode::Tangent => "tangent",
            Mode::Backward => "backward",
        };
        let name = format_ident!("{}_{}", kernel.ident, suffix);
        let vis = kernel.vis;
        let generics = kernel.generics.params.iter();
        let user_where = kernel.generics.where_clause.as_ref().map(|w| {
            let predicates = w.predicates.iter();
            quote!(#(#predicates,)*)
        });
        let floats = super::expand::type_params(kernel);
        let param = |p: &super::ast::Param| {
            let (ident, elem) = (&p.ident, &p.elem);
            let mutable = p.mutable.then(|| quote!(mut));
            match p.kind {
                Kind::Scalar => quote!(#mutable #ident: #elem),
                Kind::Read => quote!(#ident: &#elem),
                Kind::Write => quote!(#ident: &mut #elem),
            }
        };
        let differentiated = |kind: Kind| {
            kernel.params.iter().zip(&self.classes).filter(move |(p, c)| p.kind == kind && **c != Elem::Constant)
        };
        let inputs: Vec<_> = kernel.params.iter().filter(|p| p.kind != Kind::Write).map(param).collect();
        let forward = kernel.ident.to_string();
        let (params, doc): (Vec<TokenStream>, String) = match self.mode {
            Mode::Tangent => {
                let tangents_in = differentiated(Kind::Read).map(|(p, _)| {
                    let (t, elem) = (format_ident!("tangent_{}", p.ident), &p.elem);
                    quote!(#t: &#elem)
                });
                let outputs = kernel.params.iter().filter(|p| p.kind == Kind::Write).map(param);
                let tangents_out = differentiated(Kind::Write).map(|(p, _)| {
                    let (t, elem) = (format_ident!("tangent_{}", p.ident), &p.elem);
                    quote!(#t: &mut #elem)
                });
                let params = inputs.iter().cloned().chain(tangents_in).chain(outputs).chain(tangents_out).collect();
                let doc = format!(
                    " The tangent (forward-mode derivative, Jacobian-vector product) of [`{forward}`], derived\n \
                     by `#[differentiable]`: its inputs, then a tangent `tangent_<x>` per float input view,\n \
                     then its outputs, which it computes as `{forward}` does, then a tangent `tangent_<out>`\n \
                     per float output: the derivative of the output along the input tangents. Scalar\n \
                     parameters are not differentiated."
                );
                (params, doc)
            }
            Mode::Backward => {
                let grads_in = differentiated(Kind::Write).map(|(p, _)| {
                    let (g, elem) = (format_ident!("grad_{}", p.ident), &p.elem);
                    quote!(#g: &#elem)
                });
                let grads_out = differentiated(Kind::Read).map(|(p, _)| {
                    let (g, elem) = (format_ident!("grad_{}", p.ident), &p.elem);
                    quote!(#g: &mut #elem)
                });
                let params = inputs.iter().cloned().chain(grads_in).chain(grads_out).collect();
                let doc = format!(
                    " The backward (reverse-mode derivative, vector-Jacobian product) of [`{forward}`], derived\n \
                     by `#[differentiable]`: its inputs, then the gradient `grad_<out>` of each float output,\n \
                     then the gradient `grad_<x>` it writes for each float input view. A gradient is per\n \
                     element: for an input broadcast along an axis, sum its gradient over that axis\n \
                     (`Mdspan::sum_to`).\n \
                     Scalar parameters are not differentiated."
                );
                (params, doc)
            }
        };
        let lints = kernel
            .attrs
            .iter()
            .filter(|a| ["allow", "warn", "deny", "expect", "forbid"].iter().any(|l| a.path().is_ident(l)));
        let torch = self.torch_attr();
        let fn_token = syn::Token![fn](kernel.fn_span);
        let tokens = quote! {
            #[doc = #doc]
            #(#lints)*
            #torch
            #vis #fn_token #name<#(#generics),*>(#(#params),*) where #user_where #(#floats: ::dlspan::kernel::Float,)* {
                #(#body)*
            }
        };
        syn::parse2(tokens).expect("a derived kernel parses")
    }

    /// The derived kernel's `#[torch(...)]`: the forward's operator name with `_backward` or
    /// `_tangent`.
    fn torch_attr(&self) -> Option<TokenStream> {
        let suffix = match self.mode {
            Mode::Tangent => "tangent",
            Mode::Backward => "backward",
        };
        let attr = super::torch::parse(self.kernel.attrs).ok().flatten()?;
        let name = syn::LitStr::new(&format!("{}_{suffix}", attr.name.value()), attr.name.span());
        let strict = attr.strict.then(|| quote!(, strict));
        Some(quote!(#[torch(#name #strict)]))
    }

    // ----- emission -----

    fn emit(&mut self, stmt: TokenStream) {
        self.blocks.last_mut().expect("a block").push(stmt);
    }

    fn fresh(&mut self, prefix: &str) -> Ident {
        self.counter += 1;
        format_ident!("__dlg_{}{}", prefix, self.counter)
    }

    /// `let <fresh> = value;`, its name.
    fn temp(&mut self, value: TokenStream) -> TokenStream {
        let name = self.fresh("p");
        self.emit(quote!(let #name = #value;));
        quote!(#name)
    }

    /// A tangent expression as a `let` of its own.
    fn tangent_temp(&mut self, value: TokenStream) -> Lin {
        let name = self.fresh("t");
        self.emit(quote!(let #name = #value;));
        Lin::Val(quote!(#name), false)
    }

    /// `if cond { a } else { b }` of two tangents, into a variable of `like`'s type.
    fn select(&mut self, cond: &TokenStream, a: &Lin, b: &Lin, like: &TokenStream) -> Lin {
        if let (Lin::Const(x), Lin::Const(y)) = (a, b) {
            if x == y {
                return a.clone();
            }
        }
        let name = self.fresh("s");
        let (a, b) = (lin_tokens(a), lin_tokens(b));
        self.emit(quote!(let mut #name = #like;));
        self.emit(quote!(if #cond { #name = #a; } else { #name = #b; }));
        Lin::Val(quote!(#name), false)
    }

    /// An operand of `like`'s type for a value that may be a bare literal (a literal is bound to a
    /// variable of that type first: comparisons of two literals have no type).
    fn typed(&mut self, value: &Value, like: &TokenStream) -> TokenStream {
        if value.lit.is_none() {
            return value.op.clone();
        }
        let name = self.fresh("l");
        let op = &value.op;
        self.emit(quote!(let mut #name = #like;));
        self.emit(quote!(#name = #op;));
        quote!(#name)
    }

    // ----- tangent arithmetic -----

    fn add(&mut self, a: &Lin, b: &Lin) -> Lin {
        match (a, b) {
            (Lin::Const(x), Lin::Const(y)) => Lin::Const(x + y),
            (z, other) | (other, z) if z.is_zero() => other.clone(),
            (Lin::Val(v, _), Lin::Const(c)) | (Lin::Const(c), Lin::Val(v, _)) => {
                let c = literal(*c);
                self.tangent_temp(quote!(#v + #c))
            }
            (Lin::Val(x, _), Lin::Val(y, _)) => self.tangent_temp(quote!(#x + #y)),
        }
    }

    fn neg(&mut self, a: &Lin) -> Lin {
        match a {
            Lin::Const(c) => Lin::Const(-c),
            Lin::Val(v, _) => self.tangent_temp(quote!(-(#v))),
        }
    }

    fn sub(&mut self, a: &Lin, b: &Lin) -> Lin {
        match (a, b) {
            (Lin::Const(x), Lin::Const(y)) => Lin::Const(x - y),
            (a, z) if z.is_zero() => a.clone(),
            (z, b) if z.is_zero() => self.neg(b),
            (Lin::Val(v, _), Lin::Const(c)) => {
                let c = literal(*c);
                self.tangent_temp(quote!(#v - #c))
            }
            (Lin::Const(c), Lin::Val(v, _)) => {
                let c = literal(*c);
                self.tangent_temp(quote!(#c - #v))
            }
            (Lin::Val(x, _), Lin::Val(y, _)) => self.tangent_temp(quote!(#x - #y)),
        }
    }

    fn mul(&mut self, a: &Lin, f: &Factor) -> Lin {
        if a.is_zero() {
            return Lin::Const(0.0);
        }
        match (a, f) {
            (Lin::Const(c), Factor::Known(k)) => Lin::Const(c * k),
            (Lin::Val(_, _), Factor::Known(k)) if *k == 1.0 => a.clone(),
            (Lin::Val(_, _), Factor::Known(k)) if *k == 0.0 => Lin::Const(0.0),
            (Lin::Val(v, _), Factor::Known(k)) => {
                let k = literal(*k);
                self.tangent_temp(quote!(#v * #k))
            }
            (Lin::Const(c), Factor::Atom(f)) if *c == 1.0 => self.tangent_temp(quote!(#f)),
            (Lin::Const(c), Factor::Atom(f)) => {
                let c = literal(*c);
                self.tangent_temp(quote!(#f * #c))
            }
            (Lin::Val(v, _), Factor::Atom(f)) => self.tangent_temp(quote!(#v * #f)),
        }
    }

    fn div(&mut self, a: &Lin, d: &Factor) -> Lin {
        if a.is_zero() {
            return Lin::Const(0.0);
        }
        match (a, d) {
            (Lin::Const(c), Factor::Known(k)) if *k != 0.0 => Lin::Const(c / k),
            (Lin::Const(_), Factor::Known(_)) => {
                self.errors.push(syn::Error::new(
                    Span::call_site(),
                    "this kernel divides by a zero literal: its derivative is not finite",
                ));
                Lin::Const(0.0)
            }
            (Lin::Val(v, _), Factor::Known(k)) => {
                let k = literal(*k);
                self.tangent_temp(quote!(#v / #k))
            }
            (Lin::Const(c), Factor::Atom(d)) => {
                let c = literal(*c);
                self.tangent_temp(quote!(#c / #d))
            }
            (Lin::Val(v, _), Factor::Atom(d)) => self.tangent_temp(quote!(#v / #d)),
        }
    }

    fn zero(&self) -> Tan {
        Tan::Diff(vec![Lin::Const(0.0); self.dirs])
    }

    /// Whether a tangent depends on a differentiated input.
    fn depends(tan: &Tan) -> bool {
        match tan {
            Tan::Diff(lins) => lins.iter().any(|l| !l.is_zero()),
            Tan::Discrete(..) => true,
        }
    }

    /// The tangent of a value without a derivative made at `span` from `operands`.
    fn discrete(&self, operands: &[&Tan], span: Span, what: &str) -> Tan {
        if let Some(d) = operands.iter().find(|t| matches!(t, Tan::Discrete(..))) {
            return (*d).clone();
        }
        if operands.iter().any(|t| Self::depends(t)) { Tan::Discrete(span, what.to_owned()) } else { self.zero() }
    }

    /// Combines operand tangents direction by direction (a discrete operand makes the result
    /// discrete).
    fn per_direction(&mut self, operands: &[&Tan], mut f: impl FnMut(&mut Self, usize, &[Lin]) -> Lin) -> Tan {
        if let Some(d) = operands.iter().find(|t| matches!(t, Tan::Discrete(..))) {
            return (*d).clone();
        }
        let lins: Vec<&Vec<Lin>> = operands
            .iter()
            .map(|t| match t {
                Tan::Diff(l) => l,
                Tan::Discrete(..) => unreachable!("handled"),
            })
            .collect();
        let mut out = Vec::with_capacity(self.dirs);
        for k in 0..self.dirs {
            let args: Vec<Lin> = lins.iter().map(|l| l[k].clone()).collect();
            out.push(f(self, k, &args));
        }
        Tan::Diff(out)
    }

    // ----- scopes -----

    fn lookup(&self, name: &str) -> Option<(usize, Binding)> {
        self.frames.iter().enumerate().rev().find_map(|(i, f)| f.get(name).map(|b| (i, b.clone())))
    }

    fn bind(&mut self, name: String, binding: Binding) {
        self.frames.last_mut().expect("a frame").insert(name, binding);
    }

    /// The seed of a read view's tangent along direction `k`.
    fn seed(&self, param: usize, k: usize) -> Lin {
        let p = &self.kernel.params[param];
        match (self.mode, self.direction[param]) {
            (_, None) => Lin::Const(0.0),
            (Mode::Tangent, Some(_)) => {
                let t = format_ident!("tangent_{}", p.ident);
                Lin::Val(quote!((*#t)), false)
            }
            (Mode::Backward, Some(d)) => Lin::Const(if d == k { 1.0 } else { 0.0 }),
        }
    }

    fn view_tan(&self, param: usize) -> Tan {
        Tan::Diff((0..self.dirs).map(|k| self.seed(param, k)).collect())
    }

    fn binding_tan(&self, binding: &Binding) -> Tan {
        match binding {
            Binding::View(param) => self.view_tan(*param),
            Binding::Value { tan, vars: None, .. } => tan.clone(),
            Binding::Value { tan, vars: Some(vars), .. } => match tan {
                Tan::Discrete(..) => tan.clone(),
                Tan::Diff(_) => Tan::Diff(vars.iter().map(|v| Lin::Val(quote!(#v), true)).collect()),
            },
        }
    }

    // ----- the body -----

    fn body(&mut self) -> Vec<TokenStream> {
        let kernel = self.kernel;
        let mut params = HashMap::new();
        for (k, p) in kernel.params.iter().enumerate() {
            let binding = match p.kind {
                Kind::Scalar => Binding::Value { tan: self.zero(), vars: None, decl: usize::MAX - k, frame: 0 },
                _ => Binding::View(k),
            };
            params.insert(p.ident.to_string(), binding);
        }
        self.frames.push(params);
        // Mutable scalars that receive a tangent get variables, as `let mut` bindings do.
        for (k, p) in kernel.params.iter().enumerate() {
            if p.kind == Kind::Scalar && p.mutable && self.active.contains(&(usize::MAX - k)) {
                let ident = &p.ident;
                let vars: Vec<Ident> = (0..self.dirs).map(|_| self.fresh("d")).collect();
                for v in &vars {
                    self.emit(quote!(let mut #v = #ident;));
                    self.emit(quote!(#v = 0.0;));
                }
                let decl = usize::MAX - k;
                self.bind(ident.to_string(), Binding::Value { tan: self.zero(), vars: Some(vars), decl, frame: 0 });
            }
        }
        if self.mode == Mode::Backward {
            for (p, c) in kernel.params.iter().zip(self.classes.clone()) {
                if p.kind == Kind::Write && c != Elem::Constant {
                    let elem = &p.elem;
                    let vars: Vec<Ident> = (0..self.dirs).map(|_| self.fresh("o")).collect();
                    for v in &vars {
                        self.emit(quote!(let mut #v: #elem = 0.0;));
                    }
                    self.outputs.insert(p.ident.to_string(), vars);
                }
            }
        }
        self.block_stmts(&kernel.body.stmts);
        if self.mode == Mode::Backward {
            self.dot_products();
        }
        self.blocks.pop().expect("the body")
    }

    /// Backward: each input's gradient, the outputs' gradients dotted with their tangents along
    /// the input's direction.
    fn dot_products(&mut self) {
        let kernel = self.kernel;
        let outputs: Vec<(Ident, Vec<Ident>)> = kernel
            .params
            .iter()
            .filter_map(|p| self.outputs.get(&p.ident.to_string()).map(|v| (p.ident.clone(), v.clone())))
            .collect();
        for (k, p) in kernel.params.iter().enumerate() {
            let Some(d) = self.direction[k] else { continue };
            let grad = format_ident!("grad_{}", p.ident);
            let terms: Vec<TokenStream> = outputs
                .iter()
                .map(|(out, vars)| {
                    let (g, v) = (format_ident!("grad_{}", out), &vars[d]);
                    quote!((*#g * #v))
                })
                .collect();
            self.emit(quote!(*#grad = #(#terms)+*;));
        }
    }

    fn block_stmts(&mut self, stmts: &[Stmt]) {
        self.frames.push(HashMap::new());
        for stmt in stmts {
            self.stmt(stmt);
        }
        self.frames.pop();
    }

    /// A nested block's statements, as tokens.
    fn nested(&mut self, stmts: &[Stmt]) -> Vec<TokenStream> {
        self.blocks.push(Vec::new());
        self.block_stmts(stmts);
        self.blocks.pop().expect("pushed")
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Local(local) => self.local(local),
            Stmt::Expr(expr, _) => self.statement(expr),
            Stmt::Item(_) | Stmt::Macro(_) => unreachable!("checked"),
        }
    }

    fn local(&mut self, local: &syn::Local) {
        let (ident, mutable, ty) = match &local.pat {
            Pat::Ident(p) => (p.ident.clone(), p.mutability.is_some(), None),
            Pat::Type(t) => match &*t.pat {
                Pat::Ident(p) => (p.ident.clone(), p.mutability.is_some(), Some(&*t.ty)),
                _ => unreachable!("checked"),
            },
            _ => unreachable!("checked"),
        };
        let init = &local.init.as_ref().expect("checked").expr;
        let value = self.value(init);
        let op = &value.op;
        let mutability = mutable.then(|| quote!(mut));
        let annotation = ty.map(|ty| quote!(: #ty));
        self.emit(quote!(let #mutability #ident #annotation = #op;));
        let decl = self.decls;
        self.decls += 1;
        let frame = self.frames.len() - 1;
        let binding = if mutable && self.active.contains(&decl) {
            let vars: Vec<Ident> = (0..self.dirs).map(|_| self.fresh("d")).collect();
            let tan = match &value.tan {
                Tan::Diff(lins) => {
                    for (v, lin) in vars.iter().zip(lins) {
                        match lin {
                            Lin::Val(t, _) => self.emit(quote!(let mut #v = #t;)),
                            Lin::Const(c) => {
                                let c = literal(*c);
                                self.emit(quote!(let mut #v = #ident;));
                                self.emit(quote!(#v = #c;));
                            }
                        }
                    }
                    self.zero()
                }
                discrete @ Tan::Discrete(..) => {
                    for v in &vars {
                        self.emit(quote!(let mut #v = #ident;));
                        self.emit(quote!(#v = 0.0;));
                    }
                    discrete.clone()
                }
            };
            Binding::Value { tan, vars: Some(vars), decl, frame }
        } else {
            if mutable && matches!(&value.tan, Tan::Diff(l) if l.iter().any(|l| !l.is_zero())) {
                self.active.insert(decl);
                self.changed = true;
            }
            let tan = self.settle(value.tan);
            Binding::Value { tan, vars: None, decl, frame }
        };
        self.bind(ident.to_string(), binding);
    }

    /// A tangent kept past its statement: volatile expressions copied into `let`s.
    fn settle(&mut self, tan: Tan) -> Tan {
        match tan {
            Tan::Diff(lins) => Tan::Diff(
                lins.into_iter()
                    .map(|l| match l {
                        Lin::Val(v, true) => self.tangent_temp(v),
                        other => other,
                    })
                    .collect(),
            ),
            discrete => discrete,
        }
    }

    fn statement(&mut self, expr: &Expr) {
        match expr {
            Expr::Assign(assign) => {
                let value = self.value(&assign.right);
                self.assign(&assign.left, value);
            }
            Expr::Binary(b) => {
                let op = compound(&b.op).expect("checked");
                // `place op= e` is `place = place op e`: the place read as a value.
                let bin_op: BinOp = match op {
                    "add" => BinOp::Add(Default::default()),
                    "sub" => BinOp::Sub(Default::default()),
                    "mul" => BinOp::Mul(Default::default()),
                    "div" => BinOp::Div(Default::default()),
                    _ => BinOp::Rem(Default::default()),
                };
                let read = Expr::Binary(syn::ExprBinary {
                    attrs: Vec::new(),
                    left: b.left.clone(),
                    op: bin_op,
                    right: b.right.clone(),
                });
                let value = self.value(&read);
                self.assign(&b.left, value);
            }
            Expr::If(i) => {
                let cond = self.value(&i.cond).op;
                let then = self.nested(&i.then_branch.stmts);
                let otherwise = i.else_branch.as_ref().map(|(_, e)| match &**e {
                    Expr::Block(b) => self.nested(&b.block.stmts),
                    other => {
                        self.blocks.push(Vec::new());
                        self.frames.push(HashMap::new());
                        self.statement(other);
                        self.frames.pop();
                        self.blocks.pop().expect("pushed")
                    }
                });
                let otherwise = otherwise.map(|e| quote!(else { #(#e)* }));
                self.emit(quote!(if #cond { #(#then)* } #otherwise));
            }
            Expr::Paren(p) => self.statement(&p.expr),
            _ => unreachable!("checked"),
        }
    }

    /// The root name of a place and the field path below it (`out.a.b` is `out`, `.a.b`).
    fn place_root(expr: &Expr) -> (String, TokenStream) {
        match expr {
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => (path_name(&u.expr).expect("checked"), quote!()),
            Expr::Paren(p) => Self::place_root(&p.expr),
            Expr::Path(_) => (path_name(expr).expect("checked"), quote!()),
            Expr::Field(f) => {
                let (root, path) = Self::place_root(&f.base);
                let member = &f.member;
                (root, quote!(#path . #member))
            }
            _ => unreachable!("checked"),
        }
    }

    fn assign(&mut self, place: &Expr, value: Value) {
        let (root, fields) = Self::place_root(place);
        let whole = fields.is_empty();
        let op = &value.op;
        let Some((frame, binding)) = self.lookup(&root) else { unreachable!("checked") };
        match binding {
            Binding::View(param) => {
                let p = &self.kernel.params[param];
                let class = self.classes[param];
                if self.mode == Mode::Tangent {
                    self.emit(quote!(#place = #op;));
                }
                if class == Elem::Constant {
                    return;
                }
                let lins = match &value.tan {
                    Tan::Discrete(span, what) => {
                        self.errors.push(syn::Error::new(
                            *span,
                            format!(
                                "{what} has no derivative, and the value it makes reaches the output `{}` of this \
                                 differentiable kernel: mark it `.detach()` to take its gradient as zero \
                                 (`x.floor().detach()`), or use it as an `if` condition only",
                                p.ident
                            ),
                        ));
                        return;
                    }
                    Tan::Diff(lins) => lins.clone(),
                };
                match self.mode {
                    Mode::Tangent => {
                        let t = format_ident!("tangent_{}", p.ident);
                        if class == Elem::Record && whole && matches!(lins[0], Lin::Const(_)) {
                            self.errors.push(syn::Error::new(
                                place.span(),
                                "this output of a derived type is given a value that does not depend on the inputs: \
                                 its tangent would be a zero of that type, which the tangent kernel cannot write \
                                 (assign its fields instead)",
                            ));
                            return;
                        }
                        let lin = lin_tokens(&lins[0]);
                        let target = if whole { quote!(*#t) } else { quote!(#t #fields) };
                        self.emit(quote!(#target = #lin;));
                    }
                    Mode::Backward => {
                        let vars = self.outputs.get(&root).cloned().expect("an output");
                        for (v, lin) in vars.iter().zip(&lins) {
                            let lin = lin_tokens(lin);
                            self.emit(quote!(#v = #lin;));
                        }
                    }
                }
            }
            Binding::Value { tan: _, vars, decl, frame: declared } => {
                self.emit(quote!(#place = #op;));
                let current = self.frames.len() - 1;
                let dirs = self.dirs;
                let slot = self.frames[frame].get_mut(&root).expect("found");
                let Binding::Value { tan: kept, .. } = slot else { unreachable!("a value") };
                match (&value.tan, &vars) {
                    (Tan::Discrete(..), _) => *kept = value.tan.clone(),
                    (Tan::Diff(_), _) if whole && declared == current => {
                        if matches!(kept, Tan::Discrete(..)) {
                            *kept = Tan::Diff(vec![Lin::Const(0.0); dirs]);
                        }
                    }
                    _ => {}
                }
                match (vars, value.tan) {
                    (Some(vars), Tan::Diff(lins)) => {
                        for (v, lin) in vars.iter().zip(&lins) {
                            let lin = lin_tokens(lin);
                            self.emit(quote!(#v #fields = #lin;));
                        }
                    }
                    (None, Tan::Diff(lins)) if lins.iter().any(|l| !l.is_zero()) => {
                        self.active.insert(decl);
                        self.changed = true;
                    }
                    _ => {}
                }
            }
        }
    }

    // ----- values -----

    fn literal_value(&self, expr: &Expr, lit: &Lit) -> Value {
        let value = match lit {
            Lit::Float(f) => f.base10_parse::<f64>().ok(),
            Lit::Int(i) => i.base10_parse::<u64>().ok().map(|v| v as f64),
            _ => None,
        };
        Value { op: quote!(#expr), lit: value, tan: self.zero() }
    }

    fn value(&mut self, expr: &Expr) -> Value {
        match expr {
            Expr::Lit(l) => self.literal_value(expr, &l.lit),
            Expr::Paren(p) => {
                let mut inner = self.value(&p.expr);
                let op = &inner.op;
                inner.op = quote!((#op));
                inner
            }
            Expr::Path(_) => {
                let name = path_name(expr).expect("checked");
                let (_, binding) = self.lookup(&name).expect("checked");
                let tan = self.binding_tan(&binding);
                Value { op: quote!(#expr), lit: None, tan }
            }
            Expr::Unary(u) => match u.op {
                UnOp::Deref(_) => {
                    let name = path_name(&u.expr).expect("checked");
                    let (_, binding) = self.lookup(&name).expect("checked");
                    let tan = self.binding_tan(&binding);
                    Value { op: quote!((#expr)), lit: None, tan }
                }
                UnOp::Neg(_) => {
                    let inner = self.value(&u.expr);
                    if let Some(v) = inner.lit {
                        return Value { op: quote!(#expr), lit: Some(-v), tan: self.zero() };
                    }
                    let op = &inner.op;
                    let p = self.temp(quote!(-#op));
                    let tan = self.per_direction(&[&inner.tan], |s, _, l| s.neg(&l[0]));
                    Value { op: p, lit: None, tan }
                }
                UnOp::Not(not) => {
                    let inner = self.value(&u.expr);
                    let op = &inner.op;
                    let p = self.temp(quote!(!#op));
                    let tan = self.discrete(&[&inner.tan], not.span, "a comparison");
                    Value { op: p, lit: None, tan }
                }
                _ => unreachable!("checked"),
            },
            Expr::Binary(b) => self.binary(b),
            Expr::Cast(c) => {
                let inner = self.value(&c.expr);
                let ty = &c.ty;
                let op = &inner.op;
                if inner.lit.is_some() {
                    return Value { op: quote!((#op as #ty)), lit: None, tan: self.zero() };
                }
                let p = self.temp(quote!(#op as #ty));
                let tan = if cast_keeps_derivative(ty, &self.type_params) {
                    self.per_direction(&[&inner.tan], |s, _, l| match &l[0] {
                        Lin::Const(c) => Lin::Const(*c),
                        Lin::Val(v, _) => s.tangent_temp(quote!(#v as #ty)),
                    })
                } else {
                    let what = format!("a cast to `{}`", quote!(#ty).to_string().replace(' ', ""));
                    self.discrete(&[&inner.tan], c.as_token.span, &what)
                };
                Value { op: p, lit: None, tan }
            }
            Expr::If(i) => {
                let cond = self.value(&i.cond);
                let then = match i.then_branch.stmts.as_slice() {
                    [Stmt::Expr(e, None)] => self.value(e),
                    _ => unreachable!("checked"),
                };
                let otherwise = match &i.else_branch {
                    Some((_, e)) => match &**e {
                        Expr::Block(b) => match b.block.stmts.as_slice() {
                            [Stmt::Expr(e, None)] => self.value(e),
                            _ => unreachable!("checked"),
                        },
                        other => self.value(other),
                    },
                    None => unreachable!("checked"),
                };
                let (c, a, b) = (&cond.op, &then.op, &otherwise.op);
                let p = self.temp(quote!(if #c { #a } else { #b }));
                let tan = self.per_direction(&[&then.tan, &otherwise.tan], |s, _, l| s.select(c, &l[0], &l[1], &p));
                Value { op: p, lit: None, tan }
            }
            Expr::MethodCall(m) => self.method(m),
            Expr::Field(f) => {
                let base = self.field_base(&f.base);
                let member = &f.member;
                let base_op = &base.op;
                let op = quote!(#base_op . #member);
                let tan = match base.tan {
                    Tan::Diff(lins) => Tan::Diff(
                        lins.into_iter()
                            .map(|l| match l {
                                Lin::Const(c) => Lin::Const(c),
                                Lin::Val(v, volatile) => Lin::Val(quote!((#v) . #member), volatile),
                            })
                            .collect(),
                    ),
                    discrete => discrete,
                };
                Value { op, lit: None, tan }
            }
            _ => unreachable!("checked"),
        }
    }

    /// The base of a field read: a view as written (`x.r`), a name, or a value.
    fn field_base(&mut self, base: &Expr) -> Value {
        match base {
            Expr::Path(_) => {
                let name = path_name(base).expect("checked");
                let (_, binding) = self.lookup(&name).expect("checked");
                let tan = self.binding_tan(&binding);
                Value { op: quote!(#base), lit: None, tan }
            }
            Expr::Paren(p) => self.field_base(&p.expr),
            other => self.value(other),
        }
    }

    /// A method's receiver: a view is read (`x.sqrt()` is of `*x`).
    fn receiver(&mut self, expr: &Expr) -> Value {
        if let Some(name) = path_name(expr) {
            if let Some((_, binding @ Binding::View(_))) = self.lookup(&name) {
                let tan = self.binding_tan(&binding);
                return Value { op: quote!((*#expr)), lit: None, tan };
            }
        }
        self.value(expr)
    }

    fn factor(value: &Value) -> Factor {
        match value.lit {
            Some(v) => Factor::Known(v),
            None => Factor::Atom(value.op.clone()),
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> Value {
        let (l, r) = (self.value(&b.left), self.value(&b.right));
        let (lo, ro) = (&l.op, &r.op);
        let op = &b.op;
        let span = b.op.span();
        match class(&b.op).expect("checked") {
            Class::Logic | Class::Comparison => {
                let p = self.temp(quote!(#lo #op #ro));
                let tan = self.discrete(&[&l.tan, &r.tan], span, "a comparison");
                Value { op: p, lit: None, tan }
            }
            Class::Arithmetic => {
                let p = self.temp(quote!(#lo #op #ro));
                let (fl, fr) = (Self::factor(&l), Self::factor(&r));
                let tan = match b.op {
                    BinOp::Add(_) => self.per_direction(&[&l.tan, &r.tan], |s, _, t| s.add(&t[0], &t[1])),
                    BinOp::Sub(_) => self.per_direction(&[&l.tan, &r.tan], |s, _, t| s.sub(&t[0], &t[1])),
                    BinOp::Mul(_) => self.per_direction(&[&l.tan, &r.tan], |s, _, t| {
                        let (a, b) = (s.mul(&t[0], &fr), s.mul(&t[1], &fl));
                        s.add(&a, &b)
                    }),
                    BinOp::Div(_) => {
                        let result = Factor::Atom(p.clone());
                        self.per_direction(&[&l.tan, &r.tan], |s, _, t| {
                            let u = s.mul(&t[1], &result);
                            let num = s.sub(&t[0], &u);
                            s.div(&num, &fr)
                        })
                    }
                    _ => {
                        // `a % b` is `a - trunc(a / b) * b`: `da - trunc(a / b) * db`.
                        let q = if Self::depends(&r.tan) && !matches!(r.tan, Tan::Discrete(..)) {
                            Some(Factor::Atom(self.temp(quote!((#lo / #ro).trunc()))))
                        } else {
                            None
                        };
                        self.per_direction(&[&l.tan, &r.tan], |s, _, t| match &q {
                            Some(q) => {
                                let u = s.mul(&t[1], q);
                                s.sub(&t[0], &u)
                            }
                            None => t[0].clone(),
                        })
                    }
                };
                Value { op: p, lit: None, tan }
            }
        }
    }

    fn method(&mut self, m: &syn::ExprMethodCall) -> Value {
        let a = self.receiver(&m.receiver);
        let args: Vec<Value> = m.args.iter().map(|e| self.value(e)).collect();
        let method = &m.method;
        let name = method.to_string();
        let ao = &a.op;
        let arg_ops = args.iter().map(|v| &v.op);
        let p = self.temp(quote!(#ao.#method(#(#arg_ops),*)));
        let span = method.span();
        let any = Self::depends(&a.tan) || args.iter().any(|v| Self::depends(&v.tan));
        if !any {
            return Value { op: p, lit: None, tan: self.zero() };
        }
        let tan = match name.as_str() {
            "detach" => self.zero(),
            "floor" | "ceil" | "round" | "trunc" => self.discrete(&[&a.tan], span, &format!("`{name}`")),
            "sqrt" => {
                let result = Factor::Atom(p.clone());
                self.per_direction(&[&a.tan], |s, _, t| {
                    let half = s.mul(&t[0], &Factor::Known(0.5));
                    s.div(&half, &result)
                })
            }
            "exp" => {
                let result = Factor::Atom(p.clone());
                self.per_direction(&[&a.tan], |s, _, t| s.mul(&t[0], &result))
            }
            "exp2" | "tan" | "tanh" | "sin" | "cos" => {
                let ln2 = literal(LN_2);
                let g = match name.as_str() {
                    "exp2" => quote!(#p * #ln2),
                    "tan" => quote!(1.0 + #p * #p),
                    "tanh" => quote!(1.0 - #p * #p),
                    "sin" => quote!(#ao.cos()),
                    _ => quote!(-(#ao.sin())),
                };
                let g = self.temp(g);
                let g = Factor::Atom(g);
                self.per_direction(&[&a.tan], |s, _, t| s.mul(&t[0], &g))
            }
            "ln" | "log2" | "log10" => {
                let d = match name.as_str() {
                    "ln" => Self::factor(&a),
                    "log2" => {
                        let c = literal(LN_2);
                        Factor::Atom(self.temp(quote!(#ao * #c)))
                    }
                    _ => {
                        let c = literal(LN_10);
                        Factor::Atom(self.temp(quote!(#ao * #c)))
                    }
                };
                self.per_direction(&[&a.tan], |s, _, t| s.div(&t[0], &d))
            }
            "abs" => {
                let sign = self.fresh("s");
                self.emit(quote!(let mut #sign = #p;));
                self.emit(
                    quote!(if #ao > 0.0 { #sign = 1.0; } else if #ao < 0.0 { #sign = -1.0; } else { #sign = 0.0; }),
                );
                let sign = Factor::Atom(quote!(#sign));
                self.per_direction(&[&a.tan], |s, _, t| s.mul(&t[0], &sign))
            }
            "min" | "max" => {
                let b = &args[0];
                let (at, bt) = (self.typed(&a, &p), self.typed(&b.clone(), &p));
                let cmp = if name == "min" { quote!(<) } else { quote!(>) };
                // The operand returned: `b` when it is beyond `a` or `a` is NaN (rule K3); a tie
                // splits the derivative in halves (PyTorch's convention).
                let takes_b = self.temp(quote!(#bt #cmp #at || #at != #at));
                let tie = self.temp(quote!(#at == #bt));
                self.per_direction(&[&a.tan, &b.tan], |s, _, t| {
                    let sum = s.add(&t[0], &t[1]);
                    let half = s.mul(&sum, &Factor::Known(0.5));
                    let inner = s.select(&tie, &half, &t[0], &p);
                    s.select(&takes_b, &t[1], &inner, &p)
                })
            }
            "powf" => {
                let b = args[0].clone();
                let (at, bt) = (self.typed(&a, &p), self.typed(&b, &p));
                let base = if Self::depends(&a.tan) {
                    // d/da a^b = b a^(b-1), 0 where b = 0.
                    let g = self.temp(quote!(#at.powf(#bt - 1.0) * #bt));
                    let cond = self.temp(quote!(#bt == 0.0));
                    Some(self.select(&cond, &Lin::Const(0.0), &Lin::Val(g, false), &p))
                } else {
                    None
                };
                let exponent = if Self::depends(&b.tan) {
                    // d/db a^b = a^b ln a, 0 where a = 0 and b >= 0.
                    let g = self.temp(quote!(#p * #at.ln()));
                    let cond = self.temp(quote!(#at == 0.0 && #bt >= 0.0));
                    Some(self.select(&cond, &Lin::Const(0.0), &Lin::Val(g, false), &p))
                } else {
                    None
                };
                let as_factor = |g: &Option<Lin>| match g {
                    Some(Lin::Val(v, _)) => Factor::Atom(v.clone()),
                    Some(Lin::Const(c)) => Factor::Known(*c),
                    None => Factor::Known(0.0),
                };
                let (fa, fb) = (as_factor(&base), as_factor(&exponent));
                self.per_direction(&[&a.tan, &b.tan], |s, _, t| {
                    let (x, y) = (s.mul(&t[0], &fa), s.mul(&t[1], &fb));
                    s.add(&x, &y)
                })
            }
            "mul_add" => {
                let (b, c) = (&args[0], &args[1]);
                let (fa, fb) = (Self::factor(&a), Self::factor(b));
                self.per_direction(&[&a.tan, &b.tan, &c.tan], |s, _, t| {
                    let (x, y) = (s.mul(&t[0], &fb), s.mul(&t[1], &fa));
                    let xy = s.add(&x, &y);
                    s.add(&xy, &t[2])
                })
            }
            _ => unreachable!("checked: a kernel math method"),
        };
        Value { op: p, lit: None, tan }
    }
}

/// The expression of a tangent (a constant as a float literal, typed by where it is used).
fn lin_tokens(lin: &Lin) -> TokenStream {
    match lin {
        Lin::Const(c) => literal(*c),
        Lin::Val(v, _) => v.clone(),
    }
}

/// `check_gradients`, on the forward kernel: its backward and tangent against central finite
/// differences of its `element`, through `dlspan::kernel::check_gradients` (the kernel's type
/// parameters are the method's: instantiate them with `f64` for an exact check). Scalars and the
/// views not differentiated are the method's arguments, by value.
pub(crate) fn checker(kernel: &Kernel<'_>) -> TokenStream {
    let type_params: Vec<String> = super::expand::type_params(kernel).iter().map(|i| i.to_string()).collect();
    let classes: Vec<Elem> = kernel.params.iter().map(|p| elem_class(&p.elem, &type_params)).collect();
    let ident = kernel.ident;
    let (tangent, backward) = (format_ident!("{}_tangent", ident), format_ident!("{}_backward", ident));
    let vis = kernel.vis;
    let generics: Vec<_> = kernel.generics.params.iter().collect();
    let floats = super::expand::type_params(kernel);
    let user_where = kernel.generics.where_clause.as_ref().map(|w| {
        let predicates = w.predicates.iter();
        quote!(#(#predicates,)*)
    });
    let cast = quote!(::dlspan::kernel::ops::cast);
    let mut args = Vec::new();
    let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
    // Per parameter: the local holding it in each closure, and how it is made.
    let mut x_lets = Vec::new();
    let mut t_lets = Vec::new();
    let mut o_lets = Vec::new();
    let mut o_stores = Vec::new();
    let mut to_lets = Vec::new();
    let mut to_stores = Vec::new();
    let mut g_lets = Vec::new();
    let mut gx_lets = Vec::new();
    let mut gx_stores = Vec::new();
    let (mut forward_args, mut tangent_in, mut tangent_out, mut backward_grads) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut common, mut outs) = (Vec::new(), Vec::new());
    let (mut i, mut o) = (0usize, 0usize);
    for (p, class) in kernel.params.iter().zip(&classes) {
        let (name, elem) = (&p.ident, &p.elem);
        let local = format_ident!("__dlgc_{}", name);
        match (p.kind, class) {
            (Kind::Read, Elem::Float) => {
                inputs.push(name.to_string());
                x_lets.push(quote!(let #local: #elem = #cast::<#elem, f64>(__dlg_x[#i]);));
                let t = format_ident!("__dlgc_tangent_{}", name);
                t_lets.push(quote!(let #t: #elem = #cast::<#elem, f64>(__dlg_v[#i]);));
                tangent_in.push(quote!(&#t));
                let g = format_ident!("__dlgc_grad_{}", name);
                gx_lets.push(quote!(let mut #g: #elem = #cast::<#elem, f64>(0.0);));
                gx_stores.push(quote!(__dlg_gx[#i] = #cast::<f64, #elem>(#g);));
                backward_grads.push(quote!(&mut #g));
                forward_args.push(quote!(&#local));
                common.push(quote!(&#local));
                i += 1;
            }
            (Kind::Read, _) => {
                args.push(quote!(#name: #elem));
                forward_args.push(quote!(&#name));
                common.push(quote!(&#name));
            }
            (Kind::Scalar, _) => {
                args.push(quote!(#name: #elem));
                forward_args.push(quote!(#name));
                common.push(quote!(#name));
            }
            (Kind::Write, Elem::Float) => {
                outputs.push(name.to_string());
                o_lets.push(quote!(let mut #local: #elem = #cast::<#elem, f64>(0.0);));
                o_stores.push(quote!(__dlg_out[#o] = #cast::<f64, #elem>(#local);));
                let t = format_ident!("__dlgc_tangent_{}", name);
                to_lets.push(quote!(let mut #t: #elem = #cast::<#elem, f64>(0.0);));
                to_stores.push(quote!(__dlg_tout[#o] = #cast::<f64, #elem>(#t);));
                tangent_out.push(quote!(&mut #t));
                let g = format_ident!("__dlgc_grad_{}", name);
                g_lets.push(quote!(let #g: #elem = #cast::<#elem, f64>(__dlg_g[#o]);));
                forward_args.push(quote!(&mut #local));
                outs.push(quote!(&mut #local));
                backward_grads.insert(o, quote!(&#g));
                o += 1;
            }
            (Kind::Write, _) => {
                o_lets.push(quote!(let mut #local: #elem = ::core::default::Default::default();));
                forward_args.push(quote!(&mut #local));
                outs.push(quote!(&mut #local));
            }
        }
    }
    let turbofish = quote!(::<#(#floats),*>);
    quote! {
        impl #ident {
            /// Checks this kernel's derived backward and tangent against central finite
            /// differences of the kernel itself, at random points
            /// ([`dlspan::kernel::check_gradients`]): instantiate it with `f64` for an exact check.
            /// Scalar parameters, and views that are not differentiated, are given by value.
            #[allow(clippy::too_many_arguments, clippy::multiple_bound_locations, unused_mut)]
            #vis fn check_gradients<#(#generics),*>(
                self,
                #(#args,)*
                __dlg_check: &::dlspan::kernel::GradientCheck,
            ) -> ::core::result::Result<::dlspan::kernel::GradientReport, ::dlspan::kernel::GradientMismatch>
            where #user_where #(#floats: ::dlspan::kernel::Float,)*
            {
                let __dlg_forward = |__dlg_x: &[f64], __dlg_out: &mut [f64]| {
                    #(#x_lets)*
                    #(#o_lets)*
                    Self::element #turbofish(#(#forward_args),*);
                    #(#o_stores)*
                };
                let __dlg_backward = |__dlg_x: &[f64], __dlg_g: &[f64], __dlg_gx: &mut [f64]| {
                    #(#x_lets)*
                    #(#g_lets)*
                    #(#gx_lets)*
                    #backward::element #turbofish(#(#common,)* #(#backward_grads),*);
                    #(#gx_stores)*
                };
                let __dlg_tangent = |__dlg_x: &[f64], __dlg_v: &[f64], __dlg_out: &mut [f64], __dlg_tout: &mut [f64]| {
                    #(#x_lets)*
                    #(#t_lets)*
                    #(#o_lets)*
                    #(#to_lets)*
                    #tangent::element #turbofish(#(#common,)* #(#tangent_in,)* #(#outs,)* #(#tangent_out),*);
                    #(#o_stores)*
                    #(#to_stores)*
                };
                ::dlspan::kernel::check_gradients(
                    &::dlspan::kernel::Functions {
                        inputs: &[#(#inputs),*],
                        outputs: &[#(#outputs),*],
                        forward: &__dlg_forward,
                        backward: &__dlg_backward,
                        tangent: &__dlg_tangent,
                    },
                    __dlg_check,
                )
            }
        }
    }
}
