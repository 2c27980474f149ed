//! Rows of `dictionary` columns written as python-blosc2's `DictionaryColumn` writes them:
//! each value's `int32` code in the codes array at `_cols/<name>` (the column's `null_code`,
//! -1 unless declared, for a null), a value not in the dictionary yet given the next code and
//! appended, in first-seen order, to the values BatchArray `_cols/<name>_dict` as one batch
//! (python's `extend` followed by `close` flushes its new values as one).
//!
//! The new values are published before the codes that use them: a change stopped between
//! the two leaves values no live row uses, which python-blosc2 and b2nd read past (a
//! dictionary-rank index then reads as stale, as after python's own appends).

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::path::Path;

use super::{Cells, Encoded, Items, TableMut};
use crate::error::Result;
use crate::format::ctable::Part;
use crate::model::attrs::Value;
use crate::model::durability::Durability;
use crate::table::Column;

impl TableMut {
    /// Dictionary column `c`'s `n` rows: the text given (or its default) as codes, and the
    /// values the dictionary gains.
    pub(super) fn encode_dictionary(
        &self,
        c: &Column,
        given: Option<&Cells>,
        n: usize,
    ) -> Result<Encoded> {
        let values = self.given_strings(c, given, n, "a dictionary")?;
        let null_code = match c.spec().get("null_code") {
            None | Some(Value::Nil) => -1,
            Some(v) => v
                .as_i64()
                .and_then(|k| i32::try_from(k).ok())
                .ok_or_else(|| self.refuse(c.name(), format!("its null_code {v:?}")))?,
        };
        let known = self.dictionary_values(c)?;
        let mut codes_of: HashMap<&str, i32> = HashMap::with_capacity(known.len());
        for (k, v) in known.iter().enumerate() {
            if let Value::Str(s) = v {
                codes_of.entry(s.as_str()).or_insert(k as i32);
            }
        }
        let mut added: Vec<String> = Vec::new();
        let mut new_codes: HashMap<String, i32> = HashMap::new();
        let mut codes = Vec::with_capacity(4 * n);
        for (row, v) in values.iter().enumerate() {
            let code = match v {
                None if !c.nullable() => {
                    return Err(self.refuse(
                        c.name(),
                        format!("row {row} is null and the column is not nullable"),
                    ))
                }
                None => null_code,
                Some(s) => match codes_of.get(s.as_str()).or_else(|| new_codes.get(s)) {
                    Some(&k) => k,
                    None => {
                        let k = i32::try_from(known.len() + added.len())
                            .ok()
                            .filter(|&k| k != null_code)
                            .ok_or_else(|| {
                                self.refuse(c.name(), "the dictionary is full".into())
                            })?;
                        new_codes.insert(s.clone(), k);
                        added.push(s.clone());
                        k
                    }
                },
            };
            codes.extend_from_slice(&code.to_le_bytes());
        }
        Ok(Encoded {
            name: c.name().to_string(),
            items: Items::Dictionary { codes, added },
            mask: None,
        })
    }

    /// The values of dictionary column `c`, by code.
    fn dictionary_values(&self, c: &Column) -> Result<Vec<Value>> {
        let t = &self.table;
        t.store()
            .open_schunk(&t.key(c.name(), Part::Dict))?
            .read_objects()
    }

    /// The dictionary file of column `name`.
    pub(super) fn dictionary_file(&self, name: &str) -> Result<std::path::PathBuf> {
        super::member_file(&self.table, &self.table.key(name, Part::Dict))
    }
}

/// The values `added` appended to the dictionary file `file` as one batch.
pub(super) fn add_values(file: &Path, added: &[String], durability: Durability) -> Result<()> {
    let items: Vec<Value> = added.iter().cloned().map(Value::Str).collect();
    crate::write::batch::write_items(file, crate::write::batch::At::End, &items, durability)
}
