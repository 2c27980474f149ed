//! Typed reads: element types are checked against the dtype, big-endian data is converted,
//! and values equal python-blosc2's.

mod common;

use b2nd::{Array, Dtype, Error};
use common::*;

/// Decode the expected raw bytes of fixture `name` as items of `N` bytes, in its byte order.
fn expected_items<const N: usize>(name: &str) -> Vec<[u8; N]> {
    let big = fixture(name)["dtype"].as_str().unwrap().starts_with('>');
    expected(name)
        .chunks_exact(N)
        .map(|c| {
            let mut a: [u8; N] = c.try_into().unwrap();
            if big {
                a.reverse();
            }
            a
        })
        .collect()
}

fn typed_fixtures(dtype: &str) -> Vec<String> {
    fixtures()
        .into_iter()
        .filter(|f| {
            f["ok"] == true
                && f.get("supported").and_then(|s| s.as_bool()).unwrap_or(true)
                && f["dtype"] == dtype
        })
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect()
}

macro_rules! check_type {
    ($t:ty, $n:expr, $dtypes:expr) => {{
        let mut seen = 0;
        for dt in $dtypes {
            for name in typed_fixtures(dt) {
                let a = open_named(&name);
                let got: Vec<$t> = a.read().unwrap_or_else(|e| panic!("{name}: {e}"));
                let want: Vec<$t> = expected_items::<$n>(&name)
                    .into_iter()
                    .map(<$t>::from_ne_bytes)
                    .collect();
                assert_eq!(got.len(), want.len(), "{name}");
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(g.to_ne_bytes(), w.to_ne_bytes(), "{name}");
                }
                seen += 1;
            }
        }
        seen
    }};
}

#[test]
fn numeric_types_read_native_values() {
    let mut n = 0;
    n += check_type!(i8, 1, ["|i1"]);
    n += check_type!(u8, 1, ["|u1"]);
    n += check_type!(i16, 2, ["<i2", ">i2"]);
    n += check_type!(u16, 2, ["<u2", ">u2"]);
    n += check_type!(i32, 4, ["<i4", ">i4"]);
    n += check_type!(u32, 4, ["<u4", ">u4"]);
    n += check_type!(i64, 8, ["<i8", ">i8", "<M8[ns]", "<M8[D]", "<m8[s]"]);
    n += check_type!(u64, 8, ["<u8", ">u8"]);
    n += check_type!(f32, 4, ["<f4", ">f4"]);
    n += check_type!(f64, 8, ["<f8", ">f8"]);
    assert!(n >= 10, "only {n} typed fixtures found");
}

#[test]
fn bool_reads_and_rejects_other_bytes() {
    let names = typed_fixtures("|b1");
    assert!(!names.is_empty());
    for name in names {
        let a = open_named(&name);
        let raw = expected(&name);
        match a.read::<bool>() {
            Ok(v) => {
                assert!(
                    raw.iter().all(|&b| b <= 1),
                    "{name}: accepted invalid bool bytes"
                );
                assert_eq!(
                    v.iter().map(|&b| b as u8).collect::<Vec<_>>(),
                    raw,
                    "{name}"
                );
            }
            Err(Error::InvalidBool { index, value }) => {
                assert_eq!(raw[index], value);
                assert!(value > 1);
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
}

#[test]
fn wrong_types_are_refused() {
    let name = &typed_fixtures("<f8")[0];
    let a = open_named(name);
    assert!(matches!(a.read::<f32>(), Err(Error::TypeMismatch { .. })));
    assert!(matches!(a.read::<i64>(), Err(Error::TypeMismatch { .. })));
    assert!(matches!(a.read::<bool>(), Err(Error::TypeMismatch { .. })));
    let mut small = vec![0f64; 1];
    if a.nitems() != 1 {
        assert!(matches!(
            a.read_into(&mut small),
            Err(Error::BufferSize { .. })
        ));
    }
    let s = fixtures()
        .into_iter()
        .find(|f| f["ok"] == true && f["dtype"].as_str().unwrap().contains("S"))
        .unwrap();
    let a = Array::open(data_dir().join(s["path"].as_str().unwrap())).unwrap();
    assert!(matches!(a.read::<u8>(), Err(Error::TypeMismatch { .. })));
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_has_the_array_shape() {
    let name = &typed_fixtures("<f8")[0];
    let a = open_named(name);
    let nd = a.read_ndarray::<f64>().unwrap();
    let shape: Vec<usize> = a.shape().iter().map(|&s| s as usize).collect();
    assert_eq!(nd.shape(), &shape[..]);
    // Compare bit patterns: the data holds NaN, which never equals itself.
    let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    assert_eq!(
        bits(nd.iter().copied().collect()),
        bits(a.read::<f64>().unwrap())
    );
}

#[cfg(feature = "f16")]
#[test]
fn f16_reads() {
    for name in typed_fixtures("<f2") {
        let a = open_named(&name);
        let v: Vec<half::f16> = a.read().unwrap();
        let raw = expected(&name);
        assert_eq!(
            v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
            raw
        );
    }
}

#[cfg(feature = "complex")]
#[test]
fn complex_reads() {
    for name in typed_fixtures("<c16") {
        let a = open_named(&name);
        let v: Vec<num_complex::Complex<f64>> = a.read().unwrap();
        let raw = expected(&name);
        let back: Vec<u8> = v
            .iter()
            .flat_map(|c| [c.re.to_le_bytes(), c.im.to_le_bytes()].concat())
            .collect();
        assert_eq!(back, raw);
    }
}

/// Compare one typed reading with what python-blosc2 read (`typed` in the manifest).
fn check_typed(
    what: &str,
    want: &serde_json::Value,
    strings: impl Fn() -> b2nd::Result<Vec<String>>,
    bytes: impl Fn() -> b2nd::Result<Vec<Vec<u8>>>,
    ints: impl Fn() -> b2nd::Result<Vec<i64>>,
    floats: impl Fn() -> b2nd::Result<Vec<f64>>,
) {
    if let Some(s) = want.get("strings") {
        let want: Vec<String> = s
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(strings().unwrap(), want, "{what}");
    } else if let Some(b) = want.get("byte_strings") {
        let want: Vec<Vec<u8>> = b
            .as_array()
            .unwrap()
            .iter()
            .map(|v| unhex(v.as_str().unwrap()))
            .collect();
        assert_eq!(bytes().unwrap(), want, "{what}");
    } else if let Some(i) = want.get("ints") {
        let want: Vec<i64> = i
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(ints().unwrap(), want, "{what}");
    } else if let Some(f) = want.get("floats") {
        let want: Vec<f64> = f
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(floats().unwrap(), want, "{what}");
    } else {
        panic!("{what}: unknown typed entry {want}");
    }
}

/// The item dtype of a (possibly nested) subarray dtype.
fn base_of(mut dt: Dtype) -> Dtype {
    while let Dtype::SubArray { base, .. } = dt {
        dt = *base;
    }
    dt
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn strings_and_fields_equal_python() {
    let mut checked = 0;
    for f in fixtures() {
        let Some(typed) = f.get("typed") else {
            continue;
        };
        let name = f["name"].as_str().unwrap();
        let a = Array::open(data_dir().join(f["path"].as_str().unwrap())).unwrap();
        if let Some(fields) = typed.get("fields") {
            for (field, want) in fields.as_object().unwrap() {
                let what = format!("{name}.{field}");
                // Integers are read as the field's own type, widened here to compare.
                let ints = || -> b2nd::Result<Vec<i64>> {
                    let dt = base_of(a.read_field_bytes(field)?.0);
                    Ok(
                        match dt.to_numpy_str().trim_start_matches(['<', '>', '|', '=']) {
                            "i1" => a
                                .read_field::<i8>(field)?
                                .into_iter()
                                .map(i64::from)
                                .collect(),
                            "i2" => a
                                .read_field::<i16>(field)?
                                .into_iter()
                                .map(i64::from)
                                .collect(),
                            "i4" => a
                                .read_field::<i32>(field)?
                                .into_iter()
                                .map(i64::from)
                                .collect(),
                            "i8" => a.read_field::<i64>(field)?,
                            "u1" => a
                                .read_field::<u8>(field)?
                                .into_iter()
                                .map(i64::from)
                                .collect(),
                            "u2" => a
                                .read_field::<u16>(field)?
                                .into_iter()
                                .map(i64::from)
                                .collect(),
                            "u4" => a
                                .read_field::<u32>(field)?
                                .into_iter()
                                .map(i64::from)
                                .collect(),
                            other => panic!("{other}"),
                        },
                    )
                };
                let floats = || -> b2nd::Result<Vec<f64>> {
                    let dt = base_of(a.read_field_bytes(field)?.0);
                    Ok(if dt.itemsize() == 4 {
                        a.read_field::<f32>(field)?
                            .into_iter()
                            .map(f64::from)
                            .collect()
                    } else {
                        a.read_field::<f64>(field)?
                    })
                };
                check_typed(
                    &what,
                    want,
                    || a.read_field_strings(field),
                    || a.read_field_byte_strings(field),
                    ints,
                    floats,
                );
                checked += 1;
            }
        } else {
            check_typed(
                name,
                typed,
                || a.read_strings(),
                || a.read_byte_strings(),
                || unreachable!(),
                || unreachable!(),
            );
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} typed readings checked");
    // Wrong types and names are errors that say so.
    let u = Array::open(data_dir().join("dtype_le_U3.b2nd")).unwrap();
    assert!(matches!(
        u.read_byte_strings(),
        Err(Error::TypeMismatch { .. })
    ));
    assert!(matches!(
        u.read_field::<i32>("a"),
        Err(Error::NoField { .. })
    ));
    let s = Array::open(data_dir().join("dtype_struct_list.b2nd")).unwrap();
    assert!(matches!(
        s.read_field::<f64>("a"),
        Err(Error::TypeMismatch { .. })
    ));
    assert!(matches!(
        s.read_field::<i32>("zz"),
        Err(Error::NoField { .. })
    ));
    assert!(matches!(s.read_strings(), Err(Error::TypeMismatch { .. })));
}
