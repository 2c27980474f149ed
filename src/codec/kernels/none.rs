//! Stand-ins for the SSE2 kernels where there is no SSE2: nothing done, the scalar loops do all.

#![forbid(unsafe_code)]

pub(crate) fn shuffle(_src: &[u8], _dst: &mut [u8], _w: usize, _n: usize) -> usize {
    0
}
pub(crate) fn unshuffle_items(
    _src: &[u8],
    _dst: &mut [u8],
    _w: usize,
    _n: usize,
    _first: usize,
    _count: usize,
) -> usize {
    0
}
pub(crate) fn prefix_sum(_stream: &mut [u8]) -> (usize, u8) {
    (0, 0)
}
pub(crate) fn transpose_words(_words: &mut [u8]) -> usize {
    0
}
pub(crate) fn xor_into(_dst: &mut [u8], _src: &[u8]) -> usize {
    0
}
