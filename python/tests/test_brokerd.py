"""The Python reader against the real parts: an embedded Kafka broker and sluice-brokerd."""

import gc
import time

import pyarrow as pa
import pytest

from content import value
from eventually import eventually
from sluice import progress as progress_module
from sluice.progress import decode
from sluice import (BrokerdClient, BrokerdError, BrokerdUnavailable, ErrorCode, StreamGapError,
                    StreamReader, StreamSilentError)


@pytest.fixture
def client(cluster):
    return BrokerdClient(cluster.socket)


def read_all(subscription, expected_rows, release=True, timeout=30):
    """Batches until ``expected_rows`` rows came; each released (or dropped) after reading."""
    rows, batches = [], 0

    def read_one() -> bool:
        nonlocal batches
        if len(rows) >= expected_rows:
            return True
        batch = subscription.poll(1.0)
        if batch is not None:
            batches += 1
            rows.extend(batch.record_batch.select(["partition", "offset", "key", "value"]).to_pylist())
            assert batch.first_offset == rows[-batch.num_rows]["offset"]
            assert batch.last_offset == rows[-1]["offset"]
            if release:
                batch.release()
            del batch
        return False

    eventually(read_one, timeout, lambda: f"{len(rows)} of {expected_rows} rows")
    return rows, batches


def test_records_arrive_as_record_batches_with_their_values_and_offsets(cluster, client):
    cluster.command("topic", "py.records", 1)
    cluster.command("records", "py.records", 0, 500, 100)
    # Slots of 4 KiB hold about 30 such records: the 500 go through 4 slots many times over.
    with client.subscribe_records("py.records", 1, slot_count=4, slot_size=4096) as orders:
        assert orders.partitions == [0]
        rows, batches = read_all(orders, 500)
    assert batches > 4
    assert [r["offset"] for r in rows] == list(range(500))
    assert all(r["partition"] == 0 for r in rows)
    assert [r["key"] for r in rows] == [f"k{i}".encode() for i in range(500)]
    assert [r["value"] for r in rows] == [value(i, 100) for i in range(500)]


def test_a_batch_from_the_daemon_lies_in_the_mapped_segment(cluster, client):
    cluster.command("topic", "py.zerocopy", 1)
    cluster.command("records", "py.zerocopy", 0, 10, 1000)
    with client.subscribe_records("py.zerocopy", 1) as orders:
        batch = None
        while batch is None:
            batch = orders.poll(5.0)
        with batch:
            segment = orders.reader.segment
            start = segment.address + segment.slot_data(batch.slot)
            data = batch.record_batch.column("value").buffers()[2]
            assert start <= data.address < start + segment.header.slot_size
            # The same bytes through the Arrow C stream interface, as polars or DuckDB get them.
            table = pa.RecordBatchReader.from_stream(batch).read_all()
            assert table.column("value").to_pylist()[0] == value(0, 1000)


def test_batches_dropped_without_release_go_back_through_the_garbage_collector(cluster, client):
    cluster.command("topic", "py.dropped", 1)
    cluster.command("records", "py.dropped", 0, 300, 100)
    with client.subscribe_records("py.dropped", 1, slot_count=2, slot_size=4096) as orders:
        rows, batches = read_all(orders, 300, release=False)
        gc.collect()
    assert batches > 2
    assert [r["offset"] for r in rows] == list(range(300))


def test_a_stream_comes_in_seq_order_to_its_end(cluster, client):
    cluster.command("topic", "py.chunks", 3)
    cluster.command("chunks", "py.chunks", "job-1", "cyan", 30, 1000, 3)
    cluster.command("chunks", "py.chunks", "job-1", "magenta", 20, 10, 3)
    with StreamReader(client, "py.chunks", "job-1", "cyan", partitions=3) as cyan:
        seqs = []
        for chunk in cyan:
            seqs.append(chunk.seq)
            assert chunk.payload.to_pybytes() == value(chunk.seq, 1000)
            assert chunk.eos == (chunk.seq == 29)
            assert chunk.values().to_pylist()[:3] == list(value(chunk.seq, 3))
        assert cyan.is_end_of_stream
    assert seqs == list(range(30))
    assert cyan.acquire(0.1) is None


def test_a_hole_in_the_stream_is_reported_once_and_the_reader_waits_on(cluster, client):
    cluster.command("topic", "py.gap", 1)
    cluster.command("chunks", "py.gap", "job-2", "black", 4, 100, 1, "skip=1")
    with StreamReader(client, "py.gap", "job-2", "black", partitions=1) as black:
        first = black.acquire(10)
        assert first.seq == 0
        first.release()
        with pytest.raises(StreamGapError, match="job-2/black waits for chunk 1") as gap:
            eventually(lambda: black.acquire(0.2) is not None, 10, lambda: "no gap reported")
        assert (gap.value.gap.missing_from, gap.value.gap.missing_to) == (1, 1)
        cluster.command("chunks", "py.gap", "job-2", "black", 4, 100, 1, "only=1")
        seqs = [chunk.seq for chunk in black]
    assert seqs == [1, 2, 3]


def test_a_stream_whose_writer_went_silent_is_told_after_the_silence_timeout(cluster, client):
    cluster.command("topic", "py.silent", 1)
    # Chunk 0 of three, then nothing: a writer killed mid-stream, no later chunk to report a gap by.
    cluster.command("chunks", "py.silent", "job-5", "white", 3, 100, 1, "only=0")
    with StreamReader(client, "py.silent", "job-5", "white", partitions=1,
                      silence_timeout=1.0) as white:
        with white.acquire(10) as first:
            assert first.seq == 0
        waiting_since = time.monotonic()
        with pytest.raises(StreamSilentError, match="job-5/white brought no chunk for .* "
                           "waiting for chunk 1") as silent:
            eventually(lambda: white.acquire(0.2) is not None, 10, lambda: "no silence reported")
        assert time.monotonic() - waiting_since >= 1.0
        assert silent.value.silent_seconds >= 1.0
        # The reader stays usable: the rest of the stream comes through it.
        cluster.command("chunks", "py.silent", "job-5", "white", 3, 100, 1, "skip=0")
        assert [chunk.seq for chunk in white] == [1, 2]


def test_heartbeats_keep_an_idle_subscription_alive(cluster):
    cluster.command("topic", "py.idle", 1)
    client = BrokerdClient(cluster.socket, heartbeat_timeout=0.5)
    with client.subscribe_records("py.idle", 1, start="latest") as idle:
        assert idle.poll(3.0) is None  # six timeouts long, with nothing to read
        assert idle.connection.is_open
        cluster.command("records", "py.idle", 0, 3, 10)
        rows, _ = read_all(idle, 3)
    assert [r["value"] for r in rows] == [value(i, 10) for i in range(3)]


def test_a_topic_the_daemon_does_not_grant_is_refused_naming_the_setting(cluster, client):
    with pytest.raises(BrokerdError, match="sluice.allowed.topics") as refused:
        client.subscribe_records("secret", 1)
    assert refused.value.code == ErrorCode.NOT_AUTHORIZED


def test_a_wrong_socket_path_says_which_path_and_what_to_set(tmp_path):
    missing = tmp_path / "brokerd.sock"
    with pytest.raises(BrokerdUnavailable, match=f"{missing}.*--socket"):
        BrokerdClient(missing).subscribe_records("py.records", 1)


def _progress_records(client, topic, until, what):
    """The progress records on ``topic`` read through the daemon, from the first, once
    ``until(records)`` holds (for up to 30 s)."""
    with client.subscribe_records(topic, 1) as progress:
        records = []

        def read_until() -> bool:
            if records and until(records):
                return True
            batch = progress.poll(1.0)
            if batch is not None:
                with batch:
                    rows = batch.record_batch.select(["key", "value"]).to_pylist()
                    records.extend(decode(r["key"], r["value"]) for r in rows)
            return False

        eventually(read_until, 30, lambda: f"no {what} in {records}")
        return records


def test_a_delivered_task_is_reported_without_waiting_for_the_interval(cluster, client,
                                                                        monkeypatch):
    cluster.command("topic", "py.tasks", 2)
    cluster.command("topic", "py.task-progress", 1)
    cluster.command("chunks", "py.tasks", "job-4", "black", 12, 500, 2)
    # An interval of a minute and no heartbeat: only the first record, a delivered task and the
    # end go out.
    monkeypatch.setattr(progress_module, "HEARTBEAT_S", 3600.0)
    with StreamReader(client, "py.tasks", "job-4", "black", partitions=2,
                      bootstrap_servers=cluster.bootstrap_servers,
                      progress_topic="py.task-progress", progress_interval=60.0,
                      chunks_per_task=3) as black:
        for seq in range(5):
            with black.acquire(10.0) as chunk:
                assert chunk.seq == seq
        # Seqs 0 to 4 read: the first task (0 to 2) is delivered, and its record goes out now,
        # carrying the latest progress.
        reports = _progress_records(client, "py.task-progress", lambda r: len(r) >= 2,
                                    "record after the first")
        assert reports[0].delivered_seq == -1
        assert 2 <= reports[1].delivered_seq <= 4
        assert [chunk.seq for chunk in black] == list(range(5, 12))
    reports = _progress_records(client, "py.task-progress", lambda r: r[-1].end_of_stream,
                                "end of stream")
    assert [r.delivered_seq for r in reports] == sorted(r.delivered_seq for r in reports)
    assert reports[-1].delivered_seq == 11


def test_the_reader_reports_its_delivery_progress_to_the_end(cluster, client):
    cluster.command("topic", "py.progressed", 2)
    cluster.command("topic", "py.progress", 1)
    cluster.command("chunks", "py.progressed", "job-3", "yellow", 12, 500, 2)
    with StreamReader(client, "py.progressed", "job-3", "yellow", partitions=2,
                      bootstrap_servers=cluster.bootstrap_servers,
                      progress_topic="py.progress") as yellow:
        assert [chunk.seq for chunk in yellow] == list(range(12))
    # Read back through the daemon: the records a scheduler would read.
    reports = _progress_records(client, "py.progress", lambda r: r[-1].end_of_stream,
                                "end of stream")
    assert reports[0].delivered_seq == -1 and not reports[0].end_of_stream
    assert [r.delivered_seq for r in reports] == sorted(r.delivered_seq for r in reports)
    assert (reports[-1].delivered_seq, reports[-1].delivered_bytes) == (11, 12 * 500)
    assert (reports[-1].reader_index, reports[-1].reader_count) == (0, 1)
