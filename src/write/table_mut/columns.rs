//! Changes of a table's columns ([`TableMut::rename_column`], [`TableMut::drop_column`]) and
//! deletes by predicate ([`TableMut::delete_where`]).
//!
//! A column change moves or removes files and rewrites the schema in `_meta` together, so it
//! is published as one: the table directory is staged beside itself (every file hard-linked,
//! `_meta` copied), the staged tree changed, and the two directories exchanged
//! (`renameat2(RENAME_EXCHANGE)`). Readers see the whole old table or the whole new one; a
//! crash leaves the old table and a staging directory (`.NAME.b2nd-*.tmp` beside it), which
//! the next [`TableMut::open`] removes. `_valid_rows` is linked, not copied: the writer's
//! lock (on its file) holds across the exchange.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use super::{link_tree, member_file, TableMut};
use crate::error::{Error, Result};
use crate::format::ctable::{self, Part};
use crate::model::attrs::Value;
use crate::model::durability::Durability;
use crate::table::Table;

/// The prefix of the staging directories of the table at `path`, beside it.
pub(super) fn staging_prefix(path: &Path) -> String {
    format!(
        ".{}.b2nd-",
        path.file_name().unwrap_or_default().to_string_lossy()
    )
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::Io { path, source }
}

/// Parse the schema JSON of `t`.
pub(super) fn schema_of(t: &Table) -> Result<Value> {
    crate::format::json::parse(t.schema_json()).map_err(|e| Error::Store {
        path: t.store().path().display().to_string(),
        reason: format!("table manifest: schema: {e}"),
    })
}

/// The entries of list `list` (`computed_columns`, `materialized_columns`) of a schema.
fn entries<'a>(schema: &'a Value, list: &str) -> &'a [Value] {
    schema.get(list).and_then(Value::as_slice).unwrap_or(&[])
}

/// The mutable list `list` of a schema, if it has one.
fn entries_mut<'a>(schema: &'a mut Value, list: &str) -> Option<&'a mut Vec<Value>> {
    match schema {
        Value::Map(fields) => fields
            .iter_mut()
            .find(|(k, _)| k.as_str() == Some(list))
            .and_then(|(_, v)| match v {
                Value::Array(items) => Some(items),
                _ => None,
            }),
        _ => None,
    }
}

fn name_of(v: &Value) -> Option<&str> {
    v.get("name").and_then(Value::as_str)
}

/// Set string field `key` of map `v` to `to`.
fn set_str(v: &mut Value, key: &str, to: &str) {
    if let Value::Map(fields) = v {
        if let Some((_, x)) = fields.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
            *x = Value::Str(to.to_string());
        }
    }
}

/// The computed and materialized columns that use column `name`: through their `col_deps`,
/// or (materialized) as the computed column they were made from.
fn dependents(schema: &Value, name: &str) -> Vec<String> {
    let uses = |e: &Value| {
        e.get("col_deps")
            .and_then(Value::as_slice)
            .is_some_and(|d| d.iter().any(|x| x.as_str() == Some(name)))
            || e.get("computed_column").and_then(Value::as_str) == Some(name)
    };
    ["computed_columns", "materialized_columns"]
        .iter()
        .flat_map(|list| entries(schema, list))
        .filter(|e| uses(e))
        .filter_map(|e| name_of(e).map(String::from))
        .collect()
}

/// Apply `f` to every string under a `path` or `*_path` key of an index descriptor (the
/// keys python-blosc2's `_walk_descriptor_paths` visits).
fn for_each_path(d: &mut Value, f: &mut impl FnMut(&mut String)) {
    match d {
        Value::Map(fields) => {
            for (k, v) in fields.iter_mut() {
                let is_path = k
                    .as_str()
                    .is_some_and(|k| k == "path" || k.ends_with("_path"));
                match v {
                    Value::Str(s) if is_path => f(s),
                    _ => for_each_path(v, f),
                }
            }
        }
        Value::Array(items) | Value::Tuple(items) => {
            items.iter_mut().for_each(|v| for_each_path(v, f));
        }
        _ => {}
    }
}

/// Write `schema` and `catalog` to the `_meta` file `file` (a staged copy).
pub(super) fn write_manifest(
    file: &Path,
    schema: &Value,
    catalog: Option<Value>,
    durability: Durability,
) -> Result<()> {
    let mut attrs = vec![("schema", Value::Str(crate::format::json::write(schema)))];
    if let Some(c) = catalog {
        attrs.push(("index_catalog", c));
    }
    super::set_attrs_with(file, &attrs, durability)
}

impl TableMut {
    /// Delete the live rows whose value in column `column` (as [`Table::read_values`] gives
    /// it: `Nil` for a null) satisfies `pred`; returns the rows deleted. The values are
    /// read and the rows deleted under the writer's lock: one [`TableMut::delete`].
    ///
    /// ```
    /// use b2nd::{Table, TableBuilder, TableMut};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.b2d");
    /// TableBuilder::new().column("id", &[1i64, 2, 3, 4])?.write(&path)?;
    /// let mut t = TableMut::open(&path)?;
    /// assert_eq!(t.delete_where("id", |v| v.as_i64().is_some_and(|i| i % 2 == 0))?, 2);
    /// assert_eq!(Table::open(&path)?.read_column::<i64>("id")?, [1, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn delete_where(
        &mut self,
        column: &str,
        mut pred: impl FnMut(&Value) -> bool,
    ) -> Result<u64> {
        let rows: Vec<u64> = self
            .table
            .read_values(column)?
            .iter()
            .zip(0u64..)
            .filter(|(v, _)| pred(v))
            .map(|(_, i)| i)
            .collect();
        self.delete(&rows)
    }
}

/// python-blosc2's rule for a column name (`_validate_column_name`): not empty, not starting
/// with `_` (kept for the table's own members).
pub(super) fn check_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() {
        Err("a column name cannot be empty".into())
    } else if name.starts_with('_') {
        Err("a column name cannot start with '_' (python-blosc2 keeps those for the table's own members)".into())
    } else {
        Ok(())
    }
}

impl TableMut {
    /// Rename column `old` to `new`, as python-blosc2's `CTable.rename_column` does: its
    /// files (values, `.notnull` mask and other companions) and its summary index move
    /// with it (a dotted `new` nests it: `trip.lon` is stored under `_cols/trip/lon`), the
    /// schema keeps its place and everything else. Refused, with nothing changed: a name
    /// taken or not allowed (empty, starting with `_`), a column a computed or materialized
    /// column uses, and a column with an index other than the summary python builds (python
    /// rebuilds it under the new name; b2nd cannot).
    pub fn rename_column(&mut self, old: &str, new: &str) -> Result<()> {
        check_name(new).map_err(|why| self.refuse(new, why))?;
        let t = &self.table;
        let c = t.column(old)?.clone();
        if t.column(new).is_ok() {
            return Err(self.refuse(new, "a column of that name exists".into()));
        }
        let mut schema = schema_of(t)?;
        self.refuse_if_used(&schema, old)?;
        let mut catalog = self.catalog()?;
        // Moves inside the staged tree (paths relative to the table's directory).
        let mut moves: Vec<(PathBuf, PathBuf)> = Vec::new();
        if let Some(Value::Map(indexes)) = &mut catalog {
            if let Some((key, d)) = indexes.iter_mut().find(|(k, _)| k.as_str() == Some(old)) {
                let kind = d.get("kind").and_then(Value::as_str).unwrap_or("unknown");
                if kind != "summary" {
                    return Err(self.refuse(
                        old,
                        format!(
                            "it has a {kind} index, which python-blosc2 rebuilds under the new \
                             name and b2nd cannot: rename it with python-blosc2, or drop the index"
                        ),
                    ));
                }
                *key = Value::Str(new.to_string());
                if d.get("token").and_then(Value::as_str) == Some(old) {
                    set_str(d, "token", new);
                }
                let (from, to) = (
                    format!("{}/{old}/", ctable::INDEXES),
                    format!("{}/{new}/", ctable::INDEXES),
                );
                for_each_path(d, &mut |p| {
                    if let Some(rest) = p.strip_prefix(&from) {
                        *p = format!("{to}{rest}");
                    }
                });
                let (Some(from), Some(to)) = (ctable::index_dir(old), ctable::index_dir(new))
                else {
                    return Err(self.refuse(
                        new,
                        "its index directory (_indexes/<name>) would not be a path inside the \
                         table"
                            .into(),
                    ));
                };
                moves.push((from, to));
            }
        }
        let list = if c.computed().is_some() {
            "computed_columns"
        } else {
            "columns"
        };
        for list in [list, "materialized_columns"] {
            for e in entries_mut(&mut schema, list).into_iter().flatten() {
                if name_of(e) == Some(old) {
                    set_str(e, "name", new);
                }
            }
        }
        if c.computed().is_none() {
            for (file, part) in self.column_files(old)? {
                let key = t.key(new, part);
                let to = format!("{}{}", key.trim_start_matches('/'), ext_of(&file));
                moves.push((self.relative(&file)?, PathBuf::from(to)));
            }
        }
        let meta = self.relative(&self.meta_file()?)?;
        let durability = self.durability;
        self.restage(|stage| {
            for (from, to) in &moves {
                let (from, to) = (stage.join(from), stage.join(to));
                if std::fs::symlink_metadata(&from).is_err() {
                    continue;
                }
                if let Some(dir) = to.parent() {
                    std::fs::create_dir_all(dir).map_err(io(dir))?;
                }
                std::fs::rename(&from, &to).map_err(io(&from))?;
            }
            write_manifest(&stage.join(&meta), &schema, catalog, durability)
        })
    }

    /// Drop column `name`, as python-blosc2's `CTable.drop_column` (a stored column: its
    /// files, its index and the index's files removed) or `drop_computed_column` (a computed
    /// one: its definition) does. Refused, with nothing changed: the last stored column, and
    /// a column a computed or materialized column uses.
    pub fn drop_column(&mut self, name: &str) -> Result<()> {
        let t = &self.table;
        let c = t.column(name)?.clone();
        let mut schema = schema_of(t)?;
        self.refuse_if_used(&schema, name)?;
        let stored = t
            .columns()
            .iter()
            .filter(|c| c.computed().is_none())
            .count();
        if c.computed().is_none() && stored == 1 {
            return Err(self.refuse(name, "the last stored column cannot be dropped".into()));
        }
        let mut catalog = self.catalog()?;
        let mut remove: Vec<PathBuf> = Vec::new();
        if let Some(Value::Map(indexes)) = &mut catalog {
            if let Some(at) = indexes.iter().position(|(k, _)| k.as_str() == Some(name)) {
                let (_, mut d) = indexes.remove(at);
                for_each_path(&mut d, &mut |p| {
                    let p = Path::new(p.as_str());
                    // Only files inside the table: a descriptor naming another place is
                    // python's to tidy.
                    if p.is_relative()
                        && !p.components().any(|c| c == std::path::Component::ParentDir)
                    {
                        remove.push(p.to_path_buf());
                    }
                });
                // A name that is no plain path (`..`, `/x`) names no directory of the table.
                remove.extend(ctable::index_dir(name));
            }
        }
        let list = if c.computed().is_some() {
            "computed_columns"
        } else {
            "columns"
        };
        for list in [list, "materialized_columns"] {
            if let Some(items) = entries_mut(&mut schema, list) {
                items.retain(|e| name_of(e) != Some(name));
            }
        }
        if c.computed().is_none() {
            for (file, _) in self.column_files(name)? {
                remove.push(self.relative(&file)?);
            }
        }
        let meta = self.relative(&self.meta_file()?)?;
        let durability = self.durability;
        self.restage(|stage| {
            for p in &remove {
                let p = stage.join(p);
                match std::fs::symlink_metadata(&p) {
                    Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p).map_err(io(&p))?,
                    Ok(_) => std::fs::remove_file(&p).map_err(io(&p))?,
                    Err(_) => {}
                }
            }
            write_manifest(&stage.join(&meta), &schema, catalog, durability)
        })
    }

    /// A refusal when a computed or materialized column of `schema` uses column `name`.
    fn refuse_if_used(&self, schema: &Value, name: &str) -> Result<()> {
        let users = dependents(schema, name);
        if users.is_empty() {
            return Ok(());
        }
        Err(self.refuse(
            name,
            format!("it is used by computed or materialized column(s) {users:?}: drop those first"),
        ))
    }

    /// The table's index catalog (`_meta`'s `index_catalog`), if it has one.
    fn catalog(&self) -> Result<Option<Value>> {
        let t = &self.table;
        t.store()
            .open_schunk(&ctable::meta_key(t.root()))?
            .attr("index_catalog")
    }

    /// The files of stored column `name` and its companions (the `.notnull` mask, a `utf8`
    /// column's bytes, a `dictionary` column's values), each with its part.
    fn column_files(&self, name: &str) -> Result<Vec<(PathBuf, Part)>> {
        let t = &self.table;
        Part::ALL
            .iter()
            .map(|&p| (t.key(name, p), p))
            .filter(|(k, _)| t.store().contains(k))
            .map(|(k, p)| Ok((member_file(t, &k)?, p)))
            .collect()
    }

    /// `file` (inside the table's directory) relative to it.
    pub(super) fn relative(&self, file: &Path) -> Result<PathBuf> {
        file.strip_prefix(&self.path)
            .map(Path::to_path_buf)
            .map_err(|_| Error::Store {
                path: self.path.display().to_string(),
                reason: format!("{} is not a file of the table's directory", file.display()),
            })
    }

    /// Stage the table's directory beside itself (files hard-linked, `_meta` copied), let
    /// `change` edit the staged tree (its root given), and exchange the two directories.
    pub(super) fn restage(&mut self, change: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        self.restage_copying(&[], change)
    }

    /// [`TableMut::restage`] with the files `copy` (paths in the table) copied, not linked,
    /// for `change` to write; returns what `change` returns.
    pub(super) fn restage_copying<T>(
        &mut self,
        copy: &[PathBuf],
        change: impl FnOnce(&Path) -> Result<T>,
    ) -> Result<T> {
        let parent = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let staging = tempfile::Builder::new()
            .prefix(&staging_prefix(&self.path))
            .suffix(".tmp")
            .tempdir_in(&parent)
            .map_err(io(&parent))?;
        let stage = staging.path().join("table");
        let mut copies = copy.to_vec();
        copies.push(self.meta_file()?);
        link_tree(&self.path, &stage, &copies)?;
        let out = change(&stage)?;
        if self.durability == Durability::Disk {
            crate::write::staging::sync_tree(&stage).map_err(io(&stage))?;
        }
        crate::write::staging::replace(&stage, &self.path).map_err(io(&self.path))?;
        drop(staging);
        self.table = Table::open(&self.path)?;
        self.published()?;
        Ok(out)
    }
}

/// The extension of a member file (`.b2nd`, `.b2f`, `.b2b`).
fn ext_of(file: &Path) -> String {
    file.extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default()
}
