//! The subset of Rust an element-wise kernel body is written in, checked token by token: what lies
//! outside is an error at its token saying what is allowed. Types are rustc's business (the body is
//! compiled as Rust too); what this checks is what the CUDA translation needs: statements it can
//! write, literals whose type their use gives, views read with `*x` and written with `*out = ...`.
//!
//! The walk also gathers what the translation and the launch need: the types of `let` annotations
//! and casts (added to the type table), whether fields are accessed, and which written views the
//! body also reads.

use super::ast::{Kernel, Kind, Types, check_element_type};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{BinOp, Block, Expr, ExprLit, Lit, Member, Pat, Stmt, UnOp};

/// What the body says about its kernel beyond the signature.
pub(crate) struct Analysis {
    /// Type-table indices of cast targets.
    pub(crate) cast_targets: Vec<usize>,
    /// Whether the body accesses a field.
    pub(crate) fields: bool,
    /// For each parameter, whether a written view's old value is needed (read, or maybe left
    /// unwritten); `false` for the others.
    pub(crate) reads_output: Vec<bool>,
    /// For each parameter, whether it is a written view the body never reads: every use an
    /// assignment, of the whole element or of a field (a derived-type output written field by
    /// field is never read, though its other fields keep their values).
    pub(crate) never_read: Vec<bool>,
}

/// What a name in a body refers to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Var {
    /// A scalar parameter (`mutable` when declared `mut`).
    Scalar { mutable: bool },
    /// A read view: `*x`.
    Read,
    /// A written view: `*out = ...`.
    Write,
    /// A `let` binding (`mutable` when `let mut`).
    Local { mutable: bool },
}

/// Names in scope: the parameters, then one map per block.
#[derive(Clone)]
pub(crate) struct Scope {
    frames: Vec<HashMap<String, Var>>,
}

impl Scope {
    /// The parameters of `kernel`.
    pub(crate) fn of(kernel: &Kernel<'_>) -> Self {
        let params = kernel
            .params
            .iter()
            .map(|p| {
                let var = match p.kind {
                    Kind::Scalar => Var::Scalar { mutable: p.mutable },
                    Kind::Read => Var::Read,
                    Kind::Write => Var::Write,
                };
                (p.ident.to_string(), var)
            })
            .collect();
        Self { frames: vec![params] }
    }

    pub(crate) fn push(&mut self) {
        self.frames.push(HashMap::new());
    }

    pub(crate) fn pop(&mut self) {
        self.frames.pop();
    }

    pub(crate) fn bind(&mut self, name: String, var: Var) {
        self.frames.last_mut().expect("a frame").insert(name, var);
    }

    pub(crate) fn get(&self, name: &str) -> Option<Var> {
        self.frames.iter().rev().find_map(|f| f.get(name).copied())
    }
}

/// The math functions a body may call, as methods, with their argument counts (the receiver
/// excluded).
pub(crate) const METHODS: &[(&str, usize)] = &[
    ("sqrt", 0),
    ("exp", 0),
    ("exp2", 0),
    ("ln", 0),
    ("log2", 0),
    ("log10", 0),
    ("sin", 0),
    ("cos", 0),
    ("tan", 0),
    ("tanh", 0),
    ("floor", 0),
    ("ceil", 0),
    ("round", 0),
    ("trunc", 0),
    ("abs", 0),
    ("min", 1),
    ("max", 1),
    ("powf", 1),
    ("mul_add", 2),
    ("detach", 0),
    ("zero_like", 0),
];

const ALLOWED_STATEMENTS: &str = "a kernel statement is `let x = ...;`, `let x: T = ...;`, an assignment (`*out = ...`, `*out += ...`, \
     `out.field = ...`, `x = ...` for `let mut x`) or an `if`/`else`";

const ALLOWED_EXPRESSIONS: &str = "a kernel expression is a literal, a parameter or `let` name, `*x` of a view, \
     arithmetic (`+ - * / %`, unary `-`), a comparison, `&&`, `||`, `!`, an `as` cast, a field (`p.r`), \
     an `if c { a } else { b }`, or a math method (`x.sqrt()`, `x.mul_add(a, b)`, `x.min(y)`, ...)";

/// The error for `expr`, outside the subset: the construct named (a loop, a closure, ..) when it is
/// one a newcomer reaches for, with why it is not there, then what the subset has (`allowed`).
fn outside(expr: &Expr, allowed: &str) -> String {
    let (what, why) = match expr {
        Expr::ForLoop(_) => ("a `for` loop", LOOP_FREE),
        Expr::While(_) => ("a `while` loop", LOOP_FREE),
        Expr::Loop(_) => ("a `loop`", LOOP_FREE),
        Expr::Break(_) | Expr::Continue(_) => ("`break` and `continue`", LOOP_FREE),
        Expr::Closure(_) => ("a closure", "compute the value inline, or pass it as a scalar parameter"),
        Expr::Match(_) => ("a `match`", "use `if`/`else`"),
        Expr::Return(_) => ("`return`", "a kernel writes its outputs and ends at its last statement"),
        Expr::Unsafe(_) => ("an `unsafe` block", "a kernel body is safe code over its views"),
        Expr::Block(_) => ("a bare block", "use `let` bindings in the body, or an `if`/`else`"),
        Expr::Index(_) => ("indexing", "an element-wise kernel sees one element of each view: `*x`"),
        Expr::Reference(_) => ("a reference", "a kernel reads values: `*x`, not `&x`"),
        Expr::Array(_) | Expr::Tuple(_) => ("an array or a tuple", "use a derived element type with fields"),
        Expr::Range(_) => ("a range", LOOP_FREE),
        Expr::Macro(_) => ("a macro", "kernels are translated to CUDA C++ token by token: no macros"),
        _ => return allowed.to_owned(),
    };
    format!("{what} is not in the kernel subset ({why}): {allowed}")
}

/// Why loops are not in the subset.
const LOOP_FREE: &str = "an element-wise kernel computes one element, without loops: for work across elements, \
                         write a raw kernel (`dlspan::kernel!`)";

/// A literal's type in a body: given by a suffix, or by the expression it meets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Typed {
    /// Its type is known or given by the operands it meets.
    Yes,
    /// An unsuffixed numeric literal (or arithmetic of such): its type comes from where it is used.
    Literal,
}

struct Checker<'k> {
    errors: Vec<syn::Error>,
    scope: Scope,
    types: &'k mut Types,
    cast_targets: Vec<usize>,
    fields: bool,
    /// Per parameter name: occurrences, and whole-element assignments (`*out = e`).
    uses: HashMap<String, usize>,
    assigned: HashMap<String, usize>,
    /// Per name, the assignments to one of its fields (`out.r = e`, `(*out).r.x = e`).
    field_assigned: HashMap<String, usize>,
}

/// Checks the body of `kernel`, adding the types it names to the type table.
pub(crate) fn check(kernel: &mut Kernel<'_>) -> syn::Result<Analysis> {
    let scope = Scope::of(kernel);
    let mut checker = Checker {
        errors: Vec::new(),
        scope,
        types: &mut kernel.types,
        cast_targets: Vec::new(),
        fields: false,
        uses: HashMap::new(),
        assigned: HashMap::new(),
        field_assigned: HashMap::new(),
    };
    let body = kernel.body;
    checker.block(body);
    if let Some(error) = checker.errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    }) {
        return Err(error);
    }
    let reads_output = kernel
        .params
        .iter()
        .map(|p| {
            if p.kind != Kind::Write {
                return false;
            }
            let name = p.ident.to_string();
            let uses = checker.uses.get(&name).copied().unwrap_or(0);
            let assigned = checker.assigned.get(&name).copied().unwrap_or(0);
            let top = assigns_on_every_path(&body.stmts, &name);
            // Write-only: every use is a whole-element assignment, and every path assigns it.
            !(uses == assigned && top)
        })
        .collect();
    // Never read: every use is an assignment, of the whole element or of a field.
    let never_read = kernel
        .params
        .iter()
        .map(|p| {
            let name = p.ident.to_string();
            let count = |map: &HashMap<String, usize>| map.get(&name).copied().unwrap_or(0);
            p.kind == Kind::Write && count(&checker.uses) == count(&checker.assigned) + count(&checker.field_assigned)
        })
        .collect();
    let mut cast_targets = checker.cast_targets;
    cast_targets.sort_unstable();
    cast_targets.dedup();
    Ok(Analysis { cast_targets, fields: checker.fields, reads_output, never_read })
}

impl Checker<'_> {
    fn error(&mut self, span: Span, message: impl Into<String>) {
        self.errors.push(syn::Error::new(span, message.into()));
    }

    fn block(&mut self, block: &Block) {
        self.scope.push();
        for stmt in &block.stmts {
            self.stmt(stmt);
        }
        self.scope.pop();
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Local(local) => {
                let (ident, mutable, ty) = match &local.pat {
                    Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                        (p.ident.clone(), p.mutability.is_some(), None)
                    }
                    Pat::Type(t) => match &*t.pat {
                        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                            (p.ident.clone(), p.mutability.is_some(), Some(&*t.ty))
                        }
                        other => {
                            self.error(
                                other.span(),
                                "a kernel `let` binds one name: `let x = ...;` or `let x: T = ...;`",
                            );
                            return;
                        }
                    },
                    other => {
                        self.error(other.span(), "a kernel `let` binds one name: `let x = ...;` or `let x: T = ...;`");
                        return;
                    }
                };
                if let Some(ty) = ty {
                    match check_element_type(ty) {
                        Ok(()) => {
                            self.types.index(ty);
                        }
                        Err(e) => self.errors.push(e),
                    }
                }
                let Some(init) = &local.init else {
                    self.error(local.let_token.span, "a kernel `let` has a value: `let x = ...;`");
                    return;
                };
                if let Some((else_token, _)) = &init.diverge {
                    self.error(else_token.span, "`let ... else` is not in the kernel subset");
                    return;
                }
                let typed = self.value(&init.expr);
                if typed == Typed::Literal && ty.is_none() {
                    self.error(
                        init.expr.span(),
                        "this literal needs a type here: write a suffix (`2.0f32`) or annotate the `let` \
                         (`let x: f32 = 2.0;`); a kernel types literals from the expression they meet",
                    );
                }
                self.scope.bind(ident.to_string(), Var::Local { mutable });
            }
            Stmt::Expr(expr, _) => self.statement_expr(expr),
            Stmt::Item(item) => {
                self.error(item.span(), format!("items are not in the kernel subset: {ALLOWED_STATEMENTS}"))
            }
            Stmt::Macro(mac) => {
                self.error(mac.span(), format!("macros are not in the kernel subset: {ALLOWED_STATEMENTS}"))
            }
        }
    }

    /// An expression statement: an assignment or an `if`.
    fn statement_expr(&mut self, expr: &Expr) {
        match expr {
            Expr::Assign(assign) => {
                if let Some(name) = whole_element(&assign.left) {
                    *self.assigned.entry(name).or_default() += 1;
                } else if let Some(name) = field_root(&assign.left) {
                    *self.field_assigned.entry(name).or_default() += 1;
                }
                self.place(&assign.left);
                self.value(&assign.right);
            }
            Expr::Binary(binary) if compound(&binary.op).is_some() => {
                self.place(&binary.left);
                self.value(&binary.right);
            }
            Expr::If(if_expr) => {
                self.condition(&if_expr.cond);
                self.block(&if_expr.then_branch);
                if let Some((_, else_branch)) = &if_expr.else_branch {
                    match &**else_branch {
                        Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => self.block(&b.block),
                        Expr::If(_) => self.statement_expr(else_branch),
                        other => self.error(other.span(), "`else` takes a block or another `if`"),
                    }
                }
            }
            Expr::Paren(p) => self.statement_expr(&p.expr),
            other => self.error(other.span(), outside(other, ALLOWED_STATEMENTS)),
        }
    }

    fn condition(&mut self, cond: &Expr) {
        if let Expr::Let(l) = cond {
            self.error(l.let_token.span, "`if let` is not in the kernel subset: conditions are `bool` expressions");
            return;
        }
        self.value(cond);
    }

    /// The target of an assignment: a written view (`*out`, `out.field`), or a mutable `let` or
    /// scalar.
    fn place(&mut self, expr: &Expr) {
        match expr {
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => match path_name(&u.expr) {
                Some(name) => match self.scope.get(&name) {
                    Some(Var::Write) => self.used(&name),
                    Some(Var::Read) => self.error(
                        u.expr.span(),
                        format!("`{name}` is a `&T` view: kernels write through `&mut T` parameters"),
                    ),
                    _ => self.error(u.expr.span(), "`*` applies to view parameters (`*out = ...`)"),
                },
                None => self.error(u.expr.span(), "`*` applies to view parameters (`*out = ...`)"),
            },
            Expr::Field(f) => {
                self.fields = true;
                self.member(&f.member);
                self.field_base_place(&f.base);
            }
            Expr::Paren(p) => self.place(&p.expr),
            Expr::Path(_) => match path_name(expr) {
                Some(name) => match self.scope.get(&name) {
                    Some(Var::Local { mutable: true } | Var::Scalar { mutable: true }) => {}
                    Some(Var::Local { mutable: false } | Var::Scalar { mutable: false }) => {
                        self.error(expr.span(), format!("`{name}` is not `mut`: assign to `let mut` bindings only"))
                    }
                    Some(Var::Write) => self.error(expr.span(), format!("write the element: `*{name} = ...`")),
                    Some(Var::Read) => self.error(
                        expr.span(),
                        format!("`{name}` is a `&T` view: kernels write through `&mut T` parameters"),
                    ),
                    None => self.error(expr.span(), format!("`{name}` is not a parameter or `let` of this kernel")),
                },
                None => self.error(expr.span(), "a kernel assigns to `*out`, `out.field` or a `let mut` name"),
            },
            other => self.error(other.span(), "a kernel assigns to `*out`, `out.field` or a `let mut` name"),
        }
    }

    /// The base of a field that is assigned: a written view (`out.r`, `(*out).r`), a mutable
    /// binding, or another field of one.
    fn field_base_place(&mut self, base: &Expr) {
        match base {
            Expr::Path(_) => match path_name(base) {
                Some(name) => match self.scope.get(&name) {
                    Some(Var::Write) => self.used(&name),
                    Some(Var::Local { mutable: true } | Var::Scalar { mutable: true }) => {}
                    Some(_) => self.error(
                        base.span(),
                        format!("`{name}` cannot be written: kernels write `&mut T` views and `let mut` bindings"),
                    ),
                    None => self.error(base.span(), format!("`{name}` is not a parameter or `let` of this kernel")),
                },
                None => self.error(base.span(), "a field is written on a `&mut T` view or a `let mut` binding"),
            },
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => self.place(base),
            Expr::Field(f) => {
                self.member(&f.member);
                self.field_base_place(&f.base);
            }
            Expr::Paren(p) => self.field_base_place(&p.expr),
            other => self.error(other.span(), "a field is written on a `&mut T` view or a `let mut` binding"),
        }
    }

    fn member(&mut self, member: &Member) {
        if let Member::Named(ident) = member
            && !ident.to_string().is_ascii()
        {
            self.error(ident.span(), "kernel field names are ASCII");
        }
    }

    fn used(&mut self, name: &str) {
        *self.uses.entry(name.to_owned()).or_default() += 1;
    }

    /// An expression whose value is used; returns whether its type is known from it alone.
    fn value(&mut self, expr: &Expr) -> Typed {
        match expr {
            Expr::Lit(ExprLit { lit, .. }) => self.literal(lit),
            Expr::Path(_) => {
                let Some(name) = path_name(expr) else {
                    self.error(
                        expr.span(),
                        "a kernel names its parameters and `let` bindings only: pass other values as scalar parameters",
                    );
                    return Typed::Yes;
                };
                match self.scope.get(&name) {
                    Some(Var::Scalar { .. } | Var::Local { .. }) => {}
                    Some(Var::Read | Var::Write) => {
                        self.used(&name);
                        self.error(expr.span(), format!("`{name}` is a view's element reference: read it as `*{name}`"));
                    }
                    None => self.error(
                        expr.span(),
                        format!("`{name}` is not a parameter or `let` of this kernel: pass other values as scalar parameters"),
                    ),
                }
                Typed::Yes
            }
            Expr::Paren(p) => self.value(&p.expr),
            Expr::Unary(u) => match u.op {
                UnOp::Deref(_) => {
                    match path_name(&u.expr) {
                        Some(name) if matches!(self.scope.get(&name), Some(Var::Read | Var::Write)) => self.used(&name),
                        _ => self.error(u.span(), "`*` reads a view parameter: `*x`"),
                    }
                    Typed::Yes
                }
                UnOp::Neg(_) => self.value(&u.expr),
                UnOp::Not(_) => {
                    self.value(&u.expr);
                    Typed::Yes
                }
                _ => {
                    self.error(u.span(), ALLOWED_EXPRESSIONS);
                    Typed::Yes
                }
            },
            Expr::Binary(b) => {
                if compound(&b.op).is_some() {
                    self.error(b.op.span(), "a compound assignment is a statement, not a value");
                    return Typed::Yes;
                }
                let Some(class) = class(&b.op) else {
                    self.error(
                        b.op.span(),
                        "bitwise and shift operators are not in the kernel subset: arithmetic (`+ - * / %`), \
                         comparisons, `&&` and `||` are",
                    );
                    return Typed::Yes;
                };
                let (l, r) = (self.value(&b.left), self.value(&b.right));
                if l == Typed::Literal && r == Typed::Literal && class != Class::Logic {
                    self.error(
                        b.span(),
                        "two literals without a type: give one a suffix (`2.0f32`); a kernel types a literal \
                         from the operand it meets",
                    );
                }
                if class == Class::Arithmetic && l == Typed::Literal && r == Typed::Literal {
                    Typed::Literal
                } else {
                    Typed::Yes
                }
            }
            Expr::Cast(c) => {
                self.value(&c.expr);
                match check_element_type(&c.ty) {
                    Ok(()) => {
                        let k = self.types.index(&c.ty);
                        self.cast_targets.push(k);
                    }
                    Err(e) => self.errors.push(e),
                }
                Typed::Yes
            }
            Expr::If(i) => {
                self.condition(&i.cond);
                let then = self.branch(&i.then_branch);
                let otherwise = match &i.else_branch {
                    None => {
                        self.error(i.if_token.span, "an `if` used as a value needs an `else`");
                        return Typed::Yes;
                    }
                    Some((_, e)) => match &**e {
                        Expr::Block(b) => self.branch(&b.block),
                        Expr::If(_) => self.value(e),
                        other => {
                            self.error(other.span(), "`else` takes a block or another `if`");
                            Typed::Yes
                        }
                    },
                };
                if then == Typed::Literal && otherwise == Typed::Literal {
                    self.error(i.span(), "both branches are literals without a type: give one a suffix (`2.0f32`)");
                }
                Typed::Yes
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                match METHODS.iter().find(|(n, _)| *n == name) {
                    Some(&(_, arity)) => {
                        if let Some(turbofish) = &m.turbofish {
                            self.error(turbofish.span(), "math methods take no type arguments");
                        }
                        if m.args.len() != arity {
                            self.error(
                                m.method.span(),
                                format!("`{name}` takes {arity} argument(s) besides its receiver"),
                            );
                        }
                        self.receiver(&m.receiver);
                        for arg in &m.args {
                            self.value(arg);
                        }
                    }
                    None => self.error(
                        m.method.span(),
                        format!(
                            "`{name}` is not a kernel math function: the subset has {}",
                            METHODS.iter().map(|(n, _)| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                        ),
                    ),
                }
                Typed::Yes
            }
            Expr::Field(f) => {
                self.fields = true;
                self.member(&f.member);
                self.field_base(&f.base);
                Typed::Yes
            }
            Expr::Call(c) => {
                self.error(
                    c.func.span(),
                    "function calls are not in the kernel subset: math functions are methods (`x.sqrt()`)",
                );
                Typed::Yes
            }
            other => {
                self.error(other.span(), outside(other, ALLOWED_EXPRESSIONS));
                Typed::Yes
            }
        }
    }

    /// A branch of an `if` used as a value: a block of one expression.
    fn branch(&mut self, block: &Block) -> Typed {
        match block.stmts.as_slice() {
            [Stmt::Expr(e, None)] => self.value(e),
            _ => {
                self.error(
                    block.span(),
                    "a branch of an `if` used as a value is one expression: `if c { a } else { b }`",
                );
                Typed::Yes
            }
        }
    }

    /// A method's receiver: a value, or a view parameter (Rust dereferences it: `x.sqrt()`).
    fn receiver(&mut self, expr: &Expr) {
        if let Some(name) = path_name(expr)
            && matches!(self.scope.get(&name), Some(Var::Read | Var::Write))
        {
            self.used(&name);
            return;
        }
        self.value(expr);
    }

    /// The base of a field that is read: a value, or a view (`px.r`, `(*px).r`).
    fn field_base(&mut self, base: &Expr) {
        match base {
            Expr::Path(_) => self.receiver(base),
            Expr::Field(f) => {
                self.member(&f.member);
                self.field_base(&f.base);
            }
            Expr::Paren(p) => self.field_base(&p.expr),
            other => {
                self.value(other);
            }
        }
    }

    fn literal(&mut self, lit: &Lit) -> Typed {
        match lit {
            Lit::Bool(_) => Typed::Yes,
            Lit::Int(i) => {
                let suffix = i.suffix();
                if !suffix.is_empty() && !INT_SUFFIXES.contains(&suffix) {
                    self.error(
                        i.span(),
                        format!("`{suffix}` is not a kernel type: integers are i8..i128 and u8..u128"),
                    );
                }
                if i.base10_parse::<u128>().is_err() {
                    self.error(i.span(), "this integer literal does not fit 128 bits");
                }
                if suffix.is_empty() { Typed::Literal } else { Typed::Yes }
            }
            Lit::Float(f) => {
                let suffix = f.suffix();
                if !suffix.is_empty() && suffix != "f32" && suffix != "f64" {
                    self.error(f.span(), format!("`{suffix}` is not a kernel float type: `f32` or `f64`"));
                }
                if suffix.is_empty() { Typed::Literal } else { Typed::Yes }
            }
            other => {
                self.error(other.span(), "kernel literals are numbers and `true`/`false`");
                Typed::Yes
            }
        }
    }
}

/// The integer suffixes of kernel literals.
pub(crate) const INT_SUFFIXES: &[&str] = &["i8", "i16", "i32", "i64", "i128", "u8", "u16", "u32", "u64", "u128"];

/// Operator classes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Arithmetic,
    Comparison,
    Logic,
}

/// The class of a binary operator in the subset.
pub(crate) fn class(op: &BinOp) -> Option<Class> {
    Some(match op {
        BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_) => Class::Arithmetic,
        BinOp::Eq(_) | BinOp::Ne(_) | BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) => Class::Comparison,
        BinOp::And(_) | BinOp::Or(_) => Class::Logic,
        _ => return None,
    })
}

/// The arithmetic name of a compound assignment (`+=` is `add`), if `op` is one in the subset.
pub(crate) fn compound(op: &BinOp) -> Option<&'static str> {
    Some(match op {
        BinOp::AddAssign(_) => "add",
        BinOp::SubAssign(_) => "sub",
        BinOp::MulAssign(_) => "mul",
        BinOp::DivAssign(_) => "div",
        BinOp::RemAssign(_) => "rem",
        _ => return None,
    })
}

/// The single name of a path expression (`x`), if it is one.
pub(crate) fn path_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => p.path.get_ident().map(ToString::to_string),
        Expr::Paren(p) => path_name(&p.expr),
        _ => None,
    }
}

/// Whether `stmts` assign view `name` as a whole on every path: at their level, or in both
/// branches of an `if`/`else` (through `else if` chains that end in `else`).
fn assigns_on_every_path(stmts: &[Stmt], name: &str) -> bool {
    fn statement(expr: &Expr, name: &str) -> bool {
        match expr {
            Expr::Assign(a) => whole_element(&a.left).is_some_and(|n| n == name),
            Expr::If(i) => {
                assigns_on_every_path(&i.then_branch.stmts, name)
                    && i.else_branch.as_ref().is_some_and(|(_, e)| match &**e {
                        Expr::Block(b) => assigns_on_every_path(&b.block.stmts, name),
                        other => statement(other, name),
                    })
            }
            Expr::Paren(p) => statement(&p.expr, name),
            _ => false,
        }
    }
    stmts.iter().any(|s| matches!(s, Stmt::Expr(e, _) if statement(e, name)))
}

/// The view a statement assigns a field of (`out.r = e`, `(*out).r.x = e`), if it does.
fn field_root(left: &Expr) -> Option<String> {
    match left {
        Expr::Field(f) => match &*f.base {
            Expr::Field(_) | Expr::Paren(_) => field_root(&f.base),
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => path_name(&u.expr),
            base => path_name(base),
        },
        Expr::Paren(p) => field_root(&p.expr),
        _ => None,
    }
}

/// The view a statement assigns as a whole (`*out = e`), if it does.
fn whole_element(left: &Expr) -> Option<String> {
    match left {
        Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => path_name(&u.expr),
        Expr::Paren(p) => whole_element(&p.expr),
        _ => None,
    }
}
