"""The reader's lane against the C++ writer (sluice-segment-tool): rows as the content rule says,
zero-copy over the mapping, slots released by ``with`` and by the garbage collector, the end of
the stream, and the Arrow C stream interface."""

import functools
import gc

import pyarrow as pa
import pytest

from content import Checker
from segment_tool import SegmentToolWriter
from sluice.batches import BatchReleased, ChunkBatch, RecordBatch, wrap
from sluice.segment import D_STATE_WORD, SegmentReader


@pytest.fixture
def writers():
    started = []

    def start(*args, **kwargs):
        writer = SegmentToolWriter(*args, **kwargs)
        started.append(writer)
        return writer

    yield start
    for writer in started:
        writer.stop()


def next_batch(reader: SegmentReader, kind=RecordBatch, timeout: float = 10.0):
    obj = reader.poll(timeout)
    if obj is None:
        return None
    return wrap(obj, reader.schema, kind,
                functools.partial(reader.release, obj.slot, obj.generation))


def state_word(reader: SegmentReader, slot: int) -> int:
    """generation << 32 | holders: the writer may reuse a released slot at once (a new
    generation), so a release shows as a change of the word, not only as a cleared bit."""
    return reader.segment.u64[(reader.segment.descriptor(slot) + D_STATE_WORD) // 8]


@pytest.mark.parametrize("kind,cls", [("records", RecordBatch), ("chunks", ChunkBatch)])
def test_reads_every_row_through_more_objects_than_slots_released_by_with(writers, kind, cls):
    writer = writers(kind, count=300, size=100, batch=16, slots=4)
    reader = SegmentReader(writer.path)
    checker = Checker(300)
    # Kept, so that only the with blocks, not the garbage collector, can give the slots back.
    read = []
    try:
        while True:
            batch = next_batch(reader, cls, timeout=5.0)
            if batch is None:
                break
            with batch:
                assert batch.num_rows == batch.record_batch.num_rows
                checker.check(reader.header.object_kind, batch.record_batch)
            read.append(batch)
    finally:
        reader.close()
    totals = writer.totals()
    assert reader.end_of_stream
    # 19 objects through 4 slots: the writer got its slots back from the with blocks.
    assert checker.objects == int(totals["objects"]) == 19
    assert checker.next == 300
    assert checker.checksum == int(totals["checksum"], 16)


def test_a_batch_is_zero_copy_over_the_mapped_segment(writers):
    writer = writers("chunks", count=3, size=64 * 1024, batch=1, slots=4, checksums=False)
    reader = SegmentReader(writer.path)
    try:
        with next_batch(reader, ChunkBatch) as batch:
            base = reader.segment.address
            end = base + reader.header.segment_size
            slot_start = base + reader.segment.slot_data(batch.slot)
            buffers = [b for column in batch.record_batch.columns for b in column.buffers() if b]
            assert buffers
            for buffer in buffers:
                assert slot_start <= buffer.address < end, "a buffer outside the slot: a copy"
                assert buffer.address + buffer.size <= slot_start + reader.header.slot_size
    finally:
        reader.close()


def test_the_garbage_collector_releases_a_dropped_batch_only_once_its_arrays_are_gone(writers):
    writer = writers("records", count=200, size=100, batch=10, slots=2, checksums=False)
    reader = SegmentReader(writer.path)
    try:
        first = next_batch(reader)
        slot = first.slot
        held = state_word(reader, slot)
        assert held & (1 << reader.lane)
        values = first.record_batch.column("value")
        del first
        gc.collect()
        # The array still points into the slot: the slot stays this reader's.
        assert state_word(reader, slot) == held
        assert values[0].as_py() == b"abcdefghijklmnopqrstuvwxyz" * 3 + b"abcdefghijklmnopqrstuv"
        del values
        gc.collect()
        assert state_word(reader, slot) != held
        # The rest never released explicitly: 20 objects through 2 slots on the fallback alone.
        count = 1
        while next_batch(reader) is not None:
            count += 1
    finally:
        reader.close()
    assert count == int(writer.totals()["objects"]) == 20


def test_a_released_batch_refuses_to_be_read(writers):
    writer = writers("records", count=10, size=10, batch=10, slots=2)
    reader = SegmentReader(writer.path)
    try:
        batch = next_batch(reader)
        held = state_word(reader, batch.slot)
        batch.release()
        batch.release()  # idempotent
        assert state_word(reader, batch.slot) != held
        with pytest.raises(BatchReleased, match="was released"):
            batch.record_batch
        with pytest.raises(BatchReleased):
            pa.RecordBatchReader.from_stream(batch)
    finally:
        reader.close()


def test_the_arrow_c_stream_interface_hands_over_the_rows(writers):
    writer = writers("records", count=10, size=10, batch=10, slots=2)
    reader = SegmentReader(writer.path)
    try:
        with next_batch(reader) as batch:
            table = pa.RecordBatchReader.from_stream(batch).read_all()
            assert table.schema == batch.schema
            assert table.column("offset").to_pylist() == list(range(10))
            assert table.to_batches()[0].equals(batch.record_batch)
    finally:
        reader.close()


def test_polars_and_duckdb_read_a_batch_through_the_arrow_c_stream(writers):
    polars = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    writer = writers("records", count=10, size=10, batch=10, slots=2)
    reader = SegmentReader(writer.path)
    try:
        with next_batch(reader) as batch:
            frame = polars.DataFrame(batch)
            assert frame.shape == (10, 6)
            assert frame["offset"].to_list() == list(range(10))
            assert duckdb.sql('select count(*), sum("offset") from batch').fetchall() == [(10, 45)]
    finally:
        reader.close()
