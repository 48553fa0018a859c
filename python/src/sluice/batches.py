"""Batches: one published object of a segment, read zero-copy as a ``pyarrow.RecordBatch``.

The batch's buffers point into the mapped slot (docs/formats.md, "Slot descriptor"): nothing is
copied. The slot goes back to the daemon when the batch is released: explicitly (``release()``,
or leaving a ``with`` block), or, as a fallback, when the garbage collector has dropped the batch
and every Arrow array made from it (a ``weakref.finalize`` on the slot's memory, which each of
those arrays holds). After ``release()`` the batch refuses to be used; arrays taken from it
before must not be read any more, since the daemon reuses the slot.
"""

from __future__ import annotations

import weakref
from typing import Callable, Optional

import pyarrow as pa

from .segment import SegmentError, SlotObject, decode_batch


class BatchReleased(SegmentError):
    """A batch used after ``release()``: its slot may already hold another object."""


class Batch:
    """One segment object: its descriptor's fields and its rows as a ``pyarrow.RecordBatch``."""

    def __init__(self, obj: SlotObject, batch: pa.RecordBatch, memory: memoryview,
                 release: Callable[[], None]):
        self.object_id = obj.object_id
        self.slot = obj.slot
        self.partition = obj.partition
        self.first_offset = obj.first_offset
        self.last_offset = obj.last_offset
        self.num_rows = batch.num_rows
        self._batch: Optional[pa.RecordBatch] = batch
        # Tied to the slot's memory, which the batch's buffers hold: it runs when the last of
        # them is gone, or at once on release(), and only once.
        self._finalizer = weakref.finalize(memory, release)

    @property
    def record_batch(self) -> pa.RecordBatch:
        """The rows, zero-copy over the slot; valid until the batch is released."""
        if self._batch is None:
            raise BatchReleased(
                f"object {self.object_id} (slot {self.slot}) was released; read its rows before "
                "release() or inside the with block")
        return self._batch

    @property
    def schema(self) -> pa.Schema:
        return self.record_batch.schema

    @property
    def released(self) -> bool:
        return self._batch is None

    def release(self) -> None:
        """Gives the slot back to the daemon; idempotent."""
        self._batch = None
        self._finalizer()

    def __enter__(self) -> "Batch":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __arrow_c_stream__(self, requested_schema=None):
        """The Arrow PyCapsule stream interface: polars, DuckDB and pyarrow read the rows."""
        batch = self.record_batch
        reader = pa.RecordBatchReader.from_batches(batch.schema, [batch])
        return reader.__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        state = "released" if self.released else f"{self.num_rows} rows"
        return f"{type(self).__name__}(object_id={self.object_id}, slot={self.slot}, {state})"


class RecordBatch(Batch):
    """A RECORDS object: ``partition``, ``offset``, ``timestamp``, ``key``, ``value``, ``headers``
    (docs/formats.md, "Object schemas")."""


class ChunkBatch(Batch):
    """A CHUNKS object: ``job``, ``stream``, ``seq``, ``eos``, ``payload`` (docs/formats.md)."""


def wrap(obj: SlotObject, schema: pa.Schema, kind: type, release: Callable[[], None]) -> Batch:
    """Decodes ``obj`` zero-copy into a batch of class ``kind`` whose release calls ``release``
    once; an object that does not decode is released at once and raises SegmentFormatError."""
    try:
        batch = decode_batch(obj, schema, pa.py_buffer(obj.message))
    except SegmentError:
        release()
        raise
    return kind(obj, batch, obj.message, release)
