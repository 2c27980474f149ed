//! A store file (`.b2z` zip, `.b2e` embed store) or a CTable `.b2z`: open, list, and read
//! every member and column it names.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(if which & 1 == 0 { "s.b2z" } else { "s.b2e" });
    std::fs::write(&path, rest).unwrap();
    if let Ok(s) = b2nd::Store::open(&path) {
        for key in s.keys().into_iter().take(32) {
            let _ = s.member_kind(&key);
            if let Ok(a) = s.open_array(&key) {
                if a.nbytes() <= 16 << 20 {
                    let _ = a.read_bytes();
                }
            }
            if let Ok(sc) = s.open_schunk(&key) {
                let _ = sc.read_objects();
            }
        }
        for g in s.groups().into_iter().take(8) {
            let _ = s.group_attrs(&g);
        }
    }
    if which & 1 == 0 {
        if let Ok(t) = b2nd::Table::open(&path) {
            for c in t.columns().iter().take(16) {
                let _ = t.read_column_bytes(c.name());
                let _ = t.read_validity(c.name());
            }
        }
    }
});
