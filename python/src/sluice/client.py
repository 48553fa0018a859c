"""``BrokerdClient``: subscriptions to ``sluice-brokerd`` over its Unix socket.

docs/formats.md, "Control protocol": a subscription is one control connection of its own (as in
the Java client, so one subscription's failure never disturbs another): SUBSCRIBE, the answer
SUBSCRIBED naming the segment, then the segment's lane carries the objects, and the socket only
heartbeats, RELEASE watermarks, STREAM_GAP reports and CLOSE. A thread reads frames and one sends
heartbeats; both block or sleep, neither spins.
"""

from __future__ import annotations

import functools
import os
import socket
import struct
import threading
import time
from collections import deque
from concurrent.futures import Future, TimeoutError as FutureTimeout
from pathlib import Path
from typing import Deque, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

import pyarrow as pa

from . import protocol
from .batches import Batch, ChunkBatch, RecordBatch, wrap
from .protocol import (ErrorCode, Frame, Mode, ObjectKind, PartitionStart, ProtocolError,
                       StartPosition, StreamGap, StreamStart)
from .segment import SegmentError, SegmentReader, WriterDead

# What to set when the daemon refuses: docs/formats.md, "ERROR (5)", and docs/brokerd.md.
_HINTS = {
    ErrorCode.NOT_AUTHORIZED: "the daemon's sluice.allowed.uids / sluice.allowed.gids must grant "
    "this process (uid {uid}, gid {gid}) and sluice.allowed.topics the topic",
    ErrorCode.UNKNOWN_TOPIC: "create the topic, or subscribe to one the cluster has",
    ErrorCode.SUBSCRIPTION_LIMIT: "close other subscriptions, ask for fewer or smaller slots, or "
    "raise the daemon's sluice.segment.max.total.bytes",
    ErrorCode.BAD_REQUEST: "the request is within the protocol but beyond the daemon's settings",
}


class BrokerdError(IOError):
    """The daemon refused or ended a subscription; ``code`` is its :class:`ErrorCode`."""

    def __init__(self, code: ErrorCode, message: str):
        hint = _HINTS.get(code)
        text = f"sluice-brokerd: {code.name}: {message}"
        if hint:
            text += "; " + hint.format(uid=os.getuid(), gid=os.getgid())
        super().__init__(text)
        self.code = code


class BrokerdUnavailable(ConnectionError):
    """The daemon's socket cannot be reached, or the daemon went away."""


class SegmentFolderError(SegmentError):
    """The segment the daemon named cannot be opened here: another host, or a container without
    the daemon's ``sluice.segment.dir``."""


def _parse_start(start: Union[str, StartPosition]) -> StartPosition:
    if isinstance(start, StartPosition):
        return start
    try:
        return StartPosition[start.upper()]
    except KeyError:
        raise ValueError(f"start = {start!r}: expected 'earliest' or 'latest'") from None


class ControlConnection:
    """One connection: requests matched to answers by id, heartbeats both ways."""

    _DRAIN_S = 1.0

    def __init__(self, path: str, timeout_s: float):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except OSError as e:
            self.sock.close()
            raise BrokerdUnavailable(
                f"cannot connect to sluice-brokerd at {path}: {e.strerror or e}; start the daemon, "
                "or pass the path of its --socket (sluice.socket)") from None
        # The daemon's uid (SO_PEERCRED: struct ucred {pid, uid, gid}): the owner its segments
        # must have (python/README.md, "Trust").
        _, self.peer_uid, _ = struct.unpack("3i", self.sock.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        self.timeout_ns = int(timeout_s * 1e9)
        self.lock = threading.Lock()
        self.pending: Dict[int, Future] = {}
        self.next_request_id = 1
        self.failure: Optional[BaseException] = None
        self.subscription_error: Optional[protocol.Error] = None
        self.stream_gaps: Deque[StreamGap] = deque()
        self.peer_timeout_ns = 0
        self.last_received = time.monotonic_ns()
        self.last_sent = time.monotonic_ns()
        self.closed = threading.Event()
        self.reader = threading.Thread(target=self._read_frames, name="sluice-brokerd-control",
                                       daemon=True)
        self.reader.start()
        # The first heartbeat tells the daemon how soon this side gives up on a silent peer.
        self.send(protocol.Heartbeat(time.monotonic_ns(), self.timeout_ns))
        self.heartbeats = threading.Thread(target=self._beat_loop, name="sluice-brokerd-heartbeat",
                                           daemon=True)
        self.heartbeats.start()

    def request(self, message) -> Future:
        answer: Future = Future()
        with self.lock:
            request_id = self.next_request_id
            self.next_request_id += 1
            self.pending[request_id] = answer
        self._write(Frame(request_id, message))
        return answer

    def send(self, message) -> None:
        with self.lock:
            request_id = self.next_request_id
            self.next_request_id += 1
        self._write(Frame(request_id, message))

    def _write(self, frame: Frame) -> None:
        data = protocol.encode(frame)
        try:
            with self.lock:
                if self.failure is not None:
                    raise self.failure
                self.sock.sendall(data)
                self.last_sent = time.monotonic_ns()
        except OSError as e:
            if isinstance(e, (BrokerdError, BrokerdUnavailable)):
                raise
            # A daemon that refuses a peer answers, then closes at once: the write may fail first
            # while the reason waits in the receive buffer. Let the reader thread get to it.
            self.reader.join(self._DRAIN_S)
            if isinstance(self.failure, BrokerdError):
                raise self.failure from None
            self._fail(BrokerdUnavailable(f"sluice-brokerd went away: {e}"))
            raise self.failure from None

    def _recv_exactly(self, size: int) -> Optional[bytes]:
        chunks = []
        while size:
            chunk = self.sock.recv(size)
            if not chunk:
                return None
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def _read_frames(self) -> None:
        try:
            while True:
                head = self._recv_exactly(4)
                if head is None:
                    break
                (length,) = struct.unpack("<I", head)
                # Refused before buffering it (docs/formats.md, "Frames").
                if not protocol.MIN_FRAME_LENGTH <= length <= protocol.MAX_FRAME_LENGTH:
                    raise ProtocolError("frame_length", length, "expected 12 to 1048576")
                body = self._recv_exactly(length)
                if body is None:
                    break
                self.last_received = time.monotonic_ns()
                self._dispatch(protocol.decode(head + body))
            self._fail(BrokerdUnavailable("sluice-brokerd closed the connection"))
        except (OSError, ProtocolError) as e:
            self._fail(e if isinstance(e, ProtocolError) else BrokerdUnavailable(
                f"sluice-brokerd connection failed: {e}"))

    def _dispatch(self, frame: Frame) -> None:
        message = frame.message
        if isinstance(message, protocol.Heartbeat):
            self.peer_timeout_ns = message.timeout_ns
            return
        if isinstance(message, StreamGap):
            # Request id 0, answering nothing: news for the subscription, which takes it.
            self.stream_gaps.append(message)
            return
        with self.lock:
            answer = self.pending.pop(frame.request_id, None)
        if isinstance(message, protocol.Error):
            error = BrokerdError(message.code, message.message)
            if answer is not None:
                answer.set_exception(error)
            elif message.subscription_id != 0:
                self.subscription_error = message
            else:
                self._fail(error)
        elif answer is not None:
            answer.set_result(message)

    def _beat_loop(self) -> None:
        period = max(0.01, self.timeout_ns / 20e9)
        while not self.closed.wait(period):
            now = time.monotonic_ns()
            if now - self.last_received > self.timeout_ns:
                self._fail(BrokerdUnavailable(
                    f"sluice-brokerd sent nothing for {(now - self.last_received) // 1_000_000} ms"))
                return
            peer = self.peer_timeout_ns
            if peer and now - self.last_sent >= peer // 4:
                try:
                    self.send(protocol.Heartbeat(now, self.timeout_ns))
                except OSError:
                    return

    def _fail(self, cause: BaseException) -> None:
        with self.lock:
            if self.failure is not None:
                return
            self.failure = cause
            pending, self.pending = self.pending, {}
        for answer in pending.values():
            answer.set_exception(cause)
        self.closed.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    @property
    def is_open(self) -> bool:
        return self.failure is None

    def close(self) -> None:
        self._fail(BrokerdUnavailable("closed"))
        if threading.current_thread() is not self.reader:
            self.reader.join(5)
        if threading.current_thread() is not self.heartbeats:
            self.heartbeats.join(5)


class Subscription:
    """A subscription and its segment: :meth:`poll` hands out batches in publication order.

    Not thread-safe: one thread polls. Batches may be released from any thread (the garbage
    collector's fallback among them).
    """

    def __init__(self, client: "BrokerdClient", subscribe: protocol.Subscribe):
        self.mode = subscribe.mode
        self.connection = ControlConnection(client.socket, client.heartbeat_timeout)
        try:
            try:
                answer = self.connection.request(subscribe).result(client.request_timeout)
            except FutureTimeout:
                raise BrokerdUnavailable(
                    f"no answer to SUBSCRIBE in {client.request_timeout} s") from None
            self.subscription_id = answer.subscription_id
            self.partitions: List[int] = list(answer.partitions)
            path = Path(answer.segment_dir or "/dev/shm") / answer.segment_name
            schema = pa.ipc.read_schema(pa.py_buffer(answer.schema))
            try:
                self.reader = SegmentReader(path, schema, owner_uid=self.connection.peer_uid)
            except OSError as e:
                raise SegmentFolderError(
                    f"cannot open the segment {path}: {e}; this process must see the daemon's "
                    "sluice.segment.dir as the daemon does (same host, same /dev/shm)") from None
        except BaseException:
            self.connection.close()
            raise
        self.lock = threading.Lock()
        self.processed_through = -1
        self.processed_ahead: set = set()
        self.release_failure: Optional[BaseException] = None
        self.ended = False
        self.closed = False
        self._batch_type = ChunkBatch if answer.object_kind == ObjectKind.CHUNKS else RecordBatch

    def poll(self, timeout: float = 1.0) -> Optional[Batch]:
        """The next batch, waiting up to ``timeout`` seconds; None if none came or at the end
        (``ended``: the daemon closed the segment, or ended the subscription with an error)."""
        if self.closed:
            raise SegmentError("the subscription is closed")
        if self.release_failure is not None:
            raise self.release_failure
        deadline = time.monotonic() + timeout
        while True:
            connected = self.connection.is_open and self.connection.subscription_error is None
            wait = max(0.0, deadline - time.monotonic()) if connected else 0.0
            try:
                obj = self.reader.poll(wait)
            except WriterDead:
                obj, connected = None, False
            if obj is not None:
                return self._wrap(obj)
            if connected and not self.reader.end_of_stream:
                return None
            error = self.connection.subscription_error
            if error is not None:
                raise BrokerdError(error.code, error.message)
            if self.reader.end_of_stream:
                self.ended = True
                return None
            # The daemon went away; what the segment held has been handed out. The Java client
            # resubscribes here; this reader reports it (python/README.md, "Limits").
            raise self.connection.failure or BrokerdUnavailable("sluice-brokerd went away")

    def _wrap(self, obj) -> Batch:
        release = functools.partial(self._released, obj.slot, obj.generation, obj.object_id)
        return wrap(obj, self.reader.schema, self._batch_type, release)

    def _released(self, slot: int, generation: int, object_id: int) -> None:
        try:
            self.reader.release(slot, generation)
        except SegmentError as e:
            # Possibly on the garbage collector's thread: the poller raises it.
            self.release_failure = e
            return
        with self.lock:
            if object_id == self.processed_through + 1:
                self.processed_through = object_id
                while self.processed_through + 1 in self.processed_ahead:
                    self.processed_ahead.remove(self.processed_through + 1)
                    self.processed_through += 1
            else:
                self.processed_ahead.add(object_id)

    def __iter__(self) -> Iterator[Batch]:
        """Batches until the end of the segment; each released when the next is asked for."""
        previous: Optional[Batch] = None
        while not self.ended:
            batch = self.poll(1.0)
            if previous is not None:
                previous.release()
                previous = None
            if batch is not None:
                previous = batch
                yield batch
        if previous is not None:
            previous.release()

    def commit_processed(self) -> None:
        """RELEASE: every batch released so far is processed; with a group, the daemon commits."""
        if self.processed_through >= 0 and self.connection.is_open:
            self.connection.send(protocol.Release(self.subscription_id, self.processed_through))

    def next_stream_gap(self) -> Optional[StreamGap]:
        """The oldest STREAM_GAP about this subscription not taken yet (docs/formats.md)."""
        gaps = self.connection.stream_gaps
        while gaps:
            gap = gaps.popleft()
            if gap.subscription_id == self.subscription_id:
                return gap
        return None

    def close(self) -> None:
        """CLOSE, then leaves the lane and the connection; open batches stay readable until
        released, as the mapping outlives the subscription."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.connection.is_open:
                self.connection.send(protocol.Close(self.subscription_id))
        except OSError:
            pass  # the daemon went away: it has ended the subscription itself
        finally:
            self.reader.close()
            self.connection.close()

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class BrokerdClient:
    """Subscribes to the ``sluice-brokerd`` of this host through its socket (``--socket``).

    ``heartbeat_timeout``: seconds the daemon may stay silent before the connection is given up;
    ``request_timeout``: seconds a SUBSCRIBE may wait (the daemon reads cluster metadata).
    """

    def __init__(self, socket_path: Union[str, os.PathLike], heartbeat_timeout: float = 10.0,
                 request_timeout: float = 30.0):
        if heartbeat_timeout < 0.04:
            raise ValueError(f"heartbeat_timeout = {heartbeat_timeout}: at least 0.04 s")
        if request_timeout <= 0:
            raise ValueError(f"request_timeout = {request_timeout}: must be positive")
        self.socket = os.fspath(socket_path)
        self.heartbeat_timeout = heartbeat_timeout
        self.request_timeout = request_timeout

    def subscribe_records(
        self,
        topic: str,
        partitions: Union[int, Iterable[int], Mapping[int, int]] = (),
        *,
        start: Union[str, StartPosition] = "earliest",
        local_leaders: bool = False,
        group_id: str = "",
        read_uncommitted: bool = False,
        slot_count: int = 64,
        slot_size: int = 1 << 20,
    ) -> Subscription:
        """RECORDS: one row per Kafka record. ``partitions``: a count (0 to n-1), the partitions,
        or partition → first offset; ``start`` where the others begin."""
        return Subscription(self, self._subscribe(
            topic, Mode.RECORDS, partitions, start, local_leaders, group_id, read_uncommitted,
            slot_count, slot_size, "", 0, ()))

    def subscribe_chunks(
        self,
        topic: str,
        job: str = "",
        partitions: Union[int, Iterable[int], Mapping[int, int]] = (),
        *,
        start: Union[str, StartPosition] = "earliest",
        local_leaders: bool = False,
        group_id: str = "",
        read_uncommitted: bool = False,
        slot_count: int = 64,
        slot_size: int = 1 << 20,
        reorder_window_bytes: int = 0,
        streams: Sequence[StreamStart] = (),
    ) -> Subscription:
        """CHUNK_STREAMS: one row per chunk of ``job`` (every job when empty), each stream in
        ``seq`` order (docs/brokerd.md)."""
        return Subscription(self, self._subscribe(
            topic, Mode.CHUNK_STREAMS, partitions, start, local_leaders, group_id,
            read_uncommitted, slot_count, slot_size, job, reorder_window_bytes, tuple(streams)))

    @staticmethod
    def _subscribe(topic, mode, partitions, start, local_leaders, group_id, read_uncommitted,
                   slot_count, slot_size, job, reorder_window_bytes, streams):
        default = _parse_start(start)
        if isinstance(partitions, int):
            entries = [PartitionStart(p, default) for p in range(partitions)]
        elif isinstance(partitions, Mapping):
            entries = [PartitionStart(p, StartPosition.OFFSET, o) for p, o in partitions.items()]
        else:
            entries = [PartitionStart(p, default) for p in partitions]
        if not entries and not local_leaders:
            raise ValueError("partitions: none given; name them (a count, a list or partition → "
                             "offset) or pass local_leaders=True")
        message = protocol.Subscribe(
            topic=topic, mode=mode, slot_count=slot_count, slot_size=slot_size,
            partitions=tuple(entries), local_leaders=local_leaders,
            read_uncommitted=read_uncommitted, reorder_window_bytes=reorder_window_bytes,
            default_start=default if default != StartPosition.OFFSET else StartPosition.EARLIEST,
            group_id=group_id, job_filter=job, streams=streams)
        try:
            protocol.encode(Frame(1, message))
        except ProtocolError as e:
            raise ValueError(f"subscription request: {e}") from None
        return message
