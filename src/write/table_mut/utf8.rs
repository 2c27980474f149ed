//! Rows of `utf8` columns appended and updated: python-blosc2's `UTF8Array` layout, an `int64` offsets
//! array (`NAME.b2nd`, one more item than rows, starting at 0) and a `uint8` array of the
//! rows' UTF-8 bytes one after another (`NAME.utf8.b2nd`, at least one item long).
//!
//! python-blosc2 keeps both arrays exactly as long as the rows written (no capacity), and
//! its `extend` appends after the column's own last row. After deleted rows at the end of a
//! table, that is past the table's next row, and python pairs the new strings with the
//! wrong rows (docs/meaning-audit.md); b2nd writes the new rows at the table's next row,
//! cutting the dead rows' strings off first (never read: they are past `_valid_rows`' last
//! live row), and cuts them when its delete trims the table, so that python's next `extend`
//! appends where it should.

#![forbid(unsafe_code)]

use super::{member_file, write_rows, Cells, Encoded, Items, TableMut};
use crate::error::Result;
use crate::format::ctable::Part;
use crate::model::attrs::Value;
use crate::model::region::Region;
use crate::table::{Column, ColumnKind};

impl TableMut {
    /// Column `c`'s `n` rows (`given`, or its default) as `utf8` items: a null is stored as
    /// `""` with the mask holding it, or as the column's `null_value` sentinel.
    pub(super) fn encode_utf8(
        &self,
        c: &Column,
        given: Option<&Cells>,
        n: usize,
    ) -> Result<Encoded> {
        let values = self.given_strings(c, given, n, "a utf8")?;
        let sentinel = match c.null_value() {
            Some(Value::Str(s)) => Some(s.as_str()),
            Some(v) if !c.mask_nulls() => {
                return Err(self.refuse(c.name(), format!("its null_value {v:?} is not a string")))
            }
            _ => None,
        };
        let mut data = Vec::new();
        let mut lengths = Vec::with_capacity(n);
        for (row, v) in values.iter().enumerate() {
            let text = match v {
                Some(s) => s.as_str(),
                None if !c.nullable() => {
                    return Err(self.refuse(
                        c.name(),
                        format!("row {row} is null and the column is not nullable"),
                    ))
                }
                None if c.mask_nulls() => "",
                None => sentinel.ok_or_else(|| {
                    self.refuse(
                        c.name(),
                        "nullable without a mask or a null_value: nowhere to put a null".into(),
                    )
                })?,
            };
            data.extend_from_slice(text.as_bytes());
            lengths.push(text.len() as u64);
        }
        let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
        Ok(Encoded {
            name: c.name().to_string(),
            items: Items::Utf8 { data, lengths },
            mask: (c.mask_nulls() && valid.contains(&false)).then_some(valid),
        })
    }

    /// Check, before any change, that `utf8` column `name` can take rows from physical row
    /// `start` on: 1-d `int64` offsets holding at least `start` rows, 1-d `uint8` bytes
    /// holding what they point to.
    pub(super) fn check_utf8(&self, name: &str, start: u64) -> Result<()> {
        let t = &self.table;
        member_file(t, &t.key(name, Part::Utf8Bytes))?;
        self.utf8_start(name, start).map(|_| ())
    }

    /// The byte where `utf8` column `name`'s row `start` begins, its arrays checked.
    fn utf8_start(&self, name: &str, start: u64) -> Result<u64> {
        let t = &self.table;
        let offsets = t.store().open_array(&t.key(name, Part::Values))?;
        let data = t.store().open_array(&t.key(name, Part::Utf8Bytes))?;
        for (a, what, dtype) in [(&offsets, "offsets", "<i8"), (&data, "bytes", "|u1")] {
            if a.ndim() != 1 || a.dtype_str() != dtype {
                return Err(self.refuse(
                    name,
                    format!(
                        "its {what} array is {} of shape {:?}, not 1-d {dtype}",
                        a.dtype_str(),
                        a.shape()
                    ),
                ));
            }
        }
        let rows = offsets.shape()[0].saturating_sub(1);
        if rows < start {
            return Err(self.refuse(
                name,
                format!("its offsets hold {rows} rows, fewer than the table's {start}"),
            ));
        }
        let at: Vec<i64> =
            offsets.read_slice(&[crate::model::selection::SliceItem::from(start..start + 1)])?;
        match at.first().map(|&b| u64::try_from(b)) {
            Some(Ok(b)) if b <= data.shape()[0] => Ok(b),
            _ => Err(self.refuse(
                name,
                format!(
                    "row {start} begins at byte {:?}, outside its {} bytes",
                    at.first(),
                    data.shape()[0]
                ),
            )),
        }
    }

    /// Cut every `utf8` column longer than `end` rows at `end` (after a delete: the
    /// strings of deleted rows past the last live one).
    pub(super) fn cut_utf8(&self, end: u64) -> Result<()> {
        let t = &self.table;
        for c in t.columns() {
            if c.computed().is_some() || *c.kind() != ColumnKind::Utf8 {
                continue;
            }
            let rows = t
                .store()
                .open_array(&t.key(c.name(), Part::Values))?
                .shape()
                .first()
                .copied();
            if rows.is_some_and(|r| r > end + 1) {
                self.write_utf8(c.name(), end, &[], &[])?;
            }
        }
        Ok(())
    }

    /// Write `utf8` column `name`'s new rows (`data`, each row `lengths` bytes long; none
    /// to cut the column at `start`) from physical row `start` on, the arrays ending right
    /// after them.
    pub(super) fn write_utf8(
        &self,
        name: &str,
        start: u64,
        data: &[u8],
        lengths: &[u64],
    ) -> Result<()> {
        let used = self.utf8_start(name, start)?;
        let t = &self.table;
        let mut bytes = self.member(member_file(t, &t.key(name, Part::Utf8Bytes))?)?;
        let end = used + data.len() as u64;
        write_ending(&mut bytes, used, data, end.max(1))?;
        let mut ends = Vec::with_capacity(lengths.len() * 8);
        let mut at = used;
        for &l in lengths {
            at += l;
            ends.extend_from_slice(&(at as i64).to_le_bytes());
        }
        let mut offsets = self.member(member_file(t, &t.key(name, Part::Values))?)?;
        let rows = start + lengths.len() as u64;
        write_ending(&mut offsets, start + 1, &ends, rows + 1)
    }
}

/// Write `bytes` (whole items) at items `start..` of a 1-d array that is to end at `len`
/// items: cut to `len` first when longer (the items past `start` are dead), grown when
/// shorter.
fn write_ending(a: &mut super::ArrayMut, start: u64, bytes: &[u8], len: u64) -> Result<()> {
    if a.array().shape().first().is_some_and(|&l| l > len) {
        a.resize(&[len])?;
    }
    if bytes.is_empty() {
        if a.array().shape().first().is_some_and(|&l| l < len) {
            a.resize(&[len])?;
        }
        return Ok(());
    }
    write_rows(a, start, bytes, len)
}

/// Replace the strings at physical rows `physical` (sorted, paired with `order`, whose
/// second fields index the new values: `data`, each `lengths` bytes long) of a `utf8`
/// column (`offsets`, `strings`): the bytes and offsets from the first replaced row on
/// rewritten, as python-blosc2's `UTF8Array.__setitem__` leaves them (every row kept,
/// the arrays ending at the last one).
pub(super) fn rewrite(
    offsets: &mut super::ArrayMut,
    strings: &mut super::ArrayMut,
    physical: &[usize],
    order: &[(u64, usize)],
    data: &[u8],
    lengths: &[u64],
) -> Result<()> {
    let Some(&first) = physical.first() else {
        return Ok(());
    };
    let bad = |reason: String| crate::error::Error::Refused {
        path: offsets.path().display().to_string(),
        reason,
    };
    let offs: Vec<i64> = offsets.array().read()?;
    let rows = offs.len().saturating_sub(1);
    let have = strings.array().shape().first().copied().unwrap_or(0);
    let at = |p: usize| -> Result<u64> {
        offs.get(p)
            .and_then(|&o| u64::try_from(o).ok())
            .filter(|&o| o <= have)
            .ok_or_else(|| bad(format!("row {p}'s offset is outside the {have} bytes")))
    };
    if physical.last().is_some_and(|&p| p >= rows) {
        return Err(bad(format!(
            "the offsets hold {rows} rows, fewer than the table's"
        )));
    }
    let (from, used) = (at(first)?, at(rows)?);
    if from > used {
        return Err(bad(format!("row {first} begins past the last row's end")));
    }
    let mut old = vec![0u8; (used - from) as usize];
    if used > from {
        strings
            .array()
            .read_region_into(&Region::new([from], [used - from]), &mut old)?;
    }
    let mut starts = Vec::with_capacity(lengths.len());
    let mut s = 0usize;
    for &l in lengths {
        starts.push(s);
        s += l as usize;
    }
    let mut tail = Vec::with_capacity(old.len());
    let mut ends = Vec::with_capacity((rows - first) * 8);
    let mut next = physical.iter().zip(order).peekable();
    for p in first..rows {
        match next.peek() {
            Some(&(&q, &(_, i))) if q == p => {
                tail.extend_from_slice(&data[starts[i]..starts[i] + lengths[i] as usize]);
                next.next();
            }
            _ => {
                let (lo, hi) = (at(p)?, at(p + 1)?);
                if lo < from || hi < lo || hi > used {
                    return Err(bad(format!(
                        "row {p}'s offsets {lo}..{hi} are out of order"
                    )));
                }
                tail.extend_from_slice(&old[(lo - from) as usize..(hi - from) as usize]);
            }
        }
        ends.extend_from_slice(&((from + tail.len() as u64) as i64).to_le_bytes());
    }
    let end = from + tail.len() as u64;
    write_ending(strings, from, &tail, end.max(1))?;
    write_ending(offsets, first as u64 + 1, &ends, rows as u64 + 1)
}

/// Keep only the strings of physical rows `rows` (ascending) of a `utf8` column (`offsets`,
/// `strings`: the staged copies of `original`, which refusals name), in order, as
/// python-blosc2's compact leaves it (`set_all` of the live rows: none when no row is live).
pub(super) fn gather(
    offsets: &mut super::ArrayMut,
    strings: &mut super::ArrayMut,
    rows: &[usize],
    original: &std::path::Path,
) -> Result<()> {
    let bad = |reason: String| crate::error::Error::Refused {
        path: original.display().to_string(),
        reason,
    };
    let offs: Vec<i64> = offsets.array().read()?;
    let all: Vec<u8> = strings.array().read()?;
    let mut data = Vec::new();
    let mut ends = Vec::with_capacity(rows.len() * 8);
    for &p in rows {
        let span = offs
            .get(p)
            .zip(offs.get(p + 1))
            .and_then(|(&lo, &hi)| Some((usize::try_from(lo).ok()?, usize::try_from(hi).ok()?)))
            .filter(|(lo, hi)| lo <= hi && *hi <= all.len())
            .ok_or_else(|| bad(format!("row {p}'s offsets are outside its bytes")))?;
        data.extend_from_slice(&all[span.0..span.1]);
        ends.extend_from_slice(&(data.len() as i64).to_le_bytes());
    }
    let end = data.len() as u64;
    write_ending(strings, 0, &data, end.max(1))?;
    write_ending(offsets, 1, &ends, rows.len() as u64 + 1)
}
