//! The manifest (`_meta`): the cached row count, the epochs, stale indexes and generated
//! columns.

#![forbid(unsafe_code)]

use super::*;

impl TableMut {
    /// Whether the schema holds the cached count of live rows.
    pub(super) fn has_cached_count(&self) -> Result<bool> {
        let schema =
            crate::format::json::parse(self.table.schema_json()).map_err(|e| Error::Store {
                path: self.path.display().to_string(),
                reason: format!("table manifest: schema: {e}"),
            })?;
        Ok(matches!(&schema, Value::Map(fields)
            if fields.iter().any(|(k, _)| k.as_str() == Some("n_rows"))))
    }

    /// The file of the table's `_meta` manifest.
    pub(super) fn meta_file(&self) -> Result<PathBuf> {
        member_file(&self.table, &ctable::meta_key(self.table.root()))
    }
}

/// One change of `_meta`'s attributes (at `file`): the schema's `n_rows` set (`Some`) or removed
/// (`None`), the epoch counter `epoch` advanced (when not empty), and with `stale`
/// every index descriptor marked stale.
pub(super) fn edit_meta(
    t: &Table,
    file: &Path,
    n_rows: Option<u64>,
    epoch: &str,
    stale: bool,
    durability: Durability,
) -> Result<()> {
    edit_meta_columns(t, file, n_rows, (epoch, 1), stale, &[], durability)
}

/// [`edit_meta`] with the epoch counter advanced by `epoch.1`, and every materialized column
/// that depends (through others) on a column of `changed` marked stale (python-blosc2's
/// `_mark_generated_columns_stale`).
pub(super) fn edit_meta_columns(
    t: &Table,
    file: &Path,
    n_rows: Option<u64>,
    (epoch, by): (&str, i64),
    stale: bool,
    changed: &[&str],
    durability: Durability,
) -> Result<()> {
    let meta = t.store().open_schunk(&ctable::meta_key(t.root()))?;
    let bad = |reason: String| Error::Store {
        path: t.store().path().display().to_string(),
        reason: format!("table manifest: {reason}"),
    };
    let mut schema =
        crate::format::json::parse(t.schema_json()).map_err(|e| bad(format!("schema: {e}")))?;
    let Value::Map(fields) = &mut schema else {
        return Err(bad("the schema is not a JSON object".into()));
    };
    fields.retain(|(k, _)| k.as_str() != Some("n_rows"));
    if let Some((_, Value::Array(generated))) = fields
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some("materialized_columns"))
    {
        mark_generated_stale(generated, changed);
    }
    if let Some(n) = n_rows {
        fields.push((Value::Str("n_rows".into()), Value::Int(n as i64)));
    }
    let mut attrs = vec![(
        "schema".to_string(),
        Value::Str(crate::format::json::write(&schema)),
    )];
    if !epoch.is_empty() {
        let now = meta.attr(epoch)?.and_then(|v| v.as_i64()).unwrap_or(0);
        attrs.push((epoch.to_string(), Value::Int(now + by)));
    }
    if stale {
        if let Some(catalog) = meta.attr("index_catalog")? {
            if let Some(marked) = derived::table_catalog_stale(&catalog) {
                attrs.push(("index_catalog".to_string(), marked));
            }
        }
    }
    let attrs: Vec<(&str, Value)> = attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    set_attrs_with(file, &attrs, durability)
}

/// Mark stale the materialized columns of `generated` (the schema's `materialized_columns`
/// entries) that depend, directly or through each other, on a column of `changed`.
pub(super) fn mark_generated_stale(generated: &mut [Value], changed: &[&str]) {
    let deps = |v: &Value| -> Vec<String> {
        v.get("col_deps")
            .and_then(Value::as_slice)
            .map(|l| {
                l.iter()
                    .filter_map(|d| d.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let name = |v: &Value| v.get("name").and_then(Value::as_str).map(String::from);
    let mut affected: Vec<String> = Vec::new();
    let mut queue: Vec<String> = changed.iter().map(|s| s.to_string()).collect();
    while let Some(current) = queue.pop() {
        for g in generated.iter() {
            if let Some(n) = name(g) {
                if !affected.contains(&n) && deps(g).contains(&current) {
                    affected.push(n.clone());
                    queue.push(n);
                }
            }
        }
    }
    for g in generated.iter_mut() {
        if name(g).is_some_and(|n| affected.contains(&n)) {
            if let Value::Map(fields) = g {
                match fields.iter_mut().find(|(k, _)| k.as_str() == Some("stale")) {
                    Some((_, v)) => *v = Value::Bool(true),
                    None => fields.push((Value::Str("stale".into()), Value::Bool(true))),
                }
            }
        }
    }
}
