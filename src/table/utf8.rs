//! `utf8` columns: int64 offsets (`n + 1`, one more than the rows written) at `_cols/<name>`
//! and the strings' bytes at `_cols/<name>.utf8`. A range of rows reads only its offsets and
//! the bytes between its first and last one: the blocks they live in, never the whole column.

#![forbid(unsafe_code)]

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use super::{rows_slice, ColumnKind, Table};
use crate::array::Array;
use crate::error::Result;
use crate::format::ctable::Part;
use crate::model::attrs::Value;

/// How many decoded blocks [`Tails`] keeps: a few per partition of a scan and array read.
const TAILS: usize = 16;

/// The last block recent range reads of 1-d arrays decoded, by array key and first item.
/// A scan reads a column's rows batch after batch, and each batch's offsets reach one item
/// into the next batch's first block (a row ends where the next begins), as its strings
/// often end inside the block the next batch's begin in: kept, that block is decoded once.
#[derive(Debug, Default)]
pub(crate) struct Tails(Mutex<VecDeque<Tail>>);

/// One kept block: its array's key, its first item and its bytes.
type Tail = (String, u64, Arc<Vec<u8>>);

impl Tails {
    /// Items `range` of 1-d array `a` (stored at `key`) as bytes into `out`: the range's
    /// first block from the kept ones when there, the rest read to the end of its last
    /// block, which is then kept.
    fn read(&self, key: &str, a: &Array, range: Range<u64>, out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        if range.is_empty() {
            return Ok(());
        }
        let isz = a.itemsize() as u64;
        let bytes = |n: u64| (n * isz) as usize;
        let first = block_of(a, range.start);
        let mut pos = range.start;
        let kept = {
            let tails = self.0.lock().unwrap_or_else(|e| e.into_inner());
            tails
                .iter()
                .find(|(k, at, b)| {
                    k == key && *at == first.start && b.len() == bytes(first.end - first.start)
                })
                .map(|(_, _, b)| b.clone())
        };
        if let Some(b) = kept {
            let end = range.end.min(first.end);
            out.extend_from_slice(&b[bytes(range.start - first.start)..bytes(end - first.start)]);
            pos = end;
        }
        if pos == range.end {
            return Ok(());
        }
        // From the start of `pos`'s block to the end of the last one: the blocks decoded
        // anyway, the last one whole to keep.
        let from = block_of(a, pos).start;
        let last = block_of(a, range.end - 1);
        let mut buf = Vec::new();
        crate::alloc::fit(&mut buf, bytes(last.end - from), "the rows")?;
        a.read_slice_bytes_into(&rows_slice(&(from as usize..last.end as usize)), &mut buf)?;
        out.extend_from_slice(&buf[bytes(pos - from)..bytes(range.end - from)]);
        let tail = Arc::new(buf[bytes(last.start - from)..].to_vec());
        let mut tails = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if tails.len() >= TAILS {
            tails.pop_front();
        }
        tails.push_back((key.to_string(), last.start, tail));
        Ok(())
    }
}

/// The items of 1-d array `a`'s block holding item `i` (blocks tile each chunk from its
/// start; a chunk's last block, like the array's, may be cut short).
fn block_of(a: &Array, i: u64) -> Range<u64> {
    let len = a.shape()[0];
    let chunk = a.chunks()[0].max(1);
    let block = a.blocks()[0].clamp(1, chunk);
    let c0 = i / chunk * chunk;
    let b0 = c0 + (i - c0) / block * block;
    b0..(b0 + block).min(c0 + chunk).min(len)
}

/// Some rows of a `utf8` column: their bytes, one after the other, and where each row's
/// bytes start (`offsets[i]..offsets[i + 1]`, `offsets[0] == 0`). Nulls are as stored (`""`
/// under a mask, the sentinel); the bytes are not yet checked to be UTF-8.
#[derive(Debug, Default)]
pub(crate) struct Utf8Rows {
    pub(crate) bytes: Vec<u8>,
    pub(crate) offsets: Vec<usize>,
}

impl Utf8Rows {
    /// The number of rows.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Row `i`'s bytes.
    pub(crate) fn row(&self, i: usize) -> &[u8] {
        &self.bytes[self.offsets[i]..self.offsets[i + 1]]
    }
}

impl Table {
    /// Live rows `rows` of `utf8` column `name`: the offsets of the physical rows spanning
    /// them and the bytes between the first and the last, the live rows then picked.
    pub(crate) fn utf8_rows(&self, name: &str, rows: Range<u64>) -> Result<Utf8Rows> {
        self.check_live_rows(&rows)?;
        let c = self.column(name)?;
        if c.kind != ColumnKind::Utf8 {
            return Err(self.bad(name, format!("a {} column, not utf8", c.kind)));
        }
        let (span, picked) = match self.valid.consecutive(rows.clone()) {
            Some(span) => (span, None),
            None => {
                let picked = self.live_range(rows);
                match (picked.first(), picked.last()) {
                    (Some(&a), Some(&b)) => (a..b + 1, Some(picked)),
                    _ => (0..0, None),
                }
            }
        };
        if span.is_empty() {
            return Ok(Utf8Rows {
                bytes: Vec::new(),
                offsets: vec![0],
            });
        }
        let offsets = self.shared_array(&self.key(name, Part::Values))?;
        if offsets.ndim() != 1 || offsets.dtype_str() != "<i8" {
            return Err(self.bad(
                name,
                format!(
                    "its offsets are {} of shape {:?}, not 1-d int64",
                    offsets.dtype_str(),
                    offsets.shape()
                ),
            ));
        }
        // The offsets cover the rows written: up to the last live one (python-blosc2 keeps
        // no capacity in them; the table may keep some past its last live row).
        if offsets.shape()[0] < span.end as u64 + 1 {
            return Err(self.bad(
                name,
                format!(
                    "{} offsets for rows up to {}",
                    offsets.shape()[0],
                    span.end - 1
                ),
            ));
        }
        let mut raw = Vec::new();
        self.tails.read(
            &self.key(name, Part::Values),
            &offsets,
            span.start as u64..span.end as u64 + 1,
            &mut raw,
        )?;
        let offs: Vec<i64> = raw
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        let data = self.shared_array(&self.key(name, Part::Utf8Bytes))?;
        if data.ndim() != 1 || data.itemsize() != 1 {
            return Err(self.bad(
                name,
                format!(
                    "its bytes are {} of shape {:?}, not 1-d bytes",
                    data.dtype_str(),
                    data.shape()
                ),
            ));
        }
        let len = data.shape()[0];
        // Every row's offsets within the bytes and in order: each row is a range of them.
        if let Some(i) = offs.windows(2).position(|w| {
            !(0 <= w[0] && w[0] <= w[1] && u64::try_from(w[1]).is_ok_and(|hi| hi <= len))
        }) {
            return Err(self.bad(
                name,
                format!(
                    "row {}: offsets {}..{} outside its {len} bytes",
                    span.start + i,
                    offs[i],
                    offs[i + 1]
                ),
            ));
        }
        // In range of the bytes, so of memory: usize.
        let at = |o: i64| o as usize;
        let (lo, hi) = (at(offs[0]), at(offs[offs.len() - 1]));
        let mut bytes = Vec::new();
        self.tails.read(
            &self.key(name, Part::Utf8Bytes),
            &data,
            lo as u64..hi as u64,
            &mut bytes,
        )?;
        let Some(picked) = picked else {
            let offsets = offs.iter().map(|&o| at(o) - lo).collect();
            return Ok(Utf8Rows { bytes, offsets });
        };
        // Deleted rows among them: the live ones copied out.
        let first = span.start;
        let mut out = Utf8Rows {
            bytes: Vec::with_capacity(bytes.len()),
            offsets: Vec::with_capacity(picked.len() + 1),
        };
        out.offsets.push(0);
        for p in picked {
            let (a, b) = (at(offs[p - first]) - lo, at(offs[p - first + 1]) - lo);
            out.bytes.extend_from_slice(&bytes[a..b]);
            out.offsets.push(out.bytes.len());
        }
        Ok(out)
    }

    /// Which of `strings` (live rows of `utf8` column `name`) hold a value: `None` when the
    /// column stores no sentinel (its nulls, if any, are in a mask).
    pub(crate) fn utf8_sentinel_validity(
        &self,
        name: &str,
        strings: &Utf8Rows,
    ) -> Result<Option<Vec<bool>>> {
        let c = self.column(name)?;
        if c.mask {
            return Ok(None);
        }
        match &c.null_value {
            None => Ok(None),
            Some(Value::Str(sentinel)) => Ok(Some(
                (0..strings.len())
                    .map(|i| strings.row(i) != sentinel.as_bytes())
                    .collect(),
            )),
            Some(other) => Err(self.bad(
                name,
                format!("a utf8 column whose null_value {other:?} is not a string"),
            )),
        }
    }

    /// A `utf8` column's live rows: `None` for nulls.
    pub fn read_utf8(&self, name: &str) -> Result<Vec<Option<String>>> {
        let strings = self.utf8_rows(name, 0..self.valid.live())?;
        let validity = match self.utf8_sentinel_validity(name, &strings)? {
            Some(v) => Some(v),
            None => self.read_validity(name)?,
        };
        (0..strings.len())
            .map(|i| {
                let s = std::str::from_utf8(strings.row(i))
                    .map_err(|e| self.bad(name, format!("row {i}: not UTF-8 ({e})")))?;
                Ok(validity
                    .as_ref()
                    .is_none_or(|v| v[i])
                    .then(|| s.to_string()))
            })
            .collect()
    }
}
