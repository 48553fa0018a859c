package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * The deterministic content shared with the C++ tool {@code sluice-segment-tool}: both sides
 * generate and check the same rows, and agree on one checksum over all values.
 *
 * <ul>
 *   <li>record i: partition i%4, offset i, timestamp 1700000000000+i ms, key null if i%3==0 else
 *       "k"+i, value of {@code size} bytes 'a'+((i+j)%26), one header ("h", i as 8-byte LE) when
 *       i%5==0.
 *   <li>chunk i of n: job "job-1", stream "s"+(i%3), seq i/3, eos for i >= n-3, payload as the
 *       value rule.
 *   <li>checksum: the sum mod 2^64 of the FNV-1a 64 of every value/payload; a null adds 0.
 * </ul>
 */
final class TestContent {
    static final long TIMESTAMP_BASE = 1_700_000_000_000L;
    private static final long FNV_OFFSET_BASIS = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    private TestContent() {}

    static int partition(long i) {
        return (int) (i % 4);
    }

    static byte[] key(long i) {
        return i % 3 == 0 ? null : ("k" + i).getBytes(StandardCharsets.UTF_8);
    }

    static byte[] value(long i, int size) {
        byte[] bytes = new byte[size];
        for (int j = 0; j < size; j++) {
            bytes[j] = (byte) ('a' + (i + j) % 26);
        }
        return bytes;
    }

    static List<RecordHeader> headers(long i) {
        if (i % 5 != 0) {
            return List.of();
        }
        byte[] le = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(i).array();
        return List.of(new RecordHeader("h", le));
    }

    static String stream(long i) {
        return "s" + (i % 3);
    }

    static void addRecord(RecordsBatchEncoder batch, long i, int size) {
        batch.add(partition(i), i, TIMESTAMP_BASE + i, key(i), value(i, size), headers(i));
    }

    static void addChunk(ChunksBatchEncoder batch, long i, long count, int size) {
        batch.add("job-1", stream(i), i / 3, i >= count - 3, value(i, size));
    }

    /** Writes items 0..count-1 of the rule, {@code perObject} rows per object. */
    static void write(
            SegmentWriter writer, BufferAllocator allocator, long count, int size, int perObject)
            throws Exception {
        if (writer.header().objectKind() == ObjectKind.RECORDS) {
            try (RecordsBatchEncoder batch = new RecordsBatchEncoder(allocator)) {
                for (long i = 0; i < count; i++) {
                    addRecord(batch, i, size);
                    if (batch.rowCount() == perObject || i == count - 1) {
                        batch.writeTo(writer, Duration.ofSeconds(10));
                    }
                }
            }
        } else {
            try (ChunksBatchEncoder batch = new ChunksBatchEncoder(allocator)) {
                for (long i = 0; i < count; i++) {
                    addChunk(batch, i, count, size);
                    if (batch.rowCount() == perObject || i == count - 1) {
                        batch.writeTo(writer, Duration.ofSeconds(10));
                    }
                }
            }
        }
    }

    /** Reads to the end of the stream, checking every row; returns the checker's totals. */
    static Checker readAll(SegmentReader reader, BufferAllocator allocator, long total)
            throws Exception {
        Checker checker = new Checker(total);
        try (ArrowBatchReader batches = new ArrowBatchReader(reader.schema(), allocator)) {
            SegmentObject object;
            long lastId = -1;
            while ((object = reader.take()) != null) {
                assertThat(object.objectId()).isGreaterThan(lastId);
                lastId = object.objectId();
                VectorSchemaRoot root = batches.load(object);
                assertThat(root.getRowCount()).isEqualTo(object.recordCount());
                checker.check(reader.header().objectKind(), root);
                object.release();
            }
        }
        return checker;
    }

    /** A checksum as the C++ tool prints it: {@code 0x} and 16 hex digits (decimal accepted). */
    static long parseChecksum(String printed) {
        return printed.startsWith("0x")
                ? Long.parseUnsignedLong(printed.substring(2), 16)
                : Long.parseUnsignedLong(printed);
    }

    static long fnv1a(byte[] bytes) {
        long hash = FNV_OFFSET_BASIS;
        for (byte b : bytes) {
            hash ^= b & 0xFF;
            hash *= FNV_PRIME;
        }
        return hash;
    }

    /**
     * Checks rows in arrival order against the rule (row k is item {@code next}, since one writer
     * publishes in order) and accumulates the count and the checksum.
     */
    static final class Checker {
        private final long total;
        long next;
        long checksum;
        long objects;

        /** {@code total} items will come in all; only the eos rule of chunks needs it. */
        Checker(long total) {
            this.total = total;
        }

        void check(ObjectKind kind, VectorSchemaRoot root) {
            objects++;
            if (kind == ObjectKind.RECORDS) {
                checkRecords(root);
            } else {
                checkChunks(root);
            }
        }

        private void checkRecords(VectorSchemaRoot root) {
            IntVector partition = (IntVector) root.getVector("partition");
            BigIntVector offset = (BigIntVector) root.getVector("offset");
            TimeStampMilliTZVector timestamp = (TimeStampMilliTZVector) root.getVector("timestamp");
            VarBinaryVector key = (VarBinaryVector) root.getVector("key");
            VarBinaryVector value = (VarBinaryVector) root.getVector("value");
            ListVector headers = (ListVector) root.getVector("headers");
            StructVector header = (StructVector) headers.getDataVector();
            VarCharVector headerKey = header.getChild("key", VarCharVector.class);
            VarBinaryVector headerValue = header.getChild("value", VarBinaryVector.class);
            for (int row = 0; row < root.getRowCount(); row++) {
                long i = next++;
                assertThat(offset.get(row)).as("offset of row %d", i).isEqualTo(i);
                assertThat(partition.get(row)).as("partition of %d", i).isEqualTo(partition(i));
                assertThat(timestamp.get(row))
                        .as("timestamp of %d", i)
                        .isEqualTo(TIMESTAMP_BASE + i);
                assertThat(key.getObject(row)).as("key of %d", i).isEqualTo(key(i));
                byte[] v = value.getObject(row);
                assertThat(v).as("value of %d", i).isEqualTo(value(i, v.length));
                checksum += fnv1a(v);
                List<RecordHeader> expected = headers(i);
                int start = headers.getElementStartIndex(row);
                int end = headers.getElementEndIndex(row);
                assertThat(end - start).as("header count of %d", i).isEqualTo(expected.size());
                for (int h = 0; h < expected.size(); h++) {
                    assertThat(new String(headerKey.get(start + h), StandardCharsets.UTF_8))
                            .isEqualTo(expected.get(h).key());
                    assertThat(headerValue.get(start + h)).isEqualTo(expected.get(h).value());
                }
            }
        }

        private void checkChunks(VectorSchemaRoot root) {
            VarCharVector job = (VarCharVector) root.getVector("job");
            VarCharVector stream = (VarCharVector) root.getVector("stream");
            UInt8Vector seq = (UInt8Vector) root.getVector("seq");
            BitVector eos = (BitVector) root.getVector("eos");
            VarBinaryVector payload = (VarBinaryVector) root.getVector("payload");
            for (int row = 0; row < root.getRowCount(); row++) {
                long i = next++;
                assertThat(job.getObject(row).toString())
                        .as("job of chunk %d", i)
                        .isEqualTo("job-1");
                assertThat(stream.getObject(row).toString())
                        .as("stream of chunk %d", i)
                        .isEqualTo(stream(i));
                assertThat(seq.get(row)).as("seq of chunk %d", i).isEqualTo(i / 3);
                assertThat(eos.get(row) == 1).as("eos of chunk %d", i).isEqualTo(i >= total - 3);
                byte[] p = payload.getObject(row);
                assertThat(p).as("payload of chunk %d", i).isEqualTo(value(i, p.length));
                checksum += fnv1a(p);
            }
        }
    }
}
