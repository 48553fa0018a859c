package dev.sluice.benchmarks;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.stream.StreamChunk;
import dev.sluice.client.stream.StreamReader;
import dev.sluice.client.stream.StreamReaderStats;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

/**
 * One output-location node of the generation benchmark, in a process of its own: opens a {@link
 * StreamReader} per stream of a job that goes to this node, says {@code ready}, then reads every
 * stream to its end, in order, at a constant speed or as fast as the chunks come.
 *
 * <p>Arguments: daemon socket, bootstrap servers, job id, chunk topic, the rate of each stream in
 * bytes/s (0: not paced), a paced reader's start delay in milliseconds, then the streams. Its
 * result line: the bytes and chunks read, the wall clock (epoch nanoseconds, comparable across
 * processes) of the first and the last chunk, and per stream the achieved rate and the starvation
 * events.
 */
public final class GenerationReader {
    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    private GenerationReader() {}

    record StreamResult(
            long bytes, long chunks, long firstNanos, long lastNanos, StreamReaderStats stats) {}

    public static void main(String[] args) throws Exception {
        Path socket = Path.of(args[0]);
        String bootstrap = args[1];
        String job = args[2];
        String topic = args[3];
        long rate = Long.parseLong(args[4]);
        Duration startDelay = Duration.ofMillis(Long.parseLong(args[5]));
        List<String> streams = List.of(args).subList(6, args.length);
        BrokerdClient brokerd = BrokerdClient.builder(socket).build();
        List<StreamReader> readers = new ArrayList<>();
        for (String stream : streams) {
            StreamReader.Builder builder =
                    StreamReader.builder(brokerd, job, stream)
                            .topic(topic)
                            .bootstrapServers(bootstrap);
            readers.add(
                    (rate > 0 ? builder.pacing(rate).startDelay(startDelay) : builder.noPacing())
                            .open());
        }
        System.out.println("ready");
        System.out.flush();
        ExecutorService threads = Executors.newFixedThreadPool(readers.size());
        List<Future<StreamResult>> results = new ArrayList<>();
        for (StreamReader reader : readers) {
            results.add(threads.submit(() -> read(reader)));
        }
        List<StreamResult> done = new ArrayList<>();
        for (Future<StreamResult> result : results) {
            done.add(result.get());
        }
        threads.shutdown();
        System.out.printf(
                Locale.ROOT,
                "bytes=%d chunks=%d first_ns=%d last_ns=%d rates=%s starved=%s%n",
                done.stream().mapToLong(StreamResult::bytes).sum(),
                done.stream().mapToLong(StreamResult::chunks).sum(),
                done.stream().mapToLong(StreamResult::firstNanos).min().orElseThrow(),
                done.stream().mapToLong(StreamResult::lastNanos).max().orElseThrow(),
                done.stream()
                        .map(
                                r ->
                                        String.format(
                                                Locale.ROOT,
                                                "%.0f",
                                                r.stats().achievedRateBytesPerSecond()))
                        .collect(Collectors.joining(",")),
                done.stream()
                        .map(r -> Long.toString(r.stats().starvationEvents()))
                        .collect(Collectors.joining(",")));
    }

    private static StreamResult read(StreamReader reader) throws Exception {
        long bytes = 0;
        long nextSeq = 0;
        long first = 0;
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        try (reader) {
            while (!reader.isEndOfStream()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            reader.stream() + ": no end of stream after " + TIMEOUT);
                }
                try (StreamChunk chunk = reader.acquire(Duration.ofMillis(200))) {
                    if (chunk == null) {
                        continue;
                    }
                    if (chunk.seq() != nextSeq++) {
                        throw new IllegalStateException(
                                reader.stream() + ": chunk " + chunk.seq() + " out of order");
                    }
                    if (first == 0) {
                        first = epochNanos();
                    }
                    bytes += chunk.size();
                }
            }
            return new StreamResult(bytes, nextSeq, first, epochNanos(), reader.stats());
        }
    }

    static long epochNanos() {
        return ChronoUnit.NANOS.between(Instant.EPOCH, Instant.now());
    }
}
