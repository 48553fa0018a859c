"""Delivery progress on the progress topic (docs/formats.md, "Delivery progress"), so that a
generation job's scheduler sees the reader and its sink bounds what it has in flight.

The record's codec, and :class:`ProgressReporter`, the Python twin of the Java one: the latest
progress at most every ``interval`` if it changed; sooner, at most every 5 ms, once the reader was
delivered the last chunk of a generation task (given ``chunks_per_task``: a producer gets a
stream's next task only once its progress says a task was delivered, docs/stream-reader.md,
"Delivery progress"); again every second if it did not change (a heartbeat: the scheduler aborts a
job whose reader falls silent); and the end of the stream at once. It sends with ``kafka-python``
(the ``progress`` extra), a pure-Python Kafka client.
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from dataclasses import dataclass
from typing import Optional

from .limits import MAX_NAME_LENGTH, NAME, NAME_ALPHABET

VERSION_1 = 1
VERSION = 2  # version 1 plus the flag RESUBSCRIBED
END_OF_STREAM = 1
RESUBSCRIBED = 2
# The Java reader's too; sluice.progress before (docs/formats.md, "Upgrading from sluice.progress").
DEFAULT_TOPIC = "sluice-progress"
HEARTBEAT_S = 1.0
TASK_SPACING_S = 0.005  # the least time between two records that each tell of a delivered task
_LOG = logging.getLogger(__name__)


class ProgressFormatError(ValueError):
    """A progress record that breaks docs/formats.md; ``field`` names the field."""

    def __init__(self, field_name: str, value: object, expectation: str):
        super().__init__(f"{field_name} = {value}: {expectation}")
        self.field = field_name


@dataclass(frozen=True)
class DeliveryProgress:
    job: str
    stream: str
    reader_index: int
    reader_count: int
    delivered_seq: int
    delivered_bytes: int
    end_of_stream: bool = False
    # The reader's daemon subscription was renewed since its previous record (version 2).
    resubscribed: bool = False

    @property
    def key(self) -> bytes:
        return f"{self.job}/{self.stream}".encode()


def encode(progress: DeliveryProgress) -> bytes:
    """Writes version 1 unless a version-2 flag is set, so that version-1 decoders keep reading
    every record that needs nothing new (docs/formats.md, "Delivery progress")."""
    flags = ((END_OF_STREAM if progress.end_of_stream else 0)
             | (RESUBSCRIBED if progress.resubscribed else 0))
    version = VERSION if progress.resubscribed else VERSION_1
    value = (struct.pack("<HHHHqq", version, flags, progress.reader_index,
                         progress.reader_count, progress.delivered_seq, progress.delivered_bytes)
             + _str16(progress.job) + _str16(progress.stream))
    decode(progress.key, value)  # the decoder holds the rules: one copy of them
    return value


def _str16(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<H", len(raw)) + raw


def decode(key: bytes, value: bytes) -> DeliveryProgress:
    """Decodes a record strictly; raises :class:`ProgressFormatError` naming the field."""
    if len(value) < 24:
        raise ProgressFormatError("value", f"{len(value)} bytes", "at least 24")
    version, flags, index, count, seq, delivered = struct.unpack_from("<HHHHqq", value)
    if version not in (VERSION_1, VERSION):
        raise ProgressFormatError("version", version, "expected 1 or 2")
    if version == VERSION_1 and flags & ~END_OF_STREAM:
        raise ProgressFormatError("flags", flags, "only bit 0 (END_OF_STREAM) is defined in "
                                  "version 1")
    if flags & ~(END_OF_STREAM | RESUBSCRIBED):
        raise ProgressFormatError("flags", flags, "only bit 0 (END_OF_STREAM) and bit 1 "
                                  "(RESUBSCRIBED) are defined")
    if count < 1:
        raise ProgressFormatError("reader_count", count, "1 to 65535")
    if index >= count:
        raise ProgressFormatError("reader_index", index, f"0 to reader_count - 1 ({count - 1})")
    if seq < -1:
        raise ProgressFormatError("delivered_seq", seq, "at least -1")
    if delivered < 0:
        raise ProgressFormatError("delivered_bytes", delivered, "at least 0")
    pos = 24
    names = []
    for name in ("job", "stream"):
        if pos + 2 > len(value):
            raise ProgressFormatError(name, "missing", "runs past the end of the value")
        (length,) = struct.unpack_from("<H", value, pos)
        raw = value[pos + 2 : pos + 2 + length]
        if len(raw) != length:
            raise ProgressFormatError(name, f"{length} bytes", "runs past the end of the value")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProgressFormatError(name, raw, "not UTF-8") from None
        if not 1 <= len(raw) <= MAX_NAME_LENGTH or not NAME.match(text):
            raise ProgressFormatError(
                name, repr(text), f"1 to {MAX_NAME_LENGTH} of [{NAME_ALPHABET}]")
        names.append(text)
        pos += 2 + length
    if pos != len(value):
        raise ProgressFormatError("stream", repr(names[1]), f"{len(value) - pos} bytes after it")
    progress = DeliveryProgress(names[0], names[1], index, count, seq, delivered,
                                bool(flags & END_OF_STREAM), bool(flags & RESUBSCRIBED))
    if key != progress.key:
        raise ProgressFormatError("key", key, f"expected {progress.key!r}, the value's job/stream")
    return progress


# BrokerLossTimeouts.REQUEST_TIMEOUT of the Java client.
REQUEST_TIMEOUT_MS = 5000

# How long closing waits for a sent end of the stream to be acknowledged, as the Java reader's
# ProgressReporter.END_TIMEOUT: a reader whose end the scheduler never hears looks gone to it, and
# a leader election on the progress topic outlasts the close timeout.
END_TIMEOUT_S = 30.0


class ProgressReporter:
    """Publishes one reader's progress from a thread of its own (``interval``, 0.1 s).
    ``chunks_per_task``: where the stream's generation tasks end, task ``t`` starting at ``seq = t
    × chunks_per_task`` (docs/generation.md, "Tasks and chunks"); 0 when unknown."""

    def __init__(self, bootstrap_servers: str, topic: str = DEFAULT_TOPIC,
                 interval: float = 0.1, chunks_per_task: int = 0):
        try:
            from kafka import KafkaProducer
        except ImportError:
            raise ImportError("delivery progress needs kafka-python: pip install 'sluice[progress]'"
                              ) from None
        if chunks_per_task < 0:
            raise ValueError(f"chunks_per_task = {chunks_per_task}: must be 0 (unknown) or more")
        self.topic = topic
        # A record waiting on a lost leader holds back every record after it: give up on that
        # broker in seconds, as the Java reader does (docs/generation.md, "A lost broker on the
        # progress path").
        self.producer = KafkaProducer(bootstrap_servers=bootstrap_servers, linger_ms=0,
                                      request_timeout_ms=REQUEST_TIMEOUT_MS)
        self.interval = interval
        self.chunks_per_task = chunks_per_task
        self.lock = threading.Lock()
        self.latest: Optional[DeliveryProgress] = None
        self.last_sent: Optional[DeliveryProgress] = None
        self.last_sent_at = 0.0
        self.last_sent_tasks = 0
        self.failures = 0
        self.wake = threading.Event()
        self.closed = False
        self.thread = threading.Thread(target=self._run, name="sluice-progress", daemon=True)
        self.thread.start()

    def _tasks(self, progress: DeliveryProgress) -> int:
        """How many of the stream's tasks ``progress`` tells delivered; 0 if unknown."""
        if self.chunks_per_task == 0:
            return 0
        return (progress.delivered_seq + 1) // self.chunks_per_task

    def update(self, progress: DeliveryProgress) -> None:
        """The reader's newest progress; the end of the stream and a delivered task wake the
        thread, which sends them when they are due."""
        with self.lock:
            self.latest = progress
            delivered_task = self._tasks(progress) > self.last_sent_tasks
        if progress.end_of_stream or delivered_task:
            self.wake.set()

    def _run(self) -> None:
        wait = self.interval
        while not self.closed:
            self.wake.wait(wait)
            self.wake.clear()
            wait = self.tick() or self.interval

    def tick(self) -> float:
        """Sends the latest progress if it is due; returns how long a change must still wait to
        be due, in seconds, 0 if nothing waits."""
        with self.lock:
            progress, now = self.latest, time.monotonic()
            if progress is None:
                return 0.0
            changed = progress != self.last_sent
            since = now - self.last_sent_at
            tasks = self._tasks(progress)
            spacing = (min(self.interval, TASK_SPACING_S) if tasks > self.last_sent_tasks
                       else self.interval)
            due = ((changed and (self.last_sent is None or progress.end_of_stream
                                 or since >= spacing))
                   or since >= HEARTBEAT_S)
            if not due:
                return spacing - since if changed else 0.0
            self.last_sent, self.last_sent_at, self.last_sent_tasks = progress, now, tasks
        try:
            self.producer.send(self.topic, key=progress.key, value=encode(progress)).add_errback(
                self._failed)
        except Exception as e:  # the producer refused before sending (metadata, closed)
            self._failed(e)
        return 0.0

    def _failed(self, error) -> None:
        # The next record carries the same, newer: log the first failure and every 100th.
        if self.failures % 100 == 0:
            _LOG.warning("could not publish delivery progress on %s (%d failures): %s",
                         self.topic, self.failures + 1, error)
        self.failures += 1

    def close(self, timeout: float = 5.0) -> None:
        """Sends the latest progress if it did not go out, then closes the producer; it waits up
        to ``END_TIMEOUT_S`` rather than ``timeout`` for a sent end of the stream."""
        if self.closed:
            return
        self.closed = True
        self.wake.set()
        self.thread.join(timeout)
        with self.lock:
            unsent = self.latest is not None and self.latest != self.last_sent
        if unsent:
            self.last_sent_at = 0.0
            with self.lock:
                self.last_sent = None
            self.tick()
        with self.lock:
            ended = self.last_sent is not None and self.last_sent.end_of_stream
        if ended:
            timeout = max(timeout, END_TIMEOUT_S)
        self.producer.flush(timeout)
        self.producer.close(timeout)
