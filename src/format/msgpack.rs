//! MessagePack as python-blosc2 writes vlmeta values (`blosc2.msgpack_utils`): the wire
//! format of [`Value`], decoded ([`Value::decode`], untrusted input: bounded nesting and
//! allocations, never a panic) and encoded ([`Value::encode`], byte for byte what python
//! writes). The conventions (tuples, extensions 42-46) are described in `model::attrs`.

#![forbid(unsafe_code)]

use std::convert::Infallible;

use rmp::encode::{ByteBuf, ValueWriteError};
use rmp::Marker;

use crate::model::attrs::{
    err, AttrError, Value, EXT_COMPLEX, EXT_NDARRAY, EXT_SET, MAX_DEPTH, TUPLE_MARKER,
};

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

struct Decoder<'a> {
    rest: &'a [u8],
}

impl<'a> Decoder<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], AttrError> {
        if n > self.rest.len() {
            return Err(err(format!(
                "truncated {what}: needs {n} bytes, {} left",
                self.rest.len()
            )));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn fixed<const N: usize>(&mut self, what: &str) -> Result<[u8; N], AttrError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn len8(&mut self) -> Result<usize, AttrError> {
        Ok(usize::from(self.fixed::<1>("length")?[0]))
    }

    fn len16(&mut self) -> Result<usize, AttrError> {
        Ok(usize::from(u16::from_be_bytes(self.fixed("length")?)))
    }

    fn len32(&mut self) -> Result<usize, AttrError> {
        let n = u32::from_be_bytes(self.fixed("length")?);
        usize::try_from(n).map_err(|_| err("length does not fit in memory"))
    }

    fn marker(&mut self) -> Result<Marker, AttrError> {
        rmp::decode::read_marker(&mut self.rest).map_err(|_| err("unexpected end of input"))
    }

    fn value(&mut self, depth: usize) -> Result<Value, AttrError> {
        let marker = self.marker()?;
        Ok(match marker {
            Marker::Null => Value::Nil,
            Marker::True => Value::Bool(true),
            Marker::False => Value::Bool(false),
            Marker::FixPos(n) => Value::Int(i64::from(n)),
            Marker::FixNeg(n) => Value::Int(i64::from(n)),
            Marker::U8 => Value::Int(i64::from(self.fixed::<1>("uint8")?[0])),
            Marker::U16 => Value::Int(i64::from(u16::from_be_bytes(self.fixed("uint16")?))),
            Marker::U32 => Value::Int(i64::from(u32::from_be_bytes(self.fixed("uint32")?))),
            Marker::U64 => Value::from(u64::from_be_bytes(self.fixed("uint64")?)),
            Marker::I8 => Value::Int(i64::from(i8::from_be_bytes(self.fixed("int8")?))),
            Marker::I16 => Value::Int(i64::from(i16::from_be_bytes(self.fixed("int16")?))),
            Marker::I32 => Value::Int(i64::from(i32::from_be_bytes(self.fixed("int32")?))),
            Marker::I64 => Value::Int(i64::from_be_bytes(self.fixed("int64")?)),
            Marker::F32 => Value::Float(f64::from(f32::from_be_bytes(self.fixed("float32")?))),
            Marker::F64 => Value::Float(f64::from_be_bytes(self.fixed("float64")?)),
            Marker::FixStr(n) => self.string(usize::from(n))?,
            Marker::Str8 => {
                let n = self.len8()?;
                self.string(n)?
            }
            Marker::Str16 => {
                let n = self.len16()?;
                self.string(n)?
            }
            Marker::Str32 => {
                let n = self.len32()?;
                self.string(n)?
            }
            Marker::Bin8 => {
                let n = self.len8()?;
                Value::Bytes(self.take(n, "bin")?.to_vec())
            }
            Marker::Bin16 => {
                let n = self.len16()?;
                Value::Bytes(self.take(n, "bin")?.to_vec())
            }
            Marker::Bin32 => {
                let n = self.len32()?;
                Value::Bytes(self.take(n, "bin")?.to_vec())
            }
            Marker::FixArray(n) => self.array(usize::from(n), depth)?,
            Marker::Array16 => {
                let n = self.len16()?;
                self.array(n, depth)?
            }
            Marker::Array32 => {
                let n = self.len32()?;
                self.array(n, depth)?
            }
            Marker::FixMap(n) => self.map(usize::from(n), depth)?,
            Marker::Map16 => {
                let n = self.len16()?;
                self.map(n, depth)?
            }
            Marker::Map32 => {
                let n = self.len32()?;
                self.map(n, depth)?
            }
            Marker::FixExt1 => self.ext(1, depth)?,
            Marker::FixExt2 => self.ext(2, depth)?,
            Marker::FixExt4 => self.ext(4, depth)?,
            Marker::FixExt8 => self.ext(8, depth)?,
            Marker::FixExt16 => self.ext(16, depth)?,
            Marker::Ext8 => {
                let n = self.len8()?;
                self.ext(n, depth)?
            }
            Marker::Ext16 => {
                let n = self.len16()?;
                self.ext(n, depth)?
            }
            Marker::Ext32 => {
                let n = self.len32()?;
                self.ext(n, depth)?
            }
            Marker::Reserved => return Err(err("reserved msgpack marker 0xc1")),
        })
    }

    fn string(&mut self, n: usize) -> Result<Value, AttrError> {
        let raw = self.take(n, "str")?;
        let s = std::str::from_utf8(raw).map_err(|_| err("str is not valid UTF-8"))?;
        Ok(Value::Str(s.to_owned()))
    }

    fn array_items(&mut self, n: usize, depth: usize) -> Result<Vec<Value>, AttrError> {
        if depth >= MAX_DEPTH {
            return Err(err(format!("nesting deeper than {MAX_DEPTH}")));
        }
        // Every element takes at least one byte.
        let mut items = Vec::with_capacity(n.min(self.rest.len()));
        for _ in 0..n {
            items.push(self.value(depth + 1)?);
        }
        Ok(items)
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Value, AttrError> {
        let mut items = self.array_items(n, depth)?;
        // python-blosc2's `decode_tuple_list_hook`.
        if matches!(items.first(), Some(Value::Str(s)) if s == TUPLE_MARKER) {
            items.remove(0);
            Ok(Value::Tuple(items))
        } else {
            Ok(Value::Array(items))
        }
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value, AttrError> {
        if depth >= MAX_DEPTH {
            return Err(err(format!("nesting deeper than {MAX_DEPTH}")));
        }
        // Every entry takes at least two bytes.
        let mut entries = Vec::with_capacity(n.min(self.rest.len() / 2));
        for _ in 0..n {
            let k = self.value(depth + 1)?;
            let v = self.value(depth + 1)?;
            entries.push((k, v));
        }
        Ok(Value::Map(entries))
    }

    fn ext(&mut self, n: usize, depth: usize) -> Result<Value, AttrError> {
        let code = i8::from_be_bytes(self.fixed("ext type")?);
        let data = self.take(n, "ext payload")?;
        match code {
            EXT_COMPLEX => {
                if data.len() != 16 {
                    return Err(err(format!(
                        "complex extension payload must be 16 bytes, got {}",
                        data.len()
                    )));
                }
                let mut sub = Decoder { rest: data };
                let re = f64::from_be_bytes(sub.fixed("complex")?);
                let im = f64::from_be_bytes(sub.fixed("complex")?);
                Ok(Value::Complex { re, im })
            }
            EXT_SET => {
                if depth >= MAX_DEPTH {
                    return Err(err(format!("nesting deeper than {MAX_DEPTH}")));
                }
                let mut sub = Decoder { rest: data };
                let n = match sub.marker()? {
                    Marker::FixArray(n) => usize::from(n),
                    Marker::Array16 => sub.len16()?,
                    Marker::Array32 => sub.len32()?,
                    _ => return Err(err("set extension payload is not a msgpack array")),
                };
                // The elements of the stored list, as python-blosc2 wrote them
                // (no tuple hook on the outer list: a set holding "__tuple__"
                // stays intact).
                let items = sub.array_items(n, depth + 1)?;
                sub.finish("set extension payload")?;
                Ok(Value::Set(items))
            }
            EXT_NDARRAY => {
                if depth >= MAX_DEPTH {
                    return Err(err(format!("nesting deeper than {MAX_DEPTH}")));
                }
                let mut sub = Decoder { rest: data };
                let payload = sub.value(depth + 1)?;
                sub.finish("ndarray extension payload")?;
                match ndarray_from_payload(payload)? {
                    Some(v) => Ok(v),
                    None => Ok(Value::Ext {
                        code,
                        data: data.to_vec(),
                    }),
                }
            }
            _ => Ok(Value::Ext {
                code,
                data: data.to_vec(),
            }),
        }
    }

    fn finish(&self, what: &str) -> Result<(), AttrError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(err(format!(
                "{} trailing bytes after {what}",
                self.rest.len()
            )))
        }
    }
}

/// Recognises python-blosc2's `{"dtype": {"str": s}, "shape": [..], "data": bin}`.
/// Returns `Ok(None)` for any other form (kept raw), an error when the form is
/// right but the contents are inconsistent.
fn ndarray_from_payload(payload: Value) -> Result<Option<Value>, AttrError> {
    let Value::Map(entries) = payload else {
        return Ok(None);
    };
    if entries.len() != 3 {
        return Ok(None);
    }
    let (mut dtype, mut shape, mut data) = (None, None, None);
    for (k, v) in entries {
        let Value::Str(k) = k else { return Ok(None) };
        let slot = match k.as_str() {
            "dtype" => &mut dtype,
            "shape" => &mut shape,
            "data" => &mut data,
            _ => return Ok(None),
        };
        if slot.replace(v).is_some() {
            return Ok(None);
        }
    }
    let (Some(Value::Map(mut dt)), Some(Value::Array(shape)), Some(Value::Bytes(data))) =
        (dtype, shape, data)
    else {
        return Ok(None);
    };
    if dt.len() != 1 {
        return Ok(None);
    }
    let dtype = match dt.pop() {
        Some((Value::Str(k), Value::Str(s))) if k == "str" => s,
        _ => return Ok(None),
    };
    let mut dims = Vec::with_capacity(shape.len());
    for d in &shape {
        let d = match d {
            Value::Int(i) => usize::try_from(*i).ok(),
            Value::UInt(u) => usize::try_from(*u).ok(),
            _ => None,
        };
        dims.push(d.ok_or_else(|| {
            err("ndarray extension: shape entries must be non-negative integers")
        })?);
    }
    let count = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| err("ndarray extension: shape overflows"))?;
    if let Some(itemsize) = dtype_itemsize(&dtype) {
        let want = count
            .checked_mul(itemsize)
            .ok_or_else(|| err("ndarray extension: size overflows"))?;
        if want != data.len() {
            return Err(err(format!(
                "ndarray extension: dtype {dtype:?} and shape {dims:?} need {want} bytes, data has {}",
                data.len()
            )));
        }
    }
    Ok(Some(Value::NdArray {
        dtype,
        shape: dims,
        data,
    }))
}

/// Item size in bytes of a simple NumPy `dtype.str`, if recognised.
fn dtype_itemsize(dtype: &str) -> Option<usize> {
    let rest = dtype.strip_prefix(['<', '>', '|', '=']).unwrap_or(dtype);
    let mut chars = rest.chars();
    let kind = chars.next()?;
    let tail = chars.as_str();
    let end = tail
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(tail.len());
    let (num, suffix) = tail.split_at(end);
    let n: usize = num.parse().ok()?;
    match kind {
        'M' | 'm' if suffix.is_empty() || (suffix.starts_with('[') && suffix.ends_with(']')) => {
            Some(n)
        }
        'b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'a' | 'V' if suffix.is_empty() => Some(n),
        'U' if suffix.is_empty() => n.checked_mul(4),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/// Swallows the (uninhabited) error of writing into a `ByteBuf`.
#[allow(clippy::needless_pass_by_value)]
fn done<T>(r: Result<T, ValueWriteError<Infallible>>) {
    match r {
        Ok(_) => {}
        Err(ValueWriteError::InvalidMarkerWrite(e) | ValueWriteError::InvalidDataWrite(e)) => {
            match e {}
        }
    }
}

fn len32(n: usize, what: &str) -> u32 {
    u32::try_from(n).unwrap_or_else(|_| panic!("{what} too long for msgpack ({n} > u32::MAX)"))
}

fn write_str(buf: &mut ByteBuf, s: &str) {
    done(rmp::encode::write_str_len(buf, len32(s.len(), "str")));
    buf.as_mut_vec().extend_from_slice(s.as_bytes());
}

fn write_bin(buf: &mut ByteBuf, b: &[u8]) {
    done(rmp::encode::write_bin_len(buf, len32(b.len(), "bytes")));
    buf.as_mut_vec().extend_from_slice(b);
}

fn write_ext(buf: &mut ByteBuf, code: i8, data: &[u8]) {
    done(rmp::encode::write_ext_meta(
        buf,
        len32(data.len(), "ext payload"),
        code,
    ));
    buf.as_mut_vec().extend_from_slice(data);
}

impl Value {
    /// Decodes exactly one msgpack value, applying python-blosc2's conventions
    /// (tuples, complex, sets, NumPy arrays). Trailing bytes are an error.
    ///
    /// The input is treated as untrusted: malformed, truncated or over-deep
    /// (more than [`MAX_DEPTH`] levels) input gives an [`AttrError`], never a
    /// panic, and allocations are bounded by the input length.
    ///
    /// # Errors
    ///
    /// Truncated or malformed msgpack, trailing bytes, invalid UTF-8 in a str,
    /// nesting deeper than [`MAX_DEPTH`], a complex payload that is not 16
    /// bytes, a set payload that is not one msgpack array, or a NumPy payload
    /// whose shape/dtype/data lengths are inconsistent.
    ///
    /// # Example
    ///
    /// ```
    /// use b2nd::attrs::Value;
    ///
    /// // What python-blosc2 stores for `arr.vlmeta["k"] = {"a": (1, "x"), "z": 1+2j}`.
    /// let bytes = [
    ///     0x82, 0xa1, b'a', 0x93, 0xa9, b'_', b'_', b't', b'u', b'p', b'l', b'e', b'_', b'_',
    ///     0x01, 0xa1, b'x', 0xa1, b'z', 0xd8, 0x2c,
    ///     0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0,
    /// ];
    /// let v = Value::decode(&bytes).unwrap();
    /// assert_eq!(
    ///     v,
    ///     Value::Map(vec![
    ///         (Value::from("a"), Value::Tuple(vec![Value::Int(1), Value::from("x")])),
    ///         (Value::from("z"), Value::Complex { re: 1.0, im: 2.0 }),
    ///     ])
    /// );
    /// assert_eq!(v.get("a").and_then(|t| t.as_slice()).map(|s| s.len()), Some(2));
    /// assert_eq!(v.encode(), bytes);
    /// assert!(Value::decode(&[0xc0, 0x00]).is_err()); // trailing byte
    /// ```
    pub fn decode(bytes: &[u8]) -> Result<Value, AttrError> {
        let mut d = Decoder { rest: bytes };
        let v = d.value(0)?;
        d.finish("value")?;
        Ok(v)
    }

    /// Encodes the value exactly as python-blosc2 (`msgpack_packb`) would
    /// write the corresponding Python value, so python reads it back identically.
    ///
    /// Integers, strings, binaries, containers and extensions use the smallest
    /// msgpack form (as Python's `msgpack` does); floats are always float64.
    ///
    /// # Panics
    ///
    /// Panics if a string, byte string, container or extension payload has more
    /// than `u32::MAX` bytes/entries, which msgpack cannot represent.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut buf = ByteBuf::new();
        self.encode_into(&mut buf);
        buf.into_vec()
    }

    fn encode_into(&self, buf: &mut ByteBuf) {
        match self {
            Value::Nil => match rmp::encode::write_nil(buf) {
                Ok(()) => {}
                Err(e) => match e {},
            },
            Value::Bool(b) => match rmp::encode::write_bool(buf, *b) {
                Ok(()) => {}
                Err(e) => match e {},
            },
            Value::Int(i) => done(rmp::encode::write_sint(buf, *i)),
            Value::UInt(u) => done(rmp::encode::write_uint(buf, *u)),
            Value::Float(f) => done(rmp::encode::write_f64(buf, *f)),
            Value::Str(s) => write_str(buf, s),
            Value::Bytes(b) => write_bin(buf, b),
            Value::Array(items) => {
                done(rmp::encode::write_array_len(
                    buf,
                    len32(items.len(), "list"),
                ));
                for v in items {
                    v.encode_into(buf);
                }
            }
            Value::Tuple(items) => {
                let n = items.len().saturating_add(1);
                done(rmp::encode::write_array_len(buf, len32(n, "tuple")));
                write_str(buf, TUPLE_MARKER);
                for v in items {
                    v.encode_into(buf);
                }
            }
            Value::Map(entries) => {
                done(rmp::encode::write_map_len(
                    buf,
                    len32(entries.len(), "dict"),
                ));
                for (k, v) in entries {
                    k.encode_into(buf);
                    v.encode_into(buf);
                }
            }
            Value::Complex { re, im } => {
                let mut payload = [0u8; 16];
                payload[..8].copy_from_slice(&re.to_be_bytes());
                payload[8..].copy_from_slice(&im.to_be_bytes());
                write_ext(buf, EXT_COMPLEX, &payload);
            }
            Value::Set(items) => {
                let mut payload = ByteBuf::new();
                done(rmp::encode::write_array_len(
                    &mut payload,
                    len32(items.len(), "set"),
                ));
                for v in items {
                    v.encode_into(&mut payload);
                }
                write_ext(buf, EXT_SET, payload.as_slice());
            }
            Value::NdArray { dtype, shape, data } => {
                // python-blosc2's `_encode_ndarray`: dict insertion order dtype, shape, data.
                let mut p = ByteBuf::new();
                done(rmp::encode::write_map_len(&mut p, 3));
                write_str(&mut p, "dtype");
                done(rmp::encode::write_map_len(&mut p, 1));
                write_str(&mut p, "str");
                write_str(&mut p, dtype);
                write_str(&mut p, "shape");
                done(rmp::encode::write_array_len(
                    &mut p,
                    len32(shape.len(), "shape"),
                ));
                for &d in shape {
                    done(rmp::encode::write_uint(&mut p, d as u64));
                }
                write_str(&mut p, "data");
                write_bin(&mut p, data);
                write_ext(buf, EXT_NDARRAY, p.as_slice());
            }
            Value::Ext { code, data } => write_ext(buf, *code, data),
        }
    }
}
