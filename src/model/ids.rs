//! The codec and filter ids of Blosc2 chunk and frame headers, and their names: the one
//! registry every layer uses.

#![forbid(unsafe_code)]

/// No filter.
pub(crate) const BLOSCLZ: u8 = 0;
pub(crate) const LZ4: u8 = 1;
pub(crate) const LZ4HC: u8 = 2;
pub(crate) const ZLIB: u8 = 4;
pub(crate) const ZSTD: u8 = 5;
pub(crate) const ZFP_ACC: u8 = 33;
pub(crate) const ZFP_PREC: u8 = 34;
pub(crate) const ZFP_RATE: u8 = 35;

pub(crate) const NOFILTER: u8 = 0;
/// Byte shuffle (`BLOSC_SHUFFLE`).
pub(crate) const SHUFFLE: u8 = 1;
/// Bit shuffle (`BLOSC_BITSHUFFLE`).
pub(crate) const BITSHUFFLE: u8 = 2;
/// XOR delta against the reference block (`BLOSC_DELTA`).
pub(crate) const DELTA: u8 = 3;
/// Floating point mantissa truncation (`BLOSC_TRUNC_PREC`).
pub(crate) const TRUNC_PREC: u8 = 4;
/// N-d cell grouping plugin (`BLOSC_FILTER_NDCELL`).
pub(crate) const NDCELL: u8 = 32;
/// N-d cell mean plugin (`BLOSC_FILTER_NDMEAN`).
pub(crate) const NDMEAN: u8 = 33;
/// NDMEAN as c-blosc2's 2021 plugin tests registered it (user filter 165), in the caterva
/// files they committed (`plugins/filters/ndmean/example_ndmean_*.caterva`): the same
/// decoder as NDMEAN (cells back to C order), checked on those files (every cell constant).
pub(crate) const NDMEAN_OLD: u8 = 165;
/// Byte-wise delta per byte stream (`BLOSC_FILTER_BYTEDELTA`).
pub(crate) const BYTEDELTA: u8 = 35;
/// Integer truncation (`BLOSC_FILTER_INT_TRUNC`).
pub(crate) const INT_TRUNC: u8 = 36;

/// Lowercase name of a filter id, for messages.
pub(crate) fn filter_name(id: u8) -> String {
    match id {
        NOFILTER => "nofilter".to_string(),
        SHUFFLE => "shuffle".to_string(),
        BITSHUFFLE => "bitshuffle".to_string(),
        DELTA => "delta".to_string(),
        TRUNC_PREC => "trunc_prec".to_string(),
        NDCELL => "ndcell".to_string(),
        NDMEAN => "ndmean".to_string(),
        NDMEAN_OLD => "ndmean (old user id 165)".to_string(),
        BYTEDELTA => "bytedelta".to_string(),
        INT_TRUNC => "int_trunc".to_string(),
        _ => format!("filter {id}"),
    }
}

/// The lowercase c-blosc2 name of a codec id (`compcode`).
pub(crate) fn codec_name(code: u8) -> String {
    match code {
        0 => "blosclz".into(),
        1 => "lz4".into(),
        2 => "lz4hc".into(),
        3 => "snappy".into(),
        4 => "zlib".into(),
        5 => "zstd".into(),
        32 => "ndlz".into(),
        33 => "zfp_acc".into(),
        34 => "zfp_prec".into(),
        35 => "zfp_rate".into(),
        36 => "openhtj2k".into(),
        37 => "grok".into(),
        38 => "openzl".into(),
        39 => "j2k".into(),
        40 => "htj2k".into(),
        other => format!("codec {other}"),
    }
}

/// A codec id registered since c-blosc2 2.15 as python-blosc2 names it, with the python
/// plugin package that writes it (none of them is decodable here): for refusals.
pub(crate) fn plugin_codec(code: u8) -> Option<(&'static str, &'static str)> {
    Some(match code {
        36 => ("OPENHTJ2K", "blosc2-openhtj2k"),
        37 => ("GROK", "blosc2-grok"),
        38 => ("OPENZL", "blosc2-openzl"),
        39 => ("J2K", "blosc2-j2k"),
        40 => ("HTJ2K", "blosc2-htj2k"),
        _ => return None,
    })
}

/// A codec id for a message: its name and id, and for the plugin codecs the python package
/// that writes them.
pub(crate) fn codec_label(code: u8) -> String {
    match plugin_codec(code) {
        Some((name, package)) => {
            format!("{name} (id {code}, written by the python plugin `{package}`)")
        }
        None => format!("{} (id {code})", codec_name(code)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn codecs_registered_since_2_15_are_named_with_their_plugin() {
        for (id, name, pkg) in [
            (36, "OPENHTJ2K", "blosc2-openhtj2k"),
            (37, "GROK", "blosc2-grok"),
            (38, "OPENZL", "blosc2-openzl"),
            (39, "J2K", "blosc2-j2k"),
            (40, "HTJ2K", "blosc2-htj2k"),
        ] {
            let l = super::codec_label(id);
            assert!(l.starts_with(name) && l.contains(pkg) && l.contains(&format!("id {id}")));
            assert!(!l.contains("codec "), "{l}");
        }
        assert_eq!(super::codec_label(32), "ndlz (id 32)");
        assert_eq!(super::codec_label(41), "codec 41 (id 41)");
    }
}
