//! `b2nd ls`: what a store holds.

use std::fmt::Write as _;
use std::path::Path;

use b2nd::{MemberKind, Store};
use serde_json::{json, Value as J};

/// One listed key.
struct Entry {
    key: String,
    kind: String,
    /// For N-d arrays: shape and dtype.
    array: Option<(Vec<u64>, String)>,
}

fn entries(store: &Store) -> b2nd::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for key in store.keys() {
        let kind = store.member_kind(&key)?;
        let array = if kind == MemberKind::NdArray {
            let a = store.open_array(&key)?;
            Some((a.shape().to_vec(), a.dtype_str()))
        } else {
            None
        };
        out.push(Entry {
            key,
            kind: kind.name().to_string(),
            array,
        });
    }
    Ok(out)
}

/// List a table: its live rows and columns (a dtype for fixed-width columns, else the
/// schema kind).
fn table(path: &Path, store: Store, as_json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let t = store.open_table("/")?;
    let mut cols = Vec::new();
    for c in t.columns() {
        let mut j = json!({"name": c.name()});
        if c.is_fixed_width() && c.computed().is_some_and(|cc| cc.evaluable().is_err()) {
            j["dtype"] = json!(c.computed().map(|cc| cc.dtype()));
        } else if c.is_fixed_width() {
            let (dtype, item) = t.column_dtype(c.name())?;
            j["dtype"] = json!(dtype.to_numpy_str());
            if !item.is_empty() {
                j["shape"] = json!(item);
            }
        } else {
            j["kind"] = json!(c.kind().as_str());
        }
        if c.nullable() {
            j["nullable"] = json!(true);
        }
        if let Some(cc) = c.computed() {
            j["computed"] = json!(cc.readable());
            if let Err(why) = cc.evaluable() {
                j["not_evaluated"] = json!(why);
            }
        }
        cols.push(j);
    }
    if as_json {
        let obj = json!({"kind": "ctable", "n_rows": t.n_rows(), "columns": cols});
        return crate::emit(&format!("{}\n", serde_json::to_string(&obj)?));
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}: ctable, {} ({} deleted), {}",
        path.display(),
        crate::count(t.n_rows(), "row"),
        t.physical_rows() - t.n_rows(),
        crate::count(cols.len() as u64, "column")
    );
    let width = t
        .columns()
        .iter()
        .map(|c| c.name().len())
        .max()
        .unwrap_or(0);
    for c in &cols {
        let name = c["name"].as_str().unwrap_or("");
        let what = c["dtype"].as_str().or(c["kind"].as_str()).unwrap_or("");
        let _ = write!(o, "  {name:width$}  {what}");
        if let Some(shape) = c.get("shape") {
            let _ = write!(o, "  item shape {shape}");
        }
        if c.get("nullable").is_some() {
            o.push_str("  nullable");
        }
        if let Some(e) = c["computed"].as_str() {
            let _ = write!(o, "  computed: {e}");
        }
        if let Some(why) = c["not_evaluated"].as_str() {
            let _ = write!(o, " (not evaluated: {why})");
        }
        o.push('\n');
    }
    crate::emit(&o)
}

/// List the store at `path`: one JSON object, or a readable listing.
pub(crate) fn run(path: &Path, as_json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let store = crate::open_store(path)?;
    if store.is_table() {
        return table(path, store, as_json);
    }
    let entries = entries(&store)?;
    if as_json {
        let members: Vec<J> = entries
            .iter()
            .map(|e| {
                let mut m = json!({"key": e.key, "kind": e.kind});
                if let Some((shape, dtype)) = &e.array {
                    m["shape"] = json!(shape);
                    m["dtype"] = json!(dtype);
                }
                m
            })
            .collect();
        let obj = json!({"kind": store.kind().name(), "members": members});
        let mut line = serde_json::to_string(&obj)?;
        line.push('\n');
        return crate::emit(&line);
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}: {} ({}), {}",
        path.display(),
        store.kind(),
        store.format(),
        crate::count(entries.len() as u64, "key")
    );
    let width = entries.iter().map(|e| e.key.len()).max().unwrap_or(0);
    for e in &entries {
        let _ = write!(o, "  {:width$}  {}", e.key, e.kind);
        if let Some((shape, dtype)) = &e.array {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            let _ = write!(o, "  ({})  {dtype}", dims.join(", "));
        }
        o.push('\n');
    }
    crate::emit(&o)
}
