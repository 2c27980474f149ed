//! python-blosc2's SUMMARY index of a table column, read: per segment of physical rows (its
//! finest level, `block`: the column's block length), the minimum, the maximum and flags, as
//! `indexing._segment_summary` computes them (see `write/summary.rs` for the writing side).
//! A reader uses it as python's `where()` does, to skip the segments a comparison cannot
//! match; a descriptor marked `stale` (python and b2nd mark every index stale on each change
//! of the data) or one that does not cover every physical row is not used.

#![forbid(unsafe_code)]

use super::Table;
use crate::error::Result;
use crate::model::attrs::Value;
use crate::model::dtype::{ByteOrder, Dtype};

/// A bound of a segment's values: integers exactly (booleans as 0 and 1), floats as stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// An integer (every integer width, signed or not).
    Int(i128),
    /// A float (`f4` widened).
    Float(f64),
}

/// One segment of a [`BlockSummary`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// The smallest value (zero when the segment has no value but NaN or NULL).
    pub min: Bound,
    /// The largest value (zero when the segment has no value but NaN or NULL).
    pub max: Bound,
    /// python-blosc2's flags: [`Segment::ALL_NAN`], [`Segment::HAS_NAN`],
    /// [`Segment::ALL_NULL`].
    pub flags: u8,
}

impl Segment {
    /// `indexing.FLAG_ALL_NAN`: no number in the segment (also set with `ALL_NULL`).
    pub const ALL_NAN: u8 = 1;
    /// `indexing.FLAG_HAS_NAN`: some value is NaN.
    pub const HAS_NAN: u8 = 2;
    /// `indexing.FLAG_ALL_NULL`: every row is null (null-aware summaries only).
    pub const ALL_NULL: u8 = 4;

    /// Whether every row of the segment is null: no comparison matches it.
    pub fn all_null(&self) -> bool {
        self.flags & Self::ALL_NULL != 0
    }

    /// Whether the segment holds NaN (or only NaN): `min`/`max` then bound only its other
    /// values.
    pub fn has_nan(&self) -> bool {
        self.flags & (Self::ALL_NAN | Self::HAS_NAN) != 0
    }
}

/// python-blosc2's SUMMARY index of one column: segment `k` covers physical rows
/// `k * segment_rows .. (k + 1) * segment_rows` (deleted rows included, so its bounds may be
/// wider than the live values'; null rows left out when python built it null-aware).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSummary {
    /// Physical rows per segment.
    pub segment_rows: u64,
    /// The segments, in row order.
    pub segments: Vec<Segment>,
}

impl Table {
    /// The SUMMARY index python-blosc2 (4.4+) keeps for column `name`, if the table has one
    /// it would use: listed in the manifest's `index_catalog`, of kind `summary`, not stale,
    /// of a numeric or bool dtype, covering every physical row. `Ok(None)` when there is
    /// none; an error when the catalog names a summary that is missing or malformed.
    ///
    /// ```
    /// let t = b2nd::Table::open("tests/data/tables/basic.b2z")?;
    /// let s = t.block_summary("id")?.expect("python-blosc2 indexes numeric columns");
    /// assert_eq!(s.segments.len() as u64, t.physical_rows().div_ceil(s.segment_rows));
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn block_summary(&self, name: &str) -> Result<Option<BlockSummary>> {
        self.column(name)?;
        let meta = self
            .store
            .open_schunk(&crate::format::ctable::meta_key(&self.root))?;
        let Some(catalog) = meta.attr("index_catalog")? else {
            return Ok(None);
        };
        let Some(desc) = catalog.get(name) else {
            return Ok(None);
        };
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        if text(desc.get("kind")).as_deref() != Some("summary")
            || desc.get("stale").is_some_and(Value::truthy)
            || text(desc.get("target").and_then(|t| t.get("source"))).as_deref()
                == Some("expression")
        {
            return Ok(None);
        }
        let bad = |reason: String| self.bad(name, format!("SUMMARY index: {reason}"));
        // python reads the finest level, the last one listed.
        let Some((_, level)) = desc
            .get("levels")
            .and_then(Value::as_map)
            .and_then(<[_]>::last)
        else {
            return Err(bad("no levels".into()));
        };
        let segment_rows = level
            .get("segment_len")
            .and_then(Value::as_u64)
            .filter(|&n| n > 0)
            .ok_or_else(|| bad(format!("segment_len {:?}", level.get("segment_len"))))?;
        let nsegments = level
            .get("nsegments")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad(format!("nsegments {:?}", level.get("nsegments"))))?;
        let dtype_text = text(desc.get("dtype")).ok_or_else(|| bad("no dtype".into()))?;
        let dtype = Dtype::parse(&dtype_text).map_err(|e| bad(e.to_string()))?;
        let Some(width) = item_width(&dtype) else {
            return Ok(None); // strings, complex, timestamps: not read here
        };
        if nsegments != self.physical_rows().div_ceil(segment_rows) {
            return Ok(None); // built for other rows than the table has now
        }
        let key = self
            .sidecar_key(&text(level.get("path")).ok_or_else(|| bad("no path".into()))?)
            .map_err(bad)?;
        let arr = self.store.open_array(&key)?;
        let Dtype::Struct(st) = arr.dtype() else {
            return Err(bad(format!("{key} holds {}, not records", arr.dtype_str())));
        };
        let field = |n: &str, off: usize, dt: &Dtype| {
            st.field(n)
                .is_some_and(|f| f.offset == off && f.dtype == *dt)
        };
        if arr.shape() != [nsegments]
            || st.itemsize != 2 * width + 1
            || !field("min", 0, &dtype)
            || !field("max", width, &dtype)
            || !field(
                "flags",
                2 * width,
                &Dtype::UInt {
                    size: 1,
                    order: ByteOrder::NotApplicable,
                },
            )
        {
            return Err(bad(format!(
                "{key} is {} of shape {:?}, not {nsegments} records of ({dtype_text}, {dtype_text}, u1)",
                arr.dtype_str(),
                arr.shape()
            )));
        }
        let bytes = arr.read_bytes()?;
        let segments = bytes
            .chunks_exact(st.itemsize)
            .map(|r| Segment {
                min: bound(&dtype, &r[..width]),
                max: bound(&dtype, &r[width..2 * width]),
                flags: r[2 * width],
            })
            .collect();
        Ok(Some(BlockSummary {
            segment_rows,
            segments,
        }))
    }

    /// The store key of an index sidecar from its catalog path (relative to the table's
    /// root, or starting with it; ending in `.b2nd`), refused when it leaves the table.
    fn sidecar_key(&self, path: &str) -> std::result::Result<String, String> {
        let logical = path
            .strip_suffix(".b2nd")
            .ok_or_else(|| format!("path {path:?} does not end in .b2nd"))?
            .trim_matches('/');
        if path.starts_with('/') || logical.split('/').any(|p| p == ".." || p.is_empty()) {
            return Err(format!("unsafe path {path:?}"));
        }
        let root = self.root.trim_matches('/');
        let logical = match logical.strip_prefix(root).and_then(|r| r.strip_prefix('/')) {
            Some(rest) if !root.is_empty() => rest,
            _ => logical,
        };
        let key = format!("{}/{logical}", self.root);
        if !self.store.contains(&key) {
            return Err(format!("its sidecar {key} is missing"));
        }
        Ok(key)
    }
}

/// The bytes of one value of `dtype`, if summaries of it are read here.
fn item_width(dtype: &Dtype) -> Option<usize> {
    match *dtype {
        Dtype::Bool => Some(1),
        Dtype::Int { size, .. } | Dtype::UInt { size, .. } => Some(size),
        Dtype::Float { size, .. } if size == 4 || size == 8 => Some(size),
        _ => None,
    }
}

/// One value of `dtype` (one [`item_width`] accepts) from its bytes.
fn bound(dtype: &Dtype, b: &[u8]) -> Bound {
    let mut le = [0u8; 8];
    le[..b.len()].copy_from_slice(b);
    if dtype.byte_order() == ByteOrder::Big {
        le[..b.len()].reverse();
    }
    let raw = u64::from_le_bytes(le);
    let bits = 8 * b.len() as u32;
    match *dtype {
        Dtype::Int { .. } => {
            // Sign-extend from the item's width.
            let shift = 64 - bits;
            Bound::Int(i128::from(((raw << shift) as i64) >> shift))
        }
        Dtype::Float { size: 4, .. } => Bound::Float(f64::from(f32::from_bits(raw as u32))),
        Dtype::Float { .. } => Bound::Float(f64::from_bits(raw)),
        _ => Bound::Int(i128::from(raw)), // bool, unsigned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_of_every_width_and_order() {
        let i2 = Dtype::parse("<i2").unwrap();
        assert_eq!(bound(&i2, &(-3i16).to_le_bytes()), Bound::Int(-3));
        let i2be = Dtype::parse(">i2").unwrap();
        assert_eq!(bound(&i2be, &(-300i16).to_be_bytes()), Bound::Int(-300));
        let u8t = Dtype::parse("<u8").unwrap();
        assert_eq!(
            bound(&u8t, &u64::MAX.to_le_bytes()),
            Bound::Int(u64::MAX.into())
        );
        let i8t = Dtype::parse("<i8").unwrap();
        assert_eq!(
            bound(&i8t, &i64::MIN.to_le_bytes()),
            Bound::Int(i64::MIN.into())
        );
        let f4 = Dtype::parse("<f4").unwrap();
        assert_eq!(bound(&f4, &1.5f32.to_le_bytes()), Bound::Float(1.5));
        let b = Dtype::parse("|b1").unwrap();
        assert_eq!(bound(&b, &[1]), Bound::Int(1));
        assert_eq!(item_width(&Dtype::parse("<c16").unwrap()), None);
        assert_eq!(item_width(&Dtype::parse("<f2").unwrap()), None);
    }
}
