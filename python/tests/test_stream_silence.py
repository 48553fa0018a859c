"""The stream reader's silence timeout (docs/stream-reader.md, "Silence") on a fake clock: the
subscription is a script of batches arriving at given times, whose waits move the clock."""

from collections import deque

import pyarrow as pa
import pytest

from sluice import StreamReader, StreamSilentError

SILENCE_S = 60.0


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeBatch:
    """A batch of chunk rows (docs/formats.md, "Object schemas"), released by the reader."""

    def __init__(self, stream: str, seqs, eos_seq: int):
        self.record_batch = pa.record_batch({
            "stream": pa.array([stream] * len(seqs), pa.string()),
            "seq": pa.array(seqs, pa.uint64()),
            "eos": pa.array([seq == eos_seq for seq in seqs]),
            "payload": pa.array([b"chunk %d" % seq for seq in seqs], pa.binary()),
        })
        self.released = False

    def release(self) -> None:
        self.released = True


class ScriptedSubscription:
    """Hands out each batch once the clock reached its arrival; a wait with none due runs its
    whole timeout on the clock."""

    def __init__(self, clock: FakeClock):
        self.clock = clock
        self.arrivals = deque()
        self.ended = False

    def arrive(self, at: float, seqs, stream: str = "cyan", eos_seq: int = 99) -> None:
        self.arrivals.append((at, FakeBatch(stream, seqs, eos_seq)))

    def poll(self, timeout: float):
        if self.arrivals and self.arrivals[0][0] <= self.clock.now + timeout:
            at, batch = self.arrivals.popleft()
            self.clock.now = max(self.clock.now, at)
            return batch
        self.clock.now += timeout
        return None

    def next_stream_gap(self):
        return None

    def close(self) -> None:
        pass


class ScriptedClient:
    def __init__(self, subscription: ScriptedSubscription):
        self.subscription = subscription

    def subscribe_chunks(self, *args, **kwargs) -> ScriptedSubscription:
        return self.subscription


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def chunks(clock) -> ScriptedSubscription:
    return ScriptedSubscription(clock)


def reader(chunks, clock, **options) -> StreamReader:
    return StreamReader(ScriptedClient(chunks), "sluice.chunks.printer-1", "job-1", "cyan", 1,
                        clock=clock, **options)


def take(cyan: StreamReader, timeout: float) -> int:
    chunk = cyan.acquire(timeout)
    assert chunk is not None, "no chunk"
    chunk.release()
    return chunk.seq


def test_a_stream_that_went_silent_is_told_once_at_the_timeout_and_the_reader_waits_on(
        chunks, clock):
    chunks.arrive(0.0, [0])
    cyan = reader(chunks, clock, silence_timeout=SILENCE_S)
    assert take(cyan, 1.0) == 0
    assert cyan.acquire(30.0) is None
    assert cyan.acquire(29.5) is None  # 59.5 s of silence: not told yet
    with pytest.raises(StreamSilentError, match="job-1/cyan brought no chunk for 60000 ms, "
                       "waiting for chunk 1: its writer may be gone") as silent:
        cyan.acquire(10.0)
    assert clock.now == pytest.approx(SILENCE_S)
    assert (silent.value.next_seq, silent.value.silent_seconds) == (1, pytest.approx(SILENCE_S))
    # Once per silence: the reader waits on without telling it again.
    assert cyan.acquire(200.0) is None
    assert clock.now == pytest.approx(260.0)
    # A chunk ends the silence; the next one is told again, counted from the new wait.
    chunks.arrive(300.0, [1])
    assert take(cyan, 100.0) == 1
    with pytest.raises(StreamSilentError, match="waiting for chunk 2"):
        cyan.acquire(100.0)
    assert clock.now == pytest.approx(360.0)


def test_the_silence_counts_from_the_readers_wait_not_the_last_chunks_arrival(chunks, clock):
    chunks.arrive(0.0, [0])
    chunks.arrive(1.0, [1])
    cyan = reader(chunks, clock, silence_timeout=SILENCE_S)
    assert take(cyan, 1.0) == 0
    clock.now = 500.0  # the application paused; chunk 1 came meanwhile
    assert take(cyan, 1.0) == 1
    assert cyan.acquire(SILENCE_S - 1) is None
    with pytest.raises(StreamSilentError):
        cyan.acquire(10.0)
    assert clock.now == pytest.approx(500.0 + SILENCE_S)


def test_other_streams_rows_do_not_end_the_silence(chunks, clock):
    chunks.arrive(0.0, [0])
    for at in range(10, 100, 10):
        chunks.arrive(float(at), [at], stream="magenta")
    cyan = reader(chunks, clock, silence_timeout=SILENCE_S)
    assert take(cyan, 1.0) == 0
    with pytest.raises(StreamSilentError):
        cyan.acquire(100.0)
    assert clock.now == pytest.approx(SILENCE_S)


def test_nothing_is_told_before_the_first_chunk_nor_after_the_last(chunks, clock):
    cyan = reader(chunks, clock, silence_timeout=SILENCE_S)
    assert cyan.acquire(10 * SILENCE_S) is None  # a job may not have started yet
    chunks.arrive(clock.now, [0, 1], eos_seq=1)
    assert [take(cyan, 1.0), take(cyan, 1.0)] == [0, 1]
    assert cyan.is_end_of_stream
    assert cyan.acquire(10 * SILENCE_S) is None


def test_the_default_is_the_java_readers_and_zero_never_tells(chunks, clock):
    chunks.arrive(0.0, [0])
    assert reader(chunks, clock).silence_timeout == SILENCE_S
    cyan = reader(chunks, clock, silence_timeout=0)
    assert take(cyan, 1.0) == 0
    assert cyan.acquire(100 * SILENCE_S) is None
    assert clock.now == pytest.approx(100 * SILENCE_S)


def test_a_negative_silence_timeout_is_refused(chunks, clock):
    with pytest.raises(ValueError, match="silence_timeout = -1: negative; 0 never tells"):
        reader(chunks, clock, silence_timeout=-1)
