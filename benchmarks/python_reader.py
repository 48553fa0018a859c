"""The Python side of `./sluice bench python` (benchmarks/README.md, "Python reader"): reads a
segment that handoff-writer fills to its end through python/'s reader (SegmentReader and the
zero-copy batches a Subscription hands out) and prints the measured window as the Java readers
do (Probe.report): ``start_ns= end_ns= cpu_s= records= bytes= checksum=``.

Arguments: segment name, warm-up records, task: ``sum`` adds up every value byte with
``pyarrow.compute.sum`` over an int64 view of the value buffer (the values lie back to back, as
the Java reader sums them in 8-byte words), ``count`` adds up the batches' ``num_rows``. The
window starts at the object whose first offset is the warm-up count and ends after the last
release, as SluiceHandoffReader's.
"""

import functools
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc

from sluice.batches import RecordBatch, wrap
from sluice.segment import SegmentReader


def main() -> None:
    name, warmup, task = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    reader = SegmentReader(f"/dev/shm/{name}")
    schema = reader.schema
    value_index = schema.get_field_index("value")
    records = total_bytes = checksum = 0
    start_ns = cpu_start = None
    while True:
        obj = reader.poll(1.0)
        if obj is None:
            if reader.end_of_stream:
                break
            continue
        if start_ns is None and obj.first_offset == warmup:
            start_ns = time.monotonic_ns()
            cpu_start = time.process_time()
            records = total_bytes = checksum = 0
        with wrap(obj, schema, RecordBatch,
                  functools.partial(reader.release, obj.slot, obj.generation)) as batch:
            rows = batch.num_rows
            if task == "sum":
                values = batch.record_batch.column(value_index)
                _, offsets, data = values.buffers()
                ends = memoryview(offsets).cast("i")
                first, last = ends[values.offset], ends[values.offset + rows]
                words = pa.Array.from_buffers(pa.int64(), (last - first) // 8,
                                              [None, data.slice(first, last - first)])
                checksum += pc.sum(words).as_py() or 0
                total_bytes += last - first
            records += rows
    end_ns = time.monotonic_ns()
    reader.close()
    if start_ns is None:
        raise SystemExit(f"the stream ended before record {warmup}")
    print(f"start_ns={start_ns} end_ns={end_ns} cpu_s={time.process_time() - cpu_start:.6f} "
          f"records={records} bytes={total_bytes} checksum={checksum & 0xFFFFFFFFFFFFFFFF}",
          flush=True)


if __name__ == "__main__":
    main()
