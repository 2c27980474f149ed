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

/// List the store at `path`: one JSON object, or a readable listing.
pub(crate) fn run(path: &Path, as_json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let store = Store::open(path)?;
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
