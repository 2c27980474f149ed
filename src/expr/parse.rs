//! python-blosc2's lazy-expression strings parsed into an [`Expr`] tree.
//!
//! The grammar is Python's expression syntax as numexpr and python-blosc2 accept it:
//! operands `o0, o1, ...`, number, bool and string literals (`nan`, `inf` too), the binary
//! operators `** * / // % + - & ^ |` and comparisons, unary `- + ~`, and function calls.
//! Precedence is Python's: `|` < `^` < `&` are looser than comparisons in numexpr's reading
//! only through parentheses, which python-blosc2 always writes (`((o0 > 3) & (o1 < 2))`);
//! unparenthesised, Python's own order applies (`a > 3 & b` is `a > (3 & b)`). Chained
//! comparisons, `and`, `or`, `not`, attribute access and subscripts are refused.

#![forbid(unsafe_code)]

use super::{BinOp, Expr, UnOp};

/// Parse an expression string; the error says what and where.
pub(crate) fn parse(src: &str) -> Result<Expr, String> {
    let toks = tokenize(src)?;
    let mut p = Parser {
        toks,
        at: 0,
        depth: 0,
    };
    let e = p.expr(0)?;
    match p.peek() {
        Tok::End => Ok(e),
        t => Err(format!("unexpected {t:?} after a complete expression")),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i128),
    Float(f64),
    Str(String),
    Name(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
    End,
}

const OPS: [&str; 19] = [
    "**", "//", "<=", ">=", "==", "!=", "<<", ">>", "*", "/", "%", "+", "-", "&", "^", "|", "~",
    "<", ">",
];

fn tokenize(src: &str) -> Result<Vec<Tok>, String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'(' {
            out.push(Tok::LParen);
            i += 1;
        } else if c == b')' {
            out.push(Tok::RParen);
            i += 1;
        } else if c == b',' {
            out.push(Tok::Comma);
            i += 1;
        } else if c == b'\'' || c == b'"' {
            let start = i + 1;
            let mut j = start;
            let mut s = String::new();
            loop {
                match b.get(j) {
                    None => return Err(format!("unterminated string at byte {i}")),
                    Some(&q) if q == c => break,
                    Some(b'\\') => {
                        let n = *b.get(j + 1).ok_or("a string ends in a backslash")?;
                        s.push(match n {
                            b'n' => '\n',
                            b't' => '\t',
                            b'\\' => '\\',
                            b'\'' => '\'',
                            b'"' => '"',
                            _ => return Err(format!("string escape \\{}", n as char)),
                        });
                        j += 2;
                    }
                    Some(_) => {
                        let ch = src[j..]
                            .chars()
                            .next()
                            .ok_or("a string cut in a character")?;
                        s.push(ch);
                        j += ch.len_utf8();
                    }
                }
            }
            out.push(Tok::Str(s));
            i = j + 1;
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            let mut float = false;
            while i < b.len() {
                let d = b[i];
                if d.is_ascii_digit() || d == b'_' {
                    i += 1;
                } else if d == b'.' && !float {
                    float = true;
                    i += 1;
                } else if (d == b'e' || d == b'E')
                    && (b.get(i + 1).is_some_and(u8::is_ascii_digit)
                        || (matches!(b.get(i + 1), Some(b'+' | b'-'))
                            && b.get(i + 2).is_some_and(u8::is_ascii_digit)))
                {
                    float = true;
                    i += 2;
                } else {
                    break;
                }
            }
            let text: String = src[start..i].chars().filter(|&c| c != '_').collect();
            if b.get(i).is_some_and(|c| c.is_ascii_alphabetic()) {
                return Err(format!("number {text:?} followed by a letter"));
            }
            out.push(if float {
                Tok::Float(text.parse().map_err(|e| format!("number {text:?}: {e}"))?)
            } else {
                Tok::Int(text.parse().map_err(|e| format!("number {text:?}: {e}"))?)
            });
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Name(src[start..i].to_string()));
        } else if let Some(op) = OPS.iter().find(|op| b[i..].starts_with(op.as_bytes())) {
            out.push(Tok::Op(op));
            i += op.len();
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(format!("unexpected character {ch:?} at byte {i}"));
        }
        if out.len() > 100_000 {
            return Err("an expression of more than 100000 tokens".into());
        }
    }
    out.push(Tok::End);
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
    /// Nesting of `expr` calls, bounded so that no expression overflows the stack.
    depth: usize,
}

/// The deepest nesting of parentheses, calls and operators parsed.
const MAX_DEPTH: usize = 200;

/// Binding powers, Python's order (loosest first).
fn binary(op: &str) -> Option<(u8, BinOp)> {
    Some(match op {
        "|" => (2, BinOp::Or),
        "^" => (3, BinOp::Xor),
        "&" => (4, BinOp::And),
        "<<" => (5, BinOp::Shl),
        ">>" => (5, BinOp::Shr),
        "+" => (6, BinOp::Add),
        "-" => (6, BinOp::Sub),
        "*" => (7, BinOp::Mul),
        "/" => (7, BinOp::Div),
        "//" => (7, BinOp::FloorDiv),
        "%" => (7, BinOp::Mod),
        _ => return None,
    })
}

fn comparison(op: &str) -> Option<BinOp> {
    Some(match op {
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        "==" => BinOp::Eq,
        "!=" => BinOp::Ne,
        _ => return None,
    })
}

/// Comparisons bind looser than `|` in Python.
const CMP_POWER: u8 = 1;

impl Parser {
    fn peek(&self) -> &Tok {
        self.toks.get(self.at).unwrap_or(&Tok::End)
    }

    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        self.at += 1;
        t
    }

    fn expect(&mut self, t: Tok) -> Result<(), String> {
        let got = self.next();
        if got == t {
            Ok(())
        } else {
            Err(format!("expected {t:?}, found {got:?}"))
        }
    }

    /// An expression whose operators all bind at least as tight as `min`.
    fn expr(&mut self, min: u8) -> Result<Expr, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!("an expression nested more than {MAX_DEPTH} deep"));
        }
        self.depth += 1;
        let e = self.expr_at(min);
        self.depth -= 1;
        e
    }

    fn expr_at(&mut self, min: u8) -> Result<Expr, String> {
        let mut lhs = self.unary()?;
        loop {
            let Tok::Op(op) = self.peek().clone() else {
                if let Tok::Name(n) = self.peek() {
                    if matches!(n.as_str(), "and" | "or" | "not" | "in" | "is" | "if") {
                        return Err(format!(
                            "`{n}` is not an array operator (write &, |, ~ or a function)"
                        ));
                    }
                }
                return Ok(lhs);
            };
            if let Some(cmp) = comparison(op) {
                if min > CMP_POWER {
                    return Ok(lhs);
                }
                self.next();
                let rhs = self.expr(CMP_POWER + 1)?;
                if matches!(self.peek(), Tok::Op(o) if comparison(o).is_some()) {
                    return Err("a chained comparison (a < b < c) is not an array operation".into());
                }
                lhs = Expr::Binary(cmp, Box::new(lhs), Box::new(rhs));
                continue;
            }
            let Some((power, bin)) = binary(op) else {
                return Ok(lhs);
            };
            if power < min {
                return Ok(lhs);
            }
            self.next();
            let rhs = self.expr(power + 1)?;
            lhs = Expr::Binary(bin, Box::new(lhs), Box::new(rhs));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!("an expression nested more than {MAX_DEPTH} deep"));
        }
        let op = match self.peek() {
            Tok::Op("-") => Some(UnOp::Neg),
            Tok::Op("+") => Some(UnOp::Pos),
            Tok::Op("~") => Some(UnOp::Invert),
            _ => None,
        };
        if let Some(op) = op {
            self.next();
            self.depth += 1;
            let inner = self.unary();
            self.depth -= 1;
            let inner = inner?;
            // A negative literal stays a literal (Python folds `-2` the same way).
            return Ok(match (op, inner) {
                (UnOp::Neg, Expr::Int(i)) => Expr::Int(i.wrapping_neg()),
                (UnOp::Neg, Expr::Float(f)) => Expr::Float(-f),
                (op, inner) => Expr::Unary(op, Box::new(inner)),
            });
        }
        self.power()
    }

    /// `atom ** unary` (right-associative, tighter than unary minus on its left).
    fn power(&mut self) -> Result<Expr, String> {
        let base = self.atom()?;
        if self.peek() == &Tok::Op("**") {
            self.next();
            self.depth += 1;
            let exp = self.unary();
            self.depth -= 1;
            let exp = exp?;
            return Ok(Expr::Binary(BinOp::Pow, Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Expr, String> {
        match self.next() {
            Tok::Int(i) => Ok(Expr::Int(i)),
            Tok::Float(f) => Ok(Expr::Float(f)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::LParen => {
                let e = self.expr(0)?;
                self.expect(Tok::RParen)?;
                Ok(e)
            }
            Tok::Name(n) => {
                if self.peek() == &Tok::LParen {
                    self.next();
                    let mut args = Vec::new();
                    if self.peek() != &Tok::RParen {
                        loop {
                            args.push(self.expr(0)?);
                            match self.next() {
                                Tok::Comma if self.peek() == &Tok::RParen => {}
                                Tok::Comma => continue,
                                Tok::RParen => break,
                                t => {
                                    return Err(format!("expected , or ) in {n}(...), found {t:?}"))
                                }
                            }
                            if self.peek() == &Tok::RParen {
                                self.next();
                                break;
                            }
                        }
                    } else {
                        self.next();
                    }
                    return Ok(Expr::Call(n, args));
                }
                match n.as_str() {
                    "True" => Ok(Expr::Bool(true)),
                    "False" => Ok(Expr::Bool(false)),
                    "nan" | "NaN" => Ok(Expr::Float(f64::NAN)),
                    "inf" => Ok(Expr::Float(f64::INFINITY)),
                    _ => match n.strip_prefix('o').map(str::parse::<usize>) {
                        Some(Ok(k)) => Ok(Expr::Operand(k)),
                        _ => Err(format!("unknown name {n:?} (operands are o0, o1, ...)")),
                    },
                }
            }
            t => Err(format!("unexpected {t:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(e: &Expr) -> String {
        match e {
            Expr::Operand(k) => format!("o{k}"),
            Expr::Int(i) => i.to_string(),
            Expr::Float(f) => format!("{f:?}"),
            Expr::Bool(b) => b.to_string(),
            Expr::Str(s) => format!("{s:?}"),
            Expr::Unary(op, a) => format!("({op:?} {})", show(a)),
            Expr::Binary(op, a, b) => format!("({op:?} {} {})", show(a), show(b)),
            Expr::Call(f, args) => format!(
                "{f}({})",
                args.iter().map(show).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    #[test]
    fn python_precedence() {
        let cases = [
            ("(o0 * 2 + o1)", "(Add (Mul o0 2) o1)"),
            ("((o0 > 3) & (o1 < 2))", "(And (Gt o0 3) (Lt o1 2))"),
            ("o0 > 3 & o1", "(Gt o0 (And 3 o1))"),
            ("-o0 ** 2", "(Neg (Pow o0 2))"),
            ("o0 ** -2", "(Pow o0 -2)"),
            ("2 ** 3 ** 2", "(Pow 2 (Pow 3 2))"),
            ("o0 - o1 - o2", "(Sub (Sub o0 o1) o2)"),
            ("o0 // 3 % 2", "(Mod (FloorDiv o0 3) 2)"),
            ("~(o0 > 3) | o1", "(Or (Invert (Gt o0 3)) o1)"),
            ("where(o0 > 4, o0, o1)", "where((Gt o0 4), o0, o1)"),
            ("contains(o0, 'x1')", "contains(o0, \"x1\")"),
            ("1.5e3 + .5 + 2.", "(Add (Add 1500.0 0.5) 2.0)"),
            ("o0 == nan", "(Eq o0 NaN)"),
        ];
        for (src, want) in cases {
            assert_eq!(show(&parse(src).unwrap()), want, "{src}");
        }
    }

    #[test]
    fn refusals_say_what() {
        for (src, part) in [
            ("o0 < o1 < o2", "chained"),
            ("o0 and o1", "`and`"),
            ("x + 1", "unknown name"),
            ("o0 +", "unexpected"),
            ("(o0", "expected"),
            ("'abc", "unterminated"),
            ("o0 @ o1", "unexpected character"),
            ("o0.sum()", "unexpected character"),
            ("((((((((((", "expected"),
        ] {
            let e = parse(src).unwrap_err();
            assert!(e.contains(part), "{src}: {e}");
        }
        // Nesting is bounded: no stack overflow on hostile schema bytes.
        for deep in [
            "(".repeat(5000) + "o0",
            "-".repeat(5000) + "o0",
            "o0 ** ".repeat(5000) + "o0",
            "f(".repeat(5000) + "o0",
        ] {
            assert!(
                parse(&deep).unwrap_err().contains("nested"),
                "{}",
                &deep[..10]
            );
        }
    }
}
