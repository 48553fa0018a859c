"""``StreamReader``: one stream of a job, its chunks in ``seq`` order, up to the end of the stream.

The Python twin of the Java ``StreamReader`` (docs/stream-reader.md) without pacing or sharing:
a CHUNK_STREAMS subscription filtered to the job (the daemon puts each stream in ``seq`` order and
drops duplicates, docs/brokerd.md), of whose rows this reader takes its stream's. Each chunk's
payload is a zero-copy ``pyarrow.Buffer`` over the slot; a slot goes back to the daemon once every
chunk of this stream in it is released and the other streams' rows passed by.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Callable, Deque, Iterator, List, Optional

import pyarrow as pa

from .batches import Batch, BatchReleased
from .client import BrokerdClient, Subscription
from .progress import DEFAULT_TOPIC, DeliveryProgress, ProgressReporter
from .protocol import StreamGap

# The Java reader's default (StreamReaderBuilder.silenceTimeout, docs/stream-reader.md).
DEFAULT_SILENCE_TIMEOUT_S = 60.0


class StreamOrderError(IOError):
    """A chunk out of ``seq`` order: the daemon's ordering was broken (never expected)."""


class StreamGapError(IOError):
    """The daemon reported missing chunks this reader has got to (docs/stream-reader.md, "Gaps"),
    as the Java ``StreamGapException``. The reader stays usable: ``acquire`` again waits on for
    the missing chunks; closing it gives up."""

    def __init__(self, job: str, stream: str, gap: StreamGap):
        missing = (f"{gap.missing_from}" if gap.missing_from == gap.missing_to
                   else f"{gap.missing_from} to {gap.missing_to}")
        super().__init__(
            f"stream {job}/{stream} waits for chunk {missing}, missing at the daemon: the chunk "
            f"after it had waited {gap.waited_ns // 1_000_000} ms, past sluice.gap.timeout.ms. The "
            "reader waits on for it: acquire again to keep waiting, or close the reader to give up")
        self.job = job
        self.stream = stream
        self.gap = gap


class StreamSilentError(IOError):
    """A stream that began and has not ended brought no chunk for the reader's
    ``silence_timeout`` (docs/stream-reader.md, "Silence"), as the Java ``StreamSilentException``:
    its writer may be gone, killed mid-stream with no later chunk for the daemon to report a gap
    by. Raised once per silence; the reader stays usable: ``acquire`` again waits on, and the next
    silence is told again once a chunk came; closing it gives up."""

    def __init__(self, job: str, stream: str, next_seq: int, silent_seconds: float):
        super().__init__(
            f"stream {job}/{stream} brought no chunk for {int(silent_seconds * 1000)} ms, waiting "
            f"for chunk {next_seq}: its writer may be gone. The reader waits on: acquire again to "
            "keep waiting, or close the reader to give up")
        self.job = job
        self.stream = stream
        self.next_seq = next_seq
        self.silent_seconds = silent_seconds


class _HeldBatch:
    """A batch with the count of its chunks still handed out or to hand out."""

    def __init__(self, batch: Batch, pending: int):
        self.batch = batch
        self.pending = pending

    def done_one(self) -> None:
        self.pending -= 1
        if self.pending == 0:
            self.batch.release()


class StreamChunk:
    """One chunk of the stream: ``seq``, ``eos`` and its payload, zero-copy over the slot."""

    def __init__(self, reader: "StreamReader", held: _HeldBatch, seq: int, eos: bool,
                 payload: pa.Buffer):
        self.job = reader.job
        self.stream = reader.stream
        self.seq = seq
        self.eos = eos
        self.size = len(payload)
        self._reader = reader
        self._held: Optional[_HeldBatch] = held
        self._payload: Optional[pa.Buffer] = payload

    @property
    def payload(self) -> pa.Buffer:
        """The payload bytes, a read-only ``pyarrow.Buffer`` over the slot, until release."""
        if self._payload is None:
            raise BatchReleased(f"chunk {self.job}/{self.stream}:{self.seq} was released")
        return self._payload

    def values(self, type: pa.DataType = pa.uint8()) -> pa.Array:
        """The payload as a ``pyarrow.Array`` of a fixed-width ``type`` (uint8 by default),
        zero-copy, for ``pyarrow.compute``; trailing bytes short of one value are left out."""
        payload = self.payload
        return pa.Array.from_buffers(type, len(payload) * 8 // type.bit_width, [None, payload])

    def release(self) -> None:
        """Done with the chunk; idempotent. The last chunk's release ends the stream."""
        if self._held is None:
            return
        held, self._held, self._payload = self._held, None, None
        held.done_one()
        self._reader._released(self)

    def __enter__(self) -> "StreamChunk":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"StreamChunk({self.job}/{self.stream}, seq={self.seq}, eos={self.eos})"


class StreamReader:
    """Reads ``stream`` of ``job`` from ``topic`` (``sluice.chunks.<outputLocation>``,
    docs/formats.md, "Chunk topics") through the daemon.

    ``partitions``: the topic's partition count (all are read from the earliest offset), or
    ``local_leaders=True`` for those the daemon's broker leads. ``slot_size`` must hold the job's
    largest chunk plus its Arrow framing (the default 2 MiB holds 1 MiB chunks).
    ``bootstrap_servers``: the reader reports its delivery progress to ``progress_topic`` with
    kafka-python (the ``progress`` extra), as the Java reader does, so that a generation job's
    scheduler sees it; without it, nothing is reported. It goes out at most every
    ``progress_interval`` seconds, and sooner once a generation task was delivered when
    ``chunks_per_task`` says where tasks end (the job's ``ceil(taskSizeBytes / chunkSizeBytes)``,
    docs/stream-reader.md, "Delivery progress").
    ``silence_timeout``: seconds a stream that began may bring no chunk while the reader waits
    before ``acquire`` raises :class:`StreamSilentError` (docs/stream-reader.md, "Silence"); 60 as
    the Java reader's, 0 never. ``clock``: the monotonic seconds the waits are counted in.
    """

    def __init__(self, client: BrokerdClient, topic: str, job: str, stream: str,
                 partitions: int = 0, *, local_leaders: bool = False, slot_count: int = 16,
                 slot_size: int = 2 << 20, reorder_window_bytes: int = 0,
                 bootstrap_servers: Optional[str] = None, progress_topic: str = DEFAULT_TOPIC,
                 progress_interval: float = 0.1, chunks_per_task: int = 0,
                 silence_timeout: float = DEFAULT_SILENCE_TIMEOUT_S,
                 clock: Callable[[], float] = time.monotonic):
        if silence_timeout < 0:
            raise ValueError(f"silence_timeout = {silence_timeout}: negative; 0 never tells")
        self.job = job
        self.stream = stream
        self.subscription: Subscription = client.subscribe_chunks(
            topic, job, partitions, local_leaders=local_leaders, slot_count=slot_count,
            slot_size=slot_size, reorder_window_bytes=reorder_window_bytes)
        self.progress: Optional[ProgressReporter] = None
        self.delivered_seq = -1
        self.delivered_bytes = 0
        self._released_ahead: dict = {}
        if bootstrap_servers is not None:
            try:
                self.progress = ProgressReporter(bootstrap_servers, progress_topic,
                                                 progress_interval, chunks_per_task)
            except BaseException:
                self.subscription.close()
                raise
            # The first record says the stream has its reader (docs/formats.md): sent now, before
            # any chunk can make a newer one replace it.
            self._report(False)
            self.progress.tick()
        self.next_seq = 0
        self.chunks = 0
        self.bytes = 0
        self._ready: Deque[StreamChunk] = deque()
        self._gaps: List[StreamGap] = []
        self._end_seen = False
        self._ended = False
        # Silence (docs/stream-reader.md, "Silence"): since when the reader has waited with
        # nothing of its stream to take (None: it has not), and whether this silence was told.
        # Counted from the reader's wait, not the last chunk's arrival: an application that
        # paused finds the chunks that came meanwhile first.
        self.silence_timeout = silence_timeout
        self._clock = clock
        self._dry_since: Optional[float] = None
        self._silence_told = False

    @property
    def is_end_of_stream(self) -> bool:
        """True once the last chunk (``eos``) was released."""
        return self._ended

    def acquire(self, timeout: float = 1.0) -> Optional[StreamChunk]:
        """The next chunk in ``seq`` order, or None when ``timeout`` seconds ran out or the
        stream has ended. Raises :class:`StreamGapError` once per hole the daemon reported, and
        :class:`StreamSilentError` once per silence past ``silence_timeout``."""
        deadline = self._clock() + timeout
        while not self._ready:
            if self._end_seen:
                return None
            self._check_gaps()
            wait_start = self._clock()
            wait = min(0.1, max(0.0, deadline - wait_start))
            if self._watches_silence():
                # Wakes when the silence is due to be told, if the caller's wait is longer.
                dry = wait_start if self._dry_since is None else self._dry_since
                wait = min(wait, max(0.0, dry + self.silence_timeout - wait_start))
            batch = self.subscription.poll(wait)
            if batch is not None:
                self._take(batch)
            if self._ready:
                self._dry_since = None
                self._silence_told = False
                break
            if self._dry_since is None:
                self._dry_since = wait_start
            if batch is None and self.subscription.ended:
                raise StreamOrderError(f"stream {self.job}/{self.stream}: the daemon closed the "
                                       f"segment before its end, at seq {self.next_seq}")
            self._tell_silence()
            if self._clock() >= deadline:
                return None
        return self._ready.popleft()

    def _watches_silence(self) -> bool:
        """Whether a silence may still be told: the stream began, has not ended, was not told.
        Before the first chunk nothing is told, since a job may not have started yet."""
        return (self.silence_timeout > 0 and self.next_seq > 0 and not self._end_seen
                and not self._silence_told)

    def _tell_silence(self) -> None:
        silent = self._clock() - self._dry_since
        if self._watches_silence() and silent >= self.silence_timeout:
            self._silence_told = True
            raise StreamSilentError(self.job, self.stream, self.next_seq, silent)

    def _check_gaps(self) -> None:
        while True:
            gap = self.subscription.next_stream_gap()
            if gap is None:
                break
            if gap.job == self.job and gap.stream == self.stream:
                self._gaps.append(gap)
        # Thrown when this reader has got to the hole; a hole filled meanwhile is dropped.
        self._gaps = [g for g in self._gaps if g.missing_to >= self.next_seq]
        for gap in self._gaps:
            if gap.missing_from <= self.next_seq:
                self._gaps.remove(gap)
                raise StreamGapError(self.job, self.stream, gap)

    def _take(self, batch: Batch) -> None:
        rows = batch.record_batch
        streams = rows.column("stream").to_pylist()
        mine = [i for i, name in enumerate(streams) if name == self.stream]
        if not mine:
            batch.release()
            return
        seqs = rows.column("seq").to_pylist()
        eoss = rows.column("eos").to_pylist()
        payloads = rows.column("payload")
        _, offsets_buffer, data = payloads.buffers()
        offsets = memoryview(offsets_buffer).cast("i")
        base = payloads.offset
        held = _HeldBatch(batch, len(mine))
        for i in mine:
            seq = seqs[i]
            if seq != self.next_seq or self._end_seen:
                for _ in range(len(mine) - mine.index(i)):
                    held.done_one()
                raise StreamOrderError(
                    f"stream {self.job}/{self.stream}: expected seq {self.next_seq}, got {seq}"
                    + (" after the end of the stream" if self._end_seen else ""))
            start, end = offsets[base + i], offsets[base + i + 1]
            chunk = StreamChunk(self, held, seq, eoss[i], data.slice(start, end - start))
            self._ready.append(chunk)
            self.next_seq += 1
            self.chunks += 1
            self.bytes += end - start
            if eoss[i]:
                self._end_seen = True

    def _released(self, chunk: StreamChunk) -> None:
        # Delivered up to the highest seq below which every chunk was released.
        self._released_ahead[chunk.seq] = chunk.size
        while self.delivered_seq + 1 in self._released_ahead:
            self.delivered_seq += 1
            self.delivered_bytes += self._released_ahead.pop(self.delivered_seq)
        if chunk.eos:
            self._ended = True
            # The subscription is given back at the end of the stream (docs/stream-reader.md).
            self.subscription.close()
        self._report(self._ended and not self._released_ahead)

    def _report(self, end_of_stream: bool) -> None:
        if self.progress is not None:
            self.progress.update(DeliveryProgress(
                self.job, self.stream, 0, 1, self.delivered_seq, self.delivered_bytes,
                end_of_stream))

    def __iter__(self) -> Iterator[StreamChunk]:
        """Chunks to the end of the stream; each released when the next is asked for."""
        while not self._ended:
            chunk = self.acquire(1.0)
            if chunk is not None:
                try:
                    yield chunk
                finally:
                    chunk.release()
            elif self._end_seen and not self._ready:
                break

    def close(self) -> None:
        """Gives up the stream: releases what is held and closes the subscription."""
        while self._ready:
            self._ready.popleft().release()
        self.subscription.close()
        if self.progress is not None:
            self.progress.close()

    def __enter__(self) -> "StreamReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
