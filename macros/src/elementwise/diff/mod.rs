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
//!   that input and 0 for the others; for a derived-type input, one per field path the body reads,
//!   its gradient's other fields `zero_like`), so that a backward is the tangents of the outputs along
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
//!
//! Here: the attribute, the classification of views, the passes and the derived signatures, the
//! tangent arithmetic; `body` walks the statements and values; `check` writes `check_gradients`.

mod body;
mod check;

use super::ast::{Kernel, Kind};
use super::valid::Analysis;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::{HashMap, HashSet};
use syn::spanned::Spanned;
use syn::{Attribute, Ident, ItemFn, Type};

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

impl Mode {
    /// The derived kernel's name after the forward's: `name_tangent`, `name_backward`.
    fn suffix(self) -> &'static str {
        match self {
            Mode::Tangent => "tangent",
            Mode::Backward => "backward",
        }
    }
}

/// The parameters of `kind` that are differentiated (of a float or derived float type).
fn differentiated<'k>(
    kernel: &'k Kernel<'_>,
    classes: &'k [Elem],
    kind: Kind,
) -> impl Iterator<Item = (&'k super::ast::Param, &'k Elem)> {
    kernel.params.iter().zip(classes).filter(move |(p, c)| p.kind == kind && **c != Elem::Constant)
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
    /// Backward: per written view (and field path, for a derived type), its tangent variables
    /// (one per direction), in declaration order.
    outputs: Vec<((String, String), Vec<Ident>)>,
    /// Backward: the direction of each field path of a derived-type input (`(param, ".a.b")`).
    field_dirs: HashMap<(usize, String), usize>,
    /// The field paths the body reads of each derived-type input view and assigns of each
    /// derived-type output view, by parameter.
    paths: HashMap<usize, Vec<Vec<syn::Member>>>,
}

/// The derived kernels of a `#[differentiable]` kernel: the tangent and the backward.
pub(crate) struct Derived {
    pub(crate) items: Vec<ItemFn>,
    /// The backward kernel's name.
    pub(crate) backward: Option<Ident>,
    /// The tangent kernel's name.
    pub(crate) tangent: Ident,
    /// `check_gradients` on the forward kernel (absent for kernels with derived-type views).
    pub(crate) check: Option<TokenStream>,
}

/// Derives the tangent and backward kernels of `kernel` (marked `#[differentiable]` at `span`).
pub(crate) fn derive(kernel: &Kernel<'_>, analysis: &Analysis, span: Span) -> syn::Result<Derived> {
    let type_params: Vec<String> = super::expand::type_params(kernel).iter().map(|i| i.to_string()).collect();
    let classes: Vec<Elem> = kernel.params.iter().map(|p| elem_class(&p.elem, &type_params)).collect();
    let mut errors: Vec<syn::Error> = Vec::new();
    for (k, ((p, &reads), class)) in kernel.params.iter().zip(&analysis.reads_output).zip(&classes).enumerate() {
        // A derived-type output may be written field by field (never read): its fields the body
        // does not write have no tangent and take no gradient.
        let field_wise = *class == Elem::Record && analysis.never_read[k];
        if p.kind == Kind::Write && reads && *class != Elem::Constant && !field_wise {
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
    let backward = run(kernel, Mode::Backward, &classes, &type_params)?;
    // `check_gradients` reads and writes plain floats: kernels with derived-type views are checked
    // through their tangent and backward directly (G5).
    let records = kernel.params.iter().zip(&classes).any(|(p, c)| p.kind != Kind::Scalar && *c == Elem::Record);
    let check = (!records).then(|| check::checker(kernel, &classes));
    Ok(Derived {
        items: vec![tangent, backward],
        backward: Some(format_ident!("{}_backward", kernel.ident)),
        tangent: format_ident!("{}_tangent", kernel.ident),
        check,
    })
}

/// The root name and the field path of a field chain (`p.a.b`, `(*p).a`: `p` and `[a, b]`).
fn field_chain(expr: &syn::Expr) -> Option<(String, Vec<syn::Member>)> {
    match expr {
        syn::Expr::Field(f) => {
            let (root, mut path) = match &*f.base {
                syn::Expr::Field(_) | syn::Expr::Paren(_) => field_chain(&f.base)?,
                syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                    (super::valid::path_name(&u.expr)?, Vec::new())
                }
                base => (super::valid::path_name(base)?, Vec::new()),
            };
            path.push(f.member.clone());
            Some((root, path))
        }
        syn::Expr::Paren(p) => field_chain(&p.expr),
        _ => None,
    }
}

/// A field path as a key (`.a.b`).
fn path_key(path: &[syn::Member]) -> String {
    path.iter().map(|m| format!(".{}", quote!(#m))).collect()
}

/// The field paths the body reads of each derived-type read view and assigns of each derived-type
/// written view (in the order they first appear), by parameter.
fn record_paths(kernel: &Kernel<'_>, classes: &[Elem]) -> HashMap<usize, Vec<Vec<syn::Member>>> {
    let records: HashMap<String, usize> = kernel
        .params
        .iter()
        .enumerate()
        .filter(|(k, p)| p.kind != Kind::Scalar && classes[*k] == Elem::Record)
        .map(|(k, p)| (p.ident.to_string(), k))
        .collect();
    let mut found: HashMap<usize, Vec<Vec<syn::Member>>> = HashMap::new();
    let mut note = |expr: &syn::Expr| -> bool {
        let Some((root, path)) = field_chain(expr) else { return false };
        let Some(&k) = records.get(&root) else { return false };
        let list = found.entry(k).or_default();
        if !list.iter().any(|p| path_key(p) == path_key(&path)) {
            list.push(path);
        }
        true
    };
    fn walk(expr: &syn::Expr, note: &mut dyn FnMut(&syn::Expr) -> bool) {
        use syn::Expr as E;
        if matches!(expr, E::Field(_)) && note(expr) {
            return;
        }
        match expr {
            E::Assign(a) => {
                walk(&a.left, note);
                walk(&a.right, note);
            }
            E::Binary(b) => {
                walk(&b.left, note);
                walk(&b.right, note);
            }
            E::Unary(u) => walk(&u.expr, note),
            E::Paren(p) => walk(&p.expr, note),
            E::Cast(c) => walk(&c.expr, note),
            E::Field(f) => walk(&f.base, note),
            E::MethodCall(m) => {
                walk(&m.receiver, note);
                for a in &m.args {
                    walk(a, note);
                }
            }
            E::If(i) => {
                walk(&i.cond, note);
                stmts(&i.then_branch.stmts, note);
                if let Some((_, e)) = &i.else_branch {
                    walk(e, note);
                }
            }
            E::Block(b) => stmts(&b.block.stmts, note),
            _ => {}
        }
    }
    fn stmts(list: &[syn::Stmt], note: &mut dyn FnMut(&syn::Expr) -> bool) {
        for stmt in list {
            match stmt {
                syn::Stmt::Local(l) => {
                    if let Some(init) = &l.init {
                        walk(&init.expr, note);
                    }
                }
                syn::Stmt::Expr(e, _) => walk(e, note),
                _ => {}
            }
        }
    }
    stmts(&kernel.body.stmts, &mut note);
    found
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
    let mut field_dirs = HashMap::new();
    let paths = record_paths(kernel, classes);
    let mut dirs = 0;
    for (k, p) in kernel.params.iter().enumerate() {
        match (mode, p.kind, classes[k]) {
            (_, Kind::Read, Elem::Float) | (Mode::Tangent, Kind::Read, Elem::Record) => {
                direction[k] = Some(dirs);
                dirs += 1;
            }
            // The backward's directions of a derived-type input: one per field path the body
            // reads.
            (Mode::Backward, Kind::Read, Elem::Record) => {
                for path in paths.get(&k).into_iter().flatten() {
                    field_dirs.insert((k, path_key(path)), dirs);
                    dirs += 1;
                }
            }
            _ => {}
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
            outputs: Vec::new(),
            field_dirs: field_dirs.clone(),
            paths: paths.clone(),
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
        let name = format_ident!("{}_{}", kernel.ident, self.mode.suffix());
        let vis = kernel.vis;
        let generics = kernel.generics.params.iter();
        let user_where = super::expand::user_predicates(kernel);
        let floats = super::expand::type_params(kernel);
        let param = super::expand::param;
        let differentiated = |kind: Kind| differentiated(kernel, &self.classes, kind);
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
        let jax = self.jax_attr();
        let fn_token = syn::Token![fn](kernel.fn_span);
        let tokens = quote! {
            #[doc = #doc]
            #(#lints)*
            #torch
            #jax
            #vis #fn_token #name<#(#generics),*>(#(#params),*) where #user_where #(#floats: ::dlspan::kernel::Float,)* {
                #(#body)*
            }
        };
        syn::parse2(tokens).expect("a derived kernel parses")
    }

    /// The derived kernel's `#[torch(...)]`: the forward's operator name with `_backward` or
    /// `_tangent`.
    fn torch_attr(&self) -> Option<TokenStream> {
        let attr = super::torch::parse(self.kernel.attrs).ok().flatten()?;
        let name = syn::LitStr::new(&format!("{}_{}", attr.name.value(), self.mode.suffix()), attr.name.span());
        let strict = attr.strict.then(|| quote!(, strict));
        Some(quote!(#[torch(#name #strict)]))
    }

    /// The derived kernel's `#[jax]`: the forward's, so that its handlers exist beside the
    /// forward's (JAX calls the backward inside the forward's derivative rule).
    fn jax_attr(&self) -> Option<TokenStream> {
        let attr = super::jax::parse(self.kernel.attrs).ok().flatten()?;
        Some(if attr.strict { quote!(#[jax(strict)]) } else { quote!(#[jax]) })
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
        if let (Lin::Const(x), Lin::Const(y)) = (a, b)
            && x == y
        {
            return a.clone();
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
}

/// The expression of a tangent (a constant as a float literal, typed by where it is used).
fn lin_tokens(lin: &Lin) -> TokenStream {
    match lin {
        Lin::Const(c) => literal(*c),
        Lin::Val(v, _) => v.clone(),
    }
}
