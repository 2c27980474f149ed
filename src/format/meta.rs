//! The `b2nd` and `caterva` metalayers: parsing by position and exact encoding.
//!
//! Layout (all integers big-endian, fixed width):
//! `9X v nd | 9N (d3 i64)*nd | 9N (d2 i32)*nd | 9N (d2 i32)*nd [| fmt] [| db u32 dtype]`
//! where `X` is the element count (5 `caterva`, 6 draft `b2nd`, 7 current `b2nd`) and
//! `9N = 0x90 + nd` (which is `0xa0`, not a msgpack fixarray, for nd = 16: c-blosc2 writes and
//! reads it by position, and so do we).

#![forbid(unsafe_code)]

use std::fmt;

/// The most dimensions a metalayer may declare (python-blosc2's limit).
pub use crate::model::region::MAX_DIM;

/// Which metalayer described the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// The current (or draft) `b2nd` metalayer.
    B2nd,
    /// The legacy `caterva` metalayer (no dtype).
    Caterva,
    /// No metalayer: a python-blosc2 `save_tensor` / `pack_tensor` frame, a plain super-chunk
    /// of C-order items whose vlmeta `__pack_tensor__` holds `(kind, shape, dtype)`
    /// (`TensorMeta`). Read only: b2nd writes `b2nd` or `caterva` arrays.
    Tensor,
}

impl Format {
    /// The metalayer name in the frame: `"b2nd"` or `"caterva"`; `"tensor"` for save_tensor
    /// frames, which have none.
    pub fn name(self) -> &'static str {
        match self {
            Format::B2nd => "b2nd",
            Format::Caterva => "caterva",
            Format::Tensor => "tensor",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The decoded content of an N-d metalayer, exactly as stored (no validation of geometry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NdMeta {
    /// Which metalayer this came from.
    pub format: Format,
    /// Number of top-level elements: 5 (`caterva`, or `b2nd` without dtype), 6 (draft `b2nd`)
    /// or 7 (`b2nd`).
    pub elements: u8,
    /// The metalayer format version (second element).
    pub version: u8,
    /// Array shape.
    pub shape: Vec<i64>,
    /// Chunk shape.
    pub chunks: Vec<i32>,
    /// Block shape (all zeros in the oldest caterva files).
    pub blocks: Vec<i32>,
    /// `dtype_format` (7-element form only; 0 = NumPy).
    pub dtype_format: Option<u8>,
    /// The dtype string (6- and 7-element forms).
    pub dtype: Option<String>,
}

/// A malformed metalayer: the field at fault and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct MetaError {
    /// The field (e.g. `ndim`, `shape[2]`, `dtype`).
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

fn err<T>(field: impl Into<String>, reason: impl Into<String>) -> Result<T, MetaError> {
    Err(MetaError {
        field: field.into(),
        reason: reason.into(),
    })
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8], MetaError> {
        match self.pos.checked_add(n) {
            Some(end) if end <= self.buf.len() => {
                let s = &self.buf[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            _ => err(
                field,
                format!(
                    "truncated: needs {n} more bytes at offset {}, metalayer has {}",
                    self.pos,
                    self.buf.len()
                ),
            ),
        }
    }
    fn byte(&mut self, field: &str) -> Result<u8, MetaError> {
        Ok(self.take(1, field)?[0])
    }
    fn expect(&mut self, want: u8, field: &str) -> Result<(), MetaError> {
        let at = self.pos;
        let got = self.byte(field)?;
        if got != want {
            return err(
                field,
                format!("expected marker {want:#04x} at offset {at}, found {got:#04x}"),
            );
        }
        Ok(())
    }
}

/// Parse a metalayer of the given `format` by position, checking every marker and length.
pub fn parse(format: Format, bytes: &[u8]) -> Result<NdMeta, MetaError> {
    let mut c = Cursor { buf: bytes, pos: 0 };
    let head = c.byte("array marker")?;
    let elements = head.wrapping_sub(0x90);
    let ok_count = match format {
        Format::Caterva => elements == 5,
        // 5 elements (no dtype) is the caterva layout under the b2nd name, found in c-blosc2's
        // own plugin test data; python-blosc2 reads it as `|S{typesize}`.
        Format::B2nd => (5..=7).contains(&elements),
        Format::Tensor => false,
    };
    if !(0x90..=0x9f).contains(&head) || !ok_count {
        let want = match format {
            Format::Caterva => "0x95 (5 elements)",
            Format::B2nd => "0x97 (7 elements), 0x96 (6-element draft) or 0x95 (no dtype)",
            Format::Tensor => "no metalayer (save_tensor frames keep their shape in vlmeta)",
        };
        return err(
            "array marker",
            format!("found {head:#04x}, expected {want}"),
        );
    }
    let version = c.byte("version")?;
    if version > 0x7f {
        return err(
            "version",
            format!("{version:#04x} is not a positive fixint"),
        );
    }
    // c-blosc2, caterva and python-blosc2 write version 0 (B2ND_METALAYER_VERSION,
    // CATERVA_METALAYER_VERSION); another version is a layout this reader does not know.
    if version != 0 {
        return err(
            "version",
            format!("metalayer version {version}: only version 0 is defined"),
        );
    }
    let ndim = c.byte("ndim")?;
    if usize::from(ndim) > MAX_DIM {
        return err(
            "ndim",
            format!("{ndim} dimensions, at most {MAX_DIM} are supported"),
        );
    }
    let nd = usize::from(ndim);
    let marker = 0x90u8.wrapping_add(ndim);

    c.expect(marker, "shape")?;
    let mut shape = Vec::with_capacity(nd);
    for i in 0..nd {
        let f = format!("shape[{i}]");
        c.expect(0xd3, &f)?;
        let b = c.take(8, &f)?;
        shape.push(i64::from_be_bytes(b.try_into().expect("8 bytes")));
    }
    let mut read_i32s = |name: &str| -> Result<Vec<i32>, MetaError> {
        c.expect(marker, name)?;
        let mut v = Vec::with_capacity(nd);
        for i in 0..nd {
            let f = format!("{name}[{i}]");
            c.expect(0xd2, &f)?;
            let b = c.take(4, &f)?;
            v.push(i32::from_be_bytes(b.try_into().expect("4 bytes")));
        }
        Ok(v)
    };
    let chunks = read_i32s("chunks")?;
    let blocks = read_i32s("blocks")?;

    let mut dtype_format = None;
    let mut dtype = None;
    if elements >= 6 {
        if elements == 7 {
            let f = c.byte("dtype_format")?;
            if f > 0x7f {
                return err("dtype_format", format!("{f:#04x} is not a positive fixint"));
            }
            if f != 0 {
                return err(
                    "dtype_format",
                    format!("{f}: only 0 (NumPy dtype strings) is defined"),
                );
            }
            dtype_format = Some(f);
        }
        c.expect(0xdb, "dtype")?;
        let len = u32::from_be_bytes(c.take(4, "dtype length")?.try_into().expect("4 bytes"));
        let s = c.take(len as usize, "dtype")?;
        let s = std::str::from_utf8(s).map_err(|_| MetaError {
            field: "dtype".into(),
            reason: "not valid UTF-8".into(),
        })?;
        dtype = Some(s.to_string());
    }
    if c.pos != bytes.len() {
        return err(
            "end",
            format!(
                "{} unexpected trailing bytes after the last element",
                bytes.len() - c.pos
            ),
        );
    }
    Ok(NdMeta {
        format,
        elements,
        version,
        shape,
        chunks,
        blocks,
        dtype_format,
        dtype,
    })
}

/// Encode a metalayer exactly as c-blosc2 / python-blosc2 write it.
///
/// `dtype` is required for `b2nd` (7-element form, dtype_format 0) and ignored for `caterva`;
/// [`Format::Tensor`] (which has no metalayer of its own) encodes as `b2nd`.
/// (`encode(B2nd, &[10], &[5], &[2], Some("<i4"))` starts `97 00 01 91 d3`: a 7-item
/// array, version 0, ndim 1, a 1-item shape list of an int64.)
pub fn encode(
    format: Format,
    shape: &[i64],
    chunks: &[i32],
    blocks: &[i32],
    dtype: Option<&str>,
) -> Vec<u8> {
    let nd = shape.len() as u8;
    let marker = 0x90u8.wrapping_add(nd);
    let mut out = Vec::with_capacity(3 + 3 + shape.len() * 19 + 16);
    let format = match format {
        Format::Tensor => Format::B2nd,
        f => f,
    };
    out.push(match format {
        Format::B2nd | Format::Tensor => 0x97,
        Format::Caterva => 0x95,
    });
    out.push(0); // version
    out.push(nd);
    out.push(marker);
    for &s in shape {
        out.push(0xd3);
        out.extend_from_slice(&s.to_be_bytes());
    }
    for arr in [chunks, blocks] {
        out.push(marker);
        for &v in arr {
            out.push(0xd2);
            out.extend_from_slice(&v.to_be_bytes());
        }
    }
    if format == Format::B2nd {
        let d = dtype.unwrap_or("|u1").as_bytes();
        out.push(0); // dtype_format: NumPy
        out.push(0xdb);
        out.extend_from_slice(&(d.len() as u32).to_be_bytes());
        out.extend_from_slice(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_b2nd_all_dims() {
        for nd in 0..=16usize {
            let shape: Vec<i64> = (0..nd as i64).map(|i| i + 3).collect();
            let chunks: Vec<i32> = (0..nd as i32).map(|i| i + 2).collect();
            let blocks: Vec<i32> = (0..nd as i32).map(|i| i + 1).collect();
            let b = encode(Format::B2nd, &shape, &chunks, &blocks, Some("<f8"));
            assert_eq!(b.len(), 3 + 3 + nd * (9 + 5 + 5) + 1 + 5 + 3);
            assert_eq!(b[3], 0x90 + nd as u8);
            let m = parse(Format::B2nd, &b).unwrap();
            assert_eq!(m.shape, shape);
            assert_eq!(m.chunks, chunks);
            assert_eq!(m.blocks, blocks);
            assert_eq!(m.dtype.as_deref(), Some("<f8"));
            assert_eq!(m.dtype_format, Some(0));
            assert_eq!(m.elements, 7);
        }
    }

    #[test]
    fn sixteen_dims_use_0xa0_marker() {
        let b = encode(Format::B2nd, &[1; 16], &[1; 16], &[1; 16], Some("|u1"));
        assert_eq!(b[3], 0xa0);
        assert_eq!(parse(Format::B2nd, &b).unwrap().shape.len(), 16);
    }

    #[test]
    fn caterva_roundtrip() {
        let b = encode(Format::Caterva, &[7, 5], &[4, 5], &[0, 0], None);
        assert_eq!(b[0], 0x95);
        let m = parse(Format::Caterva, &b).unwrap();
        assert_eq!(m.blocks, vec![0, 0]);
        assert_eq!(m.dtype, None);
        // The same bytes under the b2nd name (c-blosc2's plugin test data): no dtype.
        let m = parse(Format::B2nd, &b).unwrap();
        assert_eq!((m.elements, m.dtype), (5, None));
        // Other element counts are refused.
        let mut four = b.clone();
        four[0] = 0x94;
        assert_eq!(
            parse(Format::B2nd, &four).unwrap_err().field,
            "array marker"
        );
        assert_eq!(
            parse(Format::Caterva, &four).unwrap_err().field,
            "array marker"
        );
    }

    #[test]
    fn draft6() {
        let mut b = encode(Format::B2nd, &[4], &[2], &[1], Some("<i2"));
        // Drop dtype_format (the byte before 0xdb) and mark 6 elements.
        let pos = b.iter().rposition(|&x| x == 0xdb).unwrap();
        b.remove(pos - 1);
        b[0] = 0x96;
        let m = parse(Format::B2nd, &b).unwrap();
        assert_eq!(m.elements, 6);
        assert_eq!(m.dtype.as_deref(), Some("<i2"));
        assert_eq!(m.dtype_format, None);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let b = encode(
            Format::B2nd,
            &[4, 5, 6],
            &[2, 2, 2],
            &[1, 1, 1],
            Some("<i2"),
        );
        for n in 0..b.len() {
            assert!(parse(Format::B2nd, &b[..n]).is_err(), "prefix {n} accepted");
        }
        let mut extra = b.clone();
        extra.push(0);
        assert_eq!(parse(Format::B2nd, &extra).unwrap_err().field, "end");
    }

    #[test]
    fn bad_fields() {
        let b = encode(Format::B2nd, &[4], &[2], &[1], Some("<i2"));
        let mut f = b.clone();
        f[2] = 2; // ndim says 2, arrays hold 1
        assert_eq!(parse(Format::B2nd, &f).unwrap_err().field, "shape");
        let mut f = b.clone();
        f[2] = 17;
        assert_eq!(parse(Format::B2nd, &f).unwrap_err().field, "ndim");
        let mut f = b.clone();
        let pos = f.iter().rposition(|&x| x == 0xdb).unwrap();
        f[pos - 1] = 1;
        assert_eq!(parse(Format::B2nd, &f).unwrap_err().field, "dtype_format");
        let mut f = b.clone();
        f[pos] = 0xd9;
        assert_eq!(parse(Format::B2nd, &f).unwrap_err().field, "dtype");
        let mut f = b.clone();
        f[1] = 1; // a metalayer version nobody writes
        assert_eq!(parse(Format::B2nd, &f).unwrap_err().field, "version");
        let mut f = b;
        let l = f.len();
        f[pos + 4] = 200; // dtype length beyond the end
        assert!(parse(Format::B2nd, &f[..l]).is_err());
    }
}

/// The vlmeta `__pack_tensor__` of a python-blosc2 `save_tensor` / `pack_tensor` frame:
/// `(kind, shape, dtype)`, with `dtype` NumPy's `dtype.str` or, for structured dtypes, its
/// `descr` (a list of `(name, format[, shape])`, padding as fields named `''`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorMeta {
    /// `numpy`, `torch` or `tensorflow`: what python-blosc2 rebuilds on load.
    pub kind: String,
    /// The tensor's shape.
    pub shape: Vec<i64>,
    /// The dtype as a NumPy dtype string (`<f4`, `[('a', '<i4'), ('', '|V4')]`).
    pub dtype: String,
}

impl TensorMeta {
    /// Parse the decoded `__pack_tensor__` value.
    pub fn parse(v: &crate::model::attrs::Value) -> Result<TensorMeta, MetaError> {
        use crate::model::attrs::Value;
        let items = match v {
            Value::Tuple(t) | Value::Array(t) if t.len() == 3 => t,
            _ => return err("__pack_tensor__", "not a (kind, shape, dtype) triple"),
        };
        let kind = match &items[0] {
            Value::Str(s) => s.clone(),
            _ => return err("kind", "not a string"),
        };
        let shape = match &items[1] {
            Value::Tuple(d) | Value::Array(d) if d.len() <= MAX_DIM => d
                .iter()
                .map(|x| match x {
                    Value::Int(n) if *n >= 0 => Ok(*n),
                    _ => err("shape", format!("{x:?} is not a dimension")),
                })
                .collect::<Result<Vec<i64>, MetaError>>()?,
            _ => {
                return err(
                    "shape",
                    format!("not a list of at most {MAX_DIM} dimensions"),
                )
            }
        };
        let mut literal = String::new();
        py_literal(&items[2], &mut literal, 0)?;
        let parsed = crate::model::dtype::Dtype::parse(&literal).map_err(|e| MetaError {
            field: "dtype".into(),
            reason: e.to_string(),
        })?;
        // NumPy names the padding entries of a descr (`''`) `f1`, `f2`, ...; python-blosc2's
        // load_tensor turns them back into padding (`descr_to_dtype`), and so does b2nd.
        let dtype = without_padding(parsed, &items[2]).to_numpy_str();
        Ok(TensorMeta { kind, shape, dtype })
    }
}

/// `d` (parsed from the descr `descr`) without the fields the descr names `''`, at every
/// level of nesting.
fn without_padding(
    d: crate::model::dtype::Dtype,
    descr: &crate::model::attrs::Value,
) -> crate::model::dtype::Dtype {
    use crate::model::attrs::Value;
    use crate::model::dtype::Dtype;
    match (d, descr) {
        (Dtype::Struct(mut s), Value::Array(entries)) if entries.len() == s.fields.len() => {
            let mut kept = Vec::with_capacity(s.fields.len());
            for (mut f, entry) in s.fields.into_iter().zip(entries) {
                let (Value::Tuple(e) | Value::Array(e)) = entry else {
                    kept.push(f);
                    continue;
                };
                if matches!(e.first(), Some(Value::Str(n)) if n.is_empty()) {
                    continue;
                }
                if let Some(inner) = e.get(1) {
                    f.dtype = match f.dtype {
                        Dtype::SubArray { base, shape } => Dtype::SubArray {
                            base: Box::new(without_padding(*base, inner)),
                            shape,
                        },
                        d => without_padding(d, inner),
                    };
                }
                kept.push(f);
            }
            s.fields = kept;
            Dtype::Struct(s)
        }
        (d, _) => d,
    }
}

/// `v` as the Python literal `repr` gives (the form [`crate::model::dtype::Dtype::parse`] reads).
fn py_literal(
    v: &crate::model::attrs::Value,
    out: &mut String,
    depth: usize,
) -> Result<(), MetaError> {
    use crate::model::attrs::Value;
    use fmt::Write;
    if depth > 32 {
        return err("dtype", "nested too deeply");
    }
    match v {
        Value::Str(s) => {
            if s.contains(['\'', '\\']) {
                return err("dtype", format!("{s:?}: quotes in a name"));
            }
            let _ = write!(out, "'{s}'");
        }
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Array(xs) | Value::Tuple(xs) => {
            let tuple = matches!(v, Value::Tuple(_));
            out.push(if tuple { '(' } else { '[' });
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_literal(x, out, depth + 1)?;
            }
            if tuple && xs.len() == 1 {
                out.push(',');
            }
            out.push(if tuple { ')' } else { ']' });
        }
        other => return err("dtype", format!("{other:?} in a dtype")),
    }
    Ok(())
}
