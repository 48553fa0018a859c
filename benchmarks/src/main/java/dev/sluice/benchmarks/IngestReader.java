package dev.sluice.benchmarks;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.brokerd.RecordBatch;
import dev.sluice.client.brokerd.RecordsSubscription;
import dev.sluice.client.brokerd.SubscriptionRequest;
import dev.sluice.client.protocol.StartPosition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.arrow.vector.VarBinaryVector;

/**
 * The Java side of the ingest benchmark: subscribes through {@link BrokerdClient} to every
 * partition of a topic from its start, reads {@code count} records zero-copy, and digests every
 * value as {@code sluice-kafka-tool consume --digest sum64} does (little-endian 8-byte words, then
 * the tail bytes), so the two checksums must agree.
 *
 * <p>Arguments: socket path, topic, partition count, record count, warm-up records, the daemon's
 * pid. The measured window runs from the first batch after the warm-up to the release of the last,
 * as the bare consumer's does: the steady state, without the JVM's start and JIT, connecting, and
 * the daemon's metadata lookups. Its CPU time is this process's and the daemon's (read from {@code
 * /proc}) over the window.
 */
public final class IngestReader {
    private IngestReader() {}

    public static void main(String[] args) throws Exception {
        Path socket = Path.of(args[0]);
        String topic = args[1];
        int partitions = Integer.parseInt(args[2]);
        long count = Long.parseLong(args[3]);
        long warmup = Long.parseLong(args[4]);
        long daemonPid = Long.parseLong(args[5]);
        long records = 0;
        long bytes = 0;
        long checksum = 0;
        long windowStart = 0;
        long windowRecords = 0;
        long windowBytes = 0;
        long cpuStart = 0;
        double daemonCpuStart = 0;
        UnsafeBuffer view = new UnsafeBuffer(0, 0);
        BrokerdClient client = BrokerdClient.builder(socket).build();
        try (RecordsSubscription subscription =
                client.subscribe(
                        SubscriptionRequest.builder(topic)
                                .partitions(partitions, StartPosition.EARLIEST)
                                .slots(64, 1 << 20)
                                .build())) {
            while (records < count) {
                try (RecordBatch batch = subscription.poll(Duration.ofSeconds(10))) {
                    if (batch == null) {
                        throw new IllegalStateException("nothing for 10 s after " + records);
                    }
                    if (windowStart == 0 && records >= warmup) {
                        windowStart = System.nanoTime();
                        cpuStart = Probe.processCpuNanos();
                        daemonCpuStart = ChildProcess.cpuSeconds(daemonPid);
                        windowRecords = records;
                        windowBytes = bytes;
                    }
                    VarBinaryVector values = (VarBinaryVector) batch.root().getVector("value");
                    long base = values.getDataBuffer().memoryAddress();
                    int rows = batch.rowCount();
                    for (int row = 0; row < rows; row++) {
                        int from = values.getStartOffset(row);
                        int length = values.getEndOffset(row) - from;
                        view.wrap(base + from, length);
                        checksum += Probe.sum(view, 0, length);
                        bytes += length;
                    }
                    records += rows;
                }
            }
        }
        long windowEnd = System.nanoTime();
        System.out.printf(
                Locale.ROOT,
                "records=%d bytes=%d checksum=%s window_records=%d window_bytes=%d window_s=%.6f"
                        + " window_cpu_s=%.6f daemon_window_cpu_s=%.6f%n",
                records,
                bytes,
                Long.toUnsignedString(checksum),
                records - windowRecords,
                bytes - windowBytes,
                (windowEnd - windowStart) / 1e9,
                (Probe.processCpuNanos() - cpuStart) / 1e9,
                ChildProcess.cpuSeconds(daemonPid) - daemonCpuStart);
    }
}
