//! Async calls for engines (feature `remote`): each runs the sync call on the blocking pool
//! of the caller's Tokio runtime (`spawn_blocking`), so an async engine never blocks its
//! workers on b2nd's requests and decoding; outside a Tokio runtime the call runs inline.
//! Reads take an `Arc` of the opened array or table, which they share with the task.
//!
//! ```
//! use std::sync::Arc;
//!
//! let rt = tokio::runtime::Builder::new_current_thread().build()?;
//! let url = format!("file://{}/tests/data/f8_2d_ragged.b2nd", env!("CARGO_MANIFEST_DIR"));
//! let v = rt.block_on(async {
//!     let a = Arc::new(b2nd::Array::open_url_async(&url, b2nd::RemoteOptions::new()).await?);
//!     let s: b2nd::Slice = "1:3".parse()?;
//!     a.read_slice_async::<f64>(s.to_vec()).await
//! })?;
//! assert_eq!(v.len(), 2 * 7);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

use std::sync::Arc;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::model::chunk_data::ChunkData;
use crate::model::dtype::Dtype;
use crate::model::element::Element;
use crate::model::selection::SliceItem;
use crate::schunk::SChunk;
use crate::storage::RemoteOptions;
use crate::store::Store;
use crate::table::Table;

/// Run `f` on the blocking pool of the current Tokio runtime (inline without one).
async fn off_runtime<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    match tokio::runtime::Handle::try_current() {
        Ok(h) => h.spawn_blocking(f).await.map_err(|e| Error::Remote {
            url: String::new(),
            reason: format!("the blocking task of an async call failed: {e}"),
        })?,
        Err(_) => f(),
    }
}

impl Array {
    /// [`Array::open_url_with`], async.
    pub async fn open_url_async(url: &str, options: RemoteOptions) -> Result<Array> {
        let url = url.to_string();
        off_runtime(move || Array::open_url_with(&url, &options)).await
    }

    /// [`Array::open_object`], async.
    pub async fn open_object_async(
        store: Arc<dyn object_store::ObjectStore>,
        path: &str,
        options: RemoteOptions,
    ) -> Result<Array> {
        let path = path.to_string();
        off_runtime(move || Array::open_object(store, &path, &options)).await
    }

    /// [`Array::read_slice_bytes`], async.
    pub async fn read_slice_bytes_async(
        self: &Arc<Self>,
        items: Vec<SliceItem>,
    ) -> Result<Vec<u8>> {
        let a = self.clone();
        off_runtime(move || a.read_slice_bytes(&items)).await
    }

    /// [`Array::read_slice`], async: typed items, checked against the dtype.
    pub async fn read_slice_async<T: Element + Default + Send + 'static>(
        self: &Arc<Self>,
        items: Vec<SliceItem>,
    ) -> Result<Vec<T>> {
        let a = self.clone();
        off_runtime(move || a.read_slice::<T>(&items)).await
    }

    /// [`Array::read`], async.
    pub async fn read_async<T: Element + Default + Send + 'static>(
        self: &Arc<Self>,
    ) -> Result<Vec<T>> {
        let a = self.clone();
        off_runtime(move || a.read::<T>()).await
    }

    /// [`Array::read_slice_ndarray`], async (features `remote` and `ndarray`).
    #[cfg(feature = "ndarray")]
    pub async fn read_slice_ndarray_async<T: Element + Default + Send + 'static>(
        self: &Arc<Self>,
        items: Vec<SliceItem>,
    ) -> Result<ndarray::ArrayD<T>> {
        let a = self.clone();
        off_runtime(move || a.read_slice_ndarray::<T>(&items)).await
    }

    /// [`Array::read_bytes`], async.
    pub async fn read_bytes_async(self: &Arc<Self>) -> Result<Vec<u8>> {
        let a = self.clone();
        off_runtime(move || a.read_bytes()).await
    }

    /// [`Array::read_chunk`], async.
    pub async fn read_chunk_async(self: &Arc<Self>, n: u64) -> Result<ChunkData> {
        let a = self.clone();
        off_runtime(move || a.read_chunk(n)).await
    }
}

impl SChunk {
    /// [`SChunk::open_url_with`], async.
    pub async fn open_url_async(url: &str, options: RemoteOptions) -> Result<SChunk> {
        let url = url.to_string();
        off_runtime(move || SChunk::open_url_with(&url, &options)).await
    }
}

impl Store {
    /// [`Store::open_url_with`], async.
    pub async fn open_url_async(url: &str, options: RemoteOptions) -> Result<Store> {
        let url = url.to_string();
        off_runtime(move || Store::open_url_with(&url, &options)).await
    }
}

impl Table {
    /// [`Table::open_url_with`], async.
    pub async fn open_url_async(url: &str, options: RemoteOptions) -> Result<Table> {
        let url = url.to_string();
        off_runtime(move || Table::open_url_with(&url, &options)).await
    }

    /// [`Table::read_column_bytes`], async.
    pub async fn read_column_bytes_async(
        self: &Arc<Self>,
        name: &str,
    ) -> Result<(Dtype, Vec<u64>, Vec<u8>)> {
        let (t, name) = (self.clone(), name.to_string());
        off_runtime(move || t.read_column_bytes(&name)).await
    }
}
