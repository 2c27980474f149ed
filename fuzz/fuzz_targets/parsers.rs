//! The text and byte parsers of the model and format layers: the first byte picks one.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 5 {
        0 => {
            let _ = b2nd::meta::parse(b2nd::Format::B2nd, rest);
        }
        1 => {
            let _ = b2nd::meta::parse(b2nd::Format::Caterva, rest);
        }
        2 => {
            if let Ok(s) = std::str::from_utf8(rest) {
                if let Ok(d) = b2nd::Dtype::parse(s) {
                    // What a dtype prints parses back to the same dtype.
                    let again = b2nd::Dtype::parse(&d.to_numpy_str()).expect("printed dtype parses");
                    assert_eq!(again, d);
                }
            }
        }
        3 => {
            if let Ok(v) = b2nd::Value::decode(rest) {
                // What decodes encodes and decodes to the same value (compared encoded:
                // NaN is not equal to itself).
                let bytes = v.encode();
                let again = b2nd::Value::decode(&bytes).expect("encoded value decodes");
                assert_eq!(again.encode(), bytes);
            }
        }
        _ => {
            let _ = b2nd::npy::parse_header(rest);
        }
    }
});
