//! Generated (materialized) columns filled on append, as python-blosc2's
//! `_autofill_materialized_batch_columns`: a stored column the schema's
//! `materialized_columns` defines by an expression over other columns takes, for the rows
//! an append leaves it out of, its expression evaluated over the values given for its
//! dependencies (python-blosc2's `lazyexpr` over them, cast to the recorded dtype).

#![forbid(unsafe_code)]

use super::{Cells, Rows, TableMut};
use crate::error::Result;
use crate::expr::{Column as Operand, Expression};
use crate::model::attrs::Value;
use crate::model::dtype::Dtype;

impl TableMut {
    /// `rows` with every generated column it leaves out computed from the values it gives;
    /// refused by name where python-blosc2 refuses (a dependency not given) or where b2nd
    /// cannot compute what python would (a DSL kernel or row transformer, a null among the
    /// dependencies' values, an expression b2nd does not evaluate).
    pub(super) fn autofill_generated(&self, rows: &Rows) -> Result<Option<Rows>> {
        let schema = super::columns::schema_of(&self.table)?;
        let Some(list) = schema.get("materialized_columns").and_then(Value::as_slice) else {
            return Ok(None);
        };
        let given = |name: &str| rows.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c);
        let mut filled = rows.clone();
        let n = rows.len() as usize;
        for g in list {
            let Some(name) = g.get("name").and_then(Value::as_str) else {
                continue;
            };
            if given(name).is_some() || self.table.column(name).is_err() {
                continue;
            }
            let refuse = |why: String| self.refuse(name, format!("a generated column: {why}"));
            let kind = g.get("transformer_kind").and_then(Value::as_str);
            if !matches!(kind, None | Some("expression")) {
                return Err(refuse(format!(
                    "its {} b2nd does not compute: give its values",
                    kind.unwrap_or("definition")
                )));
            }
            let text = g.get("expression").and_then(Value::as_str).unwrap_or("");
            let deps: Vec<&str> = g
                .get("col_deps")
                .and_then(Value::as_slice)
                .unwrap_or(&[])
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let missing: Vec<&str> = deps
                .iter()
                .copied()
                .filter(|d| given(d).is_none())
                .collect();
            if !missing.is_empty() {
                return Err(refuse(format!(
                    "its dependencies {missing:?} are not given (python-blosc2 refuses too)"
                )));
            }
            let e = Expression::parse(text).map_err(|why| refuse(format!("{text}: {why}")))?;
            let operands = deps
                .iter()
                .filter_map(|d| given(d).map(|c| self.operand(name, d, c)))
                .collect::<Result<Vec<_>>>()?;
            let dtype = self.table.column_array(name)?.dtype().clone();
            let values = e
                .eval(&operands, n)
                .and_then(|v| v.astype(&dtype.to_numpy_str()))
                .and_then(|v| v.to_le_bytes())
                .map_err(|why| refuse(format!("{text}: {why}")))?;
            filled.columns.push((
                name.to_string(),
                Cells::Fixed {
                    dtype,
                    bytes: values,
                    valid: None,
                },
            ));
        }
        Ok(Some(filled))
    }

    /// The values given for dependency `dep` of generated column `name` as an operand.
    fn operand(&self, name: &str, dep: &str, cells: &Cells) -> Result<Operand> {
        let refuse = |why: String| self.refuse(name, format!("a generated column: {why}"));
        if valid_has_null(cells) {
            return Err(refuse(format!(
                "a null given for its dependency {dep:?}: python-blosc2 computes it from the \
                 raw values given, which b2nd does not guess"
            )));
        }
        match cells {
            Cells::Strings(v) => Ok(Operand::Str(v.iter().flatten().cloned().collect())),
            Cells::Values(_) | Cells::Items { .. } => Err(refuse(format!(
                "{dep}: {} are not an expression's operand",
                cells.describe()
            ))),
            Cells::Fixed { dtype, bytes, .. } => {
                // Timestamps are their int64 counts.
                let s = match dtype {
                    Dtype::Datetime { .. } => "<i8".to_string(),
                    _ => dtype.to_numpy_str(),
                };
                Operand::from_le_bytes(&s, bytes).map_err(|why| refuse(format!("{dep}: {why}")))
            }
        }
    }
}

/// Whether `cells` holds a null.
fn valid_has_null(cells: &Cells) -> bool {
    match cells {
        Cells::Fixed { valid, .. } => valid.as_ref().is_some_and(|v| v.contains(&false)),
        Cells::Strings(v) => v.iter().any(Option::is_none),
        Cells::Values(v) => v.iter().any(Value::is_nil),
        Cells::Items { .. } => false,
    }
}
