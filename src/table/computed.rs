//! Computed columns, read: python-blosc2's expression evaluated over the rows of the columns
//! it depends on ([`crate::expr`]), typed as python records it.

#![forbid(unsafe_code)]

use super::schema::{numpy_type, Computed};
use super::Table;
use crate::error::Result;
use crate::expr;
use crate::model::dtype::Dtype;

impl Table {
    /// The dtype of a computed column's values.
    pub(super) fn computed_dtype(&self, name: &str, cc: &Computed) -> Result<Dtype> {
        numpy_type(&cc.dtype)
            .and_then(|s| Dtype::parse(s).ok())
            .ok_or_else(|| {
                self.bad(
                    name,
                    format!(
                        "a computed column ({}) of dtype {:?}, which b2nd does not evaluate",
                        cc.readable(),
                        cc.dtype
                    ),
                )
            })
    }

    /// Bounds of computed column `name`'s values on rows where each of its dependencies
    /// (in [`Computed::dependencies`] order) lies within `deps[i]` (finite, no NaN), after
    /// the cast to its recorded dtype; `None` when b2nd cannot bound them (see
    /// [`Expression::bounds`](crate::expr::Expression::bounds)), a dependency holds nulls (python evaluates over their
    /// placeholder slots), or the cast could wrap. Integer results are whole bounds.
    pub fn computed_bounds(&self, name: &str, deps: &[(f64, f64)]) -> Option<(f64, f64)> {
        let cc = self.column(name).ok()?.computed.as_ref()?;
        let e = cc.parsed.as_ref().ok()?;
        if deps.len() != cc.deps.len() {
            return None;
        }
        let mut types = Vec::with_capacity(deps.len());
        for (dep, r) in cc.deps.iter().zip(deps) {
            let c = self.column(dep).ok()?;
            if c.nullable() || c.computed.is_some() {
                return None;
            }
            let (dtype, item) = self.column_dtype(dep).ok()?;
            if !item.is_empty() {
                return None;
            }
            let s = dtype.to_numpy_str();
            let little = s
                .strip_prefix('>')
                .map_or(s.clone(), |rest| format!("<{rest}"));
            types.push((little, r.0, r.1));
        }
        let ops: Vec<(&str, f64, f64)> =
            types.iter().map(|(t, a, b)| (t.as_str(), *a, *b)).collect();
        let (lo, hi) = e.bounds(&ops)?;
        let out = self.computed_dtype(name, cc).ok()?;
        let (min, max, whole) = match out {
            Dtype::Float { size: 8, .. } => (f64::MIN, f64::MAX, false),
            Dtype::Float { size: 4, .. } => (f64::from(f32::MIN), f64::from(f32::MAX), false),
            Dtype::Float { size: 2, .. } => (-65504.0, 65504.0, false),
            Dtype::Int { size, .. } => {
                let m = 2f64.powi(size as i32 * 8 - 1);
                (-m, m - 1.0, true)
            }
            Dtype::UInt { size, .. } => (0.0, 2f64.powi(size as i32 * 8) - 1.0, true),
            _ => return None,
        };
        // Float results cast to an integer truncate toward zero: floor / ceil bound them.
        let (lo, hi) = if whole {
            (lo.floor(), hi.ceil())
        } else {
            (lo, hi)
        };
        (lo >= min && hi <= max).then_some((lo, hi))
    }

    /// Live rows `rows` of a computed column: its expression evaluated over its
    /// dependencies' rows (raw stored values, null slots included, as python-blosc2 does),
    /// in batches of rows so memory stays bounded by the batch, cast to the recorded dtype.
    pub(super) fn computed_rows(
        &self,
        name: &str,
        cc: &Computed,
        rows: std::ops::Range<u64>,
    ) -> Result<(Dtype, Vec<u64>, Vec<u8>)> {
        const BATCH: u64 = 1 << 16;
        let refuse = |why: &str| {
            self.bad(
                name,
                format!(
                    "computed column ({}) cannot be evaluated: {why}",
                    cc.readable()
                ),
            )
        };
        let e = cc.parsed.as_ref().map_err(|why| refuse(why))?;
        let dtype = self.computed_dtype(name, cc)?;
        let kind = dtype.to_numpy_str();
        let mut out = Vec::with_capacity(
            usize::try_from(rows.end - rows.start)
                .unwrap_or(0)
                .saturating_mul(dtype.itemsize())
                .min(1 << 30),
        );
        let mut at = rows.start;
        while at < rows.end {
            let part = at..(at + BATCH).min(rows.end);
            let n = (part.end - part.start) as usize;
            let mut operands = Vec::with_capacity(cc.deps.len());
            for dep in &cc.deps {
                operands.push(self.operand(name, dep, part.clone())?);
            }
            let values = e
                .eval(&operands, n)
                .and_then(|v| v.astype(&kind))
                .and_then(|v| v.to_le_bytes())
                .map_err(|why| refuse(&why))?;
            out.extend_from_slice(&values);
            at = part.end;
        }
        Ok((dtype, vec![rows.end - rows.start], out))
    }

    /// Dependency `dep` of computed column `name`, live rows `rows`, as an operand.
    pub(super) fn operand(
        &self,
        name: &str,
        dep: &str,
        rows: std::ops::Range<u64>,
    ) -> Result<expr::Column> {
        let d = self.column(dep).map_err(|_| {
            self.bad(
                name,
                format!("computed from column {dep:?}, which the table does not have"),
            )
        })?;
        if d.computed.is_some() || !d.is_fixed_width() {
            return Err(self.bad(
                name,
                format!(
                    "computed from column {dep:?}, a {} column: only stored fixed-width columns are operands",
                    if d.computed.is_some() { "computed" } else { d.kind.as_str() }
                ),
            ));
        }
        let (dtype, shape, mut bytes) = self.read_rows_bytes(dep, rows)?;
        if shape.len() != 1 {
            return Err(self.bad(
                name,
                format!("computed from {dep:?}, an ndarray column (one value per row needed)"),
            ));
        }
        let s = dtype.to_numpy_str();
        let kind_char = s.as_bytes().get(1).copied().unwrap_or(b'?');
        if matches!(kind_char, b'U' | b'S') {
            let strings = crate::read::typed::strings(&dtype, &bytes, "String")?;
            return Ok(expr::Column::Str(strings));
        }
        let isz = dtype.itemsize().max(1);
        let little = if let Some(rest) = s.strip_prefix('>') {
            for item in bytes.chunks_exact_mut(isz) {
                item.reverse();
            }
            format!("<{rest}")
        } else {
            s.clone()
        };
        expr::Column::from_le_bytes(&little, &bytes).map_err(|why| {
            self.bad(
                name,
                format!("computed from {dep:?}, whose values b2nd cannot evaluate: {why}"),
            )
        })
    }
}
