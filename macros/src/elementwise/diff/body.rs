//! The derivation's walk over the body: statements (`let`, assignments, `if`/`else`) and values
//! (each operation's primal bound to a `let`, and its tangent along each direction).

use super::{
    Binding, Differ, Elem, Factor, LN_2, LN_10, Lin, Mode, Tan, Value, cast_keeps_derivative, field_chain, lin_tokens,
    literal, path_key,
};
use crate::elementwise::ast::Kind;
use crate::elementwise::valid::{Class, class, compound, path_name};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, Lit, Pat, Stmt, UnOp};

impl Differ<'_> {
    // ----- the body -----

    pub(super) fn body(&mut self) -> Vec<TokenStream> {
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
            for (k, (p, c)) in kernel.params.iter().zip(self.classes.clone()).enumerate() {
                if p.kind != Kind::Write || c == Elem::Constant {
                    continue;
                }
                if c == Elem::Float {
                    let elem = &p.elem;
                    let vars: Vec<Ident> = (0..self.dirs).map(|_| self.fresh("o")).collect();
                    for v in &vars {
                        self.emit(quote!(let mut #v: #elem = 0.0;));
                    }
                    self.outputs.push(((p.ident.to_string(), String::new()), vars));
                    continue;
                }
                // A derived-type output: variables per field path it assigns, typed as the field
                // (from its gradient's field).
                let grad = format_ident!("grad_{}", p.ident);
                for path in self.paths.get(&k).cloned().unwrap_or_default() {
                    let vars: Vec<Ident> = (0..self.dirs).map(|_| self.fresh("o")).collect();
                    for v in &vars {
                        self.emit(quote!(let mut #v = #grad #(. #path)*;));
                        self.emit(quote!(#v = 0.0;));
                    }
                    self.outputs.push(((p.ident.to_string(), path_key(&path)), vars));
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
    /// the input's direction (for a derived-type input, per field path it reads, the fields it
    /// does not read zero).
    fn dot_products(&mut self) {
        let kernel = self.kernel;
        let terms = |d: usize| -> Vec<TokenStream> {
            self.outputs
                .iter()
                .map(|((out, path), vars)| {
                    let (g, v) = (format_ident!("grad_{}", out), &vars[d]);
                    if path.is_empty() {
                        quote!((*#g * #v))
                    } else {
                        let path: TokenStream = path.parse().expect("a field path");
                        quote!((#g #path * #v))
                    }
                })
                .collect()
        };
        let mut emitted = Vec::new();
        for (k, p) in kernel.params.iter().enumerate() {
            let grad = format_ident!("grad_{}", p.ident);
            if let Some(d) = self.direction[k] {
                let terms = terms(d);
                emitted.push(quote!(*#grad = #(#terms)+*;));
            } else if p.kind == Kind::Read && self.classes[k] == Elem::Record {
                let ident = &p.ident;
                emitted.push(quote!(*#grad = (*#ident).zero_like();));
                for path in self.paths.get(&k).cloned().unwrap_or_default() {
                    let d = self.field_dirs[&(k, path_key(&path))];
                    let terms = terms(d);
                    emitted.push(quote!(#grad #(. #path)* = #(#terms)+*;));
                }
            }
        }
        for stmt in emitted {
            self.emit(stmt);
        }
    }

    /// A derived-type input used as a whole in the backward (not field by field): refused.
    fn whole_record(&mut self, expr: &Expr, binding: &Binding) {
        if let (Mode::Backward, Binding::View(k)) = (self.mode, binding) {
            let p = &self.kernel.params[*k];
            if p.kind == Kind::Read && self.classes[*k] == Elem::Record {
                self.errors.push(syn::Error::new(
                    expr.span(),
                    format!(
                        "the backward of a differentiable kernel reads a derived-type input field by field \
                         (`{0}.x`): use the fields of `{0}` here, not its whole value",
                        p.ident
                    ),
                ));
            }
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
                        if class == Elem::Record && whole {
                            self.errors.push(syn::Error::new(
                                place.span(),
                                "the backward of a differentiable kernel takes a derived-type output field by field: \
                                 assign its fields (`out.x = ..`), not its whole value",
                            ));
                            return;
                        }
                        let key = field_chain(place).map_or_else(String::new, |(_, path)| path_key(&path));
                        let vars = self
                            .outputs
                            .iter()
                            .find(|((out, path), _)| *out == root && *path == key)
                            .map(|(_, vars)| vars.clone())
                            .expect("an output");
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
                self.whole_record(expr, &binding);
                let tan = self.binding_tan(&binding);
                Value { op: quote!(#expr), lit: None, tan }
            }
            Expr::Unary(u) => match u.op {
                UnOp::Deref(_) => {
                    let name = path_name(&u.expr).expect("checked");
                    let (_, binding) = self.lookup(&name).expect("checked");
                    self.whole_record(expr, &binding);
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
                // The backward's field of a derived-type input: the seed of its own direction.
                if let (Mode::Backward, Some((root, path))) = (self.mode, field_chain(expr))
                    && let Some((_, Binding::View(k))) = self.lookup(&root)
                    && self.kernel.params[k].kind == Kind::Read
                    && self.classes[k] == Elem::Record
                {
                    let d = self.field_dirs.get(&(k, path_key(&path))).copied();
                    let tan =
                        Tan::Diff((0..self.dirs).map(|i| Lin::Const(if Some(i) == d { 1.0 } else { 0.0 })).collect());
                    return Value { op: quote!(#expr), lit: None, tan };
                }
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
        if let Some(name) = path_name(expr)
            && let Some((_, binding @ Binding::View(_))) = self.lookup(&name)
        {
            self.whole_record(expr, &binding);
            let tan = self.binding_tan(&binding);
            return Value { op: quote!((*#expr)), lit: None, tan };
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
            "detach" | "zero_like" => self.zero(),
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
