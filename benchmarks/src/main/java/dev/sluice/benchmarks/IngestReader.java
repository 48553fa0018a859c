package dev.sluice.benchmarks;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.brokerd.RecordBatch;
import dev.sluice.client.brokerd.RecordsSubscription;
import dev.sluice.client.brokerd.SubscriptionRequest;
import dev.sluice.client.protocol.StartPosition;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
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
 * <p>It reads the topic in subscriptions one after the other and measures the last. Those before
 * are for the JIT, until one compiles for less than {@link #SETTLED_COMPILE_MS} ms (at most {@link
 * #MAX_WARMUP_PASSES}): within a single pass C2 compiled the reader's code through the window, on
 * the other core, and a 1 KiB run counted about as much CPU for the reader's compiler threads as
 * for its reading (JFR: compilations of 0.1-0.5 s in a window of 1.3 s). The bare consumer, C, has
 * none.
 *
 * <p>Arguments: socket path, topic, partition count, record count, warm-up records, the daemon's
 * pid. The measured window runs from the first batch after the warm-up records to the release of
 * the last, as the bare consumer's does: the steady state, without connecting and the daemon's
 * metadata lookups. Its CPU time is this process's and the daemon's (read from {@code /proc}) over
 * the window.
 */
public final class IngestReader {
    private static final long SETTLED_COMPILE_MS = 50;
    private static final int MAX_WARMUP_PASSES = 4;

    private IngestReader() {}

    public static void main(String[] args) throws Exception {
        Path socket = Path.of(args[0]);
        String topic = args[1];
        int partitions = Integer.parseInt(args[2]);
        long count = Long.parseLong(args[3]);
        long warmup = Long.parseLong(args[4]);
        long daemonPid = Long.parseLong(args[5]);
        BrokerdClient client = BrokerdClient.builder(socket).build();
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        int passes = 0;
        long compiled;
        do {
            long before = jit.getTotalCompilationTime();
            read(client, topic, partitions, count, warmup, daemonPid);
            compiled = jit.getTotalCompilationTime() - before;
            passes++;
        } while (compiled >= SETTLED_COMPILE_MS && passes < MAX_WARMUP_PASSES);
        System.out.println(
                read(client, topic, partitions, count, warmup, daemonPid)
                        + " warmup_passes="
                        + passes);
    }

    /** One pass over the topic; returns its result line. */
    private static String read(
            BrokerdClient client,
            String topic,
            int partitions,
            long count,
            long warmup,
            long daemonPid)
            throws Exception {
        long records = 0;
        long bytes = 0;
        long checksum = 0;
        long windowStart = 0;
        long windowRecords = 0;
        long windowBytes = 0;
        long cpuStart = 0;
        double daemonCpuStart = 0;
        long windowEnd;
        long cpuEnd;
        double daemonCpuEnd;
        UnsafeBuffer view = new UnsafeBuffer(0, 0);
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
                    checksum += digest(values, view);
                    bytes += values.getStartOffset(batch.rowCount()) - values.getStartOffset(0);
                    records += batch.rowCount();
                }
            }
            // Before the close: the bare consumer's window ends with its last record too.
            windowEnd = System.nanoTime();
            cpuEnd = Probe.processCpuNanos();
            daemonCpuEnd = ChildProcess.cpuSeconds(daemonPid);
        }
        return String.format(
                Locale.ROOT,
                "records=%d bytes=%d checksum=%s window_records=%d window_bytes=%d window_s=%.6f"
                        + " window_cpu_s=%.6f daemon_window_cpu_s=%.6f",
                records,
                bytes,
                Long.toUnsignedString(checksum),
                records - windowRecords,
                bytes - windowBytes,
                (windowEnd - windowStart) / 1e9,
                (cpuEnd - cpuStart) / 1e9,
                daemonCpuEnd - daemonCpuStart);
    }

    /**
     * The batch's values' digest. A method of its own, called per batch, so that it is compiled as
     * a whole in the warm-up passes rather than as an on-stack replacement of one loop.
     */
    private static long digest(VarBinaryVector values, UnsafeBuffer view) {
        long base = values.getDataBuffer().memoryAddress();
        long checksum = 0;
        for (int row = 0; row < values.getValueCount(); row++) {
            int from = values.getStartOffset(row);
            int length = values.getEndOffset(row) - from;
            view.wrap(base + from, length);
            checksum += Probe.sum(view, 0, length);
        }
        return checksum;
    }
}
