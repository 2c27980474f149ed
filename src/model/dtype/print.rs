//! Printing dtypes exactly as NumPy does (`str(dtype)`, `dtype.str`).

#![forbid(unsafe_code)]

#[allow(unused_imports)]
use super::*;

pub(super) fn push_fmt(out: &mut String, args: fmt::Arguments<'_>) {
    use fmt::Write as _;
    // Writing into a String cannot fail.
    let _ = out.write_fmt(args);
}

pub(super) fn write_datetime_meta(unit: DatetimeUnit, count: u32, out: &mut String) {
    match (unit, count) {
        (DatetimeUnit::Generic, _) => {}
        (unit, 1) => push_fmt(out, format_args!("[{}]", unit.as_str())),
        (unit, n) => push_fmt(out, format_args!("[{n}{}]", unit.as_str())),
    }
}

/// Python's `repr()` of a tuple of ints: `(2,)`, `(2, 3)`, `()`.
pub(super) fn write_shape(shape: &[usize], out: &mut String) {
    out.push('(');
    for (i, d) in shape.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_fmt(out, format_args!("{d}"));
    }
    if shape.len() == 1 {
        out.push(',');
    }
    out.push(')');
}

/// `'name'` or `('title', 'name')`, as Python's `repr()` writes them.
pub(super) fn write_field_name(f: &Field, out: &mut String) {
    match &f.title {
        Some(t) => {
            out.push('(');
            write_py_str(t, out);
            out.push_str(", ");
            write_py_str(&f.name, out);
            out.push(')');
        }
        None => write_py_str(&f.name, out),
    }
}

/// NumPy's `_is_packed`: fields in order, each where a (possibly aligned) packed layout puts
/// it, and nothing after the last but alignment padding.
pub(super) fn is_packed(s: &StructDtype) -> bool {
    let mut total = 0usize;
    let mut max_align = 1usize;
    for f in &s.fields {
        if s.aligned {
            let a = f.dtype.alignment();
            max_align = max_align.max(a);
            total = round_up_saturating(total, a);
        }
        if f.offset != total {
            return false;
        }
        total = total.saturating_add(f.dtype.itemsize());
    }
    if s.aligned {
        total = round_up_saturating(total, max_align);
    }
    total == s.itemsize
}

/// NumPy's `_struct_str`, with one deliberate difference: an aligned struct in a position that
/// NumPy parses with `align=False` gets the dict form with `'aligned': True` (NumPy only does
/// that at top level and otherwise prints a form that reads back unaligned), and a struct with
/// a field named `''` gets the dict form (the list form renames it `f0`...).
pub(super) fn write_struct(s: &StructDtype, out: &mut String, ctx_aligned: bool) {
    let aligned_flag = s.aligned && !ctx_aligned;
    let empty_name = s.fields.iter().any(|f| f.name.is_empty());
    let child_ctx = s.aligned;
    if !aligned_flag && !empty_name && is_packed(s) {
        out.push('[');
        for (i, f) in s.fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push('(');
            write_field_name(f, out);
            out.push_str(", ");
            match &f.dtype {
                Dtype::SubArray { base, shape } => {
                    base.write_short(out, child_ctx);
                    out.push_str(", ");
                    write_shape(shape, out);
                }
                other => other.write_short(out, child_ctx),
            }
            out.push(')');
        }
        out.push(']');
        return;
    }
    out.push_str("{'names': [");
    for (i, f) in s.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_py_str(&f.name, out);
    }
    out.push_str("], 'formats': [");
    for (i, f) in s.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        f.dtype.write_short(out, child_ctx);
    }
    out.push_str("], 'offsets': [");
    for (i, f) in s.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_fmt(out, format_args!("{}", f.offset));
    }
    if s.fields.iter().any(|f| f.title.is_some()) {
        out.push_str("], 'titles': [");
        for (i, f) in s.fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            match &f.title {
                Some(t) => write_py_str(t, out),
                None => out.push_str("None"),
            }
        }
    }
    push_fmt(out, format_args!("], 'itemsize': {}", s.itemsize));
    if aligned_flag {
        out.push_str(", 'aligned': True");
    }
    out.push('}');
}

/// Code points Python's `str.isprintable()` rejects, other than unassigned ones (whose set
/// depends on Python's Unicode version): categories Cc, Cf, Cs, Co, Zs (except the space), Zl
/// and Zp, plus the permanently unassigned noncharacters (Python 3.11, Unicode 14).
#[rustfmt::skip]
pub(super) const NON_PRINTABLE: &[(u32, u32)] = &[
    (0x0, 0x1F), (0x7F, 0xA0), (0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C), (0x6DD, 0x6DD),
    (0x70F, 0x70F), (0x890, 0x891), (0x8E2, 0x8E2), (0x1680, 0x1680), (0x180E, 0x180E),
    (0x2000, 0x200F), (0x2028, 0x202F), (0x205F, 0x2064), (0x2066, 0x206F), (0x3000, 0x3000),
    (0xD800, 0xF8FF), (0xFDD0, 0xFDEF), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0xFFFE, 0xFFFF),
    (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x13438), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0x1FFFE, 0x1FFFF), (0x2FFFE, 0x2FFFF), (0x3FFFE, 0x3FFFF),
    (0x4FFFE, 0x4FFFF), (0x5FFFE, 0x5FFFF), (0x6FFFE, 0x6FFFF), (0x7FFFE, 0x7FFFF),
    (0x8FFFE, 0x8FFFF), (0x9FFFE, 0x9FFFF), (0xAFFFE, 0xAFFFF), (0xBFFFE, 0xBFFFF),
    (0xCFFFE, 0xCFFFF), (0xDFFFE, 0xDFFFF), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
    (0xEFFFE, 0x10FFFF),
];

pub(super) fn is_py_printable(c: char) -> bool {
    let c = c as u32;
    NON_PRINTABLE
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_err()
}

/// Python's `repr()` of a `str`.
pub(super) fn write_py_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c == ' ' || (c.is_ascii_graphic()) => out.push(c),
            c if is_py_printable(c) => out.push(c),
            c => {
                let v = c as u32;
                if v <= 0xFF {
                    push_fmt(out, format_args!("\\x{v:02x}"));
                } else if v <= 0xFFFF {
                    push_fmt(out, format_args!("\\u{v:04x}"));
                } else {
                    push_fmt(out, format_args!("\\U{v:08x}"));
                }
            }
        }
    }
    out.push(quote);
}
