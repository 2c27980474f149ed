//! STUB (replaced by the real module)
#![allow(dead_code, missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)] pub enum ByteOrder { Little, Big, NotApplicable }
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dtype { Bool, Int { size: usize, order: ByteOrder }, UInt { size: usize, order: ByteOrder }, Float { size: usize, order: ByteOrder }, Complex { size: usize, order: ByteOrder }, Datetime { order: ByteOrder }, Timedelta { order: ByteOrder }, Bytes { len: usize } }
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid dtype {dtype:?}: {reason}")]
pub struct DtypeError { pub dtype: String, pub reason: String }
impl Dtype {
  pub fn parse(s: &str) -> Result<Dtype, DtypeError> {
    let o = if s.starts_with('>') { ByteOrder::Big } else { ByteOrder::Little };
    let n: usize = s[2..].parse().map_err(|_| DtypeError{dtype:s.into(), reason:"stub".into()})?;
    Ok(match &s[1..2] { "b" => Dtype::Bool, "i" => Dtype::Int{size:n,order:o}, "u" => Dtype::UInt{size:n,order:o}, "f" => Dtype::Float{size:n,order:o}, "c" => Dtype::Complex{size:n,order:o}, "S" => Dtype::Bytes{len:n}, _ => return Err(DtypeError{dtype:s.into(), reason:"stub".into()}) })
  }
  pub fn bytes(n: usize) -> Dtype { Dtype::Bytes { len: n } }
  pub fn itemsize(&self) -> usize { match self { Dtype::Bool => 1, Dtype::Int{size,..}|Dtype::UInt{size,..}|Dtype::Float{size,..}|Dtype::Complex{size,..} => *size, Dtype::Bytes{len} => *len, _ => 8 } }
  pub fn is_native_order(&self) -> bool { !matches!(self, Dtype::Int{order: ByteOrder::Big,..}|Dtype::UInt{order: ByteOrder::Big,..}|Dtype::Float{order: ByteOrder::Big,..}) }
  pub fn to_numpy_str(&self) -> String { format!("{self:?}") }
  pub fn npy_descr(&self) -> (String, Vec<usize>) { (format!("'{}'", self.to_numpy_str()), vec![]) }
}
impl std::fmt::Display for Dtype { fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "{}", self.to_numpy_str()) } }
