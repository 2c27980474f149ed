//! `b2nd append` and `b2nd resize`: in-place changes through `b2nd::ArrayMut`.

use std::io::Read;
use std::path::Path;

use b2nd::ArrayMut;

type Res = Result<(), Box<dyn std::error::Error>>;

/// Append the array of the `.npy` file `input` to `array` along `axis`.
pub(crate) fn append(array: &Path, input: &Path, axis: usize, threads: Option<usize>) -> Res {
    let mut a = ArrayMut::open(array)?;
    if let Some(t) = threads {
        a = a.with_threads(b2nd::Threads::count(t)?);
    }
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
    let shape = have.shape();
    if axis >= shape.len() {
        return Err(format!("--axis {axis}: the array has {} dimensions", shape.len()).into());
    }
    let fits = h.shape.len() == shape.len()
        && h.shape
            .iter()
            .zip(shape)
            .enumerate()
            .all(|(d, (n, s))| d == axis || n == s);
    if !fits {
        return Err(format!(
            "{}: shape {:?} does not extend the array's {:?} along axis {axis}",
            input.display(),
            h.shape,
            shape
        )
        .into());
    }
    let mut data = Vec::with_capacity(nbytes as usize);
    f.read_to_end(&mut data)
        .map_err(|e| format!("{}: {e}", input.display()))?;
    if h.fortran_order && h.shape.len() > 1 {
        data = crate::fortran_to_c(&data, &h.shape, h.dtype.itemsize());
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
