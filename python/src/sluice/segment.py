"""The reader's side of a Sluice segment: docs/formats.md, "Segment".

The file is mapped read-write, as the Java ``MappedSegment`` maps it for a reader: a reader writes
its lane's words (``lane_word``, ``read_pos``, its heartbeat, ``reader_waiting``) and releases
slots by compare-and-swap on their ``state_word``. Python has no atomic operations on shared
memory, so the compare-and-swaps and the sequentially consistent stores go through GCC's
``libatomic`` with ``ctypes`` (part of every g++ toolchain, no extension to build); plain loads and
stores are aligned 8- and 4-byte ``memoryview`` accesses, single instructions on x86-64 whose
ordering (TSO) gives the acquire loads and release stores the cycle asks for.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import mmap
import os
import select
import socket
import stat
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

import pyarrow as pa

from .limits import MAX_LANES, MAX_SLOTS, MAX_SLOT_SIZE, MIN_SLOT_SIZE

MAGIC = b"SLUICESG"
VERSION = 1
PAGE = 4096
DESCRIPTOR_SIZE = 64
OBJECT_RECORDS = 1
OBJECT_CHUNKS = 2

# Header offsets (docs/formats.md, "Header").
H_SLOT_COUNT, H_LANE_COUNT, H_SLOT_SIZE, H_SEGMENT_SIZE = 16, 20, 24, 32
H_LANE_TABLE_OFFSET, H_LANE_SIZE, H_RING_CAPACITY, H_SCHEMA_LENGTH = 40, 48, 56, 60
H_DESCRIPTOR_TABLE_OFFSET, H_SLOT_DATA_OFFSET, H_LIVENESS, H_OBJECT_KIND = 64, 72, 80, 88
H_HEADER_SIZE, H_WRITER_HEARTBEAT, H_WRITER_STATE = 92, 136, 144
H_OBJECTS_PUBLISHED, H_WRITER_WAITING, H_SCHEMA = 152, 192, 256
WRITER_CLOSED = 2
# Lane offsets (docs/formats.md, "Lane table").
L_LANE_WORD, L_READER_PID, L_WRITE_POS, L_READ_POS = 0, 8, 64, 128
L_READER_HEARTBEAT, L_READER_WAITING, L_RING = 136, 144, 192
LANE_FREE, LANE_ATTACHED, LANE_CLOSED = 0, 1, 2
# Descriptor offsets (docs/formats.md, "Slot descriptor").
D_STATE_WORD, D_FLAGS, D_LENGTH, D_OBJECT_ID, D_RECORD_COUNT = 0, 8, 12, 16, 24
D_PARTITION, D_FIRST_OFFSET, D_LAST_OFFSET, D_CHECKSUM = 28, 32, 40, 48
SLOT_HAS_CHECKSUM = 1
WRITER_BIT = 1 << 31
LOW32 = 0xFFFFFFFF
CONTINUATION = b"\xff\xff\xff\xff"

# The idle strategy of the C++ and Java sides (native/include/sluice/idle_strategy.h; docs/architecture.md,
# "Segment"): a few spins, a few yields, then park on the doorbell, or without one sleep with
# exponential backoff from 10 us up to 1 ms. tests/test_twins.py pins these to the C++ header.
SPINS = 64
YIELDS = 16
MIN_BACKOFF_S = 10e-6
MAX_BACKOFF_S = 1e-3


class SegmentError(Exception):
    """A segment that cannot be read: missing, all lanes taken, or the reader lost its lane."""


class SegmentRefused(SegmentError):
    """A path that is not the writer's segment: a symbolic link, not a regular file, or owned by
    another uid than the writer's; refused before anything is mapped (python/README.md,
    "Trust")."""


class SegmentFormatError(SegmentError):
    """A segment or object that breaks docs/formats.md; ``field`` names the field."""

    def __init__(self, field_name: str, value: object, expectation: str):
        super().__init__(f"{field_name} = {value}: {expectation}")
        self.field = field_name


class ReaderEvicted(SegmentError):
    """The writer reclaimed this reader's lane (its heartbeat was late): its objects are gone."""


class WriterDead(SegmentError):
    """The writer's heartbeat is older than the segment's ``liveness_timeout_ns``."""


def _load_libatomic(name: str) -> ctypes.CDLL:
    """GCC's libatomic: the compare-and-swap and exchange on the segment's shared words, which
    Python has no other way to do. Not every host has it (Debian's slim images do not)."""
    try:
        return ctypes.CDLL(name)
    except OSError as error:
        raise ImportError(
            f"sluice needs GCC's libatomic ({name}) for its atomic operations on shared memory, "
            f"and it does not load: {error}. On Debian and Ubuntu: apt-get install libatomic1; on "
            "Fedora and RHEL: dnf install libatomic") from error


def _libatomic_function(name: str, restype, *argtypes):
    # getattr: a name starting with two underscores would be mangled inside a class.
    function = getattr(_LIBATOMIC, name)
    function.restype = restype
    function.argtypes = list(argtypes)
    return function


_LIBATOMIC = _load_libatomic(ctypes.util.find_library("atomic") or "libatomic.so.1")
_CAS64 = _libatomic_function("__atomic_compare_exchange_8", ctypes.c_bool, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_int)
_EXCHANGE32 = _libatomic_function("__atomic_exchange_4", ctypes.c_uint32, ctypes.c_void_p,
                                  ctypes.c_uint32, ctypes.c_int)
_SEQ_CST = 5


def ring_capacity(slot_count: int) -> int:
    return 1 if slot_count <= 1 else 1 << (slot_count - 1).bit_length()


def _align(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


@dataclass(frozen=True)
class SegmentHeader:
    checksums: bool
    slot_count: int
    lane_count: int
    slot_size: int
    segment_size: int
    lane_table_offset: int
    lane_size: int
    ring_capacity: int
    schema_length: int
    descriptor_table_offset: int
    slot_data_offset: int
    liveness_timeout_ns: int
    object_kind: int
    header_size: int


def validate_header(data: bytes, file_size: int) -> SegmentHeader:
    """Checks the header before any offset in it is trusted (docs/formats.md, "Validation")."""
    if file_size < PAGE:
        raise SegmentFormatError("file_size", file_size, "a segment is at least 4096 bytes")

    def u32(offset: int) -> int:
        return struct.unpack_from("<I", data, offset)[0]

    def u64(offset: int) -> int:
        return struct.unpack_from("<Q", data, offset)[0]

    def expect(offset: int, name: str, expected: int) -> None:
        if u64(offset) != expected:
            raise SegmentFormatError(name, u64(offset), f"the layout puts it at {expected}")

    if bytes(data[0:8]) != MAGIC:
        raise SegmentFormatError("magic", bytes(data[0:8]).hex().upper(),
                                 "expected 534C554943455347 (SLUICESG)")
    if u32(8) != VERSION:
        raise SegmentFormatError("version", u32(8), "expected 1")
    flags = u32(12)
    if flags & ~1:
        raise SegmentFormatError("flags", hex(flags), "only bit 0 (CHECKSUMS) is defined")
    slot_count = u32(H_SLOT_COUNT)
    if not 1 <= slot_count <= MAX_SLOTS:
        raise SegmentFormatError("slot_count", slot_count, f"must be 1 to {MAX_SLOTS}")
    lane_count = u32(H_LANE_COUNT)
    if not 1 <= lane_count <= MAX_LANES:
        raise SegmentFormatError("lane_count", lane_count, "must be 1 to 31")
    slot_size = u64(H_SLOT_SIZE)
    if slot_size < MIN_SLOT_SIZE or slot_size % 64 or slot_size > MAX_SLOT_SIZE:
        raise SegmentFormatError("slot_size", slot_size,
                                 "must be a multiple of 64 from 256 to 2^31 - 64")
    header_size = u32(H_HEADER_SIZE)
    if header_size < PAGE or header_size % PAGE or header_size > file_size:
        raise SegmentFormatError(
            "header_size", header_size,
            f"must be a multiple of 4096, at least 4096, inside the file of {file_size} bytes")
    capacity = ring_capacity(slot_count)
    if u32(H_RING_CAPACITY) != capacity:
        raise SegmentFormatError("ring_capacity", u32(H_RING_CAPACITY),
                                 f"expected {capacity} for slot_count {slot_count}")
    lane_size = _align(L_RING + 8 * capacity, 64)
    expect(H_LANE_SIZE, "lane_size", lane_size)
    expect(H_LANE_TABLE_OFFSET, "lane_table_offset", header_size)
    descriptors = header_size + lane_count * lane_size
    expect(H_DESCRIPTOR_TABLE_OFFSET, "descriptor_table_offset", descriptors)
    slot_data = _align(descriptors + slot_count * DESCRIPTOR_SIZE, PAGE)
    expect(H_SLOT_DATA_OFFSET, "slot_data_offset", slot_data)
    segment_size = slot_data + slot_count * slot_size
    expect(H_SEGMENT_SIZE, "segment_size", segment_size)
    if segment_size != file_size:
        raise SegmentFormatError("segment_size", segment_size, f"the file has {file_size} bytes")
    schema_length = u32(H_SCHEMA_LENGTH)
    if not 1 <= schema_length <= header_size - H_SCHEMA:
        raise SegmentFormatError("schema_length", schema_length,
                                 f"must be 1 to header_size - 256 = {header_size - H_SCHEMA}")
    (liveness,) = struct.unpack_from("<q", data, H_LIVENESS)
    if liveness <= 0:
        raise SegmentFormatError("liveness_timeout_ns", liveness, "must be positive")
    kind = u32(H_OBJECT_KIND)
    if kind not in (OBJECT_RECORDS, OBJECT_CHUNKS):
        raise SegmentFormatError("object_kind", kind, "expected 1 (RECORDS) or 2 (CHUNKS)")
    return SegmentHeader(bool(flags & 1), slot_count, lane_count, slot_size, segment_size,
                         header_size, lane_size, capacity, schema_length, descriptors, slot_data,
                         liveness, kind, header_size)


def parse_schema(message: bytes) -> pa.Schema:
    try:
        return pa.ipc.read_schema(pa.py_buffer(message))
    except (pa.ArrowException, ValueError, OSError) as e:
        raise SegmentFormatError("schema", f"{len(message)} bytes",
                                 f"not an Arrow IPC Schema message: {e}") from None


def _crc32c_table() -> List[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data) -> int:
    """CRC32C (Castagnoli) in plain Python: only segments written with CHECKSUMS need it, and
    sluice-brokerd writes none (docs/brokerd.md)."""
    crc = 0xFFFFFFFF
    table = _CRC32C
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


_FILE_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
               stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}


def open_segment_file(path: Path, writable: bool, owner_uid: int) -> Tuple[int, os.stat_result]:
    """The descriptor of the segment at ``path`` and its ``fstat``, refused with
    :class:`SegmentRefused` unless it is a regular file of ``owner_uid``, as sluice-brokerd opens
    a producer's segment: the file itself (``O_NOFOLLOW``: a link is refused, not followed), and
    the checks made on the very descriptor then mapped, so that no other file can be swapped in
    between."""
    # O_NONBLOCK: a FIFO would otherwise hold the open until a writer came; it changes nothing
    # for a regular file or its mapping.
    flags = (os.O_RDWR if writable else os.O_RDONLY) | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise SegmentRefused(f"{path}: a symbolic link, not the segment itself") from None
        if e.errno == errno.EISDIR:
            raise SegmentRefused(f"{path}: a directory, not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _FILE_KINDS.get(stat.S_IFMT(info.st_mode), "a special file")
            raise SegmentRefused(f"{path}: {kind}, not a regular file")
        if info.st_uid != owner_uid:
            raise SegmentRefused(
                f"{path}: owned by uid {info.st_uid}, not by the writer's uid {owner_uid}")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


class MappedSegment:
    """A segment file mapped whole, with typed views of its control words.

    ``owner_uid``: the uid the file must belong to, its writer's (this process's effective uid
    unless given; a subscription passes the daemon's, the peer of its control socket).
    """

    def __init__(self, path: Path, writable: bool, owner_uid: Optional[int] = None):
        self.path = Path(path)
        fd, info = open_segment_file(self.path, writable,
                                     os.geteuid() if owner_uid is None else owner_uid)
        try:
            size = info.st_size
            if size < PAGE:
                raise SegmentFormatError("file_size", size, "a segment is at least 4096 bytes")
            with mmap.mmap(fd, PAGE, mmap.MAP_SHARED, mmap.PROT_READ) as first:
                self.header = validate_header(first, size)
            prot = mmap.PROT_READ | (mmap.PROT_WRITE if writable else 0)
            self.map = mmap.mmap(fd, size, mmap.MAP_SHARED, prot)
        finally:
            os.close(fd)
        self.bytes = memoryview(self.map)
        self.u64 = self.bytes.cast("Q")
        self.u32 = self.bytes.cast("I")
        self.i64 = self.bytes.cast("q")
        self.i32 = self.bytes.cast("i")
        if writable:
            anchor = ctypes.c_char.from_buffer(self.map)
            self.address = ctypes.addressof(anchor)
            del anchor  # the address stays valid while self.map is mapped
        else:
            self.address = None

    def schema_message(self) -> bytes:
        return bytes(self.bytes[H_SCHEMA : H_SCHEMA + self.header.schema_length])

    def lane(self, lane: int) -> int:
        return self.header.lane_table_offset + lane * self.header.lane_size

    def descriptor(self, slot: int) -> int:
        return self.header.descriptor_table_offset + slot * DESCRIPTOR_SIZE

    def slot_data(self, slot: int) -> int:
        return self.header.slot_data_offset + slot * self.header.slot_size

    def cas64(self, offset: int, expected: int, desired: int) -> bool:
        want = ctypes.c_uint64(expected)
        return _CAS64(self.address + offset, ctypes.byref(want), desired, _SEQ_CST, _SEQ_CST)

    def exchange32(self, offset: int, value: int) -> int:
        return _EXCHANGE32(self.address + offset, value, _SEQ_CST)


@dataclass
class SlotObject:
    """One published object: its slot, its descriptor's fields, and its message's bytes."""

    slot: int
    generation: int
    object_id: int
    record_count: int
    partition: int
    first_offset: int
    last_offset: int
    message: memoryview


def read_object(segment: MappedSegment, slot: int, generation: int) -> SlotObject:
    """Reads slot ``slot``'s descriptor and checks its length and checksum (the cycle, step 2)."""
    d = segment.descriptor(slot)
    length = segment.u32[(d + D_LENGTH) // 4]
    if length > segment.header.slot_size:
        raise SegmentFormatError(
            "length", length, f"slot {slot} holds at most slot_size = {segment.header.slot_size} bytes")
    flags = segment.u32[(d + D_FLAGS) // 4]
    if flags & ~SLOT_HAS_CHECKSUM:
        raise SegmentFormatError("flags", hex(flags), f"slot {slot}: only bit 0 (HAS_CHECKSUM) is defined")
    start = segment.slot_data(slot)
    message = segment.bytes[start : start + length]
    if flags & SLOT_HAS_CHECKSUM:
        expected = segment.u32[(d + D_CHECKSUM) // 4]
        actual = crc32c(message)
        if actual != expected:
            raise SegmentFormatError(
                "checksum", hex(expected), f"slot {slot}: the data's CRC32C is {actual:#x}")
    return SlotObject(
        slot, generation,
        segment.u64[(d + D_OBJECT_ID) // 8],
        segment.u32[(d + D_RECORD_COUNT) // 4],
        segment.i32[(d + D_PARTITION) // 4],
        segment.i64[(d + D_FIRST_OFFSET) // 8],
        segment.i64[(d + D_LAST_OFFSET) // 8],
        message,
    )


def decode_batch(obj: SlotObject, schema: pa.Schema, buffer: pa.Buffer,
                 full: bool = False) -> pa.RecordBatch:
    """The object's record batch, zero-copy over ``buffer`` (the message's mapped bytes).

    Checks what docs/formats.md, "The cycle", step 2 asks: the encapsulated message's framing, a
    RecordBatch message of the header's schema whose buffers lie in its body and hold its rows
    (Arrow C++ refuses a buffer beyond the body; ``validate`` a batch whose buffers are short),
    and the descriptor's ``record_count``. ``full`` also checks every value (offsets, UTF-8).
    """
    length = len(obj.message)
    if length < 8 or obj.message[0:4] != CONTINUATION:
        raise SegmentFormatError("message", f"slot {obj.slot}",
                                 "does not start with the IPC continuation marker FF FF FF FF")
    (metadata_length,) = struct.unpack_from("<I", obj.message, 4)
    if metadata_length == 0 or metadata_length % 8 or 8 + metadata_length > length:
        raise SegmentFormatError(
            "message", f"metadata length {metadata_length}",
            f"slot {obj.slot} holds {length} bytes; the metadata must be a positive multiple of 8 inside them")
    try:
        message = pa.ipc.read_message(buffer)
        if message.type != "record batch":
            raise SegmentFormatError("message", f"header type {message.type}",
                                     f"slot {obj.slot} must hold a RecordBatch message")
        batch = pa.ipc.read_record_batch(message, schema)
        batch.validate(full=full)
    except (pa.ArrowException, ValueError, OSError) as e:
        if isinstance(e, SegmentFormatError):
            raise
        raise SegmentFormatError("message", f"slot {obj.slot}",
                                 f"not a valid record batch of the header's schema: {e}") from None
    if batch.num_rows != obj.record_count:
        raise SegmentFormatError("record_count", obj.record_count,
                                 f"slot {obj.slot} holds {batch.num_rows} rows")
    return batch


def published_objects(segment: MappedSegment) -> List[SlotObject]:
    """Every published object, by object id, without attaching a lane (the vectors' check)."""
    lanes = (1 << segment.header.lane_count) - 1
    objects = []
    for slot in range(segment.header.slot_count):
        state = segment.u64[(segment.descriptor(slot) + D_STATE_WORD) // 8]
        holders = state & LOW32
        if holders in (0, WRITER_BIT):
            continue
        if holders & ~lanes:
            raise SegmentFormatError(
                "state_word", hex(state),
                f"slot {slot} holders name lanes beyond lane_count {segment.header.lane_count} "
                "or mix the writer with readers")
        objects.append(read_object(segment, slot, state >> 32))
    objects.sort(key=lambda o: o.object_id)
    return objects


class Doorbell:
    """The lane's doorbell socket (docs/formats.md, "Doorbell"): one byte each way means "look
    again". ``None`` from :meth:`connect` when the writer has none; the reader then sleeps."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.broken = False

    @staticmethod
    def connect(path: str, lane: int) -> Optional["Doorbell"]:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(1.0)
            sock.connect(path)
            sock.sendall(bytes([lane]))
            sock.setblocking(False)
            return Doorbell(sock)
        except OSError:
            sock.close()
            return None

    def ring(self) -> None:
        if self.broken:
            return
        try:
            self.sock.send(b"\x01")
        except BlockingIOError:
            pass  # a full buffer already holds a wakeup
        except OSError:
            self.broken = True

    def wait(self, seconds: float) -> bool:
        """Waits up to ``seconds`` for a ring; False when the doorbell is broken (sleep instead)."""
        if self.broken:
            return False
        ready, _, _ = select.select([self.sock], [], [], max(seconds, 0.0))
        if ready:
            try:
                if not self.sock.recv(64):
                    self.broken = True
            except BlockingIOError:
                pass
            except OSError:
                self.broken = True
        return True

    def close(self) -> None:
        self.sock.close()


class SegmentReader:
    """One lane of a segment: attaches, takes objects in order, releases their slots.

    ``owner_uid``: the uid the segment must belong to (:class:`MappedSegment`)."""

    def __init__(self, path, schema: Optional[pa.Schema] = None, *,
                 owner_uid: Optional[int] = None):
        self.segment = MappedSegment(Path(path), writable=True, owner_uid=owner_uid)
        self.header = self.segment.header
        self.schema = schema if schema is not None else parse_schema(self.segment.schema_message())
        self.lock = threading.Lock()
        self.closed = False
        self.end_of_stream = False
        self.lane, self.lane_word = self._attach()
        self.lane_offset = self.segment.lane(self.lane)
        self.lane_bit = 1 << self.lane
        self.read_pos = self.segment.u64[(self.lane_offset + L_READ_POS) // 8]
        self._stop_heartbeat = threading.Event()
        self._beat()
        self._heartbeat = threading.Thread(
            target=self._heartbeat_loop, name="sluice-segment-heartbeat", daemon=True)
        self._heartbeat.start()
        self.doorbell = Doorbell.connect(str(self.segment.path) + ".bell", self.lane)

    def _attach(self):
        s = self.segment
        now = time.monotonic_ns()
        for lane in range(self.header.lane_count):
            base = s.lane(lane)
            word = s.u64[(base + L_LANE_WORD) // 8]
            if word & LOW32 != LANE_FREE:
                continue
            s.u64[(base + L_READER_PID) // 8] = os.getpid()
            s.u64[(base + L_READER_HEARTBEAT) // 8] = now
            # An evicted reader still running may have moved read_pos after the reclaim.
            s.u64[(base + L_READ_POS) // 8] = s.u64[(base + L_WRITE_POS) // 8]
            attached = ((word >> 32) + 1) << 32 | LANE_ATTACHED
            if s.cas64(base + L_LANE_WORD, word, attached):
                return lane, attached
        raise SegmentError(f"{s.path}: all {self.header.lane_count} lanes are taken")

    def _beat(self) -> None:
        self.segment.u64[(self.lane_offset + L_READER_HEARTBEAT) // 8] = time.monotonic_ns()

    def _heartbeat_loop(self) -> None:
        # Refreshed every liveness_timeout_ns / 8, well inside the quarter the format asks.
        period = max(self.header.liveness_timeout_ns / 8e9, 0.001)
        while not self._stop_heartbeat.wait(period):
            self._beat()

    def _write_pos(self) -> int:
        return self.segment.u64[(self.lane_offset + L_WRITE_POS) // 8]

    def _writer_closed(self) -> bool:
        return self.segment.u32[H_WRITER_STATE // 4] == WRITER_CLOSED

    def _check_not_evicted(self) -> None:
        word = self.segment.u64[(self.lane_offset + L_LANE_WORD) // 8]
        if word != self.lane_word:
            raise ReaderEvicted(
                f"{self.segment.path}: lane {self.lane} is now epoch {word >> 32} state "
                f"{word & LOW32}, this reader attached as epoch {self.lane_word >> 32}")

    def poll(self, timeout: float) -> Optional[SlotObject]:
        """The next object, or None after ``timeout`` seconds or at the end (``end_of_stream``)."""
        if self.closed:
            raise SegmentError("segment reader closed")
        deadline = time.monotonic() + timeout
        liveness = self.header.liveness_timeout_ns
        steps = 0
        backoff = MIN_BACKOFF_S
        while True:
            self._check_not_evicted()
            if self.read_pos < self._write_pos():
                return self._take()
            if self._writer_closed():
                # Publications happen before the CLOSED store: look at write_pos once more.
                if self.read_pos < self._write_pos():
                    continue
                self.end_of_stream = True
                return None
            now = time.monotonic()
            if time.monotonic_ns() - self.segment.u64[H_WRITER_HEARTBEAT // 8] > liveness:
                raise WriterDead(f"{self.segment.path}: writer heartbeat older than {liveness} ns "
                                 "with nothing left to read")
            if now >= deadline:
                return None
            if steps < SPINS:
                steps += 1
                continue
            if steps < SPINS + YIELDS:
                steps += 1
                os.sched_yield()
                continue
            backoff = self._park(min(deadline - now, liveness / 4e9), backoff)

    def _park(self, seconds: float, backoff: float) -> float:
        waiting = self.lane_offset + L_READER_WAITING
        # Sequentially consistent: set reader_waiting, then look at write_pos once more.
        self.segment.exchange32(waiting, 1)
        try:
            if self.read_pos < self._write_pos() or self._writer_closed():
                return backoff
            if self.doorbell is None or not self.doorbell.wait(seconds):
                time.sleep(min(backoff, seconds))
                return min(backoff * 2, MAX_BACKOFF_S)
            return backoff
        finally:
            self.segment.u32[waiting // 4] = 0

    def _take(self) -> SlotObject:
        s = self.segment
        entry = s.u64[(self.lane_offset + L_RING) // 8 + (self.read_pos & (self.header.ring_capacity - 1))]
        self.read_pos += 1
        s.u64[(self.lane_offset + L_READ_POS) // 8] = self.read_pos
        slot = entry & LOW32
        if slot >= self.header.slot_count:
            raise SegmentFormatError("ring", hex(entry),
                                     f"lane {self.lane} entry names slot {slot} of {self.header.slot_count}")
        generation = entry >> 32
        state = s.u64[(s.descriptor(slot) + D_STATE_WORD) // 8]
        holders = state & LOW32
        if state >> 32 != generation or not holders & self.lane_bit or holders & WRITER_BIT:
            self._check_not_evicted()
            raise SegmentFormatError(
                "state_word", hex(state),
                f"slot {slot} must be generation {generation} and held by lane {self.lane}, not the writer")
        return read_object(s, slot, generation)

    def release(self, slot: int, generation: int) -> None:
        """Clears this lane's bit from the slot (the cycle, step 3); wakes a parked writer."""
        s = self.segment
        offset = s.descriptor(slot) + D_STATE_WORD
        with self.lock:
            if self.closed:
                return  # the lane is CLOSED: the writer takes its slots back itself
            while True:
                state = s.u64[offset // 8]
                if state >> 32 != generation or not state & self.lane_bit:
                    raise ReaderEvicted(
                        f"{s.path}: lane {self.lane} lost slot {slot} before releasing it")
                released = state & ~self.lane_bit
                if s.cas64(offset, state, released):
                    break
            if released & LOW32 == 0:
                self._wake_writer()

    def _wake_writer(self) -> None:
        if self.segment.u32[H_WRITER_WAITING // 4] == 1 and self.segment.exchange32(H_WRITER_WAITING, 0) == 1:
            if self.doorbell is not None:
                self.doorbell.ring()

    def close(self) -> None:
        """Leaves the lane (CLOSED: the writer reclaims it); the mapping stays while batches use it."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            self._stop_heartbeat.set()
            self.segment.cas64(self.lane_offset + L_LANE_WORD, self.lane_word,
                               (self.lane_word >> 32) << 32 | LANE_CLOSED)
            # A writer parked for credits takes the slots of a CLOSED lane back as soon as it looks.
            self._wake_writer()
            if self.doorbell is not None:
                self.doorbell.close()
