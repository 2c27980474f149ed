//! [`TableMut::set_attrs`] and [`TableMut::delete_attrs`]: the table's user attributes
//! (python-blosc2's `CTable.attrs`), kept in the vlmeta of the `_vlmeta` super-chunk. An
//! existing `_vlmeta` is changed in place (one journaled change, as
//! [`crate::write::set_attrs`]); a table without one gets it through a staged copy of the
//! table published by one directory exchange (see `columns`).

#![forbid(unsafe_code)]

use std::path::PathBuf;

use super::{member_file, TableMut};
use crate::error::{Error, Result};
use crate::model::attrs::Value;
use crate::write::edit::{delete_attrs_with, set_attrs_with};

impl TableMut {
    /// Set user attributes of the table (as python-blosc2's `t.attrs[name] = value`), one
    /// change for all of them; names have 1 to 31 bytes.
    ///
    /// ```
    /// use b2nd::{Table, TableBuilder, TableMut, Value};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.b2d");
    /// TableBuilder::new().column("id", &[1i64, 2])?.write(&path)?;
    /// let mut t = TableMut::open(&path)?;
    /// t.set_attrs(&[("author", Value::Str("Alice".into())), ("count", Value::Int(42))])?;
    /// t.delete_attrs(&["count"])?;
    /// let t = Table::open(&path)?;
    /// assert_eq!(t.attrs()?, [("author".to_string(), Value::Str("Alice".into()))]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_attrs(&mut self, attrs: &[(&str, Value)]) -> Result<()> {
        let durability = self.durability;
        match self.vlmeta_file()? {
            Some(file) => {
                set_attrs_with(&file, attrs, durability)?;
                self.published()?;
            }
            None => {
                let rel = PathBuf::from(format!(
                    "{}_vlmeta.b2f",
                    self.table.root().trim_start_matches('/')
                ));
                let frame = crate::write::store::attrs_frame(&[])?;
                self.restage(|stage| {
                    let file = stage.join(&rel);
                    std::fs::write(&file, &frame).map_err(|source| Error::Io {
                        path: file.clone(),
                        source,
                    })?;
                    set_attrs_with(&file, attrs, durability)
                })?;
            }
        }
        self.table = crate::table::Table::open(&self.path)?;
        Ok(())
    }

    /// Delete user attributes of the table (as python-blosc2's `del t.attrs[name]`), one
    /// change; an absent name is an error and nothing is changed then.
    pub fn delete_attrs(&mut self, names: &[&str]) -> Result<()> {
        match self.vlmeta_file()? {
            Some(file) => {
                delete_attrs_with(&file, names, self.durability)?;
                self.published()?;
            }
            None if names.is_empty() => {}
            None => {
                return Err(Error::Attr {
                    source_name: self.path.display().to_string(),
                    name: names[0].to_string(),
                    reason: "the table has no user attributes".into(),
                })
            }
        }
        self.table = crate::table::Table::open(&self.path)?;
        Ok(())
    }

    /// The file of the table's `_vlmeta`, if it has one.
    fn vlmeta_file(&self) -> Result<Option<PathBuf>> {
        let key = format!("{}/_vlmeta", self.table.root());
        if !self.table.store().contains(&key) {
            return Ok(None);
        }
        member_file(&self.table, &key).map(Some)
    }
}
