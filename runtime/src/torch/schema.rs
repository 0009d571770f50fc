//! Operator schemas as dlspan reads them: each argument's name and type, and the number of
//! returned tensors (what the boxed kernels take from and put on the dispatcher's stack).

use super::error::TorchError;

/// The most arguments (and returns) an operator's schema has.
pub const MAX_ARGS: usize = 16;

/// The type of one schema argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    /// `Tensor`: read only.
    Tensor,
    /// `Tensor(a!)`: written in place.
    TensorMut,
    /// `float`: a `double`.
    Float,
    /// `int`: an `int64_t`.
    Int,
    /// `bool`: one byte.
    Bool,
    /// `Tensor?`: a tensor or `None`, read only.
    OptTensor,
    /// `float?`.
    OptFloat,
    /// `int?`.
    OptInt,
    /// `bool?`.
    OptBool,
    /// `str`.
    Str,
}

impl Arg {
    /// Whether the argument is a tensor the kernel owns (when given).
    pub(crate) fn is_tensor(self) -> bool {
        matches!(self, Self::Tensor | Self::TensorMut | Self::OptTensor)
    }
}

/// An operator's schema as dlspan reads it: each argument's name and type, and the number of
/// returned tensors.
#[derive(Debug)]
pub(crate) struct Schema {
    pub(crate) operator: &'static str,
    pub(crate) args: Vec<(&'static str, Arg)>,
    pub(crate) returns: usize,
    /// Whether some argument has a default or is keyword-only (PyTorch then leaves it out of a
    /// Python kernel's positional arguments).
    pub(crate) defaults: bool,
}

impl Schema {
    /// Parses `"(Tensor x, float s=1.0) -> Tensor"`. Supported: `Tensor`, `Tensor(a!)` (any alias
    /// letter), `Tensor?`, `float`, `int`, `bool`, their optionals (`float?`) and `str` arguments
    /// (with defaults; a `*` before keyword-only ones), and `Tensor`, `()` or a tuple of
    /// `Tensor`s as returns.
    pub(crate) fn parse(operator: &'static str, schema: &'static str) -> Result<Self, TorchError> {
        let bad = |reason: String| TorchError::Schema { operator: operator.to_owned(), reason };
        let schema = schema.trim();
        let (args, returns) = schema
            .split_once("->")
            .ok_or_else(|| bad(format!("schema `{schema}` has no `->` (write `(Tensor x) -> Tensor`)")))?;
        let args = args.trim();
        let inner = args
            .strip_prefix('(')
            .and_then(|a| a.strip_suffix(')'))
            .ok_or_else(|| bad(format!("arguments `{args}` are not in parentheses")))?;
        let mut parsed = Vec::new();
        let mut defaults = false;
        for arg in inner.split(',').map(str::trim).filter(|a| !a.is_empty()) {
            if arg == "*" {
                defaults = true;
                continue;
            }
            defaults |= arg.contains('=');
            let arg = arg.split_once('=').map_or(arg, |(a, _)| a.trim());
            let (ty, name) = arg.rsplit_once(' ').ok_or_else(|| bad(format!("argument `{arg}` has no name")))?;
            let ty = ty.trim();
            let kind = match ty {
                "Tensor" => Arg::Tensor,
                "float" => Arg::Float,
                "int" | "SymInt" => Arg::Int,
                "bool" => Arg::Bool,
                "Tensor?" => Arg::OptTensor,
                "float?" => Arg::OptFloat,
                "int?" | "SymInt?" => Arg::OptInt,
                "bool?" => Arg::OptBool,
                "str" => Arg::Str,
                t if t.starts_with("Tensor(") && t.ends_with("!)") => Arg::TensorMut,
                other => {
                    return Err(bad(format!(
                        "argument `{name}` has type `{other}`: dlspan reads `Tensor`, `Tensor(a!)`, `Tensor?`, `float`, `int`, `bool`, their optionals and `str`"
                    )));
                }
            };
            parsed.push((name.trim(), kind));
        }
        if parsed.len() > MAX_ARGS {
            return Err(bad(format!("{} arguments: at most {MAX_ARGS}", parsed.len())));
        }
        let returns = returns.trim();
        let count = match returns {
            "()" => 0,
            "Tensor" => 1,
            r if r.starts_with('(') && r.ends_with(')') => {
                let items: Vec<&str> = r[1..r.len() - 1].split(',').map(str::trim).collect();
                if items.iter().any(|t| *t != "Tensor" && !t.starts_with("Tensor ")) {
                    return Err(bad(format!("returns `{r}`: dlspan returns `Tensor`s only")));
                }
                items.len()
            }
            other => {
                return Err(bad(format!("returns `{other}`: dlspan returns `()`, `Tensor` or a tuple of `Tensor`s")));
            }
        };
        if count > MAX_ARGS {
            return Err(bad(format!("{count} returns: at most {MAX_ARGS}")));
        }
        Ok(Self { operator, args: parsed, returns: count, defaults })
    }
}
