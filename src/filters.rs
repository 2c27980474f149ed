//! STUB (replaced by the real module)
#![allow(dead_code, missing_docs)]
pub(crate) const SHUFFLE: u8 = 1;
pub(crate) const BITSHUFFLE: u8 = 2;
pub(crate) fn filter_name(id: u8) -> String { format!("filter {id}") }
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UnfilterError { Unsupported { id: u8, meta: u8 }, Corrupt(String) }
pub(crate) fn c_can_undo(filters: &[u8; 6], _meta: &[u8; 6], _t: usize) -> bool { filters.iter().all(|&f| f < 5) }
pub(crate) fn rust_can_undo(_f: &[u8; 6], _m: &[u8; 6]) -> Result<(), UnfilterError> { Err(UnfilterError::Unsupported{id:0,meta:0}) }
pub(crate) fn undo_chunk(_f: &[u8; 6], _m: &[u8; 6], _t: usize, _b: usize, _d: &mut [u8], _s: &mut Vec<u8>) -> Result<(), UnfilterError> { Ok(()) }
