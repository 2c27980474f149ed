//! Zone maps: per zone of rows, the minimum and maximum of a numeric column (and whether it
//! holds NaN). A table column's zones are python-blosc2's own SUMMARY index when the table
//! has a fresh one (one zone per block of physical rows, mapped to the live rows SQL sees),
//! else computed by b2nd, one zone per storage block of rows, on the first filtered scan that
//! needs them; either is kept by the table. A computed column's zones are bounded through
//! the summaries of the columns it is computed from, when they all have one. A conjunction of `column <op> literal` filters
//! keeps only the zones it can match; DataFusion still applies the filters exactly (the
//! pushdown is `Inexact`). The same zones give the planner each column's bounds.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema, UInt64Type};
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, Result, ScalarValue};
use datafusion::logical_expr::{Expr, Operator};

use crate::source::Opened;
use crate::terms::{as_f64, keeps_order, terms, Num, Term};

/// One zone's extrema (`None`: no value in the zone, only NULLs), and whether it holds NaN.
#[derive(Debug, Clone, Copy)]
struct Zone {
    range: Option<(Num, Num)>,
    nan: bool,
}

/// The zones of one column: zone `k` covers rows `starts[k] .. starts[k + 1]` (the last one
/// up to `end`).
#[derive(Debug)]
pub(crate) struct ZoneMap {
    starts: Vec<u64>,
    end: u64,
    zones: Vec<Zone>,
    /// Where the zones come from (shown in plans).
    origin: &'static str,
}

/// Whether the planner may push filters on a column of this type into the scan.
pub(crate) fn prunable(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float32
            | DataType::Float64
    )
}

impl ZoneMap {
    /// The zones of `column` (of type `dt`) in `opened`, cut at multiples of `zone_rows`,
    /// read `read_rows` rows at a time.
    fn compute(
        opened: &Opened,
        column: &str,
        dt: &DataType,
        read_rows: u64,
        zone_rows: u64,
    ) -> Result<ZoneMap> {
        let schema = Arc::new(Schema::new(vec![Field::new(column, dt.clone(), true)]));
        let n = opened.n_rows();
        let zone_rows = zone_rows.max(1);
        let mut map = ZoneMap {
            starts: Vec::with_capacity(n.div_ceil(zone_rows) as usize),
            end: n,
            zones: Vec::with_capacity(n.div_ceil(zone_rows) as usize),
            origin: "computed",
        };
        let mut at = 0;
        while at < n {
            let end = (at + read_rows.max(1)).min(n);
            let b = opened.batch(&schema, at..end)?;
            let mut z = at;
            while z < end {
                let stop = ((z / zone_rows + 1) * zone_rows).min(end);
                let part = b.column(0).slice((z - at) as usize, (stop - z) as usize);
                map.starts.push(z);
                map.zones.push(zone_of(part.as_ref(), dt)?);
                z = stop;
            }
            at = end;
        }
        Ok(map)
    }

    /// The zones python-blosc2's SUMMARY index `s` of a column of `t` gives: its segments of
    /// physical rows as the live rows they hold.
    fn from_summary(t: &b2nd::Table, s: &b2nd::BlockSummary) -> ZoneMap {
        let mut map = ZoneMap {
            starts: Vec::with_capacity(s.segments.len()),
            end: t.n_rows(),
            zones: Vec::with_capacity(s.segments.len()),
            origin: "python-blosc2 summary",
        };
        for (k, g) in s.segments.iter().enumerate() {
            map.starts
                .push(t.live_rows_before(k as u64 * s.segment_rows));
            map.zones.push(Zone {
                // A segment without a number holds zero placeholders as bounds.
                range: (!g.all_null() && g.flags & b2nd::Segment::ALL_NAN == 0)
                    .then(|| (num(g.min), num(g.max))),
                nan: !g.all_null() && g.has_nan(),
            });
        }
        map
    }

    /// The rows of zones `keep` marks, merged.
    fn rows(&self, keep: &[bool]) -> Vec<Range<u64>> {
        let mut out: Vec<Range<u64>> = Vec::new();
        for (k, _) in keep.iter().enumerate().filter(|(_, &k)| k) {
            let r = self.starts[k]..self.starts.get(k + 1).copied().unwrap_or(self.end);
            if r.is_empty() {
                continue;
            }
            match out.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => out.push(r),
            }
        }
        out
    }

    /// The smallest and largest number of the column (NaN and NULL aside), if any.
    fn bounds(&self) -> Option<(Num, Num)> {
        let lt = |a: Num, b: Num| match (a, b) {
            (Num::Int(x), Num::Int(y)) => x < y,
            (a, b) => as_f64(a) < as_f64(b),
        };
        self.zones
            .iter()
            .filter_map(|z| z.range)
            .reduce(|(lo, hi), (a, b)| {
                (
                    if lt(a, lo) { a } else { lo },
                    if lt(hi, b) { b } else { hi },
                )
            })
    }

    /// Which zones may hold rows where `op` holds against `lit` (`column op lit`): clears
    /// `out[k]` for the others.
    fn keep(&self, op: Operator, lit: Num, out: &mut [bool]) {
        for (k, z) in self.zones.iter().enumerate() {
            out[k] = out[k] && z.may_match(op, lit);
        }
    }

    /// Whether any zone holding some of `rows` may hold a row where `column op lit` holds
    /// (a row beyond the zones may).
    pub(crate) fn may_match(&self, rows: &Range<u64>, op: Operator, lit: Num) -> bool {
        if rows.is_empty() {
            return false;
        }
        if rows.end > self.end {
            return true;
        }
        let first = self
            .starts
            .partition_point(|&s| s <= rows.start)
            .saturating_sub(1);
        let last = self.starts.partition_point(|&s| s < rows.end);
        self.zones[first.min(last)..last]
            .iter()
            .any(|z| z.may_match(op, lit))
    }
}

impl Zone {
    /// Whether the zone may hold a row where `column op lit` holds.
    fn may_match(&self, op: Operator, lit: Num) -> bool {
        if self.nan {
            return true; // NaN compares greater than every number in Arrow's order
        }
        let Some((lo, hi)) = self.range else {
            return false; // only NULLs: no comparison is true
        };
        let (lo, hi, v) = match (lo, hi, lit) {
            (Num::Int(a), Num::Int(b), Num::Int(v)) => {
                return match op {
                    Operator::Eq => a <= v && v <= b,
                    Operator::Lt => a < v,
                    Operator::LtEq => a <= v,
                    Operator::Gt => b > v,
                    Operator::GtEq => b >= v,
                    _ => true,
                };
            }
            (lo, hi, v) => (as_f64(lo), as_f64(hi), as_f64(v)),
        };
        // Floats: signed zeros are one value here (bounds and literal), and strict
        // comparisons are taken as inclusive, so that IEEE and total-order comparison
        // agree on what may match.
        let z = |x: f64| if x == 0.0 { 0.0 } else { x };
        let (lo, hi, v) = (z(lo), z(hi), z(v));
        match op {
            Operator::Eq => lo <= v && v <= hi,
            Operator::Lt | Operator::LtEq => lo <= v,
            Operator::Gt | Operator::GtEq => hi >= v,
            _ => true,
        }
    }
}

/// A summary's bound as a zone bound.
fn num(b: b2nd::Bound) -> Num {
    match b {
        b2nd::Bound::Int(i) => Num::Int(i),
        b2nd::Bound::Float(f) => Num::Float(f),
    }
}

fn zone_of(a: &dyn Array, dt: &DataType) -> Result<Zone> {
    let mut z = Zone {
        range: None,
        nan: false,
    };
    match dt {
        DataType::Float32 | DataType::Float64 => {
            let f = cast(a, &DataType::Float64)?;
            let f = f.as_primitive::<Float64Type>();
            for i in 0..f.len() {
                if f.is_null(i) {
                    continue;
                }
                let v = f.value(i);
                if v.is_nan() {
                    z.nan = true;
                    continue;
                }
                z.range = Some(match z.range {
                    None => (Num::Float(v), Num::Float(v)),
                    Some((Num::Float(lo), Num::Float(hi))) => {
                        (Num::Float(lo.min(v)), Num::Float(hi.max(v)))
                    }
                    Some(r) => r,
                });
            }
        }
        _ => {
            let mut ints = |x: i128| {
                z.range = Some(match z.range {
                    None => (Num::Int(x), Num::Int(x)),
                    Some((Num::Int(lo), Num::Int(hi))) => {
                        (Num::Int(lo.min(x)), Num::Int(hi.max(x)))
                    }
                    Some(r) => r,
                });
            };
            if *dt == DataType::UInt64 {
                let v = a.as_primitive::<UInt64Type>();
                (0..v.len())
                    .filter(|&i| v.is_valid(i))
                    .for_each(|i| ints(v.value(i).into()));
            } else {
                let v = cast(a, &DataType::Int64)?;
                let v = v.as_primitive::<Int64Type>();
                (0..v.len())
                    .filter(|&i| v.is_valid(i))
                    .for_each(|i| ints(v.value(i).into()));
            }
        }
    }
    Ok(z)
}

/// Zone maps of a table's columns, made once each; `None` for a column found to have no
/// summary whose zones are not computed yet (so that it is not looked for again).
#[derive(Debug, Default)]
pub(crate) struct Zones(Mutex<HashMap<String, Option<Arc<ZoneMap>>>>);

/// How the zones of a source are cut: rows per read and per computed zone.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cut {
    /// Rows read at a time when computing zones (a storage chunk).
    pub(crate) read_rows: u64,
    /// Rows per computed zone (a storage block).
    pub(crate) zone_rows: u64,
}

impl Zones {
    /// What is known of `column`: its zones, that it has no summary (`Some(None)`), or
    /// nothing yet.
    fn cached(&self, column: &str) -> Option<Option<Arc<ZoneMap>>> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(column)
            .cloned()
    }

    fn keep(&self, column: &str, z: Option<Arc<ZoneMap>>) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(column.to_string(), z);
    }

    fn keep_map(&self, column: &str, z: ZoneMap) -> Arc<ZoneMap> {
        let z = Arc::new(z);
        self.keep(column, Some(z.clone()));
        z
    }

    /// python-blosc2's summary of a table column as zones, if it has a usable one.
    /// Zones already made for the column count as known without reading.
    pub(crate) fn summary(&self, opened: &Opened, column: &str) -> Result<Option<Arc<ZoneMap>>> {
        if let Some(z) = self.cached(column) {
            return Ok(z);
        }
        let Opened::Table(t, _) = opened else {
            return Ok(None);
        };
        if t.column(column).is_err() {
            return Ok(None);
        }
        let s = t
            .block_summary(column)
            .map_err(|e| datafusion::common::DataFusionError::External(Box::new(e)))?;
        let z = s.map(|s| Arc::new(ZoneMap::from_summary(t, &s)));
        self.keep(column, z.clone());
        Ok(z)
    }

    /// Zones of a computed table column bounded through python-blosc2's summaries of the
    /// columns it is computed from (when each has a usable one, cut alike): per zone, the
    /// bounds of the expression over its dependencies' bounds. A zone b2nd cannot bound
    /// (NaN in a dependency, an expression or type it does not bound) is always kept.
    fn derived(
        &self,
        opened: &Opened,
        column: &str,
        dt: &DataType,
    ) -> Result<Option<Arc<ZoneMap>>> {
        let Opened::Table(t, _) = opened else {
            return Ok(None);
        };
        let Some(cc) = t.column(column).ok().and_then(|c| c.computed()) else {
            return Ok(None);
        };
        let mut maps = Vec::with_capacity(cc.dependencies().len());
        for dep in cc.dependencies() {
            match self.summary(opened, dep)? {
                Some(z) => maps.push(z),
                None => return Ok(None),
            }
        }
        let Some(first) = maps.first() else {
            return Ok(None);
        };
        if maps
            .iter()
            .any(|m| m.starts != first.starts || m.end != first.end)
        {
            return Ok(None);
        }
        let whole = !matches!(dt, DataType::Float32 | DataType::Float64);
        let mut map = ZoneMap {
            starts: first.starts.clone(),
            end: first.end,
            zones: Vec::with_capacity(first.zones.len()),
            origin: "bounded through python-blosc2 summaries of its dependencies",
        };
        for k in 0..first.zones.len() {
            let deps: Option<Vec<(f64, f64)>> = maps
                .iter()
                .map(|m| {
                    let z = m.zones[k];
                    z.range
                        .filter(|_| !z.nan)
                        .map(|(lo, hi)| (as_f64(lo), as_f64(hi)))
                })
                .collect();
            let bounds = deps.and_then(|d| t.computed_bounds(column, &d));
            map.zones.push(match bounds {
                Some((lo, hi)) if whole => Zone {
                    range: Some((Num::Int(lo as i128), Num::Int(hi as i128))),
                    nan: false,
                },
                Some((lo, hi)) => Zone {
                    range: Some((Num::Float(lo), Num::Float(hi))),
                    nan: false,
                },
                // Unknown: kept by every filter, and no bound for the planner.
                None => Zone {
                    range: None,
                    nan: true,
                },
            });
        }
        Ok(Some(self.keep_map(column, map)))
    }

    fn get(&self, opened: &Opened, column: &str, dt: &DataType, cut: Cut) -> Result<Arc<ZoneMap>> {
        if let Some(z) = self.summary(opened, column)? {
            return Ok(z);
        }
        if let Some(z) = self.derived(opened, column, dt)? {
            return Ok(z);
        }
        let z = ZoneMap::compute(opened, column, dt, cut.read_rows, cut.zone_rows)?;
        Ok(self.keep_map(column, z))
    }

    /// The row ranges of `opened` that the AND of `filters` may match, merged (every row
    /// when no filter part can prune), and for each column that pruned, where its zones
    /// come from.
    pub(crate) fn ranges(
        &self,
        opened: &Opened,
        schema: &Schema,
        filters: &[Expr],
        cut: Cut,
    ) -> Result<(Vec<Range<u64>>, Vec<String>)> {
        let n = opened.n_rows();
        let mut kept: Vec<Range<u64>> = std::iter::once(0..n).collect();
        let mut all = Vec::new();
        for f in filters {
            terms(f, &mut all);
        }
        let mut notes: Vec<String> = Vec::new();
        for Term {
            column: col,
            cast,
            op,
            lit: v,
        } in all
        {
            let Ok(field) = schema.field_with_name(&col) else {
                continue;
            };
            if !prunable(field.data_type())
                || cast.is_some_and(|to| !keeps_order(field.data_type(), &to))
            {
                continue;
            }
            let z = self.get(opened, &col, field.data_type(), cut)?;
            if z.end != n {
                continue;
            }
            let mut keep = vec![true; z.zones.len()];
            z.keep(op, v, &mut keep);
            kept = intersect(&kept, &z.rows(&keep));
            let note = format!("{col}: {}", z.origin);
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        Ok((kept, notes))
    }

    /// Whether rows `rows` of `opened` may hold a row where every term of `terms` holds,
    /// by the zones known without reading values (python-blosc2's summaries, zones already
    /// computed): `true` where they cannot tell.
    pub(crate) fn may_match(
        &self,
        opened: &Opened,
        schema: &Schema,
        terms: &[Term],
        rows: &Range<u64>,
    ) -> Result<bool> {
        for t in terms {
            let Ok(field) = schema.field_with_name(&t.column) else {
                continue;
            };
            if !prunable(field.data_type())
                || t.cast
                    .as_ref()
                    .is_some_and(|to| !keeps_order(field.data_type(), to))
            {
                continue;
            }
            if let Some(z) = self.summary(opened, &t.column)? {
                if z.end == opened.n_rows() && !z.may_match(rows, t.op, t.lit) {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// What the planner may know of each column of `schema`: bounds (inexact: a summary may
    /// cover deleted rows) from the zones known without reading values (python-blosc2's
    /// summaries, zones already computed), no NULL in a column that cannot hold one (a
    /// table column not nullable, an array's index and value columns).
    pub(crate) fn statistics(
        &self,
        opened: &Opened,
        schema: &Schema,
    ) -> Result<Vec<ColumnStatistics>> {
        schema
            .fields()
            .iter()
            .map(|f| {
                let mut c = ColumnStatistics::new_unknown();
                if opened.never_null(f) {
                    c.null_count = Precision::Exact(0);
                }
                if prunable(f.data_type()) {
                    let z = self.summary(opened, f.name())?;
                    // NaN sorts above every number in DataFusion's comparisons: a column
                    // holding NaN has no upper bound to give (nor a lower one, kept simple).
                    let nan = z.as_deref().is_some_and(|z| z.zones.iter().any(|z| z.nan));
                    if let Some((lo, hi)) = z.as_deref().filter(|_| !nan).and_then(ZoneMap::bounds)
                    {
                        c.min_value = scalar(lo, f.data_type());
                        c.max_value = scalar(hi, f.data_type());
                    }
                }
                Ok(c)
            })
            .collect()
    }
}

/// A bound as an inexact statistic of a column of type `dt`.
fn scalar(n: Num, dt: &DataType) -> Precision<ScalarValue> {
    let s = match n {
        Num::Int(i) => match i64::try_from(i) {
            Ok(i) => ScalarValue::Int64(Some(i)),
            Err(_) => match u64::try_from(i) {
                Ok(u) => ScalarValue::UInt64(Some(u)),
                Err(_) => return Precision::Absent,
            },
        },
        Num::Float(f) => ScalarValue::Float64(Some(f)),
    };
    s.cast_to(dt).map_or(Precision::Absent, Precision::Inexact)
}

/// The rows in both `a` and `b` (each sorted and disjoint).
fn intersect(a: &[Range<u64>], b: &[Range<u64>]) -> Vec<Range<u64>> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        let r = a[i].start.max(b[j].start)..a[i].end.min(b[j].end);
        if !r.is_empty() {
            out.push(r);
        }
        if a[i].end < b[j].end {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{intersect, Zones};
    use crate::source::{Kind, Source};

    /// A column found to have no summary is not looked for again: the table's `_meta`
    /// (where python-blosc2 lists its summaries) is read once, even when asked per batch.
    #[test]
    fn a_column_without_summary_is_looked_up_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.b2d");
        b2nd::TableBuilder::new()
            .timestamp_column("ts", "ms", &[1_000, 2_000, 3_000])
            .unwrap()
            .write(&p)
            .unwrap();
        let opened = Source::parse(p.to_str().unwrap(), Kind::Table)
            .open()
            .unwrap();
        let zones = Zones::default();
        assert!(zones.summary(&opened, "ts").unwrap().is_none());
        let meta: Vec<_> = std::fs::read_dir(&p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|f| {
                f.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("_meta")
            })
            .collect();
        assert!(!meta.is_empty());
        meta.iter().for_each(|f| std::fs::remove_file(f).unwrap());
        for _ in 0..3 {
            assert!(zones.summary(&opened, "ts").unwrap().is_none());
        }
        // A fresh cache looks again, and finds no `_meta`.
        assert!(Zones::default().summary(&opened, "ts").is_err());
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn intersections_of_row_ranges() {
        assert_eq!(intersect(&[0..10], &[2..4, 6..12]), vec![2..4, 6..10]);
        assert_eq!(
            intersect(&[0..3, 5..9], &[2..6, 8..20]),
            vec![2..3, 5..6, 8..9]
        );
        assert_eq!(intersect(&[0..3], &[3..6]), vec![]);
        assert_eq!(intersect(&[], &[0..6]), vec![]);
    }
}
