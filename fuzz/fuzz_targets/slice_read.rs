//! A frame plus a selection: the first bytes choose a NumPy basic-indexing selection (per
//! dimension an index or a start:stop:step range), the rest is the frame.
#![no_main]
use b2nd::SliceItem;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 17 {
        return;
    }
    let (sel, frame) = data.split_at(16);
    let Ok(a) = b2nd::Array::from_bytes(frame.to_vec()) else {
        return;
    };
    if a.nbytes() > 64 << 20 {
        return;
    }
    let items: Vec<SliceItem> = sel
        .chunks(4)
        .take(a.ndim())
        .map(|b| {
            let v = |x: u8| i64::from(x as i8);
            if b[0] & 1 == 0 {
                SliceItem::Index(v(b[1]))
            } else {
                SliceItem::Range {
                    start: (b[0] & 2 != 0).then(|| v(b[1])),
                    stop: (b[0] & 4 != 0).then(|| v(b[2])),
                    step: u64::from(b[3] % 8),
                }
            }
        })
        .collect();
    if let Ok(v) = a.read_slice_bytes(&items) {
        let n: u64 = a.slice_shape(&items).unwrap().iter().product();
        assert_eq!(v.len() as u64, n * a.itemsize() as u64);
    }
});
