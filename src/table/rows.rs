//! Row reads of fixed-width columns: live rows by range, as bytes or typed, deleted rows
//! picked out.

#![forbid(unsafe_code)]

use super::Table;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::model::dtype::Dtype;
use crate::model::element::{self, Element};

impl Table {
    /// The physical rows of live rows `rows`.
    pub(super) fn live_range(&self, rows: std::ops::Range<u64>) -> Vec<usize> {
        self.valid.physical_of(rows)
    }

    /// The physical rows that are live.
    pub(super) fn live(&self) -> impl Iterator<Item = usize> + '_ {
        self.valid.iter()
    }

    /// Live rows among physical rows `0 .. physical` (the position, among live rows, of the
    /// first live row at or after `physical`): maps physical segments, such as those of a
    /// [`BlockSummary`](crate::BlockSummary), to the live rows readers count.
    pub fn live_rows_before(&self, physical: u64) -> u64 {
        self.valid.before(physical)
    }

    /// A fixed-width column's live rows as raw bytes in C order, with its dtype and the shape
    /// of the result (`(n_rows, *item_shape)`), as python-blosc2's `t[name].to_numpy()`
    /// returns them (null slots hold whatever the column stores there).
    pub fn read_column_bytes(&self, name: &str) -> Result<(Dtype, Vec<u64>, Vec<u8>)> {
        self.read_rows_bytes(name, 0..self.valid.live())
    }

    /// Live rows `rows` (counted among live rows, as python-blosc2's `t[name][a:b]`) of a
    /// fixed-width column, as [`Table::read_column_bytes`]; only the chunks holding them
    /// are read.
    pub fn read_rows_bytes(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
    ) -> Result<(Dtype, Vec<u64>, Vec<u8>)> {
        let mut out = Vec::new();
        let (dtype, shape) = self.read_rows_bytes_into(name, rows, &mut out)?;
        Ok((dtype, shape, out))
    }

    /// [`Table::read_rows_bytes`] into `out` (resized to the rows' bytes): a reader of many
    /// row ranges reuses one buffer, writing no fresh pages for each range.
    pub fn read_rows_bytes_into(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
        out: &mut Vec<u8>,
    ) -> Result<(Dtype, Vec<u64>)> {
        self.check_live_rows(&rows)?;
        if let Some(cc) = &self.column(name)?.computed {
            let (dtype, shape, bytes) = self.computed_rows(name, cc, rows)?;
            *out = bytes;
            return Ok((dtype, shape));
        }
        let a = self.column_shared(name)?;
        let row_items: u64 = a.shape()[1..].iter().product();
        let row_bytes = usize::try_from(row_items)
            .ok()
            .and_then(|r| r.checked_mul(a.itemsize()))
            .ok_or_else(|| self.bad(name, "rows too large".into()))?;
        let mut shape = vec![rows.end - rows.start];
        shape.extend_from_slice(&a.shape()[1..]);
        self.gather_live(name, rows, row_bytes, out, |span, buf| {
            a.read_slice_bytes_into(&rows_slice(&span), buf)?;
            Ok(true)
        })?;
        Ok((self.dtype_of(name, &a)?, shape))
    }

    /// Live rows `rows` of a stored little-endian `string` column (NumPy `<U`) as one byte a
    /// character into `out` (`chars` bytes a row: the strings' Latin-1, NUL-padded), read
    /// without unshuffling the column's other three bytes a character: `Ok(false)`, `out`
    /// unspecified, when a character read is beyond U+00FF or the column is not such a column
    /// (computed, big-endian, of items): read the rows whole instead.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))] // read by the Arrow conversion alone
    pub(crate) fn read_rows_latin1_into(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
        out: &mut Vec<u8>,
    ) -> Result<bool> {
        self.check_live_rows(&rows)?;
        if self.column(name)?.computed.is_some() {
            return Ok(false);
        }
        let a = self.column_shared(name)?;
        let little = matches!(
            self.dtype_of(name, &a)?,
            Dtype::Unicode {
                order: crate::model::dtype::ByteOrder::Little,
                ..
            }
        );
        if !little || a.shape().len() != 1 {
            return Ok(false);
        }
        self.gather_live(name, rows, a.itemsize() / 4, out, |span, buf| {
            a.read_rows_narrow_into(span.start as u64..span.end as u64, buf)
        })
    }

    /// An error unless `rows` are live rows of the table.
    pub(super) fn check_live_rows(&self, rows: &std::ops::Range<u64>) -> Result<()> {
        if rows.start > rows.end || rows.end > self.valid.live() {
            return Err(Error::InvalidArgument(format!(
                "rows {}..{} of a table of {} rows",
                rows.start,
                rows.end,
                self.valid.live()
            )));
        }
        Ok(())
    }

    /// Live rows `rows` of column `name`, `row_bytes` a row, into `out` (resized to their
    /// bytes), physical rows read by `read` into a buffer of exactly their bytes: one read
    /// when no row among them is deleted, else one of the rows from the first live one to
    /// the last, the live ones then picked. `false` from `read` is handed back (`out`
    /// unspecified).
    pub(super) fn gather_live(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
        row_bytes: usize,
        out: &mut Vec<u8>,
        mut read: impl FnMut(std::ops::Range<usize>, &mut [u8]) -> Result<bool>,
    ) -> Result<bool> {
        let too_large = || self.bad(name, "rows too large".into());
        if let Some(span) = self.valid.consecutive(rows.clone()) {
            // No deleted row among them: one read is the answer.
            let n = span.len().checked_mul(row_bytes).ok_or_else(too_large)?;
            // Every byte is written by the read: a longer buffer is cut, not cleared.
            crate::alloc::fit(out, n, "the rows")?;
            return if n > 0 { read(span, out) } else { Ok(true) };
        }
        let picked = self.live_range(rows);
        let (Some(&first), Some(&last)) = (picked.first(), picked.last()) else {
            out.clear();
            return Ok(true);
        };
        // The physical rows spanning the live ones asked for.
        let n = (last + 1 - first)
            .checked_mul(row_bytes)
            .ok_or_else(too_large)?;
        let mut span = Vec::new();
        crate::alloc::fit(&mut span, n, "the rows")?;
        if !read(first..last + 1, &mut span)? {
            return Ok(false);
        }
        out.clear();
        out.reserve(picked.len() * row_bytes);
        for i in &picked {
            let at = (i - first) * row_bytes;
            out.extend_from_slice(&span[at..at + row_bytes]);
        }
        Ok(true)
    }

    /// Live rows `rows` of a fixed-width column as `T` (checked against its dtype).
    pub fn read_rows<T: Element + Default>(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
    ) -> Result<Vec<T>> {
        let stored = self.column(name)?.computed.is_none();
        if stored && rows.start <= rows.end && rows.end <= self.n_rows() {
            if let Some(span) = self.valid.consecutive(rows.clone()) {
                // No deleted row among them: read straight into the result.
                let a = self.column_shared(name)?;
                let dtype = self.dtype_of(name, &a)?;
                element::check::<T>(&dtype)?;
                let row_items: u64 = a.shape()[1..].iter().product();
                let n = usize::try_from(span.len() as u64 * row_items)
                    .map_err(|_| self.bad(name, "rows too large".into()))?;
                let mut out = vec![T::default(); n];
                if n > 0 {
                    T::fill_from_bytes(&mut out, &dtype, &mut |buf| {
                        a.read_slice_bytes_into(&rows_slice(&span), buf)
                    })?;
                }
                return Ok(out);
            }
        }
        let (dtype, shape, bytes) = self.read_rows_bytes(name, rows)?;
        element::check::<T>(&dtype)?;
        let n = shape.iter().product::<u64>() as usize;
        let mut out = vec![T::default(); n];
        T::fill_from_bytes(&mut out, &dtype, &mut |buf| {
            buf.copy_from_slice(&bytes);
            Ok(())
        })?;
        Ok(out)
    }

    /// The dtype of a fixed-width column's values as python-blosc2 returns them, and the
    /// shape of one row's item (`[]` but for `ndarray` columns).
    pub fn column_dtype(&self, name: &str) -> Result<(Dtype, Vec<u64>)> {
        if let Some(cc) = &self.column(name)?.computed {
            return Ok((self.computed_dtype(name, cc)?, Vec::new()));
        }
        let a = self.column_shared(name)?;
        Ok((self.dtype_of(name, &a)?, a.shape()[1..].to_vec()))
    }

    pub(super) fn dtype_of(&self, name: &str, a: &Array) -> Result<Dtype> {
        let c = self.column(name)?;
        Ok(match &c.unit {
            // Stored as int64; python-blosc2 hands them out as datetime64 of the unit.
            Some(unit) if a.dtype_str().ends_with("i8") => {
                let order = &a.dtype_str()[..1];
                Dtype::parse(&format!("{order}M8[{unit}]"))
                    .map_err(|e| self.bad(name, format!("timestamp unit {unit:?}: {e}")))?
            }
            _ => a.dtype().clone(),
        })
    }

    /// A fixed-width column's live rows as `T` (checked against its dtype).
    pub fn read_column<T: Element + Default>(&self, name: &str) -> Result<Vec<T>> {
        self.read_rows(name, 0..self.valid.live())
    }

    /// A fixed-width column's live rows as `T`, `None` for nulls (what
    /// [`Table::read_column`] and [`Table::read_validity`] give together).
    pub fn read_column_opt<T: Element + Default>(&self, name: &str) -> Result<Vec<Option<T>>> {
        let values = self.read_column::<T>(name)?;
        Ok(match self.read_validity(name)? {
            None => values.into_iter().map(Some).collect(),
            Some(valid) => values
                .into_iter()
                .zip(valid)
                .map(|(v, ok)| ok.then_some(v))
                .collect(),
        })
    }
}

/// Physical rows `span` of a column as the slice that reads them.
pub(super) fn rows_slice(span: &std::ops::Range<usize>) -> [crate::model::selection::SliceItem; 1] {
    [crate::model::selection::SliceItem::Range {
        start: Some(span.start as i64),
        stop: Some(span.end as i64),
        step: 1,
    }]
}
