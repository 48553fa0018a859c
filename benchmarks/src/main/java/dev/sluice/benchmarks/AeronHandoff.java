package dev.sluice.benchmarks;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * The Aeron anchor of the handoff: the same records as Aeron IPC messages between two processes.
 *
 * <pre>
 *   publish   AERON_DIR SIZE RECORDS WARMUP   embedded media driver + exclusive publication
 *   subscribe AERON_DIR SIZE RECORDS WARMUP   subscription through a FragmentAssembler
 * </pre>
 *
 * <p>The publisher prints {@code ready} once its driver runs, waits for the subscriber, offers
 * every record copied from a prepared source (as the Sluice writer does), then waits for its stdin
 * to close (the harness closes it when the subscriber is done) so that its log outlives the
 * reading. The subscriber touches every byte of every message, as the Sluice reader touches every
 * value.
 */
public final class AeronHandoff {
    private static final int STREAM_ID = 1001;
    // 64 MiB terms take 1 MiB messages (up to term/8); the largest MTU cuts fragmentation: a 64 KiB
    // message is two frames, a 1 MiB one seventeen.
    private static final String CHANNEL = "aeron:ipc?term-length=64m|mtu=65504";
    private static final int SOURCE_BYTES = 16 << 20;
    private static final int FRAGMENT_LIMIT = 256;

    private AeronHandoff() {}

    public static void main(String[] args) throws IOException {
        String aeronDir = args[1];
        int size = Integer.parseInt(args[2]);
        long records = Long.parseLong(args[3]);
        long warmup = Long.parseLong(args[4]);
        switch (args[0]) {
            case "publish" -> publish(aeronDir, size, records, warmup);
            case "subscribe" -> subscribe(aeronDir, records, warmup);
            default -> throw new IllegalArgumentException("publish or subscribe, not " + args[0]);
        }
    }

    @SuppressWarnings("try") // the driver runs while the block does; nothing in it names it
    private static void publish(String aeronDir, int size, long records, long warmup)
            throws IOException {
        MediaDriver.Context driverContext =
                new MediaDriver.Context()
                        .aeronDirectoryName(aeronDir)
                        .dirDeleteOnStart(true)
                        .dirDeleteOnShutdown(true)
                        // One driver thread on a 2-core machine; it only moves the publisher's
                        // limit for IPC, so its default backoff idling (which parks) keeps up.
                        .threadingMode(ThreadingMode.SHARED);
        try (MediaDriver driver = MediaDriver.launch(driverContext);
                Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir));
                ExclusivePublication publication =
                        aeron.addExclusivePublication(CHANNEL, STREAM_ID)) {
            System.out.println("ready");
            System.out.flush();
            IdleStrategy idle = new YieldingIdleStrategy();
            while (!publication.isConnected()) {
                idle.idle();
            }
            UnsafeBuffer source = new UnsafeBuffer(ByteBuffer.allocateDirect(SOURCE_BYTES));
            SplittableRandom random = new SplittableRandom(42);
            for (int i = 0; i + Long.BYTES <= SOURCE_BYTES; i += Long.BYTES) {
                source.putLong(i, random.nextLong());
            }
            long perPass = SOURCE_BYTES / size;
            offer(publication, source, size, perPass, 0, warmup, idle);
            long startNanos = System.nanoTime();
            long cpuStart = Probe.processCpuNanos();
            offer(publication, source, size, perPass, warmup, warmup + records, idle);
            long endNanos = System.nanoTime();
            System.in.transferTo(OutputStream.nullOutputStream());
            Probe.report(
                    startNanos,
                    endNanos,
                    Probe.processCpuNanos() - cpuStart,
                    "records=" + records + " bytes=" + records * size);
        }
    }

    // Record i is the i-th size-byte piece of the source, wrapping around, as in the C++ writer.
    private static void offer(
            ExclusivePublication publication,
            UnsafeBuffer source,
            int size,
            long perPass,
            long from,
            long to,
            IdleStrategy idle) {
        // A cursor, not i % perPass: as in the C++ writer, no division per record.
        int offset = (int) (from % perPass) * size;
        int end = (int) perPass * size;
        for (long i = from; i < to; i++) {
            long result;
            while ((result = publication.offer(source, offset, size)) < 0) {
                if (result == Publication.CLOSED
                        || result == Publication.NOT_CONNECTED
                        || result == Publication.MAX_POSITION_EXCEEDED) {
                    throw new IllegalStateException("offer failed: " + result);
                }
                idle.idle();
            }
            offset += size;
            if (offset == end) {
                offset = 0;
            }
        }
    }

    private static void subscribe(String aeronDir, long records, long warmup) {
        long total = warmup + records;
        long[] received = new long[3]; // messages, bytes after the warm-up, checksum
        long[] window = new long[2]; // start nanos, start CPU nanos
        FragmentAssembler assembler =
                new FragmentAssembler(
                        (buffer, offset, length, header) -> {
                            if (received[0]++ == warmup) {
                                window[0] = System.nanoTime();
                                window[1] = Probe.processCpuNanos();
                            }
                            if (received[0] > warmup) {
                                received[1] += length;
                            }
                            received[2] += Probe.sum(buffer, offset, length);
                        });
        try (Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir));
                Subscription subscription = aeron.addSubscription(CHANNEL, STREAM_ID)) {
            IdleStrategy idle = new YieldingIdleStrategy();
            while (received[0] < total) {
                idle.idle(subscription.poll(assembler, FRAGMENT_LIMIT));
            }
            long endNanos = System.nanoTime();
            Probe.report(
                    window[0],
                    endNanos,
                    Probe.processCpuNanos() - window[1],
                    "records="
                            + (received[0] - warmup)
                            + " bytes="
                            + received[1]
                            + " checksum="
                            + received[2]);
        }
    }
}
