//! The CUDA C++ translation of a checked kernel body: one device function, `dl_body`, over the
//! types `dl_t0`, `dl_t1`, ... that each instantiation defines, calling the operations of the
//! runtime's `elementwise.cu` (which mirror `dlspan::kernel`'s Rust ones bit for bit).
//!
//! - Names become `v_<name>`, fields `f_<name>` (no C++ keyword can clash).
//! - A view parameter is a reference to its element (`const dl_t0& v_x`, `dl_t0& v_out`): `*x` is
//!   `dl_load(v_x)`, `*out = e` is `dl_assign(v_out, e)`; `bool` views store a byte and load a
//!   `bool`, other types load as they are.
//! - Operators become calls (`a + b` is `dl_add(a, b)`), so that the C++ computes exactly what the
//!   Rust translation computes; an unsuffixed literal is `dl_flit` / `dl_ilit`, holding its value as
//!   Rust parses it for each type it may take, and takes the type of the operand it meets.
//! - Every statement is preceded by a `#line` directive naming its line in the Rust file, so NVRTC
//!   reports errors at the kernel's own lines.

use super::ast::{Kernel, Kind, Types};
use super::valid::{Scope, Var, class, compound, path_name};
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::{BinOp, Block, Expr, ExprLit, Lit, Member, Pat, Stmt, UnOp};

/// A piece of the generated source: text, or the Rust file's name (`file!()` at expansion).
pub(crate) enum Piece {
    Text(String),
    File,
}

/// The translation: the source pieces and, per statement line, the Rust text.
pub(crate) struct Translation {
    pub(crate) pieces: Vec<Piece>,
    pub(crate) lines: Vec<(u32, String)>,
}

struct Cxx<'k> {
    types: &'k Types,
    scope: Scope,
    pieces: Vec<Piece>,
    text: String,
    depth: usize,
}

/// Translates a checked kernel.
pub(crate) fn translate(kernel: &Kernel<'_>, reads_output: &[bool]) -> syn::Result<Translation> {
    let mut cxx =
        Cxx { types: &kernel.types, scope: Scope::of(kernel), pieces: Vec::new(), text: String::new(), depth: 1 };
    cxx.line(kernel.fn_span);
    let params: Vec<String> = kernel
        .params
        .iter()
        .zip(reads_output)
        .map(|(p, _)| {
            let name = ident(&p.ident.to_string());
            match p.kind {
                Kind::Scalar => format!("dl_value_t<dl_t{}> {name}", p.ty),
                Kind::Read => format!("const dl_t{}& {name}", p.ty),
                Kind::Write => format!("dl_t{}& {name}", p.ty),
            }
        })
        .collect();
    cxx.text.push_str(&format!("DL_DEV void dl_body({}) {{\n", params.join(", ")));
    cxx.block_body(kernel.body)?;
    cxx.text.push_str("}\n");
    let text = core::mem::take(&mut cxx.text);
    cxx.pieces.push(Piece::Text(text));
    let mut tokens = TokenStream::new();
    kernel.fn_token_stream(&mut tokens);
    Ok(Translation { pieces: cxx.pieces, lines: source_lines(tokens) })
}

/// The kernel's source lines, rebuilt from its tokens' positions (comments left out): what a
/// compile error shows beside its line number.
fn source_lines(tokens: TokenStream) -> Vec<(u32, String)> {
    let mut lines: Vec<(u32, String)> = Vec::new();
    let mut put = |span: Span, text: &str| {
        let start = span.start();
        if start.line == 0 {
            return;
        }
        let line = start.line as u32;
        let entry = match lines.iter().position(|(l, _)| *l == line) {
            Some(i) => &mut lines[i].1,
            None => {
                lines.push((line, String::new()));
                &mut lines.last_mut().expect("pushed").1
            }
        };
        while entry.chars().count() < start.column {
            entry.push(' ');
        }
        entry.push_str(text);
    };
    fn walk(tokens: TokenStream, put: &mut impl FnMut(Span, &str)) {
        for token in tokens {
            match token {
                TokenTree::Group(group) => {
                    let (open, close) = match group.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Brace => ("{", "}"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::None => ("", ""),
                    };
                    put(group.span_open(), open);
                    let open_line = group.span_open().start().line;
                    let inner_lines = group.stream().into_iter().any(|t| t.span().start().line != open_line);
                    walk(group.stream(), put);
                    // Compilers before 1.88 (and some spans) place a closing delimiter on its
                    // opening line: a group that spans lines then leaves it out.
                    if !(inner_lines && group.span_close().start().line == open_line) {
                        put(group.span_close(), close);
                    }
                }
                TokenTree::Ident(ident) => put(ident.span(), &ident.to_string()),
                TokenTree::Punct(punct) => put(punct.span(), &punct.as_char().to_string()),
                TokenTree::Literal(literal) => put(literal.span(), &literal.to_string()),
            }
        }
    }
    walk(tokens, &mut put);
    lines.sort_by_key(|(l, _)| *l);
    for (_, text) in &mut lines {
        *text = text.trim().to_owned();
    }
    lines
}

/// The C++ name of a Rust name.
fn ident(name: &str) -> String {
    format!("v_{}", name.trim_start_matches("r#"))
}

/// The line of a span, when the compiler tells it (rustc 1.88 and later); 0 otherwise.
fn line_of(span: Span) -> u32 {
    span.start().line as u32
}

impl Cxx<'_> {
    /// A `#line` directive for the statement at `span`, and its Rust text for error reports.
    fn line(&mut self, span: Span) {
        let line = line_of(span);
        if line == 0 {
            return;
        }
        self.text.push_str(&format!("#line {line} \""));
        let text = core::mem::take(&mut self.text);
        self.pieces.push(Piece::Text(text));
        self.pieces.push(Piece::File);
        self.text.push_str("\"\n");
    }

    fn indent(&mut self) {
        for _ in 0..self.depth {
            self.text.push_str("  ");
        }
    }

    fn block_body(&mut self, block: &Block) -> syn::Result<()> {
        self.scope.push();
        for stmt in &block.stmts {
            self.stmt(stmt)?;
        }
        self.scope.pop();
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt) -> syn::Result<()> {
        match stmt {
            Stmt::Local(local) => {
                self.line(local.span());
                let (name, ty) = match &local.pat {
                    Pat::Ident(p) => (p.ident.to_string(), None),
                    Pat::Type(t) => match &*t.pat {
                        Pat::Ident(p) => (p.ident.to_string(), Some(&*t.ty)),
                        _ => unreachable!("checked"),
                    },
                    _ => unreachable!("checked"),
                };
                let init = local.init.as_ref().expect("checked");
                let value = self.value(&init.expr)?;
                let declaration = match ty {
                    Some(ty) => {
                        let k = self.types.find(ty).expect("in the type table");
                        format!("dl_value_t<dl_t{k}> {} = dl_to<dl_value_t<dl_t{k}>>({value});", ident(&name))
                    }
                    None => format!("auto {} = {value};", ident(&name)),
                };
                self.indent();
                self.text.push_str(&declaration);
                self.text.push('\n');
                let mutable = match &local.pat {
                    Pat::Ident(p) => p.mutability.is_some(),
                    Pat::Type(t) => matches!(&*t.pat, Pat::Ident(p) if p.mutability.is_some()),
                    _ => false,
                };
                self.scope.bind(name, Var::Local { mutable });
            }
            Stmt::Expr(expr, _) => self.statement_expr(expr)?,
            Stmt::Item(_) | Stmt::Macro(_) => unreachable!("checked"),
        }
        Ok(())
    }

    fn statement_expr(&mut self, expr: &Expr) -> syn::Result<()> {
        match expr {
            Expr::Assign(assign) => {
                self.line(expr.span());
                let place = self.place(&assign.left)?;
                let value = self.value(&assign.right)?;
                self.indent();
                self.text.push_str(&format!("dl_assign({place}, {value});\n"));
            }
            Expr::Binary(binary) => {
                self.line(expr.span());
                let op = compound(&binary.op).expect("checked");
                let place = self.place(&binary.left)?;
                let value = self.value(&binary.right)?;
                self.indent();
                self.text.push_str(&format!("dl_assign({place}, dl_{op}(dl_load({place}), {value}));\n"));
            }
            Expr::If(if_expr) => {
                self.line(if_expr.if_token.span);
                let cond = self.value(&if_expr.cond)?;
                self.indent();
                self.text.push_str(&format!("if ({cond}) {{\n"));
                self.depth += 1;
                self.block_body(&if_expr.then_branch)?;
                self.depth -= 1;
                self.indent();
                self.text.push('}');
                if let Some((_, else_branch)) = &if_expr.else_branch {
                    self.text.push_str(" else {\n");
                    self.depth += 1;
                    match &**else_branch {
                        Expr::Block(b) => self.block_body(&b.block)?,
                        other => self.statement_expr(other)?,
                    }
                    self.depth -= 1;
                    self.indent();
                    self.text.push('}');
                }
                self.text.push('\n');
            }
            Expr::Paren(p) => self.statement_expr(&p.expr)?,
            _ => unreachable!("checked"),
        }
        Ok(())
    }

    /// An assignable place: a reference or a variable of C++.
    fn place(&mut self, expr: &Expr) -> syn::Result<String> {
        Ok(match expr {
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => ident(&path_name(&u.expr).expect("checked")),
            Expr::Field(f) => format!("{}.{}", self.place(&f.base)?, member(&f.member)),
            Expr::Paren(p) => self.place(&p.expr)?,
            Expr::Path(_) => ident(&path_name(expr).expect("checked")),
            _ => unreachable!("checked"),
        })
    }

    /// A value.
    fn value(&mut self, expr: &Expr) -> syn::Result<String> {
        Ok(match expr {
            Expr::Lit(ExprLit { lit, .. }) => literal(lit, false)?,
            Expr::Path(_) => ident(&path_name(expr).expect("checked")),
            Expr::Paren(p) => format!("({})", self.value(&p.expr)?),
            Expr::Unary(u) => match u.op {
                UnOp::Deref(_) => format!("dl_load({})", ident(&path_name(&u.expr).expect("checked"))),
                UnOp::Neg(_) => match literal_of(&u.expr) {
                    Some(lit) => literal(lit, true)?,
                    None => format!("dl_neg({})", self.value(&u.expr)?),
                },
                UnOp::Not(_) => format!("dl_not({})", self.value(&u.expr)?),
                _ => unreachable!("checked"),
            },
            Expr::Binary(b) => {
                let (l, r) = (self.value(&b.left)?, self.value(&b.right)?);
                match b.op {
                    BinOp::And(_) => format!("({l} && {r})"),
                    BinOp::Or(_) => format!("({l} || {r})"),
                    op => {
                        class(&op).expect("checked");
                        format!("{}({l}, {r})", operator(&op))
                    }
                }
            }
            Expr::Cast(c) => {
                let k = self.types.find(&c.ty).expect("in the type table");
                format!("dl_kcast<dl_value_t<dl_t{k}>>({})", self.value(&c.expr)?)
            }
            Expr::If(i) => {
                let cond = self.value(&i.cond)?;
                let then = self.branch(&i.then_branch)?;
                let otherwise = match &i.else_branch {
                    Some((_, e)) => match &**e {
                        Expr::Block(b) => self.branch(&b.block)?,
                        other => self.value(other)?,
                    },
                    None => unreachable!("checked"),
                };
                format!("dl_select({cond}, {then}, {otherwise})")
            }
            Expr::MethodCall(m) => {
                let receiver = self.receiver(&m.receiver)?;
                let mut args = vec![receiver];
                for arg in &m.args {
                    args.push(self.value(arg)?);
                }
                format!("dl_{}({})", m.method, args.join(", "))
            }
            Expr::Field(f) => format!("dl_load({})", self.field_place(expr, &f.member, &f.base)?),
            _ => unreachable!("checked"),
        })
    }

    /// The one expression of a branch of an `if` value.
    fn branch(&mut self, block: &Block) -> syn::Result<String> {
        match block.stmts.as_slice() {
            [Stmt::Expr(e, None)] => self.value(e),
            _ => unreachable!("checked"),
        }
    }

    /// A method's receiver: a view parameter is its element.
    fn receiver(&mut self, expr: &Expr) -> syn::Result<String> {
        if let Some(name) = path_name(expr)
            && matches!(self.scope.get(&name), Some(Var::Read | Var::Write))
        {
            return Ok(format!("dl_load({})", ident(&name)));
        }
        self.value(expr)
    }

    /// The C++ place of a field that is read: `base.f_name`, where a view or variable is its own
    /// place and another value is parenthesised.
    fn field_place(&mut self, _expr: &Expr, member_: &Member, base: &Expr) -> syn::Result<String> {
        let base = match base {
            Expr::Path(_) => ident(&path_name(base).expect("checked")),
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => ident(&path_name(&u.expr).expect("checked")),
            Expr::Field(f) => self.field_place(base, &f.member, &f.base)?,
            Expr::Paren(p) => return self.field_place(_expr, member_, &p.expr),
            other => format!("({})", self.value(other)?),
        };
        Ok(format!("{base}.{}", member(member_)))
    }
}

/// The C++ function of a binary operator.
fn operator(op: &BinOp) -> &'static str {
    match op {
        BinOp::Add(_) => "dl_add",
        BinOp::Sub(_) => "dl_sub",
        BinOp::Mul(_) => "dl_mul",
        BinOp::Div(_) => "dl_div",
        BinOp::Rem(_) => "dl_rem",
        BinOp::Eq(_) => "dl_eq",
        BinOp::Ne(_) => "dl_ne",
        BinOp::Lt(_) => "dl_lt",
        BinOp::Le(_) => "dl_le",
        BinOp::Gt(_) => "dl_gt",
        BinOp::Ge(_) => "dl_ge",
        _ => unreachable!("checked"),
    }
}

/// A field's C++ name.
fn member(member: &Member) -> String {
    match member {
        Member::Named(ident) => format!("f_{}", ident.to_string().trim_start_matches("r#")),
        Member::Unnamed(index) => format!("f_{}", index.index),
    }
}

/// The numeric literal an expression is, through parentheses.
fn literal_of(expr: &Expr) -> Option<&Lit> {
    match expr {
        Expr::Lit(ExprLit { lit: lit @ (Lit::Int(_) | Lit::Float(_)), .. }) => Some(lit),
        Expr::Paren(p) => literal_of(&p.expr),
        _ => None,
    }
}

/// The C++ of a literal (negated when `negative`): a typed constant for a suffixed literal, a
/// `dl_flit` / `dl_ilit` holding the value as Rust parses it for an unsuffixed one.
fn literal(lit: &Lit, negative: bool) -> syn::Result<String> {
    match lit {
        Lit::Bool(b) => Ok(b.value.to_string()),
        Lit::Int(i) => {
            let value: u64 = i.base10_parse().map_err(|_| {
                syn::Error::new(i.span(), "kernel integer literals are at most u64::MAX (use a cast for wider values)")
            })?;
            let lit = format!("dl_ilit{{{value}ull, {negative}}}");
            Ok(match c_int(i.suffix()) {
                Some(c) => format!("dl_to<{c}>({lit})"),
                None => lit,
            })
        }
        Lit::Float(f) => {
            let digits = f.base10_digits();
            let (d, s): (f64, f32) = match (digits.parse(), digits.parse()) {
                (Ok(d), Ok(s)) => (d, s),
                _ => return Err(syn::Error::new(f.span(), "this float literal cannot be read")),
            };
            let (d, s) = if negative { (-d, -s) } else { (d, s) };
            match f.suffix() {
                "f32" if s.is_finite() => Ok(format!("({})", hex_f32(s))),
                "f64" if d.is_finite() => Ok(format!("({})", hex_f64(d))),
                "" if d.is_finite() => Ok(format!(
                    "dl_flit{{{}, {}}}",
                    hex_f64(d),
                    if s.is_finite() { hex_f32(s) } else { "0.0f".to_owned() }
                )),
                _ => Err(syn::Error::new(f.span(), "this float literal is out of range")),
            }
        }
        _ => unreachable!("checked"),
    }
}

/// The C++ integer type of a literal suffix.
fn c_int(suffix: &str) -> Option<&'static str> {
    Some(match suffix {
        "i8" => "signed char",
        "i16" => "short",
        "i32" => "int",
        "i64" => "long long",
        "i128" => "dl_i128",
        "u8" => "unsigned char",
        "u16" => "unsigned short",
        "u32" => "unsigned int",
        "u64" => "unsigned long long",
        "u128" => "dl_u128",
        _ => return None,
    })
}

/// A C++ hexadecimal literal of exactly this `f64`.
pub(crate) fn hex_f64(x: f64) -> String {
    let bits = x.to_bits();
    let sign = if bits >> 63 == 1 { "-" } else { "" };
    let exponent = ((bits >> 52) & 0x7FF) as i64;
    let mantissa = bits & ((1u64 << 52) - 1);
    match exponent {
        0 if mantissa == 0 => format!("{sign}0.0"),
        0 => format!("{sign}0x0.{mantissa:013x}p-1022"),
        e => format!("{sign}0x1.{mantissa:013x}p{}", e - 1023),
    }
}

/// A C++ hexadecimal literal of exactly this `f32`.
pub(crate) fn hex_f32(x: f32) -> String {
    let bits = x.to_bits();
    let sign = if bits >> 31 == 1 { "-" } else { "" };
    let exponent = ((bits >> 23) & 0xFF) as i64;
    let mantissa = (bits & ((1u32 << 23) - 1)) << 1;
    match exponent {
        0 if mantissa == 0 => format!("{sign}0.0f"),
        0 => format!("{sign}0x0.{mantissa:06x}p-126f"),
        e => format!("{sign}0x1.{mantissa:06x}p{}f", e - 127),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_literals_are_exact() {
        assert_eq!(hex_f64(1.0), "0x1.0000000000000p0");
        assert_eq!(hex_f64(-0.1), "-0x1.999999999999ap-4");
        assert_eq!(hex_f32(0.1), "0x1.99999ap-4f");
        assert_eq!(hex_f32(f32::from_bits(1)), "0x0.000002p-126f");
        assert_eq!(hex_f64(0.0), "0.0");
    }
}
