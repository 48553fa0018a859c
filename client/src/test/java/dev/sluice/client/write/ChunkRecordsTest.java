package dev.sluice.client.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.job.StreamSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.CompressionType;
import org.junit.jupiter.api.Test;

/** The chunk record of docs/formats.md, and the partitioning rule of docs/sluice-sink.md. */
class ChunkRecordsTest {
    private static ProducerRecord<byte[], byte[]> record(
            long seq, boolean eos, byte[] payload, int partition) {
        return ChunkRecords.record(
                ChunkRecords.topic("printer-1"), partition, "job-1", "cyan", seq, eos, payload);
    }

    private static List<String> headers(ProducerRecord<byte[], byte[]> record) {
        List<String> out = new ArrayList<>();
        for (Header h : record.headers()) {
            out.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
        }
        return out;
    }

    @Test
    void aChunkIsItsPayloadWithTheFormatsHeadersOnItsLocationsTopic() {
        byte[] payload = {1, 2, 3};
        ProducerRecord<byte[], byte[]> record = record(42, false, payload, 2);
        assertThat(record.topic()).isEqualTo("sluice.chunks.printer-1");
        assertThat(record.partition()).isEqualTo(2);
        assertThat(record.value()).isSameAs(payload);
        assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo("cyan");
        assertThat(record.timestamp()).isNull();
        assertThat(headers(record))
                .containsExactly("sluice.job=job-1", "sluice.stream=cyan", "sluice.seq=42");
    }

    @Test
    void theLargestRecordIsKafkasBoundOfAFullChunkWithTheLongestSeqAndEos() {
        for (int size : new int[] {1024, 127, 128, 16_383, 16_384, 512 << 10, 1 << 20, 64 << 20}) {
            assertThat(ChunkRecords.largestRecordBytes("job-1", "cyan", size))
                    .as("chunk of %d B", size)
                    .isEqualTo(
                            ChunkRecords.serializedSizeUpperBound(
                                    record(Long.MAX_VALUE, true, new byte[size], 0),
                                    CompressionType.NONE));
        }
    }

    @Test
    void theDefaultChunkFitsAStockKafkaWhateverTheNames() {
        String longest = "n".repeat(128);
        int stockMaxRequestSize = ChunkProducerSettings.of(new Properties()).maxRequestSize();
        // A broker's message.max.bytes, and so a topic's max.message.bytes, by default.
        int stockMaxMessageBytes = (1 << 20) + 12;

        assertThat(
                        ChunkRecords.largestRecordBytes(
                                longest, longest, StreamSpec.DEFAULT_CHUNK_SIZE_BYTES))
                .isLessThanOrEqualTo(stockMaxRequestSize)
                .isLessThanOrEqualTo(stockMaxMessageBytes);
        // Why the default is not 1 MiB: with the shortest names that is too large already.
        assertThat(ChunkRecords.largestRecordBytes("j", "s", 1 << 20))
                .isGreaterThan(stockMaxMessageBytes);
    }

    @Test
    void theLastChunkCarriesEosTrue() {
        ProducerRecord<byte[], byte[]> record = record(0, true, new byte[0], 0);
        assertThat(headers(record))
                .containsExactly(
                        "sluice.job=job-1",
                        "sluice.stream=cyan",
                        "sluice.seq=0",
                        "sluice.eos=true");
    }

    @Test
    void seqIsDecimalAsciiWithoutSignOrLeadingZeros() {
        for (long seq : new long[] {0, 7, 10, 1_000_000_007L, Long.MAX_VALUE}) {
            Header header = record(seq, false, new byte[1], 0).headers().lastHeader("sluice.seq");
            String text = new String(header.value(), StandardCharsets.US_ASCII);
            assertThat(text).matches("0|[1-9][0-9]*");
            assertThat(Long.parseUnsignedLong(text)).isEqualTo(seq);
        }
    }

    @Test
    void namesTheHeadersCannotCarryAreRefusedNamingTheChunk() {
        assertThatThrownBy(() -> ChunkRecords.checkNames("job 1", "cyan", "p", 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("job 1/cyan#3")
                .hasMessageContaining("job 'job 1'");
        assertThatThrownBy(() -> ChunkRecords.checkNames("j", "cyan/2", "p", 0))
                .hasMessageContaining("stream 'cyan/2'");
        assertThatThrownBy(() -> ChunkRecords.checkNames("j", "s", "", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("outputLocation");
        assertThatThrownBy(
                        () -> ChunkRecords.record("t", 0, "job 1", "cyan", 3, false, new byte[1]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("job 'job 1'");
    }

    @Test
    void theSizeBoundGrowsWithThePayload() {
        int small =
                ChunkRecords.serializedSizeUpperBound(
                        record(0, false, new byte[10], 0), CompressionType.NONE);
        int big =
                ChunkRecords.serializedSizeUpperBound(
                        record(0, false, new byte[10_010], 0), CompressionType.NONE);
        // The payload, and its length's and the record's varints grown by a byte each.
        assertThat(big - small).isBetween(10_000, 10_004);
        assertThat(small).isGreaterThan(10 + "job-1cyan0".length());
    }

    @Test
    void spreadPutsConsecutiveChunksOnConsecutivePartitionsFromTheStreamsHome() {
        int partitions = 3;
        int home =
                BuiltInPartitioner.partitionForKey(
                        "job-1/cyan".getBytes(StandardCharsets.UTF_8), partitions);
        assertThat(ChunkRecords.homePartition("job-1", "cyan", partitions)).isEqualTo(home);
        List<Integer> seen = new ArrayList<>();
        for (long seq = 0; seq < 6; seq++) {
            seen.add(ChunkRecords.spreadPartition("job-1", "cyan", seq, partitions));
        }
        assertThat(seen)
                .containsExactly(
                        home, (home + 1) % 3, (home + 2) % 3, home, (home + 1) % 3, (home + 2) % 3);
        // Large seqs stay in range.
        assertThat(ChunkRecords.spreadPartition("job-1", "cyan", Long.MAX_VALUE, 7))
                .isBetween(0, 6);
        assertThatThrownBy(() -> ChunkRecords.homePartition("job-1", "cyan", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("partitions: at least 1");
    }

    @Test
    void streamsStartOnDifferentPartitions() {
        int partitions = 8;
        Set<Integer> homes = new HashSet<>();
        for (int i = 0; i < 32; i++) {
            homes.add(ChunkRecords.homePartition("job-1", "stream-" + i, partitions));
        }
        assertThat(homes.size()).isGreaterThan(4);
    }

    @Test
    void aChunkIsDescribedByItsStreamSeqEndSizeAndLocation() {
        assertThat(ChunkRecords.describe("job-1", "cyan", "printer-1", 41, false, 1024))
                .isEqualTo("job-1/cyan#41 1024 B to printer-1");
        assertThat(ChunkRecords.describe("job-1", "cyan", "printer-1", 42, true, 7))
                .isEqualTo("job-1/cyan#42 (eos) 7 B to printer-1");
    }
}
