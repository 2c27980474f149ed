//! Writing NumPy `.npy` headers for raw C-order data of any dtype this crate reads.

#![forbid(unsafe_code)]

use crate::model::dtype::Dtype;

/// The `.npy` header (magic, version, length, dict, padding) for a C-order array of `dtype`
/// and `shape`, laid out as NumPy writes it (total header length a multiple of 64).
///
/// A top-level subarray dtype such as `('<i4', (2, 2))` is expanded the way NumPy does: its
/// base becomes the descr and its shape is appended to `shape`.
///
/// ```
/// let h = b2nd::npy::header(&b2nd::Dtype::parse("<f8").unwrap(), &[2, 3]);
/// assert_eq!(h.len() % 64, 0);
/// assert!(String::from_utf8_lossy(&h).contains("'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"));
/// ```
pub fn header(dtype: &Dtype, shape: &[u64]) -> Vec<u8> {
    let (descr, extra) = dtype.npy_descr();
    let dims: Vec<String> = shape
        .iter()
        .map(|d| d.to_string())
        .chain(extra.iter().map(|d| d.to_string()))
        .collect();
    let shape_repr = match dims.len() {
        0 => "()".to_string(),
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape_repr}, }}");
    let utf8 = !dict.is_ascii();
    // Version 1 has a u16 length; 2 a u32; 3 is 2 with a UTF-8 dict.
    let (major, len_bytes) = if utf8 {
        (3u8, 4usize)
    } else if dict.len() + 1 + 10 < 65536 {
        (1, 2)
    } else {
        (2, 4)
    };
    let pre = 6 + 2 + len_bytes;
    let total = (pre + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - pre;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY");
    out.push(major);
    out.push(0);
    if len_bytes == 2 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// A parsed `.npy` header.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The array's dtype.
    pub dtype: Dtype,
    /// Whether the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The array's shape.
    pub shape: Vec<u64>,
    /// Bytes before the data (magic, lengths and header text).
    pub data_offset: usize,
}

impl Header {
    /// The data that follows this header (`shape`'s items) in C order: as given, or
    /// reordered from Fortran order when the header says so.
    ///
    /// ```
    /// let mut npy = b2nd::npy::header(&b2nd::Dtype::parse("<i2")?, &[2, 3]);
    /// let at = npy.windows(5).position(|w| w == b"False").unwrap();
    /// npy.splice(at..at + 5, *b"True "); // a header that says Fortran order
    /// let h = b2nd::npy::parse_header(&npy)?;
    /// assert!(h.fortran_order);
    /// let f: Vec<u8> = [0i16, 3, 1, 4, 2, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
    /// let c: Vec<u8> = (0i16..6).flat_map(|v| v.to_le_bytes()).collect();
    /// assert_eq!(h.to_c_order(&f), c);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn to_c_order<'a>(&self, data: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        if self.fortran_order && self.shape.len() > 1 {
            std::borrow::Cow::Owned(crate::model::region::fortran_to_c(
                data,
                &self.shape,
                self.dtype.itemsize(),
            ))
        } else {
            std::borrow::Cow::Borrowed(data)
        }
    }
}

fn herr(reason: impl Into<String>) -> crate::error::Error {
    crate::error::Error::InvalidArgument(format!("not a valid .npy file: {}", reason.into()))
}

/// Split a Python literal at the first top-level `,` or `}` (respecting quotes and brackets).
fn literal_end(s: &str) -> usize {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut esc = false;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' => depth -= 1,
            '}' if depth > 0 => depth -= 1,
            ',' | '}' if depth == 0 => return i,
            _ => {}
        }
    }
    s.len()
}

fn value_of<'a>(dict: &'a str, key: &str) -> Result<&'a str, crate::error::Error> {
    let k = format!("'{key}'");
    let at = dict
        .find(&k)
        .ok_or_else(|| herr(format!("no {key:?} in the header")))?;
    let rest = dict[at + k.len()..].trim_start();
    let rest = rest
        .strip_prefix(':')
        .ok_or_else(|| herr("malformed header"))?
        .trim_start();
    Ok(rest[..literal_end(rest)].trim())
}

/// NumPy writes the gaps of aligned or explicit-offset structs as unnamed `('', '|Vn')` descr
/// entries and drops them again when reading (`descr_to_dtype`); do the same, keeping the
/// real fields' offsets and the itemsize.
fn drop_padding_fields(descr: &str, dtype: &mut Dtype) {
    let Dtype::Struct(st) = dtype else { return };
    let Some(inner) = descr
        .trim()
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
    else {
        return;
    };
    let mut unnamed = Vec::new();
    let mut rest = inner;
    let mut i = 0;
    while !rest.trim().is_empty() {
        let end = literal_end(rest);
        let entry = rest[..end].trim();
        if entry.starts_with("(''") || entry.starts_with("(\"\"") {
            unnamed.push(i);
        }
        i += 1;
        rest = rest.get(end + 1..).unwrap_or("");
    }
    if i == st.fields.len() {
        for &k in unnamed.iter().rev() {
            st.fields.remove(k);
        }
    }
}

/// Parse the header of a `.npy` file from its first bytes (at least the whole header).
///
/// ```
/// let mut f = b2nd::npy::header(&b2nd::Dtype::parse("<i2").unwrap(), &[3, 4]);
/// f.extend_from_slice(&[0u8; 24]);
/// let h = b2nd::npy::parse_header(&f).unwrap();
/// assert_eq!(h.shape, vec![3, 4]);
/// assert_eq!(h.dtype.to_numpy_str(), "<i2");
/// ```
pub fn parse_header(bytes: &[u8]) -> Result<Header, crate::error::Error> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(herr("no NUMPY magic"));
    }
    let (len, pre) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(herr("truncated header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(herr(format!("unknown format version {v}"))),
    };
    let end = pre
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| herr("truncated header"))?;
    let text = std::str::from_utf8(&bytes[pre..end]).map_err(|_| herr("header is not text"))?;
    let dict = text.trim();
    if !dict.starts_with('{') {
        return Err(herr("header is not a dict"));
    }
    let descr = value_of(dict, "descr")?;
    let dtype_str = match descr.chars().next() {
        Some(q @ ('\'' | '"')) => descr[1..]
            .strip_suffix(q)
            .ok_or_else(|| herr(format!("unterminated descr {descr:?}")))?,
        _ => descr,
    };
    let mut dtype = Dtype::parse(dtype_str)?;
    drop_padding_fields(descr, &mut dtype);
    let fortran_order = match value_of(dict, "fortran_order")? {
        "True" => true,
        "False" => false,
        other => return Err(herr(format!("fortran_order {other:?}"))),
    };
    let shape_s = value_of(dict, "shape")?;
    let inner = shape_s
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| herr(format!("shape {shape_s:?}")))?;
    let mut shape = Vec::new();
    for part in inner.split(',') {
        let p = part.trim().trim_end_matches('L');
        if p.is_empty() {
            continue;
        }
        shape.push(
            p.parse::<u64>()
                .map_err(|_| herr(format!("shape {shape_s:?}")))?,
        );
    }
    Ok(Header {
        dtype,
        fortran_order,
        shape,
        data_offset: end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_headers_are_errors_not_panics() {
        for dict in [
            "{'descr': '\u{b5}, 'fortran_order': False, 'shape': (1,), }",
            "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1,), }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (x,), }",
            "{'descr': \"\u{b5}\u{b5}, 'shape': (), }",
            "{'fortran_order': False}",
            "[]",
        ] {
            let mut b = b"\x93NUMPY\x01\x00".to_vec();
            b.extend_from_slice(&(dict.len() as u16).to_le_bytes());
            b.extend_from_slice(dict.as_bytes());
            assert!(parse_header(&b).is_err(), "{dict}");
        }
        assert!(parse_header(b"\x93NUMPY\x01\x00\xff\xff{").is_err());
        assert!(parse_header(b"not npy").is_err());
    }
}
