package dev.sluice.benchmarks;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobSpecJson;
import dev.sluice.client.read.StreamChunk;
import dev.sluice.client.read.StreamReader;
import dev.sluice.client.read.StreamReaderBuilder;
import dev.sluice.client.read.StreamReaderStats;
import dev.sluice.client.read.StreamSilentException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.Producer;

/**
 * One output-location node of the generation benchmark, in a process of its own that lives for
 * every job the harness runs on its parts, as a printer's node does: a reader JVM started for each
 * job spent its first seconds compiling (its C2 thread took half its CPU in a run of a few
 * seconds), and measured its own warm-up in every run.
 *
 * <p>Arguments: daemon socket, bootstrap servers. Then one job per line on stdin: the rate of each
 * stream in bytes/s (0: not paced), a paced reader's start delay in milliseconds, the streams that
 * go to this node (comma-separated), then a tab and the job's spec in JSON. For each it opens a
 * {@link StreamReader} per stream from the job's spec, as a printer's node does (which gives its
 * topic, and where its tasks end for the delivery progress), says {@code ready}, reads every stream
 * to its end, in order, at a constant speed or as fast as the chunks come, and prints its result
 * line: the bytes and chunks read, the wall clock (epoch nanoseconds, comparable across processes)
 * of the first and the last chunk, and per stream its reader's outcome: the achieved rate, the
 * starvation events, the lateness of its chunks (p50, p99, max) and the start delay it used ({@link
 * ReadResult}). It exits at the end of stdin.
 */
public final class GenerationReader {
    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    private GenerationReader() {}

    record StreamResult(
            long bytes, long chunks, long firstNanos, long lastNanos, StreamReaderStats stats) {}

    public static void main(String[] args) throws Exception {
        BrokerdClient brokerd = BrokerdClient.builder(Path.of(args[0])).build();
        String bootstrap = args[1];
        BufferedReader commands =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ExecutorService threads = Executors.newCachedThreadPool();
        // One progress producer for every job's readers, as a printer's node that reads job after
        // job would keep (docs/stream-reader.md, "Delivery progress").
        try (Producer<byte[], byte[]> progress =
                StreamReader.newProgressProducer(bootstrap, Map.of())) {
            for (String line; (line = commands.readLine()) != null; ) {
                System.out.println(readJob(brokerd, progress, line, threads));
                System.out.flush();
            }
        }
        threads.shutdown();
    }

    /** One job's streams, given as a command line; returns the result line. */
    private static String readJob(
            BrokerdClient brokerd,
            Producer<byte[], byte[]> progress,
            String command,
            ExecutorService threads)
            throws Exception {
        String[] fieldsAndSpec = command.split("\t", 2);
        String[] fields = fieldsAndSpec[0].split(" ");
        long rate = Long.parseLong(fields[0]);
        Duration startDelay = Duration.ofMillis(Long.parseLong(fields[1]));
        JobSpec job = JobSpecJson.parse(fieldsAndSpec[1]);
        List<StreamReader> readers = new ArrayList<>();
        for (String stream : fields[2].split(",")) {
            StreamReaderBuilder builder =
                    StreamReader.builder(brokerd, job, stream).progressProducer(progress);
            readers.add(
                    (rate > 0 ? builder.pacing(rate).startDelay(startDelay) : builder.noPacing())
                            .open());
        }
        System.out.println("ready");
        System.out.flush();
        List<Future<StreamResult>> results = new ArrayList<>();
        for (StreamReader reader : readers) {
            results.add(threads.submit(() -> read(reader)));
        }
        List<StreamResult> done = new ArrayList<>();
        for (Future<StreamResult> result : results) {
            done.add(result.get());
        }
        return new ReadResult(
                        done.stream().mapToLong(StreamResult::bytes).sum(),
                        done.stream().mapToLong(StreamResult::chunks).sum(),
                        done.stream().mapToLong(StreamResult::firstNanos).min().orElseThrow(),
                        done.stream().mapToLong(StreamResult::lastNanos).max().orElseThrow(),
                        done.stream().map(r -> StreamOutcome.of(r.stats())).toList())
                .line();
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
                } catch (StreamSilentException silent) {
                    // A producer killed by the faults figure: its tasks are computed again.
                    System.err.println(silent.getMessage());
                }
            }
            return new StreamResult(bytes, nextSeq, first, epochNanos(), reader.stats());
        }
    }

    static long epochNanos() {
        return ChronoUnit.NANOS.between(Instant.EPOCH, Instant.now());
    }
}
