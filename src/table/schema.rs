//! A table's schema: its columns as python-blosc2 records them (`_meta`'s `schema` JSON),
//! computed columns' definitions, and the values recorded in it (defaults, sentinels).

#![forbid(unsafe_code)]

use super::ColumnKind;
use crate::expr::Expression;
use crate::model::attrs::Value;

/// One column of a table's schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub(super) name: String,
    pub(super) kind: ColumnKind,
    pub(super) nullable: bool,
    pub(super) null_value: Option<Value>,
    pub(super) mask: bool,
    /// `timestamp` columns: the unit (`s`, `ms`, `us`, `ns`, ...).
    pub(super) unit: Option<String>,
    /// A computed column's definition (it has no storage).
    pub(super) computed: Option<Computed>,
    /// The schema entry as stored (a `struct` column's `fields` are read from it).
    pub(super) spec: Value,
}

/// A computed column's definition: python-blosc2's `add_computed_column`, stored in the
/// table's schema and evaluated when read.
#[derive(Debug, Clone, PartialEq)]
pub struct Computed {
    /// A DSL kernel's name (its source is in `expression`); `None` for expressions.
    pub(super) kernel: Option<String>,
    pub(super) expression: String,
    pub(super) deps: Vec<String>,
    pub(super) dtype: String,
    /// The parsed expression, or why b2nd cannot evaluate this column.
    pub(super) parsed: std::result::Result<Expression, String>,
}

impl Computed {
    /// The expression as stored, over operands `o0, o1, ...` (`(o0 * 2 + o1)`); a DSL
    /// kernel's source for DSL columns.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The columns bound to `o0, o1, ...`, in order.
    pub fn dependencies(&self) -> &[String] {
        &self.deps
    }

    /// The expression with its operands named (`(a * 2 + b)`), as python-blosc2 shows it;
    /// `kernel(a, b)` for a DSL kernel.
    pub fn readable(&self) -> String {
        if let Some(k) = &self.kernel {
            return format!("{k}({})", self.deps.join(", "));
        }
        let mut out = String::new();
        let b = self.expression.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            if word_start && b[i] == b'o' {
                let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                let end = i + 1 + digits;
                let word_end = b
                    .get(end)
                    .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
                if digits > 0 && word_end {
                    if let Some(dep) = self.expression[i + 1..end]
                        .parse::<usize>()
                        .ok()
                        .and_then(|k| self.deps.get(k))
                    {
                        out.push_str(dep);
                        i = end;
                        continue;
                    }
                }
            }
            let ch = self.expression[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
        }
        out
    }

    /// The result dtype python-blosc2 recorded (`float64`, `int32`, `bool`, ...).
    pub fn dtype(&self) -> &str {
        &self.dtype
    }

    /// `Ok` when b2nd evaluates this column; else why every read of it is refused (a DSL
    /// kernel, a function b2nd does not know, ...).
    pub fn evaluable(&self) -> std::result::Result<(), &str> {
        self.parsed.as_ref().map(|_| ()).map_err(String::as_str)
    }
}

impl Column {
    /// The column's name (`a.b` for a field of a struct column).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The schema kind ([`ColumnKind`]: `int64`, `float32`, `bool`, `string`, `bytes`,
    /// `timestamp`, `ndarray`, `utf8`, `dictionary`, `list`, `vlstring`, ...); compares
    /// equal to its name (`c.kind() == "utf8"`).
    pub fn kind(&self) -> &ColumnKind {
        &self.kind
    }

    /// Whether the column may hold nulls.
    pub fn nullable(&self) -> bool {
        self.nullable
    }

    /// Whether nulls are stored in a `.notnull` mask (else by an in-band `null_value`).
    pub fn mask_nulls(&self) -> bool {
        self.mask
    }

    /// The in-band value standing for a null (sentinel-stored nullable columns).
    pub(crate) fn null_value(&self) -> Option<&Value> {
        self.null_value.as_ref()
    }

    /// The schema entry as stored.
    pub(crate) fn spec(&self) -> &Value {
        &self.spec
    }

    /// The value the schema declares for rows that give none (`Some(Value::Nil)`: null);
    /// `None` when it declares no default (an append must give the column). Bytes, which
    /// python-blosc2 stores as `{"__bytes__": true, "base64": ...}`, are `Value::Bytes`.
    pub fn default_value(&self) -> Option<Value> {
        self.spec.get("default").map(declared)
    }

    /// A computed column's definition; `None` for stored columns. A computed column's
    /// [`Column::kind`] is the kind of its values (`float64`, `bool`, ...).
    pub fn computed(&self) -> Option<&Computed> {
        self.computed.as_ref()
    }

    /// Whether the column is one fixed-width array (read with
    /// [`Table::read_column`](crate::Table::read_column) and
    /// [`Table::read_column_bytes`](crate::Table::read_column_bytes)); the others (`utf8`,
    /// `dictionary`, `list`, `struct`, `vlstring`, `vlbytes`, `object`) read with
    /// [`Table::read_values`](crate::Table::read_values).
    pub fn is_fixed_width(&self) -> bool {
        self.kind.is_fixed_width()
    }
}

/// The columns of a parsed schema.
pub(super) fn parse_columns(schema: &Value) -> std::result::Result<Vec<Column>, String> {
    let cols = schema
        .get("columns")
        .and_then(Value::as_slice)
        .ok_or("no `columns` list")?;
    let mut out: Vec<Column> = Vec::with_capacity(cols.len());
    for (i, c) in cols.iter().enumerate() {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("column {i} has no name"))?;
        let kind = c
            .get("kind")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("column {name:?} has no kind"))?;
        if name.is_empty() || out.iter().any(|o| o.name == name) {
            return Err(format!("column name {name:?} is empty or repeated"));
        }
        let null_value = c.get("null_value").filter(|v| !v.is_nil()).cloned();
        out.push(Column {
            name: name.to_string(),
            kind: ColumnKind::from_name(kind),
            nullable: c.get("nullable").and_then(Value::as_bool).unwrap_or(false)
                || null_value.is_some(),
            mask: c.get("null_storage").and_then(Value::as_str) == Some("mask"),
            unit: (kind == "timestamp").then(|| {
                c.get("unit")
                    .and_then(Value::as_str)
                    .unwrap_or("us")
                    .to_string()
            }),
            null_value,
            computed: None,
            spec: c.clone(),
        });
    }
    let computed = schema
        .get("computed_columns")
        .and_then(Value::as_slice)
        .unwrap_or(&[]);
    for (i, c) in computed.iter().enumerate() {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("computed column {i} has no name"))?;
        if name.is_empty() || out.iter().any(|o| o.name == name) {
            return Err(format!(
                "computed column name {name:?} is empty or repeated"
            ));
        }
        let deps: Vec<String> = c
            .get("col_deps")
            .and_then(Value::as_slice)
            .ok_or_else(|| format!("computed column {name:?} has no col_deps"))?
            .iter()
            .map(|d| d.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("computed column {name:?}: a col_deps entry is not a name"))?;
        let dtype = c
            .get("dtype")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let kind = c
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("expression");
        let mut kernel = None;
        let (expression, parsed) = match kind {
            "expression" => {
                let text = c
                    .get("expression")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("computed column {name:?} has no expression"))?;
                let parsed = Expression::parse(text).and_then(|e| {
                    if e.operands() > deps.len() {
                        Err(format!(
                            "the expression names o{} but the column has {} dependencies",
                            e.operands() - 1,
                            deps.len()
                        ))
                    } else {
                        Ok(e)
                    }
                });
                (text.to_string(), parsed)
            }
            "dsl" => {
                let source = c.get("dsl_source").and_then(Value::as_str).unwrap_or("");
                // python-blosc2 names the column's kernel by its `def NAME(`.
                kernel = Some(
                    source
                        .split("def ")
                        .nth(1)
                        .and_then(|r| r.split('(').next())
                        .map(str::trim)
                        .filter(|n| !n.is_empty())
                        .unwrap_or("dsl_kernel")
                        .to_string(),
                );
                (
                    source.to_string(),
                    Err("a DSL kernel (python source b2nd does not run)".to_string()),
                )
            }
            other => (
                String::new(),
                Err(format!("a computed column of kind {other:?}")),
            ),
        };
        let parsed = parsed.and_then(|e| {
            numpy_type(&dtype)
                .map(|_| e)
                .ok_or_else(|| format!("its dtype {dtype:?} is not a number or bool"))
        });
        out.push(Column {
            name: name.to_string(),
            kind: ColumnKind::from_name(
                numpy_type(&dtype).map(kind_of_numpy).unwrap_or("computed"),
            ),
            nullable: false,
            null_value: None,
            mask: false,
            unit: None,
            spec: c.clone(),
            computed: Some(Computed {
                kernel,
                expression,
                deps,
                dtype,
                parsed,
            }),
        });
    }
    Ok(out)
}

/// The NumPy type string of a recorded computed-column dtype: `float64`, `int32`, `bool`,
/// ..., and the `<class 'blosc2.schema.float64'>` python-blosc2 4.14.1 records for true
/// divisions (see docs/meaning-audit.md).
pub(super) fn numpy_type(recorded: &str) -> Option<&'static str> {
    let name = recorded
        .strip_prefix("<class 'blosc2.schema.")
        .and_then(|r| r.strip_suffix("'>"))
        .unwrap_or(recorded);
    Some(match name {
        "bool" => "|b1",
        "int8" => "|i1",
        "int16" => "<i2",
        "int32" => "<i4",
        "int64" => "<i8",
        "uint8" => "|u1",
        "uint16" => "<u2",
        "uint32" => "<u4",
        "uint64" => "<u8",
        "float16" => "<f2",
        "float32" => "<f4",
        "float64" => "<f8",
        _ => return None,
    })
}

/// The schema kind of a NumPy type string from [`numpy_type`].
pub(super) fn kind_of_numpy(s: &str) -> &'static str {
    match s {
        "|b1" => "bool",
        "|i1" => "int8",
        "<i2" => "int16",
        "<i4" => "int32",
        "<i8" => "int64",
        "|u1" => "uint8",
        "<u2" => "uint16",
        "<u4" => "uint32",
        "<u8" => "uint64",
        "<f2" => "float16",
        "<f4" => "float32",
        _ => "float64",
    }
}

/// One item of a numeric or bool dtype (`s` its NumPy string, `b` its bytes) as a value;
/// `None` for other dtypes.
pub(crate) fn number(s: &str, b: &[u8]) -> Option<Value> {
    let little = !s.starts_with('>');
    let mut w = [0u8; 8];
    if b.len() > 8 {
        return None;
    }
    let word = if little {
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    } else {
        w[8 - b.len()..].copy_from_slice(b);
        u64::from_be_bytes(w)
    };
    let shift = 64 - 8 * b.len() as u32;
    Some(match (s.as_bytes().get(1)?, b.len()) {
        (b'b', 1) => Value::Bool(word != 0),
        (b'i' | b'M' | b'm', 1..=8) => Value::Int(((word << shift) as i64) >> shift),
        (b'u', 1..=7) => Value::Int(word as i64),
        (b'u', 8) => match i64::try_from(word) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::UInt(word),
        },
        (b'f', 4) => Value::Float(f64::from(f32::from_bits(word as u32))),
        (b'f', 8) => Value::Float(f64::from_bits(word)),
        _ => return None,
    })
}

/// A declared default as the value it stands for (python-blosc2 stores bytes as
/// `{"__bytes__": true, "base64": ...}`).
pub(super) fn declared(v: &Value) -> Value {
    if let Value::Map(fields) = v {
        let get = |k: &str| {
            fields
                .iter()
                .find(|(key, _)| key.as_str() == Some(k))
                .map(|(_, v)| v)
        };
        if let (Some(Value::Bool(true)), Some(Value::Str(b64))) = (get("__bytes__"), get("base64"))
        {
            if let Some(bytes) = base64(b64) {
                return Value::Bytes(bytes);
            }
        }
    }
    v.clone()
}

/// Standard base64 (with padding) decoded; `None` when it is not.
pub(super) fn base64(s: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let s = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for group in s.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in group.iter().enumerate() {
            acc |= digit(c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        match group.len() {
            4 => out.extend_from_slice(&bytes[1..4]),
            3 => out.extend_from_slice(&bytes[1..3]),
            2 => out.push(bytes[1]),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes() {
        assert_eq!(base64("").unwrap(), b"");
        assert_eq!(base64("aGk=").unwrap(), b"hi");
        assert_eq!(base64("aGV5").unwrap(), b"hey");
        assert_eq!(base64("aGVsbG8=").unwrap(), b"hello");
        assert!(base64("a").is_none() && base64("**").is_none());
    }
}
