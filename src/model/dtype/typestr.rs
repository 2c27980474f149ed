//! Parsing: the entry point and NumPy type strings (`<f8`, `|S5`, `<M8[ns]`, NumPy names).

#![forbid(unsafe_code)]

#[allow(unused_imports)]
use super::*;

pub(super) fn parse_str(s: &str) -> R<Dtype> {
    if s.len() > MAX_DTYPE_STR_LEN {
        return Err(format!(
            "the dtype string is {} bytes long, more than the {MAX_DTYPE_STR_LEN} accepted",
            s.len()
        ));
    }
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0c']);
    let mut chars = t.chars();
    let first = chars.next();
    let second = chars.next();
    let literal = match first {
        Some('[' | '(' | '{' | '\'' | '"') => true,
        Some('u' | 'U' | 'r' | 'R' | 'b' | 'B') => matches!(second, Some('\'' | '"')),
        _ => false,
    };
    if literal {
        let lit = LitParser::parse_all(t)?;
        convert(&lit, false, 0)
    } else {
        parse_typestr(s)
    }
}

/// A NumPy type string: `<f8`, `|b1`, `?`, `u1`, `S5`, `S`, `<U3`, `V8`, `<M8[ns]`, ...
pub(super) fn parse_typestr(s: &str) -> R<Dtype> {
    let (order, body) = match s.as_bytes().first() {
        Some(b'<') => (ByteOrder::Little, &s[1..]),
        Some(b'>') => (ByteOrder::Big, &s[1..]),
        Some(b'|' | b'=') => (ByteOrder::native(), &s[1..]),
        _ => (ByteOrder::native(), s),
    };
    let not_understood = || format!("data type {s:?} not understood");
    let mut chars = body.chars();
    let kind = chars
        .next()
        .ok_or_else(|| format!("empty type code in {s:?}"))?;
    if !kind.is_ascii() {
        return Err(not_understood());
    }
    let rest = &body[1..];
    match kind {
        '?' if rest.is_empty() => Ok(Dtype::Bool),
        'O' => Err(OBJECT_REASON.to_string()),
        'T' => Err(
            "variable-width string dtypes ('T', StringDType) hold pointers and cannot be read"
                .to_string(),
        ),
        'M' | 'm' => {
            let meta = rest.strip_prefix('8').ok_or_else(not_understood)?;
            let (unit, count) = if meta.is_empty() {
                (DatetimeUnit::Generic, 1)
            } else {
                parse_datetime_meta(meta)?
            };
            Ok(if kind == 'M' {
                Dtype::Datetime { unit, count, order }
            } else {
                Dtype::Timedelta { unit, count, order }
            })
        }
        'b' | 'i' | 'u' | 'f' | 'c' => {
            if rest.is_empty() {
                return Err(format!(
                    "type code {s:?} has no size (only sized codes such as 'i4' are accepted)"
                ));
            }
            let n = parse_size(rest).ok_or_else(not_understood)?;
            let ord = if n == 1 {
                ByteOrder::NotApplicable
            } else {
                order
            };
            match (kind, n) {
                ('b', 1) => Ok(Dtype::Bool),
                ('i', 1 | 2 | 4 | 8) => Ok(Dtype::Int {
                    size: n,
                    order: ord,
                }),
                ('u', 1 | 2 | 4 | 8) => Ok(Dtype::UInt {
                    size: n,
                    order: ord,
                }),
                ('f', 2 | 4 | 8 | 16) => Ok(Dtype::Float {
                    size: n,
                    order: ord,
                }),
                ('c', 8 | 16 | 32) => Ok(Dtype::Complex {
                    size: n,
                    order: ord,
                }),
                _ => Err(format!(
                    "data type {s:?} not understood (no such size for kind '{kind}')"
                )),
            }
        }
        'S' | 'a' | 'U' | 'V' => {
            let n = if rest.is_empty() {
                0
            } else {
                parse_size(rest).ok_or_else(|| {
                    format!("data type {s:?} not understood (size must be at most {MAX_ITEMSIZE})")
                })?
            };
            match kind {
                'S' | 'a' => Ok(Dtype::Bytes { len: n }),
                'V' => Ok(Dtype::Void { len: n }),
                _ => {
                    if n > MAX_ITEMSIZE / 4 {
                        return Err(format!(
                            "data type {s:?} not understood (itemsize 4 × {n} exceeds {MAX_ITEMSIZE})"
                        ));
                    }
                    Ok(Dtype::Unicode { chars: n, order })
                }
            }
        }
        _ => Err(not_understood()),
    }
}

/// Decimal digits only, at most [`MAX_ITEMSIZE`].
pub(super) fn parse_size(digits: &str) -> Option<usize> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut n: usize = 0;
    for b in digits.bytes() {
        n = n.checked_mul(10)?.checked_add(usize::from(b - b'0'))?;
        if n > MAX_ITEMSIZE {
            return None;
        }
    }
    Some(n)
}

/// `[ns]`, `[10s]`, `[generic]`.
pub(super) fn parse_datetime_meta(meta: &str) -> R<(DatetimeUnit, u32)> {
    let bad = || format!("invalid datetime metadata {meta:?}");
    let inner = meta
        .strip_prefix('[')
        .and_then(|m| m.strip_suffix(']'))
        .ok_or_else(bad)?;
    let split = inner
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(inner.len());
    let (digits, code) = inner.split_at(split);
    let unit = DatetimeUnit::from_code(code)
        .ok_or_else(|| format!("invalid datetime unit {code:?} in {meta:?}"))?;
    let count = if digits.is_empty() {
        1
    } else {
        let n = parse_size(digits).ok_or_else(bad)?;
        u32::try_from(n).map_err(|_| bad())?
    };
    // NumPy keeps a multiplier on generic units but never prints it; it means nothing.
    let count = if unit == DatetimeUnit::Generic {
        1
    } else {
        count
    };
    Ok((unit, count))
}
