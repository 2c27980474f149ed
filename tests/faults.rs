//! The fault matrix: every kind of write (new files, overwrites, sparse directories,
//! streaming, stores, tables, attribute edits, every in-place change) under a full disk
//! at many amounts of free space, and under `kill -9` at random moments. Whatever happens,
//! the target holds the whole old or the whole new contents (compared as values: shape,
//! dtype, data, attributes, store keys, table columns), a failed write leaves nothing behind,
//! and a killed one leaves at most hidden temporaries (`.b2nd-*`) (and, inside a file
//! changed in place, unpublished bytes past its frame).
//!
//! The full-disk half needs root (a small tmpfs). `B2ND_FAULT_KILLS` sets the kills per case
//! (default 6); `B2ND_FAULT_OUT` keeps the killed table changes for python-blosc2's check
//! (`scripts/check_table_kills.py`).

use std::io::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use b2nd::{ArrayBuilder, ArrayMut, Codec, StoreBuilder, StoreKind, TableBuilder, Target, Value};

mod common;
use common::noise;
use common::tmpfs::{names, Filler, Tmpfs};

/// Size of the new data a write puts down (incompressible: needs this much space).
const NEW: usize = 400 << 10;
/// Size of the old contents a target starts with.
const OLD: usize = 60 << 10;

/// One kind of write: `prepare` puts the old target (if any) in a directory and returns the
/// target's path; `run` makes the write.
struct Case {
    name: &'static str,
    prepare: fn(&Path) -> PathBuf,
    run: fn(&Path) -> b2nd::Result<()>,
}

fn u8_array(n: usize) -> ArrayBuilder {
    ArrayBuilder::for_type::<u8>(&[n as u64])
        .chunks(&[16 << 10])
        .codec(Codec::Lz4)
}

fn old_file(dir: &Path) -> PathBuf {
    let p = dir.join("a.b2nd");
    u8_array(OLD)
        .attr("note", Value::Str("old".into()))
        .write(Target::File(p.clone()), &noise(OLD))
        .unwrap();
    p
}

fn old_sparse(dir: &Path) -> PathBuf {
    let p = dir.join("a.b2nd.d");
    u8_array(OLD)
        .attr("note", Value::Str("old".into()))
        .write(Target::Sparse(p.clone()), &noise(OLD))
        .unwrap();
    p
}

/// A contiguous array with dead space (an overwritten region), for `compact`.
fn old_file_with_dead_space(dir: &Path) -> PathBuf {
    let p = old_file(dir);
    let mut m = ArrayMut::open(&p).unwrap();
    m.write_region(&b2nd::Region::new([0], [OLD as u64]), &noise(OLD + 1)[1..])
        .unwrap();
    p
}

fn old_sparse_with_dead_space(dir: &Path) -> PathBuf {
    let p = old_sparse(dir);
    let mut m = ArrayMut::open(&p).unwrap();
    m.write_region(&b2nd::Region::new([0], [OLD as u64]), &noise(OLD + 1)[1..])
        .unwrap();
    p
}

fn store_frame(n: usize, salt: u8) -> Vec<u8> {
    let data: Vec<u8> = noise(n).iter().map(|b| b ^ salt).collect();
    u8_array(n).to_vec(&data).unwrap()
}

fn store(dir: &Path, name: &str, n: usize, salt: u8, overwrite: bool) -> b2nd::Result<PathBuf> {
    let p = dir.join(name);
    let mut s = StoreBuilder::new(StoreKind::TreeStore).overwrite(overwrite);
    s.insert("/x", store_frame(n, salt))?;
    s.insert("/g/y", store_frame(n / 2, salt ^ 0x55))?;
    s.write(&p)?;
    Ok(p)
}

fn table(dir: &Path, n: usize, salt: u8, overwrite: bool) -> b2nd::Result<PathBuf> {
    let p = dir.join("t.b2z");
    let col: Vec<u64> = noise(n * 8)
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()) ^ u64::from(salt))
        .collect();
    TableBuilder::new()
        .overwrite(overwrite)
        .column("x", &col)?
        .write(&p)?;
    Ok(p)
}

/// A `.b2d` table (`t.b2d`) of `n` rows: `x` (u64 noise) and a nullable `y` with nulls (its
/// mask exists, so an append makes no new file).
fn table_dir(dir: &Path, n: usize) -> PathBuf {
    let p = dir.join("t.b2d");
    let (x, y, valid) = table_rows(n, 1);
    TableBuilder::new()
        .column("x", &x)
        .unwrap()
        .nullable_column("y", &y, &valid)
        .unwrap()
        .write(&p)
        .unwrap();
    p
}

/// python-blosc2's `utf8.b2d` fixture (`id`, and utf8 columns `txt` with nulls in a mask,
/// `tag` by sentinel, `note` none; its deleted last row's strings stored past the end) as
/// `t.b2d`, grown with `n` rows of noise text.
fn table_utf8(dir: &Path, n: usize) -> PathBuf {
    let p = dir.join("t.b2d");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tables/utf8.b2d");
    common::copy_tree(&fixture, &p);
    b2nd::TableMut::open(&p)
        .unwrap()
        .append(&utf8_rows(n, 0, 1).unwrap())
        .unwrap();
    p
}

/// `n` texts of noise, 0–63 characters each: as given, and with every seventh a null.
fn utf8_text(n: usize, salt: u8) -> (Vec<Option<String>>, Vec<Option<String>>) {
    let bytes: Vec<u8> = noise(n * 64).iter().map(|b| b ^ salt).collect();
    let text: Vec<Option<String>> = bytes
        .chunks_exact(64)
        .map(|c| {
            let len = usize::from(c[0] % 64);
            Some(c[..len].iter().map(|b| char::from(b'a' + b % 26)).collect())
        })
        .collect();
    let nulls = text
        .iter()
        .enumerate()
        .map(|(i, s)| s.clone().filter(|_| i % 7 != 3))
        .collect();
    (text, nulls)
}

/// `n` rows for `table_utf8`'s table from `id0` on.
fn utf8_rows(n: usize, id0: i64, salt: u8) -> b2nd::Result<b2nd::Rows> {
    let (text, nulls) = utf8_text(n, salt);
    let ids: Vec<i64> = (id0..id0 + n as i64).collect();
    b2nd::Rows::new()
        .column("id", &ids)?
        .strings("txt", &as_str(&nulls))?
        .strings("tag", &as_str(&nulls))?
        .strings("note", &as_str(&text))
}

/// python-blosc2's `varlen.b2d` fixture (`id`, and the columns of one msgpack item per
/// row: `items` list<int32>, `vs` vlstring, `vb` vlbytes, `st` struct; its deleted last
/// row's items stored past the end) as `t.b2d`, grown with `n` rows of noise.
fn table_varlen(dir: &Path, n: usize) -> PathBuf {
    let p = dir.join("t.b2d");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tables/varlen.b2d");
    common::copy_tree(&fixture, &p);
    b2nd::TableMut::open(&p)
        .unwrap()
        .append(&varlen_rows(n, 0, 1).unwrap())
        .unwrap();
    p
}

/// `n` rows for `table_varlen`'s table from `id0` on.
fn varlen_rows(n: usize, id0: i64, salt: u8) -> b2nd::Result<b2nd::Rows> {
    use b2nd::Value;
    let (text, nulls) = utf8_text(n, salt);
    let ids: Vec<i64> = (id0..id0 + n as i64).collect();
    let bytes: Vec<Value> = text
        .iter()
        .map(|t| Value::Bytes(t.clone().unwrap_or_default().into_bytes()))
        .collect();
    b2nd::Rows::new()
        .column("id", &ids)?
        .values("items", &lists_of(&text))?
        .strings("vs", &as_str(&nulls))?
        .values("vb", &bytes)?
        .values("st", &points_of(&ids, &nulls))
}

/// Lists of int32 from texts (one item per byte).
fn lists_of(text: &[Option<String>]) -> Vec<b2nd::Value> {
    use b2nd::Value;
    text.iter()
        .map(|t| {
            let t = t.as_deref().unwrap_or("");
            Value::Array(t.bytes().map(|b| Value::Int(i64::from(b) - 100)).collect())
        })
        .collect()
}

/// `varlen.b2d`'s structs (`x` int64, `y` of at most 4 characters; a null text a null).
fn points_of(ids: &[i64], text: &[Option<String>]) -> Vec<b2nd::Value> {
    use b2nd::Value;
    ids.iter()
        .zip(text)
        .map(|(&i, t)| match t {
            None => Value::Nil,
            Some(t) => Value::Map(vec![
                (Value::Str("x".into()), Value::Int(i)),
                (
                    Value::Str("y".into()),
                    Value::Str(t.chars().take(4).collect()),
                ),
            ]),
        })
        .collect()
}

/// python-blosc2's `dictionary.b2d` fixture (`id`, dictionary columns `cat`, nullable, and
/// `tag`) as `t.b2d`, grown with `n` rows.
fn table_dictionary(dir: &Path, n: usize) -> PathBuf {
    let p = dir.join("t.b2d");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tables/dictionary.b2d");
    common::copy_tree(&fixture, &p);
    b2nd::TableMut::open(&p)
        .unwrap()
        .append(&dictionary_rows(n, 0, 1).unwrap())
        .unwrap();
    p
}

/// `n` rows for `table_dictionary`'s table from `id0` on: words of at most 2 letters
/// (hundreds of values new to the dictionary), every seventh `cat` a null.
fn dictionary_rows(n: usize, id0: i64, salt: u8) -> b2nd::Result<b2nd::Rows> {
    let (text, nulls) = utf8_text(n, salt);
    let short = |v: &[Option<String>]| -> Vec<Option<String>> {
        v.iter()
            .map(|t| t.as_ref().map(|t| t.chars().take(2).collect()))
            .collect()
    };
    let (cat, tag) = (short(&nulls), short(&text));
    let ids: Vec<i64> = (id0..id0 + n as i64).collect();
    b2nd::Rows::new()
        .column("id", &ids)?
        .strings("cat", &as_str(&cat))?
        .strings("tag", &as_str(&tag))
}

fn as_str(v: &[Option<String>]) -> Vec<Option<&str>> {
    v.iter().map(Option::as_deref).collect()
}

fn table_rows(n: usize, salt: u64) -> (Vec<u64>, Vec<f64>, Vec<bool>) {
    let x: Vec<u64> = noise(n * 8)
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()) ^ salt)
        .collect();
    let y = x.iter().map(|&v| (v % 1000) as f64).collect();
    let valid = x.iter().map(|&v| v % 5 != 0).collect();
    (x, y, valid)
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "new array file",
            prepare: |d| d.join("a.b2nd"),
            run: |p| u8_array(NEW).write(Target::File(p.into()), &noise(NEW)),
        },
        Case {
            name: "overwrite array file",
            prepare: old_file,
            run: |p| {
                u8_array(NEW)
                    .overwrite(true)
                    .write(Target::File(p.into()), &noise(NEW))
            },
        },
        Case {
            name: "overwrite sparse array",
            prepare: old_sparse,
            run: |p| {
                u8_array(NEW)
                    .overwrite(true)
                    .write(Target::Sparse(p.into()), &noise(NEW))
            },
        },
        Case {
            name: "streaming writer overwrite",
            prepare: old_file,
            run: |p| {
                let mut w = u8_array(NEW)
                    .overwrite(true)
                    .create(Target::File(p.into()))?;
                for part in noise(NEW).chunks(50_000) {
                    w.push(part)?;
                }
                w.finish()
            },
        },
        Case {
            name: "overwrite store .b2z",
            prepare: |d| store(d, "s.b2z", OLD, 1, false).unwrap(),
            run: |p| store(p.parent().unwrap(), "s.b2z", NEW, 2, true).map(drop),
        },
        Case {
            name: "overwrite store .b2d",
            prepare: |d| store(d, "s.b2d", OLD, 1, false).unwrap(),
            run: |p| store(p.parent().unwrap(), "s.b2d", NEW, 2, true).map(drop),
        },
        Case {
            name: "overwrite table .b2z",
            prepare: |d| table(d, OLD / 8, 1, false).unwrap(),
            run: |p| table(p.parent().unwrap(), NEW / 8, 2, true).map(drop),
        },
        Case {
            name: "table .b2d: append rows (TableMut)",
            prepare: |d| table_dir(d, OLD / 8),
            run: |p| {
                let (x, y, valid) = table_rows(NEW / 16, 2);
                let y: Vec<Option<f64>> = y
                    .iter()
                    .zip(&valid)
                    .map(|(&v, &ok)| ok.then_some(v))
                    .collect();
                let rows = b2nd::Rows::new().column("x", &x)?.column_opt("y", &y)?;
                b2nd::TableMut::open(p)?.append(&rows).map(drop)
            },
        },
        Case {
            name: "table .b2d: delete rows (TableMut)",
            prepare: |d| table_dir(d, OLD / 8),
            run: |p| {
                // The last row too: the arrays are trimmed after the delete.
                let n = (OLD / 8) as u64;
                let rows: Vec<u64> = (0..n).step_by(3).chain([n - 1]).collect();
                b2nd::TableMut::open(p)?.delete(&rows).map(drop)
            },
        },
        Case {
            name: "table .b2d: update rows (TableMut)",
            prepare: |d| table_dir(d, OLD / 8),
            run: |p| {
                // Both columns of every third row: the column files copied and changed beside
                // the table, `_cols` swapped in at once.
                let rows: Vec<u64> = (0..(OLD / 8) as u64).step_by(3).collect();
                let (x, y, valid) = table_rows(rows.len(), 3);
                let y: Vec<Option<f64>> = y
                    .iter()
                    .zip(&valid)
                    .map(|(&v, &ok)| ok.then_some(v))
                    .collect();
                let values = b2nd::Rows::new().column("x", &x)?.column_opt("y", &y)?;
                b2nd::TableMut::open(p)?.update(&rows, &values).map(drop)
            },
        },
        Case {
            name: "table .b2d with utf8 columns: append rows (TableMut)",
            prepare: |d| table_utf8(d, OLD / 32),
            run: |p| {
                let rows = utf8_rows(NEW / 64, 1 << 20, 2)?;
                b2nd::TableMut::open(p)?.append(&rows).map(drop)
            },
        },
        Case {
            name: "table .b2d with utf8 columns: update rows (TableMut)",
            prepare: |d| table_utf8(d, OLD / 32),
            run: |p| {
                // Every third row's strings, from the first: both arrays of each column
                // rewritten beside the table.
                let rows: Vec<u64> = (0..(OLD / 32) as u64).step_by(3).collect();
                let (text, nulls) = utf8_text(rows.len(), 3);
                let values = b2nd::Rows::new()
                    .strings("txt", &as_str(&nulls))?
                    .strings("note", &as_str(&text))?;
                b2nd::TableMut::open(p)?.update(&rows, &values).map(drop)
            },
        },
        Case {
            name: "table .b2d with list, vlstring, vlbytes, struct columns: append rows (TableMut)",
            prepare: |d| table_varlen(d, OLD / 32),
            run: |p| {
                let rows = varlen_rows(NEW / 64, 1 << 20, 2)?;
                b2nd::TableMut::open(p)?.append(&rows).map(drop)
            },
        },
        Case {
            name: "table .b2d with list, vlstring, vlbytes, struct columns: update rows (TableMut)",
            prepare: |d| table_varlen(d, OLD / 32),
            run: |p| {
                // Every third row, from the tenth: the items from there rewritten beside the
                // table.
                let rows: Vec<u64> = (10..(OLD / 32) as u64).step_by(3).collect();
                let (text, nulls) = utf8_text(rows.len(), 3);
                let ids: Vec<i64> = (0..rows.len() as i64).collect();
                let values = b2nd::Rows::new()
                    .values("items", &lists_of(&text))?
                    .values("st", &points_of(&ids, &nulls))?;
                b2nd::TableMut::open(p)?.update(&rows, &values).map(drop)
            },
        },
        Case {
            name: "table .b2d with dictionary columns: append rows with new values (TableMut)",
            prepare: |d| table_dictionary(d, OLD / 32),
            run: |p| {
                let rows = dictionary_rows(NEW / 64, 1 << 20, 2)?;
                b2nd::TableMut::open(p)?.append(&rows).map(drop)
            },
        },
        Case {
            name: "table .b2d: rename a column (TableMut)",
            prepare: |d| table_dir(d, OLD / 8),
            // Its values, mask and summary move: the table is staged beside itself and
            // exchanged whole.
            run: |p| b2nd::TableMut::open(p)?.rename_column("y", "why"),
        },
        Case {
            name: "table .b2d: drop a column (TableMut)",
            prepare: |d| table_dir(d, OLD / 8),
            run: |p| b2nd::TableMut::open(p)?.drop_column("y"),
        },
        Case {
            name: "table .b2z: append rows (TableMut: the zip packed anew)",
            prepare: |d| table(d, OLD / 8, 1, false).unwrap(),
            run: |p| {
                let x: Vec<u64> = (0..(NEW / 16) as u64).collect();
                let rows = b2nd::Rows::new().column("x", &x)?;
                b2nd::TableMut::open(p)?.append(&rows).map(drop)
            },
        },
        Case {
            name: "table .b2d: add a column (TableMut)",
            prepare: |d| table_dir(d, OLD / 8),
            run: |p| {
                let n = OLD / 8;
                let values: Vec<Option<f64>> =
                    (0..n).map(|i| (i % 7 != 0).then_some(i as f64)).collect();
                b2nd::TableMut::open(p)?
                    .add_column("z", &b2nd::NewColumn::of::<f64>().values_opt(&values))
            },
        },
        Case {
            name: "table .b2d: compact (TableMut)",
            prepare: |d| {
                // Every third row deleted: the compact moves nearly every row. Old and new
                // read the same rows; a torn compact (columns of one, `_valid_rows` of the
                // other) reads others.
                let p = table_dir(d, OLD / 8);
                let rows: Vec<u64> = (0..(OLD / 8) as u64).step_by(3).collect();
                b2nd::TableMut::open(&p).unwrap().delete(&rows).unwrap();
                p
            },
            run: |p| b2nd::TableMut::open(p)?.compact().map(drop),
        },
        Case {
            name: "table .b2d with list, vlstring, vlbytes, struct columns: compact (TableMut)",
            prepare: |d| {
                // Every third row deleted: each column's items rewritten to the live ones.
                let p = table_varlen(d, OLD / 32);
                let rows: Vec<u64> = (0..(OLD / 32) as u64).step_by(3).collect();
                b2nd::TableMut::open(&p).unwrap().delete(&rows).unwrap();
                p
            },
            run: |p| b2nd::TableMut::open(p)?.compact().map(drop),
        },
        Case {
            name: "set_attrs (journaled in place), file",
            prepare: old_file,
            run: |p| b2nd::write::set_attrs(p, &[("big", Value::Bytes(noise(NEW)))]),
        },
        Case {
            name: "delete_attrs (in place), sparse",
            prepare: old_sparse,
            run: |p| b2nd::write::delete_attrs(p, &["note"]),
        },
        Case {
            name: "in place: write_region, file",
            prepare: old_file,
            run: |p| {
                ArrayMut::open(p)?
                    .write_region(&b2nd::Region::new([0], [OLD as u64]), &noise(OLD + 7)[7..])
            },
        },
        Case {
            name: "in place: resize (grow), file",
            prepare: old_file,
            run: |p| ArrayMut::open(p)?.resize(&[(OLD + NEW) as u64 + 5]),
        },
        Case {
            name: "in place: append, file",
            prepare: old_file,
            run: |p| ArrayMut::open(p)?.append(0, &noise(NEW)),
        },
        Case {
            name: "in place: append, file, no syncs",
            prepare: old_file,
            run: |p| {
                ArrayMut::open(p)?
                    .with_durability(b2nd::Durability::Process)
                    .append(0, &noise(NEW))
            },
        },
        Case {
            name: "in place: write_region, file, no syncs",
            prepare: old_file,
            run: |p| {
                ArrayMut::open(p)?
                    .with_durability(b2nd::Durability::Process)
                    .write_region(&b2nd::Region::new([0], [OLD as u64]), &noise(OLD + 7)[7..])
            },
        },
        Case {
            name: "in place: set_attr, file",
            prepare: old_file,
            run: |p| ArrayMut::open(p)?.set_attr("big", &Value::Bytes(noise(NEW))),
        },
        Case {
            name: "in place: delete_attr, file",
            prepare: old_file,
            run: |p| ArrayMut::open(p)?.delete_attr("note"),
        },
        Case {
            name: "in place: compact, file",
            prepare: old_file_with_dead_space,
            run: |p| ArrayMut::open(p)?.compact(),
        },
        Case {
            name: "in place: write_region, sparse",
            prepare: old_sparse,
            run: |p| {
                ArrayMut::open(p)?
                    .write_region(&b2nd::Region::new([0], [OLD as u64]), &noise(OLD + 7)[7..])
            },
        },
        Case {
            name: "in place: append, sparse",
            prepare: old_sparse,
            run: |p| ArrayMut::open(p)?.append(0, &noise(NEW)),
        },
        Case {
            name: "in place: append, sparse, no syncs",
            prepare: old_sparse,
            run: |p| {
                ArrayMut::open(p)?
                    .with_durability(b2nd::Durability::Process)
                    .append(0, &noise(NEW))
            },
        },
        Case {
            name: "in place: set_attr, sparse",
            prepare: old_sparse,
            run: |p| ArrayMut::open(p)?.set_attr("big", &Value::Bytes(noise(NEW))),
        },
        Case {
            name: "in place: compact, sparse",
            prepare: old_sparse_with_dead_space,
            run: |p| ArrayMut::open(p)?.compact(),
        },
        Case {
            name: "in place: store member (.b2d) write_region",
            prepare: |d| store(d, "s.b2d", OLD, 1, false).unwrap(),
            run: |p| {
                ArrayMut::open_in_store(p, "/x")?
                    .write_region(&b2nd::Region::new([0], [OLD as u64]), &noise(OLD + 3)[3..])
            },
        },
    ]
}

/// A 64-bit FNV-1a digest.
fn digest(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn array_summary(a: &b2nd::Array) -> String {
    let attrs = a
        .attrs()
        .map(|v| format!("{v:?}"))
        .unwrap_or_else(|e| e.to_string());
    let data = a
        .read_bytes()
        .map(|d| format!("{:016x}", digest(&d)))
        .unwrap_or_else(|_| "read error".into());
    format!(
        "{:?} {} {data} {}",
        a.shape(),
        a.dtype_str(),
        digest(attrs.as_bytes())
    )
}

/// What a reader sees at `p`: its values, not its bytes (`None` if nothing is there).
fn summary(p: &Path) -> Option<String> {
    if !p.exists() {
        return None;
    }
    let name = p.file_name().unwrap().to_string_lossy();
    if name == "t.b2z" || name == "t.b2d" {
        return Some(match b2nd::Table::open(p) {
            Ok(t) => t
                .columns()
                .iter()
                .map(|c| {
                    if *c.kind() == b2nd::ColumnKind::Utf8 {
                        return match t.read_strings(c.name()) {
                            Ok(v) => {
                                format!("{} {:016x}", c.name(), digest(format!("{v:?}").as_bytes()))
                            }
                            Err(_) => format!("{}: read error", c.name()),
                        };
                    }
                    if !c.is_fixed_width() {
                        return match t.read_values(c.name()) {
                            Ok(v) => {
                                format!("{} {:016x}", c.name(), digest(format!("{v:?}").as_bytes()))
                            }
                            Err(_) => format!("{}: read error", c.name()),
                        };
                    }
                    match (t.read_column_bytes(c.name()), t.read_validity(c.name())) {
                        (Ok((_, shape, d)), Ok(valid)) => {
                            let valid: Vec<u8> = valid
                                .unwrap_or_default()
                                .into_iter()
                                .map(u8::from)
                                .collect();
                            format!(
                                "{} {shape:?} {:016x} nulls {:016x}",
                                c.name(),
                                digest(&d),
                                digest(&valid)
                            )
                        }
                        _ => format!("{}: read error", c.name()),
                    }
                })
                .collect::<Vec<_>>()
                .join("; "),
            Err(_) => "table error".into(),
        });
    }
    if name.starts_with("s.") {
        return Some(match b2nd::Store::open(p) {
            Ok(s) => {
                let mut keys = s.keys();
                keys.sort();
                keys.iter()
                    .map(|k| match s.open_array(k) {
                        Ok(a) => format!("{k}: {}", array_summary(&a)),
                        Err(_) => format!("{k}: not an array"),
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            }
            Err(_) => "store error".into(),
        });
    }
    Some(match b2nd::Array::open(p) {
        Ok(a) => array_summary(&a),
        Err(_) => "array error".into(),
    })
}

/// The names in `dir`, without the full-disk filler.
fn clear(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            std::fs::remove_dir_all(&p).unwrap();
        } else {
            std::fs::remove_file(&p).unwrap();
        }
    }
}

/// The old and new summaries of case `c` (the new one from a run on a roomy disk), and the
/// names the directory holds after a successful run.
fn old_and_new(c: &Case) -> (Option<String>, String, Vec<String>) {
    let d = tempfile::tempdir().unwrap();
    let p = (c.prepare)(d.path());
    let old = summary(&p);
    (c.run)(&p).unwrap_or_else(|e| panic!("{}: on a roomy disk: {e}", c.name));
    let new = summary(&p).unwrap();
    // Compaction changes no values (only the file's size).
    assert!(
        c.name.contains("compact") || old.as_deref() != Some(new.as_str()),
        "{}: the write changes something",
        c.name
    );
    assert!(!new.contains("error"), "{}: {new}", c.name);
    (old, new, names(d.path()))
}

#[test]
#[ignore = "needs root: mounts a tmpfs"]
fn full_disk_at_every_stage_of_every_write() {
    let fs = Tmpfs::mount_required(3 << 10);
    let dir = fs.path();
    let frees: [u64; 10] = [
        0,
        4 << 10,
        16 << 10,
        48 << 10,
        96 << 10,
        192 << 10,
        320 << 10,
        480 << 10,
        800 << 10,
        2 << 20,
    ];
    let mut report = Vec::new();
    for c in cases() {
        let (old, new, _) = old_and_new(&c);
        let (mut failed, mut wrote) = (0, 0);
        for &free in &frees {
            clear(dir);
            let p = (c.prepare)(dir);
            let before = names(dir);
            assert_eq!(summary(&p), old, "{}: prepared", c.name);
            let filler = Filler::leaving(dir, free);
            let r = (c.run)(&p);
            drop(filler);
            let now = summary(&p);
            match r {
                Err(e) => {
                    failed += 1;
                    assert_eq!(
                        now, old,
                        "{} (free {free}): failed ({e}) but changed",
                        c.name
                    );
                    assert_eq!(
                        names(dir),
                        before,
                        "{} (free {free}): left something",
                        c.name
                    );
                    if let Some(inner) = p.is_dir().then_some(&p) {
                        assert!(
                            names(inner).iter().all(|n| !is_leftover(n)),
                            "{} (free {free}): temporaries left inside",
                            c.name
                        );
                    }
                }
                Ok(()) => {
                    wrote += 1;
                    assert_eq!(
                        now.as_deref(),
                        Some(new.as_str()),
                        "{} (free {free})",
                        c.name
                    );
                }
            }
        }
        // Sparse compaction only deletes chunk files: it needs no space. Deleting an
        // attribute of a file appends a chunk index, a trailer and the journal record
        // (under 2 KiB), which fit in the file's last page.
        let needs_space = !matches!(
            c.name,
            "in place: compact, sparse" | "in place: delete_attr, file"
        );
        assert!(
            failed > 0 || !needs_space,
            "{}: never ran out of space",
            c.name
        );
        assert!(wrote > 0, "{}: never had enough space", c.name);
        report.push(format!(
            "{}: {failed} failed cleanly, {wrote} wrote",
            c.name
        ));
    }
    eprintln!(
        "full disk, free space {frees:?}:\n  {}",
        report.join("\n  ")
    );
}

/// The entry the kill test re-executes (does nothing in a normal run).
#[test]
fn fault_child() {
    let (Ok(case), Ok(target)) = (
        std::env::var("B2ND_FAULT_CASE"),
        std::env::var("B2ND_FAULT_TARGET"),
    ) else {
        return;
    };
    let c = &cases()[case.parse::<usize>().unwrap()];
    let log = std::env::var("B2ND_FAULT_LOG").unwrap();
    // One write call per line, appended: a kill never erases "start" (a rewrite of the whole
    // log could be killed between its truncation and its write).
    let mut log = std::fs::OpenOptions::new().append(true).open(log).unwrap();
    log.write_all(b"start\n").unwrap();
    (c.run)(Path::new(&target)).unwrap();
    log.write_all(b"done\n").unwrap();
}

/// Hidden temporaries a killed write may leave beside its target.
/// A staging directory b2nd leaves when killed: `.b2nd-*` (arrays, `_cols`) or
/// `.NAME.b2nd-*.tmp` (a table staged beside itself).
fn is_leftover(n: &str) -> bool {
    n.starts_with(".b2nd-") || (n.starts_with('.') && n.contains(".b2nd-") && n.ends_with(".tmp"))
}

#[test]
fn kill_9_at_random_moments_of_every_write() {
    let kills: usize = std::env::var("B2ND_FAULT_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    let mut rng = common::xorshift(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1,
    );
    let mut report = Vec::new();
    let mut mid_total = 0;
    for (i, c) in cases().iter().enumerate() {
        let (old, new, new_names) = old_and_new(c);
        // How long the write takes here, to spread the kills over it.
        let d = tempfile::tempdir().unwrap();
        let p = (c.prepare)(d.path());
        let t0 = Instant::now();
        (c.run)(&p).unwrap();
        let span = (t0.elapsed().as_micros() as u64 * 3 / 2).max(2_000);
        let (mut as_old, mut as_new, mut leftovers) = (0, 0, 0);
        let (mut mid, mut after, mut finished) = (0, 0, 0);
        for k in 0..kills {
            let d = tempfile::tempdir().unwrap();
            let p = (c.prepare)(d.path());
            let old_names = names(d.path());
            let log = tempfile::NamedTempFile::new().unwrap();
            let mut child = Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "fault_child",
                    "--nocapture",
                    "--test-threads",
                    "1",
                ])
                .env("B2ND_FAULT_CASE", i.to_string())
                .env("B2ND_FAULT_TARGET", &p)
                .env("B2ND_FAULT_LOG", log.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let t0 = Instant::now();
            while !std::fs::read_to_string(log.path())
                .unwrap_or_default()
                .contains("start")
            {
                if t0.elapsed() > Duration::from_secs(60) || child.try_wait().unwrap().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_micros(100));
            }
            std::thread::sleep(Duration::from_micros(rng() % span));
            child.kill().unwrap();
            let status = child.wait().unwrap();
            // Where the kill landed: inside the write (the child logged its start, not its
            // end, and died by the signal), after it, or never (the child ended on its own).
            let logged = std::fs::read_to_string(log.path()).unwrap_or_default();
            match (status.signal(), logged.contains("done")) {
                (Some(9), false) => {
                    assert!(
                        logged.contains("start"),
                        "{}: killed before it started",
                        c.name
                    );
                    mid += 1;
                }
                (Some(9), true) => after += 1,
                (None, true) if status.success() => finished += 1,
                _ => panic!(
                    "{}: the writer did not die by the kill: {status}, log {logged:?}",
                    c.name
                ),
            }
            let now = summary(&p);
            if now == old {
                as_old += 1;
            } else {
                assert_eq!(
                    now.as_deref(),
                    Some(new.as_str()),
                    "{}: killed: neither old nor new",
                    c.name
                );
                as_new += 1;
            }
            let all = names(d.path());
            let kept: Vec<String> = all.iter().filter(|n| !is_leftover(n)).cloned().collect();
            assert!(
                kept == old_names || kept == new_names,
                "{}: {all:?}",
                c.name
            );
            leftovers += usize::from(kept.len() != all.len());
            keep_killed_table(&p, &format!("{i}-{k}"));
        }
        report.push(format!(
            "{}: {mid} killed inside the write, {after} after it, {finished} finished first; \
             {as_old} read old, {as_new} read new, {leftovers} left temporaries",
            c.name
        ));
        mid_total += mid;
    }
    eprintln!("kill -9 ({kills} per case):\n  {}", report.join("\n  "));
    // The kills must land inside writes, not around them (measured here with 20 per case:
    // 268 of 400, 67 %); a floor well under that catches a test that stopped killing writes.
    let total = kills * cases().len();
    assert!(
        mid_total * 4 >= total,
        "only {mid_total} of {total} kills landed inside a write"
    );
}

/// A msgpack value as JSON (bytes as a list of their values).
fn json_of(v: &b2nd::Value) -> serde_json::Value {
    use b2nd::Value;
    match v {
        Value::Nil => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Int(i) => (*i).into(),
        Value::UInt(u) => (*u).into(),
        Value::Float(f) => (*f).into(),
        Value::Str(s) => s.clone().into(),
        Value::Bytes(b) => b.clone().into(),
        Value::Array(a) | Value::Tuple(a) => a.iter().map(json_of).collect(),
        Value::Map(m) => serde_json::Value::Object(
            m.iter()
                .map(|(k, v)| (k.as_str().unwrap_or_default().to_string(), json_of(v)))
                .collect(),
        ),
        other => format!("{other:?}").into(),
    }
}

/// With `B2ND_FAULT_OUT`, a killed table change's `.b2d` is kept there as `NAME.b2d`, with
/// what b2nd reads of it (`NAME.json`: live rows, column names, `x` (null without one), every
/// column's nulls, every utf8 column's strings), for
/// `scripts/check_table_kills.py` (python-blosc2 must read the same).
fn keep_killed_table(p: &Path, name: &str) {
    let Some(out) = std::env::var_os("B2ND_FAULT_OUT") else {
        return;
    };
    if p.file_name() != Some("t.b2d".as_ref()) {
        return;
    }
    let out = Path::new(&out);
    common::copy_tree(p, &out.join(format!("{name}.b2d")));
    let t = b2nd::Table::open(p).unwrap();
    let x: Option<Vec<u64>> = t.column("x").is_ok().then(|| t.read_column("x").unwrap());
    let strings: serde_json::Map<String, serde_json::Value> = t
        .columns()
        .iter()
        .filter(|c| *c.kind() == b2nd::ColumnKind::Utf8)
        .map(|c| {
            let v = t.read_strings(c.name()).unwrap();
            (c.name().to_string(), serde_json::json!(v))
        })
        .collect();
    // Dictionary columns and the columns of one msgpack item per row.
    let values: serde_json::Map<String, serde_json::Value> = t
        .columns()
        .iter()
        .filter(|c| {
            c.computed().is_none() && !c.is_fixed_width() && *c.kind() != b2nd::ColumnKind::Utf8
        })
        .map(|c| {
            let v: Vec<serde_json::Value> = t
                .read_values(c.name())
                .unwrap()
                .iter()
                .map(json_of)
                .collect();
            (c.name().to_string(), serde_json::Value::Array(v))
        })
        .collect();
    let columns: Vec<&str> = t.columns().iter().map(|c| c.name()).collect();
    let nulls: serde_json::Map<String, serde_json::Value> = columns
        .iter()
        .map(|&c| {
            let valid = t.read_validity(c).unwrap();
            let nulls: Vec<bool> = match valid {
                Some(v) => v.iter().map(|ok| !ok).collect(),
                None => vec![false; t.n_rows() as usize],
            };
            (c.to_string(), serde_json::json!(nulls))
        })
        .collect();
    let j = serde_json::json!({"n_rows": t.n_rows(), "columns": columns, "x": x, "nulls": nulls,
                               "strings": strings, "values": values});
    std::fs::write(out.join(format!("{name}.json")), j.to_string()).unwrap();
}

fn u32_array(dir: &Path, name: &str, n: u32, sparse: bool) -> PathBuf {
    let p = dir.join(name);
    let data: Vec<u32> = (0..n).collect();
    let b = ArrayBuilder::for_type::<u32>(&[u64::from(n)])
        .chunks(&[1000])
        .codec(Codec::Zstd)
        .overwrite(true);
    let t = if sparse {
        Target::Sparse(p.clone())
    } else {
        Target::File(p.clone())
    };
    b.write(t, &data).unwrap();
    p
}

/// Inputs that vanish, shrink or change under an open `Array`: every read afterwards is
/// either the old values or a clean error, never other values, a panic or a hang.
#[test]
fn inputs_that_vanish_shrink_or_change_while_open() {
    let d = tempfile::tempdir().unwrap();
    let want: Vec<u32> = (0..10_000).collect();
    let check = |what: &str, r: b2nd::Result<Vec<u32>>| match r {
        Ok(v) => assert_eq!(v, want, "{what}: wrong values"),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n') && !msg.is_empty(), "{what}: {msg}");
            eprintln!("{what}: {msg}");
        }
    };
    // Deleted (contiguous): the name is gone.
    let p = u32_array(d.path(), "gone.b2nd", 10_000, false);
    let a = b2nd::Array::open(&p).unwrap();
    std::fs::remove_file(&p).unwrap();
    check("contiguous file deleted", a.read::<u32>());
    // Truncated to half, and to nothing.
    for len in [20_000u64, 0] {
        let p = u32_array(d.path(), "short.b2nd", 10_000, false);
        let a = b2nd::Array::open(&p).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(len)
            .unwrap();
        let r = a.read::<u32>();
        assert!(r.is_err(), "truncated to {len}: a read succeeded");
        check(&format!("truncated to {len} bytes"), r);
    }
    // Overwritten in place with other bytes of the same length.
    let p = u32_array(d.path(), "scribbled.b2nd", 10_000, false);
    let a = b2nd::Array::open(&p).unwrap();
    let mut bytes = std::fs::read(&p).unwrap();
    let n = bytes.len();
    for b in &mut bytes[n / 3..2 * n / 3] {
        *b ^= 0xa5;
    }
    std::thread::sleep(Duration::from_millis(5));
    std::fs::write(&p, &bytes).unwrap();
    check("scribbled over", a.read::<u32>());
    // Changed in place by a writer (b2nd's own, through another handle).
    let p = u32_array(d.path(), "changed.b2nd", 10_000, false);
    let a = b2nd::Array::open(&p).unwrap();
    ArrayMut::open(&p)
        .unwrap()
        .write_region(&b2nd::Region::new([0], [3]), &[7u32, 7, 7])
        .unwrap();
    check("changed in place", a.read::<u32>());
    // Replaced by another file renamed over it.
    let p = u32_array(d.path(), "replaced.b2nd", 10_000, false);
    let a = b2nd::Array::open(&p).unwrap();
    let q = u32_array(d.path(), "other.b2nd", 500, false);
    std::fs::rename(&q, &p).unwrap();
    check("replaced by rename", a.read::<u32>());
    // Sparse: a chunk file deleted, truncated, or the index rewritten.
    for what in ["chunk deleted", "chunk truncated", "index deleted"] {
        let p = u32_array(d.path(), "sparse.b2nd.d", 10_000, true);
        let a = b2nd::Array::open(&p).unwrap();
        let chunk = p.join("00000004.chunk");
        match what {
            "chunk deleted" => std::fs::remove_file(&chunk).unwrap(),
            "chunk truncated" => std::fs::OpenOptions::new()
                .write(true)
                .open(&chunk)
                .unwrap()
                .set_len(10)
                .unwrap(),
            _ => std::fs::remove_file(p.join("chunks.b2frame")).unwrap(),
        }
        let r = a.read::<u32>();
        assert!(r.is_err(), "sparse, {what}: a read succeeded");
        check(&format!("sparse, {what}"), r);
        std::fs::remove_dir_all(&p).unwrap();
    }
}

/// Inputs that cannot be read: a directory that is not a sparse frame, a FIFO (opening one
/// for reading waits for a writer: b2nd must not), a device, a missing path, a path
/// through a file. Each is a clean error, in bounded time.
#[test]
fn unreadable_inputs_are_clean_errors() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe.b2nd");
    let made = Command::new("mkfifo").arg(&fifo).status();
    std::fs::create_dir(d.path().join("dir.b2nd")).unwrap();
    std::fs::write(d.path().join("file"), b"x").unwrap();
    let mut paths = vec![
        d.path().join("dir.b2nd"),
        d.path().join("missing.b2nd"),
        d.path().join("file/below.b2nd"),
        PathBuf::from("/dev/zero"),
        PathBuf::from("/dev/null"),
    ];
    assert!(made.is_ok_and(|s| s.success()), "mkfifo (coreutils) failed");
    {
        paths.push(fifo);
        // A sparse frame whose chunk file is a FIFO (c-blosc2 would wait on it).
        let sp = u32_array(d.path(), "fifo_chunk.b2nd.d", 5_000, true);
        std::fs::remove_file(sp.join("00000002.chunk")).unwrap();
        Command::new("mkfifo")
            .arg(sp.join("00000002.chunk"))
            .status()
            .unwrap();
        paths.push(sp);
    }
    for p in paths {
        let (tx, rx) = std::sync::mpsc::channel();
        let q = p.clone();
        std::thread::spawn(move || {
            let a = b2nd::Array::open(&q).map(|_| ()).map_err(|e| e.to_string());
            let s = b2nd::Store::open(&q).map(|_| ()).map_err(|e| e.to_string());
            let m = b2nd::ArrayMut::open(&q)
                .map(|_| ())
                .map_err(|e| e.to_string());
            tx.send((a, s, m)).unwrap();
        });
        let (a, s, m) = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{}: opening it hung", p.display()));
        for r in [a, s, m] {
            let e = r.expect_err(&p.display().to_string());
            assert!(!e.contains('\n'), "{e}");
            eprintln!("{}: {e}", p.display());
        }
    }
}

/// Many threads and processes reading one file while a writer appends to it in place:
/// every read that succeeds holds values 0..n for one of the published lengths n (never a
/// mix of versions), the others fail with a clean error, and every reader ends.
#[test]
fn many_readers_threads_and_processes_during_in_place_appends() {
    let d = tempfile::tempdir().unwrap();
    let p = u32_array(d.path(), "shared.b2nd", 10_000, false);
    let readers: Vec<_> = (0..3)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "reader_child",
                    "--nocapture",
                    "--test-threads",
                    "1",
                ])
                .env("B2ND_FAULT_READ", &p)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (p, stop) = (p.clone(), stop.clone());
            std::thread::spawn(move || read_until(&p, &stop))
        })
        .collect();
    let mut m = ArrayMut::open(&p).unwrap();
    for k in 0..40u32 {
        let more: Vec<u32> = (10_000 + k * 500..10_000 + (k + 1) * 500).collect();
        m.append(0, &more).unwrap();
    }
    drop(m);
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut total = (0, 0);
    for t in threads {
        let (ok, err) = t.join().unwrap();
        total = (total.0 + ok, total.1 + err);
    }
    std::fs::write(d.path().join("stop"), b"").unwrap();
    for r in readers {
        let out = r.wait_with_output().unwrap();
        assert!(out.status.success(), "a reader process failed");
        let s = String::from_utf8_lossy(&out.stdout);
        // The test harness prints "test reader_child ... " before the line.
        let line = s.lines().find_map(|l| l.split("reads ").nth(1)).unwrap();
        let v: Vec<usize> = line
            .split_whitespace()
            .take(2)
            .map(|x| x.parse().unwrap())
            .collect();
        total = (total.0 + v[0], total.1 + v[1]);
    }
    eprintln!(
        "readers: {} consistent reads, {} clean 'changed' errors",
        total.0, total.1
    );
    assert!(total.0 > 0);
}

/// Read `p` whole until `stop`: (consistent reads, clean errors); panics on a mixed read.
fn read_until(p: &Path, stop: &std::sync::atomic::AtomicBool) -> (usize, usize) {
    let (mut ok, mut err) = (0, 0);
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        match b2nd::Array::open(p).and_then(|a| a.read::<u32>()) {
            Ok(v) => {
                let n = v.len();
                assert!(n >= 10_000 && (n - 10_000) % 500 == 0, "length {n}");
                assert!(
                    v.iter().enumerate().all(|(i, &x)| x == i as u32),
                    "mixed values"
                );
                ok += 1;
            }
            Err(e) => {
                assert!(!e.to_string().contains('\n'));
                err += 1;
            }
        }
    }
    (ok, err)
}

/// The reader process of the test above (does nothing in a normal run).
#[test]
fn reader_child() {
    let Ok(p) = std::env::var("B2ND_FAULT_READ") else {
        return;
    };
    let p = PathBuf::from(p);
    let stop_file = p.parent().unwrap().join("stop");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    std::thread::spawn(move || {
        // The parent creates the stop file; a minute is the limit if it never does.
        let t0 = Instant::now();
        while !stop_file.exists() && t0.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(5));
        }
        s2.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let (ok, err) = read_until(&p, &stop);
    println!("reads {ok} {err}");
}
