//! Parsing: NumPy's dtype construction from a literal (`_convert_from_any` and friends): field
//! offsets, alignment, itemsize overrides, names.

#![forbid(unsafe_code)]

#[allow(unused_imports)]
use super::*;

pub(super) fn convert(lit: &Lit, align: bool, depth: usize) -> R<Dtype> {
    if depth > MAX_NESTING_DEPTH {
        return Err(format!(
            "the dtype nests deeper than {MAX_NESTING_DEPTH} levels"
        ));
    }
    match lit {
        Lit::Str(s) => parse_typestr(s),
        Lit::Tuple(items) => {
            if items.len() != 2 {
                return Err(format!(
                    "a dtype tuple must have 2 items (base dtype, shape), not {}",
                    items.len()
                ));
            }
            let base = convert(&items[0], align, depth + 1)?;
            apply_shape(base, &items[1])
        }
        Lit::List(items) => convert_list(items, align, depth),
        Lit::Dict(entries) => convert_dict(entries, align, depth),
        other => Err(format!("{} is not a dtype", other.describe())),
    }
}

/// `(base, n)` / `(base, shape)`: a sized flexible type, or a subarray (`_convert_from_tuple`).
pub(super) fn apply_shape(base: Dtype, spec: &Lit) -> R<Dtype> {
    let (dims, is_tuple): (Vec<i64>, bool) = match spec {
        Lit::Int(n) => {
            if base.is_unsized() {
                return sized_flexible(base, *n);
            }
            (vec![*n], false)
        }
        Lit::Tuple(v) | Lit::List(v) if v.iter().all(|x| matches!(x, Lit::Int(_))) => {
            if base.is_unsized() {
                return Err(
                    "invalid itemsize in generic type tuple: an unsized 'S', 'U' or 'V' \
                            takes an integer size, not a shape, and a zero-size subarray takes \
                            neither"
                        .to_string(),
                );
            }
            let dims = v
                .iter()
                .map(|x| if let Lit::Int(n) = x { *n } else { 0 })
                .collect();
            (dims, matches!(spec, Lit::Tuple(_)))
        }
        Lit::Bool(_) => return Err("invalid shape in fixed-type tuple".to_string()),
        other => {
            return Err(format!(
                "(base dtype, {}) tuples, which reinterpret a dtype, are not supported",
                other.describe()
            ))
        }
    };
    if dims.is_empty() {
        if is_tuple {
            return Ok(base); // NumPy: (base, ()) is base itself.
        }
        return Err("invalid shape in fixed-type tuple: empty list".to_string());
    }
    if dims.len() > MAX_SUBARRAY_DIMS {
        return Err(format!(
            "a subarray shape has {} dimensions, more than {MAX_SUBARRAY_DIMS}",
            dims.len()
        ));
    }
    let mut shape = Vec::with_capacity(dims.len());
    for &d in &dims {
        if d < 0 {
            return Err(format!("invalid subarray shape: dimension {d} is negative"));
        }
        let d = usize::try_from(d).map_err(|_| "invalid subarray shape".to_string())?;
        if d > MAX_ITEMSIZE {
            return Err(format!(
                "invalid subarray shape: dimension {d} exceeds {MAX_ITEMSIZE}"
            ));
        }
        shape.push(d);
    }
    if !shape.contains(&0) {
        let mut items: usize = 1;
        for &d in &shape {
            items = items.saturating_mul(d);
            if items > MAX_ITEMSIZE {
                return Err(format!(
                    "a subarray of shape {shape:?} has more than {MAX_ITEMSIZE} items"
                ));
            }
        }
        match items.checked_mul(base.itemsize()) {
            Some(n) if n <= MAX_ITEMSIZE => {}
            _ => {
                return Err(format!(
                    "a subarray of shape {shape:?} of {}-byte items exceeds {MAX_ITEMSIZE} bytes",
                    base.itemsize()
                ))
            }
        }
    }
    Ok(Dtype::SubArray {
        base: Box::new(base),
        shape,
    })
}

/// `('S', 5)`, `('U', 3)`, `('V', 7)`: NumPy's generic type with an itemsize.
pub(super) fn sized_flexible(base: Dtype, n: i64) -> R<Dtype> {
    let too_big = || format!("invalid itemsize {n} in generic type tuple");
    let n = usize::try_from(n).map_err(|_| too_big())?;
    match base {
        Dtype::Bytes { .. } if n <= MAX_ITEMSIZE => Ok(Dtype::Bytes { len: n }),
        Dtype::Void { .. } if n <= MAX_ITEMSIZE => Ok(Dtype::Void { len: n }),
        Dtype::Unicode { order, .. } if n <= MAX_ITEMSIZE / 4 => {
            Ok(Dtype::Unicode { chars: n, order })
        }
        _ => Err(too_big()),
    }
}

pub(super) fn round_up(x: usize, a: usize) -> R<usize> {
    let a = a.max(1);
    match x % a {
        0 => Ok(x),
        r => x
            .checked_add(a - r)
            .filter(|&v| v <= MAX_ITEMSIZE)
            .ok_or_else(|| format!("the struct itemsize exceeds {MAX_ITEMSIZE}")),
    }
}

pub(super) fn round_up_saturating(x: usize, a: usize) -> usize {
    let a = a.max(1);
    match x % a {
        0 => x,
        r => x.saturating_add(a - r),
    }
}

pub(super) fn add_size(a: usize, b: usize) -> R<usize> {
    a.checked_add(b)
        .filter(|&v| v <= MAX_ITEMSIZE)
        .ok_or_else(|| format!("the struct itemsize exceeds {MAX_ITEMSIZE}"))
}

/// Names and titles share one namespace and must all differ.
pub(super) fn claim_names(used: &mut HashSet<String>, name: &str, title: Option<&str>) -> R<()> {
    if used.contains(name) {
        return Err(format!("field {name:?} occurs more than once"));
    }
    used.insert(name.to_string());
    if let Some(t) = title {
        if used.contains(t) {
            return Err(format!(
                "title {t:?} is already used as a field name or title"
            ));
        }
        used.insert(t.to_string());
    }
    Ok(())
}

/// `[('a', '<i4'), (('T', 'b'), 'u1', (2,)), ...]` (`_convert_from_array_descr`).
pub(super) fn convert_list(items: &[Lit], align: bool, depth: usize) -> R<Dtype> {
    let mut fields = Vec::with_capacity(items.len());
    let mut used = HashSet::new();
    let mut total = 0usize;
    let mut max_align = 1usize;
    for (i, item) in items.iter().enumerate() {
        let parts = match item {
            Lit::Tuple(t) if (2..=3).contains(&t.len()) => t,
            other => {
                return Err(format!(
                    "struct fields must be 2- or 3-tuples (name, dtype[, shape]), found {}",
                    other.describe()
                ))
            }
        };
        let (title, mut name) = match &parts[0] {
            Lit::Str(n) => (None, n.clone()),
            Lit::Tuple(p) if p.len() == 2 => {
                let title = match &p[0] {
                    Lit::Str(t) => t.clone(),
                    other => {
                        return Err(format!(
                            "field titles must be strings (found {}): non-string titles are not supported",
                            other.describe()
                        ))
                    }
                };
                match &p[1] {
                    Lit::Str(n) => (Some(title), n.clone()),
                    other => {
                        return Err(format!(
                            "field names must be strings, found {}",
                            other.describe()
                        ))
                    }
                }
            }
            other => {
                return Err(format!(
                    "a field's first item must be a name or a (title, name) pair, found {}",
                    other.describe()
                ))
            }
        };
        if name.is_empty() {
            match &title {
                None => name = format!("f{i}"),
                Some(t) if !t.is_empty() => name = t.clone(),
                Some(_) => return Err("field titles must be non-empty strings".to_string()),
            }
        }
        let dtype = if parts.len() == 2 {
            convert(&parts[1], align, depth + 1)?
        } else {
            let base = convert(&parts[1], align, depth + 1)?;
            apply_shape(base, &parts[2])?
        };
        claim_names(&mut used, &name, title.as_deref())?;
        if align {
            let a = dtype.alignment();
            max_align = max_align.max(a);
            total = round_up(total, a)?;
        }
        let offset = total;
        total = add_size(total, dtype.itemsize())?;
        fields.push(Field {
            name,
            title,
            offset,
            dtype,
        });
    }
    if align {
        total = round_up(total, max_align)?;
    }
    Ok(Dtype::Struct(StructDtype {
        fields,
        itemsize: total,
        aligned: align,
    }))
}

pub(super) fn as_seq<'l>(v: &'l Lit, key: &str) -> R<&'l [Lit]> {
    match v {
        Lit::List(x) | Lit::Tuple(x) => Ok(x),
        other => Err(format!(
            "the dict entry {key:?} must be a list, found {}",
            other.describe()
        )),
    }
}

pub(super) fn as_int(v: &Lit, what: &str) -> R<i64> {
    match v {
        Lit::Int(n) => Ok(*n),
        other => Err(format!(
            "{what} must be an integer, found {}",
            other.describe()
        )),
    }
}

/// A field's title in a dict dtype: a string, or none.
fn field_title(t: Option<&Lit>) -> R<Option<String>> {
    match t {
        None | Some(Lit::None) => Ok(None),
        Some(Lit::Str(t)) => Ok(Some(t.clone())),
        Some(other) => Err(format!(
            "field titles must be strings or None (found {}): non-string titles are not supported",
            other.describe()
        )),
    }
}

/// A field's given offset, checked against `MAX_ITEMSIZE` and the alignment `align` (1 when
/// unaligned), and where the field of `size` bytes ends: `(offset, end)`.
fn explicit_offset(lit: &Lit, size: usize, align: usize) -> R<(usize, usize)> {
    let off = as_int(lit, "a field offset")?;
    if off < 0 {
        return Err(format!("offset {off} cannot be negative"));
    }
    let off = usize::try_from(off)
        .ok()
        .filter(|&o| o <= MAX_ITEMSIZE)
        .ok_or_else(|| format!("offset {off} exceeds {MAX_ITEMSIZE}"))?;
    if off % align != 0 {
        return Err(format!(
            "offset {off} is not divisible by the field alignment {align} with align=True"
        ));
    }
    let end = add_size(off, size)
        .map_err(|_| format!("a field at offset {off} of {size} bytes ends past {MAX_ITEMSIZE}"))?;
    Ok((off, end))
}

/// The `'itemsize'` given for a struct whose fields need `total` bytes, checked (at least
/// `total`, at most `MAX_ITEMSIZE`, divisible by the alignment `align`, 1 when unaligned).
fn requested_itemsize(v: &Lit, total: usize, align: usize) -> R<usize> {
    let requested = as_int(v, "'itemsize'")?;
    let isz = usize::try_from(requested).map_err(|_| {
        format!("the fields need {total} bytes, more than the itemsize {requested}")
    })?;
    if isz < total {
        return Err(format!(
            "the fields need {total} bytes, more than the itemsize {isz}"
        ));
    }
    if isz > MAX_ITEMSIZE {
        return Err(format!("itemsize {isz} exceeds {MAX_ITEMSIZE}"));
    }
    if isz % align != 0 {
        return Err(format!(
            "an aligned struct needs an itemsize divisible by its alignment {align}, not {isz}"
        ));
    }
    Ok(isz)
}

/// `{'names': [...], 'formats': [...], 'offsets': [...], 'titles': [...], 'itemsize': n,
/// 'aligned': True}` (`_convert_from_dict`).
pub(super) fn convert_dict(entries: &[(Lit, Lit)], align: bool, depth: usize) -> R<Dtype> {
    // Python dicts keep the last value of a repeated key; NumPy ignores unknown keys.
    let get = |key: &str| {
        entries
            .iter()
            .rev()
            .find(|(k, _)| matches!(k, Lit::Str(s) if s == key))
            .map(|(_, v)| v)
    };
    if let Some((k, _)) = entries.iter().find(|(k, _)| !matches!(k, Lit::Str(_))) {
        return Err(format!(
            "dtype dict keys must be strings, found {}",
            k.describe()
        ));
    }
    let (names, formats) = match (get("names"), get("formats")) {
        (Some(n), Some(f)) => (as_seq(n, "names")?, as_seq(f, "formats")?),
        _ => {
            return Err(
                "a dict dtype needs 'names' and 'formats' (the {name: (dtype, offset)} \
                        form is not supported)"
                    .to_string(),
            )
        }
    };
    let offsets = get("offsets").map(|v| as_seq(v, "offsets")).transpose()?;
    let titles = get("titles").map(|v| as_seq(v, "titles")).transpose()?;
    let n = names.len();
    if formats.len() < n
        || offsets.is_some_and(|o| o.len() < n)
        || titles.is_some_and(|t| t.len() < n)
    {
        return Err(
            "'names', 'formats', 'offsets' and 'titles' must have the same length".to_string(),
        );
    }
    let mut align = align;
    match get("aligned") {
        None | Some(Lit::Bool(false)) => {}
        Some(Lit::Bool(true)) => align = true,
        Some(other) => {
            return Err(format!(
                "'aligned' must be True or False, found {}",
                other.describe()
            ))
        }
    }
    let mut fields = Vec::with_capacity(n);
    let mut used = HashSet::new();
    let mut total = 0usize;
    let mut max_align = 1usize;
    for i in 0..n {
        let title = field_title(titles.map(|t| &t[i]))?;
        let dtype = convert(&formats[i], align, depth + 1)?;
        let a = dtype.alignment();
        if align {
            max_align = max_align.max(a);
        }
        let size = dtype.itemsize();
        let offset = match offsets {
            Some(offs) => {
                let (off, end) = explicit_offset(&offs[i], size, if align { a } else { 1 })?;
                total = total.max(end);
                off
            }
            None => {
                if align {
                    total = round_up(total, a)?;
                }
                let off = total;
                total = add_size(total, size)?;
                off
            }
        };
        let name = match &names[i] {
            Lit::Str(s) => s.clone(),
            other => {
                return Err(format!(
                    "field names must be strings, found {}",
                    other.describe()
                ))
            }
        };
        claim_names(&mut used, &name, title.as_deref())?;
        fields.push(Field {
            name,
            title,
            offset,
            dtype,
        });
    }
    if align {
        total = round_up(total, max_align)?;
    }
    if let Some(v) = get("itemsize") {
        total = requested_itemsize(v, total, if align { max_align } else { 1 })?;
    }
    Ok(Dtype::Struct(StructDtype {
        fields,
        itemsize: total,
        aligned: align,
    }))
}
