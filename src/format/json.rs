//! JSON as Python's `json` module writes it (the CTable schema), parsed into [`Value`]:
//! RFC 8259 plus the `NaN`, `Infinity` and `-Infinity` literals Python emits for
//! non-finite floats. Nesting is limited, so hostile input cannot exhaust the stack.

#![forbid(unsafe_code)]

use crate::model::attrs::Value;

/// Deepest nesting of arrays and objects accepted.
const MAX_DEPTH: usize = 128;

/// Parse one JSON document (surrounding white space allowed).
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        at: 0,
    };
    let v = p.value(0)?;
    p.ws();
    if p.at != p.s.len() {
        return Err(p.err("text after the JSON value"));
    }
    Ok(v)
}

/// Write `v` as Python's `json.dumps` does by default (`", "` and `": "` separators,
/// non-ASCII escaped, `NaN` / `Infinity` for non-finite floats). Values JSON has no form for
/// (bytes, extensions) are written as `null`.
pub(crate) fn write(v: &Value) -> String {
    let mut out = String::new();
    write_into(v, &mut out);
    out
}

fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_into(v: &Value, out: &mut String) {
    match v {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::UInt(u) => out.push_str(&u.to_string()),
        Value::Float(f) if f.is_nan() => out.push_str("NaN"),
        Value::Float(f) if f.is_infinite() => {
            out.push_str(if *f > 0.0 { "Infinity" } else { "-Infinity" })
        }
        Value::Float(f) => {
            let s = format!("{f:?}");
            out.push_str(&s);
        }
        Value::Str(s) => write_str(s, out),
        Value::Array(items) | Value::Tuple(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_into(x, out);
            }
            out.push(']');
        }
        Value::Map(pairs) => {
            out.push('{');
            for (i, (k, x)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match k {
                    Value::Str(s) => write_str(s, out),
                    other => write_str(&write(other), out),
                }
                out.push_str(": ");
                write_into(x, out);
            }
            out.push('}');
        }
        _ => out.push_str("null"),
    }
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> String {
        format!("invalid JSON at byte {}: {what}", self.at)
    }

    fn ws(&mut self) {
        while self.at < self.s.len() && matches!(self.s[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.at..].starts_with(lit.as_bytes()) {
            self.at += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.ws();
        let Some(&c) = self.s.get(self.at) else {
            return Err(self.err("unexpected end"));
        };
        match c {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(Value::Str),
            b't' if self.eat("true") => Ok(Value::Bool(true)),
            b'f' if self.eat("false") => Ok(Value::Bool(false)),
            b'n' if self.eat("null") => Ok(Value::Nil),
            b'N' if self.eat("NaN") => Ok(Value::Float(f64::NAN)),
            b'I' if self.eat("Infinity") => Ok(Value::Float(f64::INFINITY)),
            b'-' if self.eat("-Infinity") => Ok(Value::Float(f64::NEG_INFINITY)),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(self.err("unexpected character")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut out = Vec::new();
        self.ws();
        if self.eat("}") {
            return Ok(Value::Map(out));
        }
        loop {
            self.ws();
            if self.s.get(self.at) != Some(&b'"') {
                return Err(self.err("expected a string key"));
            }
            let k = self.string()?;
            self.ws();
            if !self.eat(":") {
                return Err(self.err("expected ':'"));
            }
            let v = self.value(depth + 1)?;
            out.push((Value::Str(k), v));
            self.ws();
            if self.eat("}") {
                return Ok(Value::Map(out));
            }
            if !self.eat(",") {
                return Err(self.err("expected ',' or '}'"));
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut out = Vec::new();
        self.ws();
        if self.eat("]") {
            return Ok(Value::Array(out));
        }
        loop {
            out.push(self.value(depth + 1)?);
            self.ws();
            if self.eat("]") {
                return Ok(Value::Array(out));
            }
            if !self.eat(",") {
                return Err(self.err("expected ',' or ']'"));
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self
            .s
            .get(self.at..self.at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.err("bad \\u escape"))?;
        self.at += 4;
        Ok(h)
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let start = self.at;
            while self.at < self.s.len() && !matches!(self.s[self.at], b'"' | b'\\' | 0..=0x1f) {
                self.at += 1;
            }
            out.push_str(
                std::str::from_utf8(&self.s[start..self.at])
                    .map_err(|_| self.err("a string that is not UTF-8"))?,
            );
            match self.s.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let e = *self
                        .s
                        .get(self.at)
                        .ok_or_else(|| self.err("unexpected end"))?;
                    self.at += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi) && self.eat("\\u") {
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err("bad surrogate pair"));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            // Python writes lone surrogates; they have no UTF-8 form.
                            out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                        }
                        _ => return Err(self.err("bad escape")),
                    }
                }
                _ => return Err(self.err("unterminated string or control character")),
            }
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.at;
        if self.s[self.at] == b'-' {
            self.at += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.at;
            while p.at < p.s.len() && p.s[p.at].is_ascii_digit() {
                p.at += 1;
            }
            p.at > s
        };
        if !digits(self) {
            return Err(self.err("bad number"));
        }
        let mut float = false;
        if self.eat(".") {
            float = true;
            if !digits(self) {
                return Err(self.err("bad number"));
            }
        }
        if matches!(self.s.get(self.at), Some(b'e' | b'E')) {
            float = true;
            self.at += 1;
            if matches!(self.s.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !digits(self) {
                return Err(self.err("bad number"));
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.at]).expect("ASCII");
        if !float {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::Int(i));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Ok(Value::UInt(u));
            }
        }
        text.parse::<f64>()
            .map(Value::Float)
            .map_err(|_| self.err("bad number"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_json() {
        let v = parse(r#" {"a": [1, -2.5e3, true, null, "x\u00e9\n"], "n": NaN, "i": -Infinity, "u": 18446744073709551615} "#).unwrap();
        let a = v.get("a").unwrap().as_slice().unwrap();
        assert_eq!(a[0], Value::Int(1));
        assert_eq!(a[1], Value::Float(-2500.0));
        assert_eq!(a[2], Value::Bool(true));
        assert_eq!(a[3], Value::Nil);
        assert_eq!(a[4].as_str(), Some("xé\n"));
        assert!(v.get("n").unwrap().as_f64().unwrap().is_nan());
        assert_eq!(v.get("i").unwrap().as_f64(), Some(f64::NEG_INFINITY));
        assert_eq!(v.get("u").unwrap().as_u64(), Some(u64::MAX));
    }

    #[test]
    fn written_json_reads_back() {
        let v = parse(r#"{"a": [1, -2.5, true, null, "x\u00e9\"\n"], "n": NaN, "e": {}}"#).unwrap();
        let text = write(&v);
        assert_eq!(
            text,
            r#"{"a": [1, -2.5, true, null, "x\u00e9\"\n"], "n": NaN, "e": {}}"#
        );
        let back = parse(&text).unwrap();
        assert_eq!(back.get("a"), v.get("a"));
    }

    #[test]
    fn bad_json_is_an_error() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "\"\\x\"",
            "01x",
            "[1] 2",
            "-",
            "\"a\nb\"",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(1000) + &"]".repeat(1000);
        assert!(parse(&deep).is_err());
    }
}
