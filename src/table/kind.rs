//! [`ColumnKind`]: the kinds of CTable columns python-blosc2's schema names.

#![forbid(unsafe_code)]

use std::fmt;

macro_rules! kinds {
    ($($(#[$doc:meta])* $variant:ident => $name:literal),* $(,)?) => {
        /// A CTable column's kind, as python-blosc2's schema names it (`kind` of each column
        /// entry); a computed column's kind is the kind of its values. Kinds this version of
        /// b2nd does not know keep their name ([`ColumnKind::Other`]): listed, and refused by
        /// name when read.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ColumnKind {
            $($(#[$doc])* $variant,)*
            /// A kind b2nd does not know, by its name.
            Other(String),
        }

        impl ColumnKind {
            /// The kind from its schema name.
            pub fn from_name(name: &str) -> ColumnKind {
                match name {
                    $($name => ColumnKind::$variant,)*
                    other => ColumnKind::Other(other.to_string()),
                }
            }

            /// The schema name (`int64`, `utf8`, ...).
            pub fn as_str(&self) -> &str {
                match self {
                    $(ColumnKind::$variant => $name,)*
                    ColumnKind::Other(name) => name,
                }
            }
        }
    };
}

kinds! {
    /// `bool`
    Bool => "bool",
    /// `int8`
    Int8 => "int8",
    /// `int16`
    Int16 => "int16",
    /// `int32`
    Int32 => "int32",
    /// `int64`
    Int64 => "int64",
    /// `uint8`
    UInt8 => "uint8",
    /// `uint16`
    UInt16 => "uint16",
    /// `uint32`
    UInt32 => "uint32",
    /// `uint64`
    UInt64 => "uint64",
    /// `float16` (a computed column's values)
    Float16 => "float16",
    /// `float32`
    Float32 => "float32",
    /// `float64`
    Float64 => "float64",
    /// `complex64`
    Complex64 => "complex64",
    /// `complex128`
    Complex128 => "complex128",
    /// Fixed-width text (NumPy `U`).
    String => "string",
    /// Fixed-width bytes (NumPy `S`).
    Bytes => "bytes",
    /// int64 counts of a unit, read as `datetime64[unit]`.
    Timestamp => "timestamp",
    /// A sub-array per row.
    NdArray => "ndarray",
    /// Text as offsets and bytes.
    Utf8 => "utf8",
    /// int32 codes into a list of values.
    Dictionary => "dictionary",
    /// A list per row (msgpack or Arrow batches).
    List => "list",
    /// A dict per row, stored whole.
    Struct => "struct",
    /// Variable-length text per row.
    VlString => "vlstring",
    /// Variable-length bytes per row.
    VlBytes => "vlbytes",
    /// Any msgpack value per row.
    Object => "object",
    /// A computed column whose recorded dtype is not a number or bool.
    Computed => "computed",
}

impl ColumnKind {
    /// Whether the column is one fixed-width array (the others are read as values).
    pub fn is_fixed_width(&self) -> bool {
        !matches!(
            self,
            ColumnKind::Utf8
                | ColumnKind::Dictionary
                | ColumnKind::List
                | ColumnKind::Struct
                | ColumnKind::VlString
                | ColumnKind::VlBytes
                | ColumnKind::Object
        )
    }
}

impl fmt::Display for ColumnKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for ColumnKind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ColumnKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::ColumnKind;

    #[test]
    fn names_round_trip() {
        for name in ["int64", "utf8", "struct", "complex128", "computed"] {
            let k = ColumnKind::from_name(name);
            assert!(!matches!(k, ColumnKind::Other(_)), "{name}");
            assert_eq!(k.as_str(), name);
            assert_eq!(k, name);
        }
        assert_eq!(
            ColumnKind::from_name("future"),
            ColumnKind::Other("future".into())
        );
    }
}
