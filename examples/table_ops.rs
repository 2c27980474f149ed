//! One change of a table through the library's `TableMut`, described in JSON:
//! `scripts/diff_table_mut.py` draws these beside `b2nd sql --write` and python-blosc2's own
//! changes.
//!
//! ```text
//! table_ops TABLE '{"op": "append", "columns": COLUMNS}'
//! table_ops TABLE '{"op": "delete", "rows": [POSITION, ...]}'
//! table_ops TABLE '{"op": "update", "rows": [POSITION, ...], "columns": COLUMNS}'
//! table_ops TABLE '{"op": "add_column", "name": NAME, "default": INT}'     # an int32 column
//! table_ops TABLE '{"op": "rename_column", "old": NAME, "new": NAME}'
//! table_ops TABLE '{"op": "drop_column", "name": NAME}'
//! ```
//! COLUMNS maps a column's name to `{"type": T, "values": [...]}`, `null` a null, T one of
//! `i64`, `i32`, `bool`, `f64bits` (a float64 given by its IEEE bits, so that no decimal
//! parsing stands between the harness and the value), `ts_ms` (counts of milliseconds),
//! `str` (string, utf8 and dictionary columns) and `ints` (a list column: lists of
//! integers). Positions are among live rows, as python-blosc2 takes them. Prints
//! `{"count": N}` (rows changed; 0 for column changes); an error is one line on stderr and
//! exit status 1.

use b2nd::{NewColumn, Rows, TableMut, Value};
use serde_json::Value as Json;

type Failure = Box<dyn std::error::Error>;

fn main() {
    if let Err(e) = run() {
        eprintln!("table_ops: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, op] = args.as_slice() else {
        return Err("usage: table_ops TABLE JSON".into());
    };
    let op: Json = serde_json::from_str(op)?;
    let mut t = TableMut::open(path)?;
    let text = |key: &str| -> Result<&str, Failure> {
        op[key]
            .as_str()
            .ok_or_else(|| format!("{key:?}: a string").into())
    };
    let count = match text("op")? {
        "append" => t.append(&rows(&op["columns"])?)?,
        "delete" => t.delete(&positions(&op["rows"])?)?,
        "update" => t.update(&positions(&op["rows"])?, &rows(&op["columns"])?)?,
        "add_column" => {
            let default = op["default"].as_i64().ok_or("\"default\": an integer")?;
            let column = NewColumn::of::<i32>().default(Value::Int(default));
            t.add_column(text("name")?, &column)?;
            0
        }
        "rename_column" => {
            t.rename_column(text("old")?, text("new")?)?;
            0
        }
        "drop_column" => {
            t.drop_column(text("name")?)?;
            0
        }
        other => return Err(format!("unknown op {other:?}").into()),
    };
    println!("{}", serde_json::json!({ "count": count }));
    Ok(())
}

fn positions(rows: &Json) -> Result<Vec<u64>, Failure> {
    let rows = rows.as_array().ok_or("\"rows\": a list of positions")?;
    rows.iter()
        .map(|p| p.as_u64().ok_or_else(|| format!("position {p}").into()))
        .collect()
}

/// The values of `v` (a list), `None` for each `null`, through `item`.
fn cells<T>(v: &Json, item: impl Fn(&Json) -> Option<T>) -> Result<Vec<Option<T>>, Failure> {
    let values = v.as_array().ok_or("\"values\": a list")?;
    values
        .iter()
        .map(|x| match x {
            Json::Null => Ok(None),
            x => item(x).map(Some).ok_or_else(|| format!("value {x}").into()),
        })
        .collect()
}

fn rows(columns: &Json) -> Result<Rows, Failure> {
    let columns = columns.as_object().ok_or("\"columns\": an object")?;
    let mut rows = Rows::new();
    for (name, c) in columns {
        let v = &c["values"];
        rows = match c["type"].as_str().unwrap_or_default() {
            "i64" => rows.column_opt(name, &cells(v, Json::as_i64)?)?,
            "i32" => rows.column_opt(name, &cells(v, |x| i32::try_from(x.as_i64()?).ok())?)?,
            "bool" => rows.column_opt(name, &cells(v, Json::as_bool)?)?,
            "f64bits" => {
                rows.column_opt(name, &cells(v, |x| Some(f64::from_bits(x.as_u64()?)))?)?
            }
            "ts_ms" => rows.timestamps(name, "ms", &cells(v, Json::as_i64)?)?,
            "str" => {
                let s = cells(v, |x| x.as_str().map(str::to_string))?;
                let s: Vec<Option<&str>> = s.iter().map(Option::as_deref).collect();
                rows.strings(name, &s)?
            }
            "ints" => {
                let list = |x: &Json| -> Option<Value> {
                    let items = x.as_array()?.iter().map(|i| i.as_i64().map(Value::Int));
                    Some(Value::Array(items.collect::<Option<_>>()?))
                };
                let lists = cells(v, list)?;
                let lists: Vec<Value> =
                    lists.into_iter().map(|l| l.unwrap_or(Value::Nil)).collect();
                rows.values(name, &lists)?
            }
            other => return Err(format!("column {name:?}: unknown type {other:?}").into()),
        };
    }
    Ok(rows)
}
