"""The control protocol between a client and ``sluice-brokerd``, version 4, both directions.

docs/formats.md, "Control protocol": little-endian frames of a 16-byte header (``frame_length``,
``version``, ``type``, ``request_id``) and a body. Decoding is strict, as in the C++ and Java
codecs: the first violation raises :class:`ProtocolError` naming the field as the page spells it
(``partitions[1].start = 9: expected 1 (EARLIEST) to 3 (OFFSET)``). Encoders run the decoder on
what they wrote, so this side never sends a frame the daemon refuses.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, field
from typing import List, Tuple, Union

from .limits import (MAX_GROUP_ID_LENGTH, MAX_LANES, MAX_NAME_LENGTH, MAX_SEGMENT_NAME_LENGTH,
                     MAX_SLOT_SIZE, MAX_SLOTS, MAX_TOPIC_LENGTH, MIN_SLOT_SIZE, NAME,
                     NAME_ALPHABET)

VERSION = 4
MIN_VERSION = 1
SEGMENT_DIR_VERSION = 2
ISOLATION_AND_GAP_VERSION = 3
PRODUCE_VERSION = 4
FRAME_HEADER_SIZE = 16
MIN_FRAME_LENGTH = FRAME_HEADER_SIZE - 4
MAX_FRAME_LENGTH = 1 << 20

_LOCAL_LEADERS = 1
_READ_UNCOMMITTED = 2  # version 3 on
_PARTITION_START_SIZE = 16
_MIN_STREAM_START_SIZE = 8 + 3 + 3  # next_seq, then two names of at least one byte
_LAST_LANE = MAX_LANES - 1
NO_LANE_HINT = 65535
_U64 = (1 << 64) - 1


class ProtocolError(ValueError):
    """A frame that breaks docs/formats.md; ``field`` is the field, as the page names it."""

    def __init__(self, field_name: str, value: object, expectation: str):
        super().__init__(f"{field_name} = {value}: {expectation}")
        self.field = field_name


class MessageType(enum.IntEnum):
    SUBSCRIBE = 1
    SUBSCRIBED = 2
    RELEASE = 3
    HEARTBEAT = 4
    ERROR = 5
    CLOSE = 6
    STREAM_GAP = 7
    PRODUCE = 8
    PRODUCING = 9


# The first version whose frames may carry a type; the types are numbered in the order the versions
# added them (docs/formats.md, "Versions").
_FIRST_VERSION = {
    MessageType.STREAM_GAP: ISOLATION_AND_GAP_VERSION,
    MessageType.PRODUCE: PRODUCE_VERSION,
    MessageType.PRODUCING: PRODUCE_VERSION,
}


def first_version(kind: MessageType) -> int:
    return _FIRST_VERSION.get(kind, MIN_VERSION)


class Mode(enum.IntEnum):
    RECORDS = 1
    CHUNK_STREAMS = 2


class StartPosition(enum.IntEnum):
    EARLIEST = 1
    LATEST = 2
    OFFSET = 3


class ObjectKind(enum.IntEnum):
    RECORDS = 1
    CHUNKS = 2


class ErrorCode(enum.IntEnum):
    BAD_FRAME = 1
    UNSUPPORTED_VERSION = 2
    UNKNOWN_TYPE = 3
    UNEXPECTED_MESSAGE = 4
    NOT_AUTHORIZED = 5
    UNKNOWN_TOPIC = 6
    UNKNOWN_SUBSCRIPTION = 7
    BAD_REQUEST = 8
    RECORD_TOO_LARGE = 9
    SUBSCRIPTION_LIMIT = 10
    SHUTTING_DOWN = 11
    INTERNAL = 12


@dataclass(frozen=True)
class PartitionStart:
    partition: int
    start: StartPosition = StartPosition.EARLIEST
    offset: int = 0


@dataclass(frozen=True)
class StreamStart:
    job: str
    stream: str
    next_seq: int


@dataclass(frozen=True)
class Subscribe:
    topic: str
    mode: Mode
    slot_count: int
    slot_size: int
    partitions: Tuple[PartitionStart, ...] = ()
    local_leaders: bool = False
    read_uncommitted: bool = False
    reorder_window_bytes: int = 0
    default_start: StartPosition = StartPosition.EARLIEST
    group_id: str = ""
    job_filter: str = ""
    streams: Tuple[StreamStart, ...] = ()
    type = MessageType.SUBSCRIBE


@dataclass(frozen=True)
class Subscribed:
    subscription_id: int
    object_kind: ObjectKind
    lane_hint: int
    partitions: Tuple[int, ...]
    segment_name: str
    schema: bytes
    segment_dir: str = ""
    type = MessageType.SUBSCRIBED


@dataclass(frozen=True)
class Release:
    subscription_id: int
    processed_through: int
    type = MessageType.RELEASE


@dataclass(frozen=True)
class Heartbeat:
    time_ns: int
    timeout_ns: int
    type = MessageType.HEARTBEAT


@dataclass(frozen=True)
class Error:
    subscription_id: int
    code: ErrorCode
    min_version: int
    max_version: int
    message: str
    type = MessageType.ERROR


@dataclass(frozen=True)
class Close:
    subscription_id: int
    type = MessageType.CLOSE


@dataclass(frozen=True)
class StreamGap:
    subscription_id: int
    missing_from: int
    missing_to: int
    waited_ns: int
    job: str
    stream: str
    type = MessageType.STREAM_GAP


@dataclass(frozen=True)
class Produce:
    """Version 4 on, from a producer on the daemon's host: read the segment at ``segment_path``
    (object kind CHUNKS) for the CHUNK_STREAMS subscriptions of ``topic``."""

    topic: str
    segment_path: str
    type = MessageType.PRODUCE


@dataclass(frozen=True)
class Producing:
    producer_id: int
    type = MessageType.PRODUCING


Message = Union[Subscribe, Subscribed, Release, Heartbeat, Error, Close, StreamGap, Produce,
                Producing]


@dataclass(frozen=True)
class Frame:
    request_id: int
    message: Message
    version: int = field(default=VERSION)


def quote(raw: bytes) -> str:
    """Printable ASCII as is, other bytes as ``\\xNN``, at most 64 bytes: as the Java codec."""
    out = "".join(
        chr(b) if 0x20 <= b < 0x7F and b not in (0x22, 0x5C) else f"\\x{b:02x}" for b in raw[:64]
    )
    return '"' + out + ("..." if len(raw) > 64 else "") + '"'


class _Reader:
    """Reads fields in order from a frame's bytes, naming the field that runs past the end."""

    def __init__(self, data: memoryview, pos: int):
        self.data = data
        self.pos = pos

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def _need(self, name: str, size: int, what: str) -> None:
        if size > self.remaining():
            raise ProtocolError(
                name,
                what,
                f"runs past the end of the frame, which has {self.remaining()} bytes left",
            )

    def _fixed(self, name: str, fmt: str, size: int) -> int:
        self._need(name, size, f"{size} bytes")
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return value

    def u16(self, name: str) -> int:
        return self._fixed(name, "<H", 2)

    def u32(self, name: str) -> int:
        return self._fixed(name, "<I", 4)

    def i32(self, name: str) -> int:
        return self._fixed(name, "<i", 4)

    def u64(self, name: str) -> int:
        return self._fixed(name, "<Q", 8)

    def i64(self, name: str) -> int:
        return self._fixed(name, "<q", 8)

    def take(self, name: str, length: int) -> bytes:
        self._need(name, length, f"{length} bytes")
        raw = bytes(self.data[self.pos : self.pos + length])
        self.pos += length
        return raw

    def str16(self, name: str) -> str:
        raw = self.take(name, self.u16(name))
        try:
            # Python's strict UTF-8 refuses overlong forms and surrogates, as the page asks.
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError(name, quote(raw), "not well-formed UTF-8") from None

    def bytes32(self, name: str) -> bytes:
        return self.take(name, self.u32(name))


class _Writer:
    def __init__(self) -> None:
        self.parts: List[bytes] = []

    def pack(self, fmt: str, *values: int) -> None:
        self.parts.append(struct.pack(fmt, *values))

    def str16(self, name: str, text: str) -> None:
        raw = text.encode("utf-8")
        if len(raw) > 0xFFFF:
            raise ProtocolError(name, f"{len(raw)} bytes", "a str16 holds at most 65535 bytes")
        self.pack("<H", len(raw))
        self.parts.append(raw)

    def bytes32(self, raw: bytes) -> None:
        self.pack("<I", len(raw))
        self.parts.append(bytes(raw))


def _enum(reader: _Reader, name: str, kind, allowed=None):
    value = reader.u16(name)
    members = list(allowed or kind)
    for member in members:
        if member.value == value:
            return member
    first, last = members[0], members[-1]
    raise ProtocolError(
        name, value, f"expected {first.value} ({first.name}) to {last.value} ({last.name})"
    )


def _check_name(name: str, text: str, low: int, high: int) -> None:
    raw = text.encode("utf-8")
    if not low <= len(raw) <= high:
        raise ProtocolError(name, quote(raw), f"expected {low} to {high} bytes")
    if not NAME.match(text):
        raise ProtocolError(name, quote(raw), f"only [{NAME_ALPHABET}] is allowed")


def _check_count(reader: _Reader, name: str, count: int, entry_size: int) -> None:
    if count > reader.remaining() // entry_size:
        raise ProtocolError(
            name,
            count,
            f"more entries than the {reader.remaining()} bytes left in the frame hold",
        )


def _subscription_id(reader: _Reader) -> int:
    return _id(reader, "subscription_id")


def _id(reader: _Reader, name: str) -> int:
    """A subscription id, or a producer id from the same counter: 0 is none."""
    value = reader.u64(name)
    if value == 0:
        raise ProtocolError(name, value, "must be >= 1")
    return value


def _check_frame_length(length: int) -> None:
    if not MIN_FRAME_LENGTH <= length <= MAX_FRAME_LENGTH:
        raise ProtocolError("frame_length", length, "expected 12 to 1048576")


def _check_version(version: int) -> None:
    if not MIN_VERSION <= version <= VERSION:
        raise ProtocolError("version", version, f"this side speaks versions {MIN_VERSION} to {VERSION}")


def decode(frame: bytes) -> Frame:
    """Decodes one whole frame (its length field included); raises :class:`ProtocolError`."""
    data = memoryview(frame).cast("B")
    if len(data) < 4:
        raise ProtocolError(
            "frame_length", "missing", f"a frame starts with a 4-byte length, got {len(data)} bytes"
        )
    (length,) = struct.unpack_from("<I", data, 0)
    _check_frame_length(length)
    if len(data) - 4 != length:
        raise ProtocolError("frame_length", length, f"the buffer holds {len(data) - 4} bytes after it")
    reader = _Reader(data, 4)
    version = reader.u16("version")
    _check_version(version)
    kind = _enum(reader, "type", MessageType)
    if version < first_version(kind):
        last = max(t for t in MessageType if first_version(t) <= version)
        raise ProtocolError(
            "type",
            kind.value,
            f"expected 1 (SUBSCRIBE) to {last.value} ({last.name}) in version {version}; "
            f"{kind.value} ({kind.name}) is version {first_version(kind)} on",
        )
    request_id = reader.u64("request_id")
    message = _DECODERS[kind](reader, version)
    if reader.remaining() != 0:
        raise ProtocolError(
            "frame_length", length, f"{reader.remaining()} bytes after the end of the {kind.name} body"
        )
    return Frame(request_id, message, version)


def _decode_subscribe(reader: _Reader, version: int) -> Subscribe:
    slot_count = reader.u32("slot_count")
    if not 1 <= slot_count <= MAX_SLOTS:
        raise ProtocolError("slot_count", slot_count, f"expected 1 to {MAX_SLOTS}")
    flags = reader.u32("flags")
    if version < ISOLATION_AND_GAP_VERSION:
        if flags & ~_LOCAL_LEADERS:
            raise ProtocolError(
                "flags",
                flags,
                f"only bit 0 (LOCAL_LEADERS) is defined in version {version}; "
                "bit 1 (READ_UNCOMMITTED) is version 3 on",
            )
    elif flags & ~(_LOCAL_LEADERS | _READ_UNCOMMITTED):
        raise ProtocolError(
            "flags", flags, "only bits 0 (LOCAL_LEADERS) and 1 (READ_UNCOMMITTED) are defined"
        )
    local_leaders = bool(flags & _LOCAL_LEADERS)
    slot_size = reader.u64("slot_size")
    if not MIN_SLOT_SIZE <= slot_size <= MAX_SLOT_SIZE or slot_size % 64:
        raise ProtocolError("slot_size", slot_size, "expected a multiple of 64 from 256 to 2^31 - 64")
    reorder = reader.u64("reorder_window_bytes")
    mode = _enum(reader, "mode", Mode)
    if mode == Mode.RECORDS and reorder != 0:
        raise ProtocolError("reorder_window_bytes", reorder, "must be 0 in mode RECORDS")
    default_start = _enum(
        reader, "default_start", StartPosition, [StartPosition.EARLIEST, StartPosition.LATEST]
    )
    count = reader.u32("partition_count")
    _check_count(reader, "partition_count", count, _PARTITION_START_SIZE)
    if count == 0 and not local_leaders:
        raise ProtocolError("partition_count", count, "at least one partition without LOCAL_LEADERS")
    partitions = []
    seen = set()
    for i in range(count):
        at = f"partitions[{i}]."
        partition = reader.i32(at + "partition")
        if partition < 0:
            raise ProtocolError(at + "partition", partition, "must be >= 0")
        start = _enum(reader, at + "start", StartPosition)
        reserved = reader.u16(at + "reserved")
        if reserved:
            raise ProtocolError(at + "reserved", reserved, "must be 0")
        offset = reader.i64(at + "offset")
        if start == StartPosition.OFFSET and offset < 0:
            raise ProtocolError(at + "offset", offset, "must be >= 0")
        if start != StartPosition.OFFSET and offset != 0:
            raise ProtocolError(at + "offset", offset, "must be 0 unless start is OFFSET")
        if partition in seen:
            raise ProtocolError(at + "partition", partition, "repeated")
        seen.add(partition)
        partitions.append(PartitionStart(partition, start, offset))
    topic = reader.str16("topic")
    _check_name("topic", topic, 1, MAX_TOPIC_LENGTH)
    group_id = reader.str16("group_id")
    if len(group_id.encode("utf-8")) > MAX_GROUP_ID_LENGTH:
        raise ProtocolError(
            "group_id", quote(group_id.encode()), f"expected at most {MAX_GROUP_ID_LENGTH} bytes")
    job_filter = reader.str16("job_filter")
    _check_name("job_filter", job_filter, 0, MAX_NAME_LENGTH)
    if mode == Mode.RECORDS and job_filter:
        raise ProtocolError("job_filter", quote(job_filter.encode()), "must be empty in mode RECORDS")
    stream_count = reader.u32("stream_count")
    _check_count(reader, "stream_count", stream_count, _MIN_STREAM_START_SIZE)
    if mode == Mode.RECORDS and stream_count:
        raise ProtocolError("stream_count", stream_count, "must be 0 in mode RECORDS")
    streams = []
    seen_streams = set()
    for i in range(stream_count):
        at = f"streams[{i}]."
        next_seq = reader.u64(at + "next_seq")
        job = reader.str16(at + "job")
        _check_name(at + "job", job, 1, MAX_NAME_LENGTH)
        stream = reader.str16(at + "stream")
        _check_name(at + "stream", stream, 1, MAX_NAME_LENGTH)
        if (job, stream) in seen_streams:
            raise ProtocolError(at + "stream", quote(stream.encode()), f"repeated for job {job}")
        seen_streams.add((job, stream))
        streams.append(StreamStart(job, stream, next_seq))
    return Subscribe(
        topic=topic,
        mode=mode,
        slot_count=slot_count,
        slot_size=slot_size,
        partitions=tuple(partitions),
        local_leaders=local_leaders,
        read_uncommitted=bool(flags & _READ_UNCOMMITTED),
        reorder_window_bytes=reorder,
        default_start=default_start,
        group_id=group_id,
        job_filter=job_filter,
        streams=tuple(streams),
    )


def _decode_subscribed(reader: _Reader, version: int) -> Subscribed:
    subscription_id = _subscription_id(reader)
    object_kind = _enum(reader, "object_kind", ObjectKind)
    lane_hint = reader.u16("lane_hint")
    if lane_hint > _LAST_LANE and lane_hint != NO_LANE_HINT:
        raise ProtocolError("lane_hint", lane_hint, "expected 0 to 30, or 65535 for none")
    count = reader.u32("partition_count")
    _check_count(reader, "partition_count", count, 4)
    partitions: List[int] = []
    for i in range(count):
        name = f"partitions[{i}]"
        partition = reader.i32(name)
        if partition < 0:
            raise ProtocolError(name, partition, "must be >= 0")
        if partition in partitions:
            raise ProtocolError(name, partition, "repeated")
        partitions.append(partition)
    segment_name = reader.str16("segment_name")
    _check_name("segment_name", segment_name, 1, MAX_SEGMENT_NAME_LENGTH)
    if segment_name in (".", ".."):
        raise ProtocolError("segment_name", quote(segment_name.encode()), "not a file name")
    schema = reader.bytes32("schema")
    if not 1 <= len(schema) <= 65536:
        raise ProtocolError("schema", f"{len(schema)} bytes", "expected 1 to 65536 bytes")
    segment_dir = ""
    if version >= SEGMENT_DIR_VERSION:
        segment_dir = reader.str16("segment_dir")
        _check_absolute_path("segment_dir", segment_dir)
    return Subscribed(
        subscription_id, object_kind, lane_hint, tuple(partitions), segment_name, schema, segment_dir
    )


def _check_absolute_path(name: str, path: str) -> None:
    """SUBSCRIBED's segment_dir and PRODUCE's segment_path: absolute paths (the daemon takes a
    PRODUCE segment only as a name directly in its segment folder, docs/brokerd.md)."""
    raw = path.encode("utf-8")
    if not 1 <= len(raw) <= 4095:
        raise ProtocolError(name, quote(raw), "expected 1 to 4095 bytes")
    if not path.startswith("/"):
        raise ProtocolError(name, quote(raw), "not an absolute path")
    if "\0" in path:
        raise ProtocolError(name, quote(raw), "a path has no NUL byte")


def _decode_release(reader: _Reader, version: int) -> Release:
    return Release(_subscription_id(reader), reader.u64("processed_through"))


def _decode_heartbeat(reader: _Reader, version: int) -> Heartbeat:
    time_ns = reader.u64("time_ns")
    timeout_ns = reader.u64("timeout_ns")
    if timeout_ns == 0:
        raise ProtocolError("timeout_ns", timeout_ns, "must be >= 1")
    return Heartbeat(time_ns, timeout_ns)


def _decode_error(reader: _Reader, version: int) -> Error:
    subscription_id = reader.u64("subscription_id")
    code = _enum(reader, "code", ErrorCode)
    min_version = reader.u16("min_version")
    if min_version == 0:
        raise ProtocolError("min_version", min_version, "must be >= 1")
    max_version = reader.u16("max_version")
    if max_version < min_version:
        raise ProtocolError("max_version", max_version, f"must be >= min_version {min_version}")
    return Error(subscription_id, code, min_version, max_version, reader.str16("message"))


def _decode_close(reader: _Reader, version: int) -> Close:
    return Close(reader.u64("subscription_id"))


def _decode_stream_gap(reader: _Reader, version: int) -> StreamGap:
    subscription_id = _subscription_id(reader)
    missing_from = reader.u64("missing_from")
    missing_to = reader.u64("missing_to")
    if missing_to < missing_from:
        raise ProtocolError("missing_to", missing_to, f"must be >= missing_from {missing_from}")
    waited_ns = reader.u64("waited_ns")
    job = reader.str16("job")
    _check_name("job", job, 1, MAX_NAME_LENGTH)
    stream = reader.str16("stream")
    _check_name("stream", stream, 1, MAX_NAME_LENGTH)
    return StreamGap(subscription_id, missing_from, missing_to, waited_ns, job, stream)


def _decode_produce(reader: _Reader, version: int) -> Produce:
    flags = reader.u32("flags")
    if flags:
        raise ProtocolError("flags", flags, "no flag is defined in PRODUCE: must be 0")
    topic = reader.str16("topic")
    _check_name("topic", topic, 1, MAX_TOPIC_LENGTH)
    segment_path = reader.str16("segment_path")
    _check_absolute_path("segment_path", segment_path)
    return Produce(topic, segment_path)


def _decode_producing(reader: _Reader, version: int) -> Producing:
    return Producing(_id(reader, "producer_id"))


_DECODERS = {
    MessageType.SUBSCRIBE: _decode_subscribe,
    MessageType.SUBSCRIBED: _decode_subscribed,
    MessageType.RELEASE: _decode_release,
    MessageType.HEARTBEAT: _decode_heartbeat,
    MessageType.ERROR: _decode_error,
    MessageType.CLOSE: _decode_close,
    MessageType.STREAM_GAP: _decode_stream_gap,
    MessageType.PRODUCE: _decode_produce,
    MessageType.PRODUCING: _decode_producing,
}


def _encode_body(message: Message, version: int, out: _Writer) -> None:
    if isinstance(message, Subscribe):
        flags = (_LOCAL_LEADERS if message.local_leaders else 0) | (
            _READ_UNCOMMITTED if message.read_uncommitted else 0
        )
        out.pack(
            "<IIQQHHI",
            message.slot_count,
            flags,
            message.slot_size,
            message.reorder_window_bytes,
            message.mode,
            message.default_start,
            len(message.partitions),
        )
        for entry in message.partitions:
            out.pack("<iHHq", entry.partition, entry.start, 0, entry.offset)
        out.str16("topic", message.topic)
        out.str16("group_id", message.group_id)
        out.str16("job_filter", message.job_filter)
        out.pack("<I", len(message.streams))
        for start in message.streams:
            out.pack("<Q", start.next_seq)
            out.str16("job", start.job)
            out.str16("stream", start.stream)
    elif isinstance(message, Subscribed):
        out.pack("<QHHI", message.subscription_id, message.object_kind, message.lane_hint,
                 len(message.partitions))
        for partition in message.partitions:
            out.pack("<i", partition)
        out.str16("segment_name", message.segment_name)
        out.bytes32(message.schema)
        if version >= SEGMENT_DIR_VERSION:
            out.str16("segment_dir", message.segment_dir)
        elif message.segment_dir:
            # Dropping it would leave the reader to guess the folder.
            raise ProtocolError(
                "segment_dir", quote(message.segment_dir.encode()), "version 1 has no segment_dir"
            )
    elif isinstance(message, Release):
        out.pack("<QQ", message.subscription_id, message.processed_through)
    elif isinstance(message, Heartbeat):
        out.pack("<QQ", message.time_ns, message.timeout_ns)
    elif isinstance(message, Error):
        out.pack("<QHHH", message.subscription_id, message.code, message.min_version,
                 message.max_version)
        out.str16("message", message.message)
    elif isinstance(message, Close):
        out.pack("<Q", message.subscription_id)
    elif isinstance(message, StreamGap):
        out.pack("<QQQQ", message.subscription_id, message.missing_from, message.missing_to,
                 message.waited_ns)
        out.str16("job", message.job)
        out.str16("stream", message.stream)
    elif isinstance(message, Produce):
        out.pack("<I", 0)  # flags
        out.str16("topic", message.topic)
        out.str16("segment_path", message.segment_path)
    elif isinstance(message, Producing):
        out.pack("<Q", message.producer_id)
    else:
        raise TypeError(f"not a control message: {message!r}")


def encode(frame: Frame) -> bytes:
    """Encodes a frame; raises :class:`ProtocolError` for what the decoder would refuse."""
    _check_version(frame.version)
    out = _Writer()
    try:
        out.pack("<HHQ", frame.version, frame.message.type, frame.request_id)
        _encode_body(frame.message, frame.version, out)
    except struct.error as e:
        raise ProtocolError(type(frame.message).__name__, frame.message, f"out of range: {e}") from None
    body = b"".join(out.parts)
    _check_frame_length(len(body))
    data = struct.pack("<I", len(body)) + body
    # The decoder holds the format's rules; running it here keeps one copy of them.
    decode(data)
    return data
