//! Expression strings, like numexpr's: `"a*b + sin(a) + cos(b)"`.
//!
//! Grammar (lowest precedence first): `or`/`|`, `and`/`&`, `not`/`~`,
//! comparisons (chains like `a < b < c` mean `a < b and b < c`), `+ -`,
//! `* /`, unary `- +`, `**` (right associative, binds tighter than unary
//! minus: `-2**2 == -4`), then numbers, names, calls and parentheses.
//! Reductions (`sum`, `mean`, `min`, `max`, `std`, `var`, `argmin`, `argmax`)
//! may appear anywhere and take `axis=` (and `ddof=` for std/var).
//!
//! The parsed expression records ordinary lazy ops, so it is fused and placed
//! like any other graph.

use crate::array::{Array, Operand};
use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::op::{BinaryOp, ReduceOp, UnaryOp};

/// Deepest nesting accepted (keeps recursion far from the stack limit).
const MAX_DEPTH: usize = 200;

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    source: String,
    root: Node,
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Num(Scalar),
    Name(String, usize),
    Unary(UnaryOp, Box<Node>),
    Binary(BinaryOp, Box<Node>, Box<Node>),
    Call {
        func: Func,
        args: Vec<Node>,
        axis: Option<Vec<isize>>,
        ddof: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Func {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Where,
    Reduce(ReduceOp),
}

const FUNCS: &[(&str, Func, usize)] = &[
    ("sin", Func::Unary(UnaryOp::Sin), 1),
    ("cos", Func::Unary(UnaryOp::Cos), 1),
    ("tan", Func::Unary(UnaryOp::Tan), 1),
    ("tanh", Func::Unary(UnaryOp::Tanh), 1),
    ("exp", Func::Unary(UnaryOp::Exp), 1),
    ("log", Func::Unary(UnaryOp::Log), 1),
    ("sqrt", Func::Unary(UnaryOp::Sqrt), 1),
    ("abs", Func::Unary(UnaryOp::Abs), 1),
    ("sign", Func::Unary(UnaryOp::Sign), 1),
    ("square", Func::Unary(UnaryOp::Square), 1),
    ("floor", Func::Unary(UnaryOp::Floor), 1),
    ("ceil", Func::Unary(UnaryOp::Ceil), 1),
    ("log1p", Func::Unary(UnaryOp::Log1p), 1),
    ("expm1", Func::Unary(UnaryOp::Expm1), 1),
    ("log10", Func::Unary(UnaryOp::Log10), 1),
    ("log2", Func::Unary(UnaryOp::Log2), 1),
    ("exp2", Func::Unary(UnaryOp::Exp2), 1),
    ("arcsin", Func::Unary(UnaryOp::Arcsin), 1),
    ("arccos", Func::Unary(UnaryOp::Arccos), 1),
    ("arctan", Func::Unary(UnaryOp::Arctan), 1),
    ("sinh", Func::Unary(UnaryOp::Sinh), 1),
    ("cosh", Func::Unary(UnaryOp::Cosh), 1),
    ("arcsinh", Func::Unary(UnaryOp::Arcsinh), 1),
    ("arccosh", Func::Unary(UnaryOp::Arccosh), 1),
    ("arctanh", Func::Unary(UnaryOp::Arctanh), 1),
    ("arctan2", Func::Binary(BinaryOp::Atan2), 2),
    ("hypot", Func::Binary(BinaryOp::Hypot), 2),
    ("minimum", Func::Binary(BinaryOp::Minimum), 2),
    ("maximum", Func::Binary(BinaryOp::Maximum), 2),
    ("pow", Func::Binary(BinaryOp::Pow), 2),
    ("where", Func::Where, 3),
    ("sum", Func::Reduce(ReduceOp::Sum), 1),
    ("mean", Func::Reduce(ReduceOp::Mean), 1),
    ("prod", Func::Reduce(ReduceOp::Prod), 1),
    ("min", Func::Reduce(ReduceOp::Min), 1),
    ("max", Func::Reduce(ReduceOp::Max), 1),
    ("std", Func::Reduce(ReduceOp::Std { ddof: 0 }), 1),
    ("var", Func::Reduce(ReduceOp::Var { ddof: 0 }), 1),
    ("argmin", Func::Reduce(ReduceOp::ArgMin), 1),
    ("argmax", Func::Reduce(ReduceOp::ArgMax), 1),
];

const CONSTANTS: &[(&str, Scalar)] = &[
    ("pi", Scalar::Float(std::f64::consts::PI)),
    ("e", Scalar::Float(std::f64::consts::E)),
    ("inf", Scalar::Float(f64::INFINITY)),
    ("nan", Scalar::Float(f64::NAN)),
    ("True", Scalar::Bool(true)),
    ("False", Scalar::Bool(false)),
];

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(Scalar),
    Ident(String),
    Op(&'static str),
    End,
}

struct Lexer<'s> {
    src: &'s str,
    chars: Vec<char>,
    toks: Vec<(Tok, usize)>,
}

impl<'s> Lexer<'s> {
    fn run(src: &'s str) -> Result<Vec<(Tok, usize)>> {
        let mut lx = Lexer {
            src,
            chars: src.chars().collect(),
            toks: Vec::new(),
        };
        let mut i = 0;
        while i < lx.chars.len() {
            let c = lx.chars[i];
            if c.is_whitespace() {
                i += 1;
            } else if c.is_ascii_digit()
                || (c == '.' && lx.chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
            {
                i = lx.number(i)?;
            } else if c.is_alphabetic() || c == '_' {
                let start = i;
                while i < lx.chars.len() && (lx.chars[i].is_alphanumeric() || lx.chars[i] == '_') {
                    i += 1;
                }
                let word: String = lx.chars[start..i].iter().collect();
                lx.toks.push((Tok::Ident(word), start));
            } else {
                let two: String = lx.chars[i..(i + 2).min(lx.chars.len())].iter().collect();
                let op = ["**", "<=", ">=", "==", "!="]
                    .into_iter()
                    .find(|o| *o == two)
                    .or_else(|| {
                        [
                            "+", "-", "*", "/", "<", ">", "(", ")", ",", "=", "&", "|", "~",
                        ]
                        .into_iter()
                        .find(|o| o.starts_with(c))
                    });
                match op {
                    Some(o) => {
                        lx.toks.push((Tok::Op(o), i));
                        i += o.len();
                    }
                    None => {
                        return Err(Error::parse(src, i, format!("unexpected character '{c}'")))
                    }
                }
            }
        }
        lx.toks.push((Tok::End, lx.chars.len()));
        Ok(lx.toks)
    }

    fn number(&mut self, start: usize) -> Result<usize> {
        let cs = &self.chars;
        let mut i = start;
        let mut is_float = false;
        while i < cs.len() && cs[i].is_ascii_digit() {
            i += 1;
        }
        if i < cs.len() && cs[i] == '.' {
            is_float = true;
            i += 1;
            while i < cs.len() && cs[i].is_ascii_digit() {
                i += 1;
            }
        }
        if i < cs.len() && (cs[i] == 'e' || cs[i] == 'E') {
            let mut j = i + 1;
            if j < cs.len() && (cs[j] == '+' || cs[j] == '-') {
                j += 1;
            }
            if j < cs.len() && cs[j].is_ascii_digit() {
                is_float = true;
                i = j;
                while i < cs.len() && cs[i].is_ascii_digit() {
                    i += 1;
                }
            } else {
                return Err(Error::parse(self.src, i, "malformed exponent in number"));
            }
        }
        if i < cs.len() && (cs[i].is_alphabetic() || cs[i] == '_') {
            return Err(Error::parse(
                self.src,
                i,
                "a number cannot be followed by a letter",
            ));
        }
        let text: String = cs[start..i].iter().collect();
        let value = if is_float {
            Scalar::Float(
                text.parse::<f64>()
                    .map_err(|e| Error::parse(self.src, start, e.to_string()))?,
            )
        } else {
            match text.parse::<i64>() {
                Ok(v) => Scalar::Int(v),
                // Too big for int64: a float, like Python's float(int).
                Err(_) => Scalar::Float(text.parse::<f64>().unwrap_or(f64::INFINITY)),
            }
        };
        self.toks.push((Tok::Num(value), start));
        Ok(i)
    }
}

struct Parser<'s> {
    src: &'s str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
}

/// Parses an expression string.
///
/// # Errors
/// [`Error::Parse`] with the position and what was expected; unknown
/// functions are reported here, unknown variable names at evaluation.
pub fn parse(src: &str) -> Result<Expr> {
    let toks = Lexer::run(src)?;
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        depth: 0,
    };
    if matches!(p.peek(), Tok::End) {
        return Err(Error::parse(src, 0, "empty expression"));
    }
    let root = p.or()?;
    if !matches!(p.peek(), Tok::End) {
        return Err(p.error("expected an operator or the end of the expression"));
    }
    Ok(Expr {
        source: src.to_string(),
        root,
    })
}

/// Parses and evaluates `src` with the given variables (lazily: the result
/// is a pending array).
///
/// ```
/// use crossover::{Array, DType};
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3])?;
/// let b = Array::from_vec(vec![4.0f64, 5.0, 6.0], &[3])?;
/// let y = crossover::evaluate("sum(a * b) + 1", &[("a", &a), ("b", &b)])?;
/// assert_eq!(y.item()?, 33.0);
/// # Ok::<(), crossover::Error>(())
/// ```
/// `&`, `|` and `~` are NumPy's bitwise operators: on bools they are the
/// logical ones; on floats NumPy raises `TypeError`, and the engine has no
/// bitwise integer ops, so anything but bool is a dtype error.
fn require_bool(sym: &'static str, o: &Operand) -> Result<()> {
    let d = match o {
        Operand::Array(a) => a.dtype(),
        Operand::Scalar(s) => s.natural_dtype(),
    };
    if d.is_bool() {
        return Ok(());
    }
    Err(Error::dtype(
        sym,
        d,
        "logical operators need bool operands (compare first, e.g. (a > 0) & (b < 1))",
    ))
}

pub fn evaluate(src: &str, vars: &[(&str, &Array)]) -> Result<Array> {
    parse(src)?.eval(vars)
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    fn here(&self) -> usize {
        self.toks[self.pos].1
    }
    fn bump(&mut self) -> Tok {
        let t = self.toks[self.pos].0.clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn error(&self, msg: &str) -> Error {
        let found = match self.peek() {
            Tok::End => "end of expression".to_string(),
            Tok::Num(n) => format!("number {n}"),
            Tok::Ident(s) => format!("name '{s}'"),
            Tok::Op(o) => format!("'{o}'"),
        };
        Error::parse(self.src, self.here(), format!("{msg}, found {found}"))
    }
    fn is_op(&self, o: &str) -> bool {
        matches!(self.peek(), Tok::Op(x) if *x == o)
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(x) if x == w)
    }
    fn expect(&mut self, o: &str) -> Result<()> {
        if self.is_op(o) {
            self.bump();
            Ok(())
        } else {
            Err(self.error(&format!("expected '{o}'")))
        }
    }
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::parse(
                self.src,
                self.here(),
                format!("expression nested deeper than {MAX_DEPTH}"),
            ));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Node> {
        self.enter()?;
        let mut lhs = self.and()?;
        while self.is_word("or") || self.is_op("|") {
            self.bump();
            let rhs = self.and()?;
            lhs = Node::Binary(BinaryOp::Or, Box::new(lhs), Box::new(rhs));
        }
        self.depth -= 1;
        Ok(lhs)
    }

    fn and(&mut self) -> Result<Node> {
        let mut lhs = self.not()?;
        while self.is_word("and") || self.is_op("&") {
            self.bump();
            let rhs = self.not()?;
            lhs = Node::Binary(BinaryOp::And, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn not(&mut self) -> Result<Node> {
        if self.is_word("not") || self.is_op("~") {
            self.bump();
            self.enter()?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(Node::Unary(UnaryOp::Not, Box::new(inner)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Node> {
        let first = self.additive()?;
        let mut result: Option<Node> = None;
        let mut lhs = first.clone();
        loop {
            let op = match self.peek() {
                Tok::Op("<") => BinaryOp::Lt,
                Tok::Op("<=") => BinaryOp::Le,
                Tok::Op(">") => BinaryOp::Gt,
                Tok::Op(">=") => BinaryOp::Ge,
                Tok::Op("==") => BinaryOp::Eq,
                Tok::Op("!=") => BinaryOp::Ne,
                _ => break,
            };
            self.bump();
            let rhs = self.additive()?;
            let cmp = Node::Binary(op, Box::new(lhs), Box::new(rhs.clone()));
            result = Some(match result {
                None => cmp,
                Some(prev) => Node::Binary(BinaryOp::And, Box::new(prev), Box::new(cmp)),
            });
            lhs = rhs;
        }
        Ok(result.unwrap_or(first))
    }

    fn additive(&mut self) -> Result<Node> {
        let mut lhs = self.term()?;
        loop {
            let op = if self.is_op("+") {
                BinaryOp::Add
            } else if self.is_op("-") {
                BinaryOp::Sub
            } else {
                break;
            };
            self.bump();
            let rhs = self.term()?;
            lhs = Node::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn term(&mut self) -> Result<Node> {
        let mut lhs = self.unary()?;
        loop {
            let op = if self.is_op("*") {
                BinaryOp::Mul
            } else if self.is_op("/") {
                BinaryOp::Div
            } else {
                break;
            };
            self.bump();
            let rhs = self.unary()?;
            lhs = Node::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Node> {
        if self.is_op("-") || self.is_op("+") {
            let neg = self.is_op("-");
            self.bump();
            self.enter()?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(match (neg, inner) {
                (true, Node::Num(Scalar::Int(i))) => Node::Num(Scalar::Int(i.wrapping_neg())),
                (true, Node::Num(Scalar::Float(f))) => Node::Num(Scalar::Float(-f)),
                (true, n) => Node::Unary(UnaryOp::Neg, Box::new(n)),
                (false, n) => n,
            });
        }
        self.power()
    }

    fn power(&mut self) -> Result<Node> {
        let base = self.primary()?;
        if self.is_op("**") {
            self.bump();
            self.enter()?;
            let exp = self.unary()?;
            self.depth -= 1;
            return Ok(Node::Binary(BinaryOp::Pow, Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<Node> {
        let at = self.here();
        match self.peek().clone() {
            Tok::Num(v) => {
                self.bump();
                Ok(Node::Num(v))
            }
            Tok::Op("(") => {
                self.bump();
                let inner = self.or()?;
                self.expect(")")?;
                Ok(inner)
            }
            Tok::Ident(name) => {
                self.bump();
                if self.is_op("(") {
                    self.call(&name, at)
                } else if let Some((_, v)) = CONSTANTS.iter().find(|(n, _)| *n == name) {
                    Ok(Node::Num(*v))
                } else {
                    Ok(Node::Name(name, at))
                }
            }
            _ => Err(self.error("expected a number, a name, a call or '('")),
        }
    }

    fn call(&mut self, name: &str, at: usize) -> Result<Node> {
        let Some(&(_, func, arity)) = FUNCS.iter().find(|(n, _, _)| *n == name) else {
            return Err(Error::UnknownName {
                pos: at,
                what: "function",
                name: name.to_string(),
                known: FUNCS.iter().map(|f| f.0).collect::<Vec<_>>().join(", "),
            });
        };
        self.expect("(")?;
        self.enter()?;
        let mut args = Vec::new();
        let mut axis = None;
        let mut ddof = 0u32;
        if !self.is_op(")") {
            loop {
                // Keyword arguments of reductions.
                if let Tok::Ident(kw) = self.peek().clone() {
                    if matches!(self.toks.get(self.pos + 1), Some((Tok::Op("="), _))) {
                        if !matches!(func, Func::Reduce(_)) || !(kw == "axis" || kw == "ddof") {
                            return Err(self.error(&format!("{name}() takes no keyword '{kw}'")));
                        }
                        self.bump();
                        self.bump();
                        if kw == "axis" {
                            axis = Some(self.axis_value()?);
                        } else {
                            ddof = self
                                .int_value()?
                                .try_into()
                                .map_err(|_| self.error("ddof must be >= 0"))?;
                        }
                        if self.is_op(",") {
                            self.bump();
                            continue;
                        }
                        break;
                    }
                }
                if matches!(func, Func::Reduce(_)) && args.len() == 1 {
                    axis = Some(self.axis_value()?);
                } else {
                    args.push(self.or()?);
                }
                if self.is_op(",") {
                    self.bump();
                } else {
                    break;
                }
            }
        }
        self.expect(")")?;
        self.depth -= 1;
        if args.len() != arity {
            return Err(Error::parse(
                self.src,
                at,
                format!("{name}() takes {arity} argument(s), got {}", args.len()),
            ));
        }
        Ok(Node::Call {
            func,
            args,
            axis,
            ddof,
        })
    }

    fn int_value(&mut self) -> Result<i64> {
        let neg = if self.is_op("-") {
            self.bump();
            true
        } else {
            false
        };
        match self.bump() {
            Tok::Num(Scalar::Int(i)) => Ok(if neg { -i } else { i }),
            _ => Err(Error::parse(
                self.src,
                self.toks[self.pos.saturating_sub(1)].1,
                "expected an integer",
            )),
        }
    }

    fn axis_value(&mut self) -> Result<Vec<isize>> {
        if self.is_op("(") {
            self.bump();
            let mut axes = Vec::new();
            while !self.is_op(")") {
                axes.push(self.int_value()? as isize);
                if self.is_op(",") {
                    self.bump();
                } else {
                    break;
                }
            }
            self.expect(")")?;
            return Ok(axes);
        }
        Ok(vec![self.int_value()? as isize])
    }
}

impl Expr {
    /// The source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Variable names the expression reads, in order of first use.
    pub fn names(&self) -> Vec<String> {
        fn walk(n: &Node, out: &mut Vec<String>) {
            match n {
                Node::Name(s, _) => {
                    if !out.contains(s) {
                        out.push(s.clone())
                    }
                }
                Node::Unary(_, a) => walk(a, out),
                Node::Binary(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Node::Call { args, .. } => args.iter().for_each(|a| walk(a, out)),
                Node::Num(_) => {}
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }

    /// Records the expression's ops over the given variables.
    ///
    /// # Errors
    /// [`Error::UnknownName`] (listing the known names) for a variable not
    /// given; any shape or dtype error of the ops, naming the op.
    pub fn eval(&self, vars: &[(&str, &Array)]) -> Result<Array> {
        match self.eval_node(&self.root, vars)? {
            Operand::Array(a) => Ok(a),
            Operand::Scalar(s) => Array::scalar(s, s.natural_dtype()),
        }
    }

    fn eval_node(&self, n: &Node, vars: &[(&str, &Array)]) -> Result<Operand> {
        Ok(match n {
            Node::Num(v) => Operand::Scalar(*v),
            Node::Name(name, pos) => match vars.iter().find(|(k, _)| k == name) {
                Some((_, a)) => Operand::Array((*a).clone()),
                None => {
                    let mut known: Vec<&str> = vars.iter().map(|(k, _)| *k).collect();
                    known.extend(CONSTANTS.iter().map(|c| c.0));
                    return Err(Error::UnknownName {
                        pos: *pos,
                        what: "name",
                        name: name.clone(),
                        known: known.join(", "),
                    });
                }
            },
            Node::Unary(op, a) => {
                let x = self.array(a, vars)?;
                if *op == UnaryOp::Not {
                    require_bool("~", &Operand::Array(x.clone()))?;
                }
                Operand::Array(x.unary(*op)?)
            }
            Node::Binary(op, a, b) => {
                let (x, y) = (self.eval_node(a, vars)?, self.eval_node(b, vars)?);
                if let BinaryOp::And | BinaryOp::Or = op {
                    let sym = if *op == BinaryOp::And { "&" } else { "|" };
                    require_bool(sym, &x)?;
                    require_bool(sym, &y)?;
                }
                Operand::Array(Array::binary(*op, x, y)?)
            }
            Node::Call {
                func,
                args,
                axis,
                ddof,
            } => Operand::Array(match func {
                Func::Unary(op) => self.array(&args[0], vars)?.unary(*op)?,
                Func::Binary(op) => Array::binary(
                    *op,
                    self.eval_node(&args[0], vars)?,
                    self.eval_node(&args[1], vars)?,
                )?,
                Func::Where => {
                    let c = self.array(&args[0], vars)?;
                    Array::where_(
                        &c,
                        self.eval_node(&args[1], vars)?,
                        self.eval_node(&args[2], vars)?,
                    )?
                }
                Func::Reduce(op) => {
                    let op = match op {
                        ReduceOp::Std { .. } => ReduceOp::Std { ddof: *ddof },
                        ReduceOp::Var { .. } => ReduceOp::Var { ddof: *ddof },
                        o => *o,
                    };
                    let x = self.array(&args[0], vars)?;
                    match (op, axis) {
                        (ReduceOp::ArgMin | ReduceOp::ArgMax, Some(a)) if a.len() == 1 => {
                            if op == ReduceOp::ArgMin {
                                x.argmin(Some(a[0]))?
                            } else {
                                x.argmax(Some(a[0]))?
                            }
                        }
                        _ => x.reduce(op, axis.as_deref(), false)?,
                    }
                }
            }),
        })
    }

    fn array(&self, n: &Node, vars: &[(&str, &Array)]) -> Result<Array> {
        match self.eval_node(n, vars)? {
            Operand::Array(a) => Ok(a),
            Operand::Scalar(s) => Array::scalar(s, s.natural_dtype()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_pos(src: &str) -> usize {
        match parse(src) {
            Err(Error::Parse { pos, .. }) | Err(Error::UnknownName { pos, .. }) => pos,
            other => panic!("expected a parse error for {src:?}, got {other:?}"),
        }
    }

    #[test]
    fn precedence_matches_python() {
        let ev = |s: &str| evaluate(s, &[]).unwrap().item().unwrap();
        assert_eq!(ev("-2**2"), -4.0);
        assert_eq!(ev("2**3**2"), 512.0);
        assert_eq!(ev("1 + 2 * 3 - 4 / 2"), 5.0);
        assert_eq!(ev("(1 + 2) * 3"), 9.0);
        assert_eq!(ev("1 < 2 < 3"), 1.0);
        assert_eq!(ev("3 > 2 > 2"), 0.0);
        assert_eq!(ev("not 1 > 2 and 2 > 1"), 1.0);
        assert_eq!(ev("where(1 > 2, 10, 20)"), 20.0);
        assert_eq!(ev("1e3 + .5"), 1000.5);
    }

    #[test]
    fn errors_point_at_the_problem() {
        assert_eq!(err_pos("a +"), 3);
        assert_eq!(err_pos("a + * b"), 4);
        assert_eq!(err_pos("sin(a"), 5);
        assert_eq!(err_pos("a $ b"), 2);
        assert_eq!(err_pos("foo(a)"), 0);
        assert_eq!(err_pos("1.5e"), 3);
        assert_eq!(err_pos("2x"), 1);
        assert_eq!(err_pos(""), 0);
        assert_eq!(err_pos("sin(a, b)"), 0);
        assert_eq!(err_pos("a b"), 2);
    }

    #[test]
    fn unknown_variables_list_the_known_ones() {
        let a = Array::from_vec(vec![1.0f32], &[1]).unwrap();
        match evaluate("a + bb", &[("a", &a)]) {
            Err(Error::UnknownName {
                name, known, pos, ..
            }) => {
                assert_eq!(name, "bb");
                assert_eq!(pos, 4);
                assert!(known.contains('a'));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "(".repeat(100_000) + "1" + &")".repeat(100_000);
        assert!(matches!(parse(&deep), Err(Error::Parse { .. })));
        let minus = "-".repeat(100_000) + "1";
        assert!(matches!(parse(&minus), Err(Error::Parse { .. })));
    }

    #[test]
    fn reductions_with_axis_and_ddof() {
        let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        let s = evaluate("sum(x, axis=0)", &[("x", &x)]).unwrap();
        assert_eq!(s.to_vec::<f64>().unwrap(), vec![4.0, 6.0]);
        let s = evaluate("sum(x, 1)", &[("x", &x)]).unwrap();
        assert_eq!(s.to_vec::<f64>().unwrap(), vec![3.0, 7.0]);
        let v = evaluate("var(x, ddof=1)", &[("x", &x)])
            .unwrap()
            .item()
            .unwrap();
        assert!((v - 5.0 / 3.0).abs() < 1e-12);
        let m = evaluate("x - mean(x, axis=(0, 1))", &[("x", &x)]).unwrap();
        assert_eq!(m.to_vec::<f64>().unwrap(), vec![-1.5, -0.5, 0.5, 1.5]);
    }
}
