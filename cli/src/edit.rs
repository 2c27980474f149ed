//! `b2nd append`, `b2nd write` and `b2nd resize`: in-place changes through `b2nd::ArrayMut`;
//! `b2nd compact`: a table's, through `b2nd::TableMut`.

use std::io::Read;
use std::path::Path;

use b2nd::ArrayMut;

type Res = Result<(), Box<dyn std::error::Error>>;

/// `array` opened for changes, with `threads` for compression.
fn open(array: &Path, threads: Option<usize>) -> Result<ArrayMut, Box<dyn std::error::Error>> {
    let mut a = ArrayMut::open(array)?;
    if let Some(t) = threads {
        a = a.with_threads(b2nd::Threads::count(t)?);
    }
    Ok(a)
}

/// The `.npy` file `input`, checked to hold `a`'s dtype: its shape and C-order bytes.
fn read_npy(input: &Path, a: &ArrayMut) -> Result<(Vec<u64>, Vec<u8>), Box<dyn std::error::Error>> {
    let (mut f, h, nbytes) = crate::open_npy(input)?;
    let have = a.array();
    if h.dtype != *have.dtype() {
        return Err(format!(
            "{}: dtype {} differs from the array's {}",
            input.display(),
            h.dtype.to_numpy_str(),
            have.dtype_str()
        )
        .into());
    }
    let mut data = Vec::with_capacity(nbytes as usize);
    f.read_to_end(&mut data)
        .map_err(|e| format!("{}: {e}", input.display()))?;
    if data.len() as u64 != nbytes {
        return Err(format!(
            "{}: holds {} data bytes, its header says {nbytes}",
            input.display(),
            data.len()
        )
        .into());
    }
    if h.fortran_order {
        // Reordered into a new buffer (a C-order input is returned as read).
        data = h.to_c_order(&data).into_owned();
    }
    Ok((h.shape, data))
}

/// Write the array of the `.npy` file `input` into the slice `spec` of `array`.
pub(crate) fn write(array: &Path, input: &Path, spec: &str, threads: Option<usize>) -> Res {
    let slice: b2nd::Slice = spec.parse().map_err(|e| format!("--slice {spec:?}: {e}"))?;
    if slice
        .iter()
        .any(|i| matches!(i, b2nd::SliceItem::Range { step, .. } if *step != 1))
    {
        return Err(format!("--slice {spec:?}: in-place writes take steps of 1").into());
    }
    let mut a = open(array, threads)?;
    let (shape, data) = read_npy(input, &a)?;
    let want = a
        .array()
        .slice_shape(&slice)
        .map_err(|e| format!("--slice {spec:?}: {e}"))?;
    if shape != want {
        return Err(format!(
            "{}: shape {shape:?} differs from the shape {want:?} of slice {spec:?} of the array's {:?}",
            input.display(),
            a.array().shape()
        )
        .into());
    }
    a.write_slice_bytes(&slice, &data)
        .map_err(|e| format!("--slice {spec:?}: {e}"))?;
    Ok(())
}

/// Append the array of the `.npy` file `input` to `array` along `axis`.
pub(crate) fn append(array: &Path, input: &Path, axis: usize, threads: Option<usize>) -> Res {
    let mut a = open(array, threads)?;
    let (in_shape, data) = read_npy(input, &a)?;
    let have = a.array();
    let shape = have.shape();
    if axis >= shape.len() {
        return Err(format!("--axis {axis}: the array has {} dimensions", shape.len()).into());
    }
    let fits = in_shape.len() == shape.len()
        && in_shape
            .iter()
            .zip(shape)
            .enumerate()
            .all(|(d, (n, s))| d == axis || n == s);
    if !fits {
        return Err(format!(
            "{}: shape {:?} does not extend the array's {:?} along axis {axis}",
            input.display(),
            in_shape,
            shape
        )
        .into());
    }
    if data.is_empty() {
        return Ok(());
    }
    a.append_bytes(axis, &data)?;
    Ok(())
}

/// Resize `array` to the comma-separated `shape`.
pub(crate) fn resize(array: &Path, shape: &str) -> Res {
    let shape: Vec<u64> = if shape.trim().is_empty() {
        Vec::new()
    } else {
        shape
            .split(',')
            .map(|p| {
                p.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("shape: {:?} is not a size", p.trim()))
            })
            .collect::<Result<_, _>>()?
    };
    ArrayMut::open(array)?.resize(&shape)?;
    Ok(())
}

/// Compact `table` and print the deleted rows dropped.
pub(crate) fn compact(table: &Path) -> Res {
    println!("{}", b2nd::TableMut::open(table)?.compact()?);
    Ok(())
}
