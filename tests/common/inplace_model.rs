//! The in-place tests' model: an `i32` array in memory, the random changes applied to it
//! and to an `ArrayMut`, and a deterministic generator.

use b2nd::{Array, ArrayBuilder, ArrayMut, Codec, Filter, Target, Value};
use std::path::{Path, PathBuf};

/// A small deterministic generator (xorshift64*), so that failures replay from the seed.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.u64() % n
        }
    }
}

/// The expected contents: a C-order `i32` array.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub shape: Vec<u64>,
    pub data: Vec<i32>,
    /// The attribute `n`, when set.
    pub attr: Option<i64>,
}

pub fn strides(shape: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

pub fn positions(shape: &[u64]) -> Vec<Vec<u64>> {
    let n: u64 = shape.iter().product();
    (0..n)
        .map(|mut i| {
            let mut p = vec![0; shape.len()];
            for d in (0..shape.len()).rev() {
                p[d] = i % shape[d];
                i /= shape[d];
            }
            p
        })
        .collect()
}

impl Model {
    pub fn at(&self, p: &[u64]) -> usize {
        p.iter()
            .zip(strides(&self.shape))
            .map(|(a, b)| a * b)
            .sum::<u64>() as usize
    }
    pub fn write(&mut self, start: &[u64], shape: &[u64], v: &[i32]) {
        for (k, p) in positions(shape).iter().enumerate() {
            let q: Vec<u64> = p.iter().zip(start).map(|(a, b)| a + b).collect();
            let i = self.at(&q);
            self.data[i] = v[k];
        }
    }
    pub fn resize(&mut self, shape: &[u64]) {
        let mut m = Model {
            shape: shape.to_vec(),
            data: vec![0; shape.iter().product::<u64>() as usize],
            attr: self.attr,
        };
        for p in positions(shape) {
            if p.iter().zip(&self.shape).all(|(a, b)| a < b) {
                let i = m.at(&p);
                m.data[i] = self.data[self.at(&p)];
            }
        }
        *self = m;
    }
}

/// Whether the array at `path` holds the model's contents (shape, values, attribute).
pub fn holds(a: &Array, m: &Model) -> bool {
    a.shape() == &m.shape[..]
        && a.read::<i32>().ok().as_ref() == Some(&m.data)
        && a.attr("n").ok() == Some(m.attr.map(Value::Int))
}

pub fn check(path: &Path, m: &Model) {
    let a = Array::open(path).unwrap();
    assert_eq!(a.shape(), &m.shape[..], "{}", path.display());
    assert_eq!(a.read::<i32>().unwrap(), m.data, "{}", path.display());
    assert_eq!(
        a.attr("n").unwrap(),
        m.attr.map(Value::Int),
        "{}",
        path.display()
    );
}

pub fn create(
    dir: &Path,
    sparse: bool,
    [shape, chunks, blocks]: [&[u64]; 3],
    codec: Codec,
    filters: &[Filter],
    rng: &mut Rng,
) -> (PathBuf, Model) {
    let n: u64 = shape.iter().product();
    let data: Vec<i32> = (0..n).map(|_| (rng.below(2000) as i32) - 1000).collect();
    let path = dir.join(if sparse { "a.b2nd.d" } else { "a.b2nd" });
    let target = if sparse {
        Target::Sparse(path.clone())
    } else {
        Target::File(path.clone())
    };
    ArrayBuilder::for_type::<i32>(shape)
        .chunks(chunks)
        .blocks(blocks)
        .codec(codec)
        .filters(filters)
        .write(target, &data)
        .unwrap();
    (
        path,
        Model {
            shape: shape.to_vec(),
            data,
            attr: None,
        },
    )
}

/// One change, as the array and the model both apply it.
#[derive(Debug, Clone)]
pub enum Op {
    Write(Vec<u64>, Vec<u64>, Vec<i32>),
    Resize(Vec<u64>),
    Append(usize, Vec<u64>, Vec<i32>),
    Attr(i64),
}

impl Op {
    /// A random change of the array the model holds.
    pub fn random(m: &Model, rng: &mut Rng) -> Op {
        let nd = m.shape.len();
        match rng.below(4) {
            0 if !m.data.is_empty() => {
                let start: Vec<u64> = m.shape.iter().map(|&s| rng.below(s)).collect();
                let shape: Vec<u64> = m
                    .shape
                    .iter()
                    .zip(&start)
                    .map(|(&s, &o)| 1 + rng.below(s - o))
                    .collect();
                let n: u64 = shape.iter().product();
                let v: Vec<i32> = (0..n).map(|_| rng.u64() as i32).collect();
                Op::Write(start, shape, v)
            }
            1 => Op::Resize(
                m.shape
                    .iter()
                    .map(|&s| (s + rng.below(7)).saturating_sub(3))
                    .collect(),
            ),
            2 if nd > 0 && m.shape.iter().enumerate().all(|(d, &s)| s > 0 || d == 0) => {
                let axis = if m.shape.iter().all(|&s| s > 0) {
                    rng.below(nd as u64) as usize
                } else {
                    0
                };
                let k = 1 + rng.below(5);
                let mut shape = m.shape.clone();
                shape[axis] = k;
                let n: u64 = shape.iter().product();
                let v: Vec<i32> = (0..n).map(|_| rng.u64() as i32).collect();
                Op::Append(axis, shape, v)
            }
            _ => Op::Attr(rng.below(1000) as i64),
        }
    }

    pub fn apply(&self, a: &mut ArrayMut) -> b2nd::Result<()> {
        match self {
            Op::Write(start, shape, v) => {
                a.write_region(&b2nd::Region::new(start.as_slice(), shape.as_slice()), v)
            }
            Op::Resize(shape) => a.resize(shape),
            Op::Append(axis, _, v) => a.append(*axis, v),
            Op::Attr(x) => a.set_attr("n", &Value::Int(*x)),
        }
    }

    pub fn apply_model(&self, m: &mut Model) {
        match self {
            Op::Write(start, shape, v) => m.write(start, shape, v),
            Op::Resize(shape) => m.resize(shape),
            Op::Append(axis, shape, v) => {
                let mut start = vec![0; m.shape.len()];
                start[*axis] = m.shape[*axis];
                let mut grown = m.shape.clone();
                grown[*axis] += shape[*axis];
                m.resize(&grown);
                m.write(&start, shape, v);
            }
            Op::Attr(x) => m.attr = Some(*x),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Op::Write(..) => "write",
            Op::Resize(..) => "resize",
            Op::Append(..) => "append",
            Op::Attr(..) => "attr",
        }
    }
}
