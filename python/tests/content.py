"""The deterministic content shared with sluice-segment-tool (native/tools/content_rule.h) and
the Java TestContent: both sides generate and check the same rows and agree on one checksum.

- record i: partition i%4, offset i, timestamp 1700000000000+i ms, key null if i%3==0 else
  "k"+i, value of ``size`` bytes 'a'+((i+j)%26), one header ("h", i as 8-byte LE) when i%5==0.
- chunk i of n: job "job-1", stream "s"+(i%3), seq i//3, eos for i >= n-3, payload as values.
- checksum: the sum mod 2^64 of the FNV-1a 64 of every value/payload; a null adds 0.
"""

import struct

import pyarrow as pa

TIMESTAMP_BASE = 1_700_000_000_000
_ALPHABET = bytes(range(ord("a"), ord("a") + 26)) * 2


def value(i: int, size: int) -> bytes:
    start = i % 26
    whole = _ALPHABET[start:start + 26] * (size // 26 + 1)
    return whole[:size]


def fnv1a(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


class Checker:
    """Checks rows in arrival order against the rule; counts objects and rows, sums the hash."""

    def __init__(self, total: int):
        self.total = total
        self.next = 0
        self.objects = 0
        self.checksum = 0

    def check(self, kind: int, batch: pa.RecordBatch) -> None:
        self.objects += 1
        rows = batch.to_pylist()
        for row in rows:
            i = self.next
            self.next += 1
            if kind == 1:
                assert row["offset"] == i
                assert row["partition"] == i % 4
                assert row["timestamp"].timestamp() * 1000 == TIMESTAMP_BASE + i
                assert row["key"] == (None if i % 3 == 0 else f"k{i}".encode())
                expected = [{"key": "h", "value": struct.pack("<q", i)}] if i % 5 == 0 else []
                assert row["headers"] == expected, f"headers of {i}"
                data = row["value"]
            else:
                assert (row["job"], row["stream"], row["seq"]) == ("job-1", f"s{i % 3}", i // 3)
                assert row["eos"] == (i >= self.total - 3), f"eos of {i}"
                data = row["payload"]
            assert data == value(i, len(data)), f"value of {i}"
            self.checksum = (self.checksum + fnv1a(data)) & 0xFFFFFFFFFFFFFFFF
