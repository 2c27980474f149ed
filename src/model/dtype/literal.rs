//! Parsing: Python literals (what `ast.literal_eval` accepts, restricted to what dtypes use),
//! bounded in depth and length.

#![forbid(unsafe_code)]

#[allow(unused_imports)]
use super::*;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Lit {
    Str(String),
    Int(i64),
    Bool(bool),
    None,
    Tuple(Vec<Lit>),
    List(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

impl Lit {
    pub(super) fn describe(&self) -> String {
        match self {
            Lit::Str(s) => format!("the string {s:?}"),
            Lit::Int(n) => format!("the integer {n}"),
            Lit::Bool(b) => (if *b { "True" } else { "False" }).to_string(),
            Lit::None => "None".to_string(),
            Lit::Tuple(v) => format!("a tuple of {} items", v.len()),
            Lit::List(v) => format!("a list of {} items", v.len()),
            Lit::Dict(v) => format!("a dict of {} entries", v.len()),
        }
    }
}

pub(super) struct LitParser<'a> {
    pub(super) s: &'a str,
    pub(super) pos: usize,
    pub(super) depth: usize,
}

impl<'a> LitParser<'a> {
    pub(super) fn parse_all(s: &'a str) -> R<Lit> {
        let mut p = LitParser {
            s,
            pos: 0,
            depth: 0,
        };
        p.skip_ws();
        let v = p.value()?;
        p.skip_ws();
        if p.pos != s.len() {
            return Err(format!(
                "unexpected text after the Python literal at byte {}",
                p.pos
            ));
        }
        Ok(v)
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.s[self.pos..].chars().next()
    }

    pub(super) fn peek2(&self) -> Option<char> {
        let mut it = self.s[self.pos..].chars();
        it.next();
        it.next()
    }

    pub(super) fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    pub(super) fn skip_ws(&mut self) {
        while let Some(' ' | '\t' | '\n' | '\r' | '\x0c') = self.peek() {
            self.pos += 1;
        }
    }

    pub(super) fn unexpected(&self) -> String {
        match self.peek() {
            Some(c) => format!(
                "unexpected character {c:?} at byte {} of the Python literal",
                self.pos
            ),
            None => "unexpected end of the Python literal".to_string(),
        }
    }

    pub(super) fn value(&mut self) -> R<Lit> {
        self.depth += 1;
        if self.depth > MAX_LITERAL_DEPTH {
            return Err(format!(
                "the Python literal nests deeper than {MAX_LITERAL_DEPTH} levels"
            ));
        }
        let v = self.value_inner();
        self.depth -= 1;
        v
    }

    pub(super) fn value_inner(&mut self) -> R<Lit> {
        match self.peek() {
            Some('[') => {
                self.pos += 1;
                let (items, _) = self.sequence(']')?;
                Ok(Lit::List(items))
            }
            Some('(') => {
                self.pos += 1;
                let (mut items, comma) = self.sequence(')')?;
                if items.len() == 1 && !comma {
                    Ok(items.pop().unwrap_or(Lit::None))
                } else if items.is_empty() && comma {
                    Err(self.unexpected())
                } else {
                    Ok(Lit::Tuple(items))
                }
            }
            Some('{') => {
                self.pos += 1;
                self.dict()
            }
            Some('\'' | '"') => self.strings(),
            Some('u' | 'U' | 'r' | 'R' | 'b' | 'B') if matches!(self.peek2(), Some('\'' | '"')) => {
                self.strings()
            }
            Some('-' | '+' | '0'..='9') => self.int(),
            Some(c) if c.is_alphabetic() || c == '_' => {
                let start = self.pos;
                while let Some(c) = self.peek() {
                    if c.is_alphanumeric() || c == '_' || c == '.' {
                        self.pos += c.len_utf8();
                    } else {
                        break;
                    }
                }
                match &self.s[start..self.pos] {
                    "True" => Ok(Lit::Bool(true)),
                    "False" => Ok(Lit::Bool(false)),
                    "None" => Ok(Lit::None),
                    name => Err(format!(
                        "the name {name:?} is not a Python literal (only strings, integers, \
                         True/False/None, tuples, lists and dicts are accepted)"
                    )),
                }
            }
            _ => Err(self.unexpected()),
        }
    }

    /// Items up to `close`, separated by commas; also whether any comma was seen.
    pub(super) fn sequence(&mut self, close: char) -> R<(Vec<Lit>, bool)> {
        let mut items = Vec::new();
        let mut comma = false;
        self.skip_ws();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok((items, false));
        }
        loop {
            items.push(self.value()?);
            self.skip_ws();
            match self.bump() {
                Some(',') => {
                    comma = true;
                    self.skip_ws();
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        return Ok((items, comma));
                    }
                }
                Some(c) if c == close => return Ok((items, comma)),
                Some(c) => {
                    return Err(format!(
                    "expected ',' or {close:?} but found {c:?} at byte {} of the Python literal",
                    self.pos - c.len_utf8()
                ))
                }
                None => return Err(format!("unclosed bracket: expected {close:?}")),
            }
        }
    }

    pub(super) fn dict(&mut self) -> R<Lit> {
        let mut entries = Vec::new();
        self.skip_ws();
        if self.peek() == Some('}') {
            self.pos += 1;
            return Ok(Lit::Dict(entries));
        }
        loop {
            let k = self.value()?;
            self.skip_ws();
            if self.bump() != Some(':') {
                return Err("expected ':' after a dict key in the Python literal".to_string());
            }
            self.skip_ws();
            let v = self.value()?;
            entries.push((k, v));
            self.skip_ws();
            match self.bump() {
                Some(',') => {
                    self.skip_ws();
                    if self.peek() == Some('}') {
                        self.pos += 1;
                        return Ok(Lit::Dict(entries));
                    }
                }
                Some('}') => return Ok(Lit::Dict(entries)),
                _ => return Err("expected ',' or '}' in a dict of the Python literal".to_string()),
            }
        }
    }

    pub(super) fn int(&mut self) -> R<Lit> {
        let negative = match self.peek() {
            Some('-') => {
                self.pos += 1;
                true
            }
            Some('+') => {
                self.pos += 1;
                false
            }
            _ => false,
        };
        let start = self.pos;
        while let Some('0'..='9') = self.peek() {
            self.pos += 1;
        }
        let digits = &self.s[start..self.pos];
        if digits.is_empty() {
            return Err(self.unexpected());
        }
        if let Some(c) = self.peek() {
            if c.is_alphanumeric() || c == '_' || c == '.' {
                return Err(format!(
                    "unsupported number literal at byte {start} (only decimal integers are accepted)"
                ));
            }
        }
        if digits.len() > 1 && digits.starts_with('0') && digits.bytes().any(|b| b != b'0') {
            return Err(format!(
                "leading zeros in the integer {digits:?} are not valid Python"
            ));
        }
        let mut n: i64 = 0;
        for b in digits.bytes() {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(i64::from(b - b'0')))
                .ok_or_else(|| format!("the integer {digits} is too large"))?;
        }
        Ok(Lit::Int(if negative { -n } else { n }))
    }

    /// One string literal, or several adjacent ones (Python concatenates them).
    pub(super) fn strings(&mut self) -> R<Lit> {
        let mut s = self.string()?;
        loop {
            let save = self.pos;
            self.skip_ws();
            let next = self.peek();
            let starts = matches!(next, Some('\'' | '"'))
                || (matches!(next, Some('u' | 'U' | 'r' | 'R' | 'b' | 'B'))
                    && matches!(self.peek2(), Some('\'' | '"')));
            if !starts {
                self.pos = save;
                return Ok(Lit::Str(s));
            }
            s.push_str(&self.string()?);
        }
    }

    pub(super) fn string(&mut self) -> R<String> {
        let mut raw = false;
        match self.peek() {
            Some('b' | 'B') => return Err("bytes literals are not valid in a dtype".to_string()),
            Some('r' | 'R') => {
                raw = true;
                self.pos += 1;
            }
            Some('u' | 'U') => self.pos += 1,
            _ => {}
        }
        let quote = self.bump().ok_or_else(|| self.unexpected())?;
        let mut out = String::new();
        loop {
            let c = self
                .bump()
                .ok_or_else(|| "unterminated string in the Python literal".to_string())?;
            match c {
                '\n' | '\r' => return Err("unterminated string in the Python literal".to_string()),
                c if c == quote => return Ok(out),
                '\\' if raw => {
                    out.push('\\');
                    match self.bump() {
                        Some('\n' | '\r') | None => {
                            return Err("unterminated string in the Python literal".to_string())
                        }
                        Some(c) => out.push(c),
                    }
                }
                '\\' => self.escape(&mut out)?,
                c => out.push(c),
            }
        }
    }

    pub(super) fn escape(&mut self, out: &mut String) -> R<()> {
        let c = self
            .bump()
            .ok_or_else(|| "unterminated string in the Python literal".to_string())?;
        match c {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(c),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut v = c as u32 - '0' as u32;
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ '0'..='7') => {
                            v = v * 8 + (d as u32 - '0' as u32);
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                out.push(char::from_u32(v).ok_or_else(|| "invalid octal escape".to_string())?);
            }
            'x' | 'u' | 'U' => {
                let n = match c {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                for _ in 0..n {
                    let d = self
                        .peek()
                        .and_then(|d| d.to_digit(16))
                        .ok_or_else(|| format!("truncated \\{c} escape in the Python literal"))?;
                    self.pos += 1;
                    v = v * 16 + d;
                }
                out.push(char::from_u32(v).ok_or_else(|| {
                    format!("the escape \\{c}{v:x} is not a Unicode scalar value")
                })?);
            }
            'N' => return Err("\\N{...} escapes are not supported".to_string()),
            other => {
                // Python keeps unknown escapes as they are.
                out.push('\\');
                out.push(other);
            }
        }
        Ok(())
    }
}
