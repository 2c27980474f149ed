"""What b2nd's table changes do that python-blosc2 4.14.1's omit, done with python's own
objects so that its replays (check_table_mut.py, diff_table_mut.py) and b2nd's changes
leave the same tables: the strings and items of deleted rows past the table's next row cut
off its utf8 columns and its columns of one msgpack item per row. python's `extend`
appends after them, pairing its new rows with the deleted rows' values
(docs/meaning-audit.md)."""


def cut_dead_utf8(t):
    """Cut the strings of deleted rows past the table's next row off its utf8 columns, as
    b2nd's append and delete do: python-blosc2 4.14.1's extend appends after them, pairing its
    new rows with the deleted rows' strings (docs/meaning-audit.md). Its own UTF8Array
    method."""
    from blosc2._utf8_array import UTF8Array

    pos = t._resolve_last_pos()
    for col in t._cols.values():
        if isinstance(col, UTF8Array) and len(col) > pos:
            col._rewrite_from(pos, [])


def cut_dead_cells(t):
    """Cut the items of deleted rows past the table's next row off its columns of one item per
    row (list, vlstring, vlbytes, object, struct), as b2nd's append and delete do:
    python-blosc2 4.14.1's extend appends after them (docs/meaning-audit.md). The batches
    before the one holding that row are kept and the rows before it in that batch appended
    as one batch, through python's own BatchArray."""
    from blosc2.list_array import ListArray
    from blosc2.scalar_array import _ScalarVarLenArray

    pos = t._resolve_last_pos()
    for col in t._cols.values():
        if not isinstance(col, (ListArray, _ScalarVarLenArray)) or len(col) <= pos:
            continue
        col.flush()
        keep = col[:pos]
        b = col._backend
        lengths = b._load_or_compute_batch_lengths()
        start, k = 0, 0
        while k < len(lengths) and start + lengths[k] <= pos:
            start += lengths[k]
            k += 1
        rebuild(col, [b[i][:] for i in range(k)] + ([keep[start:pos]] if pos > start else []))
        assert len(col) == pos, (len(col), pos)


def compact_cells(t, path):
    """python-blosc2's compact and close of table `t` (open for writing) at `path`, with the
    columns of one item per row compacted as b2nd compacts them: python-blosc2 4.14.1's
    compact reads right in its session but leaves their files as they were, pairing the
    rows with the wrong items once reopened (docs/meaning-audit.md). Their live items, read
    before, are written back to the files in batches of their `batch_rows`."""
    import os

    import blosc2 as b2
    from blosc2.list_array import ListArray
    from blosc2.scalar_array import _ScalarVarLenArray

    saved = {name: (t[name][:], getattr(col, "batch_rows", None) or getattr(col, "_batch_rows", 2048))
             for name, col in t._cols.items() if isinstance(col, (ListArray, _ScalarVarLenArray))}
    t.compact()
    t.close()
    for name, (items, rows) in saved.items():
        if not items:
            continue
        a = b2.open(os.path.join(path, "_cols", name + ".b2b"), mode="a")
        b = getattr(a, "_backend", a)
        typed = getattr(a, "_typed_batch", lambda x: x)
        b.clear()
        for i in range(0, len(items), rows):
            b.append(typed(items[i:i + rows]))


def rebuild(col, batches):
    """Column `col`'s BatchArray rebuilt from `batches` (c-blosc2 refuses a short batch
    appended after a `delete` left one short batch in a frame that records a larger chunk
    size), and its row counts made true."""
    from blosc2.list_array import ListArray

    b = col._backend
    # An Arrow-serialized list column takes batches of its declared Arrow type.
    typed = getattr(col, "_typed_batch", lambda x: x)
    b.clear()
    for items in batches:
        b.append(typed(items))
    if isinstance(col, ListArray):
        col._persisted_row_count = col._persisted_rows_count()
        col._invalidate_batch_caches()
    else:
        col._persisted_row_count = col._compute_persisted_rows()
        col._invalidate_prefix_cache()


def type_arrow_batches():
    """Make python-blosc2 4.14.1's assignment to a row of an Arrow-serialized list column work:
    `ListArray.__setitem__` hands its batch to the BatchArray as Python lists, whose inferred
    Arrow type (list<int64> for ints) differs from the column's (list<int32>), and the
    BatchArray raises "All Arrow batches in a BatchArray must share the same schema"
    (docs/meaning-audit.md). Python lists given to an Arrow BatchArray that has a schema are
    built in its type, as `ListArray._typed_batch` builds them for `extend`."""
    import pyarrow as pa
    from blosc2.batch_array import BatchArray

    untyped = BatchArray._normalize_arrow_batch

    def normalize(self, value):
        if isinstance(value, list) and self._arrow_schema is not None:
            value = pa.array(value, type=self._get_arrow_schema().field(0).type)
        return untyped(self, value)

    BatchArray._normalize_arrow_batch = normalize
