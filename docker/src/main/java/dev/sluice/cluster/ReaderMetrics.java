package dev.sluice.cluster;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.client.read.StreamReaderStats;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A print head's streams as Prometheus metrics, for the cluster's dashboard (docs/cluster.md,
 * "Watching the cluster"): each stream it reads, and each it read in the last {@link #KEPT}, by
 * {@code sluice_job}, {@code stream}, {@code output_location} and the reader's {@code host}. The
 * values are the readers' own {@link StreamReaderStats}, taken at each scrape. The job's label is
 * not {@code job}: Prometheus gives that one to the scrape's own job, and would rename ours.
 *
 * <p>A finished stream is kept for a while so that the scrape after its end sees its last values,
 * then dropped, so that a long-running print head serves the streams of its recent jobs only.
 */
final class ReaderMetrics {
    static final Duration KEPT = Duration.ofMinutes(10);

    /** One stream's reader: its stats on request, and when it ended (0 while it is read). */
    private static final class Stream {
        final String job;
        final String stream;
        final String location;
        final Supplier<StreamReaderStats> stats;
        volatile long endedMillis;

        Stream(String job, String stream, String location, Supplier<StreamReaderStats> stats) {
            this.job = job;
            this.stream = stream;
            this.location = location;
            this.stats = stats;
        }
    }

    private final String host;
    private final LongSupplier clockMillis;
    private final Map<String, Stream> streams = new ConcurrentSkipListMap<>();

    ReaderMetrics(String host, LongSupplier clockMillis) {
        this.host = host;
        this.clockMillis = clockMillis;
    }

    /** A stream begins to be read; {@code stats} is its reader's. */
    void reading(String job, String stream, String location, Supplier<StreamReaderStats> stats) {
        streams.put(job + "/" + stream, new Stream(job, stream, location, stats));
    }

    /** The stream's reader is done, whether it read to the end or failed. */
    void ended(String job, String stream) {
        Stream s = streams.get(job + "/" + stream);
        if (s != null) {
            s.endedMillis = clockMillis.getAsLong();
        }
    }

    /** The metrics in Prometheus' text format, version 0.0.4. */
    String scrape() {
        long now = clockMillis.getAsLong();
        streams.values().removeIf(s -> s.endedMillis != 0 && now - s.endedMillis > KEPT.toMillis());
        // One snapshot of each reader, so that a scrape's families agree with each other.
        Map<Stream, StreamReaderStats> taken = new LinkedHashMap<>();
        streams.values().forEach(s -> taken.put(s, s.stats.get()));
        StringBuilder out = new StringBuilder();
        family(
                out,
                taken,
                "sluice_reader_requested_bytes_per_second",
                "gauge",
                "The stream's constant speed, its reader's pace (0: not paced).",
                stats -> stats.targetRateBytesPerSecond().orElse(0));
        family(
                out,
                taken,
                "sluice_reader_bytes_total",
                "counter",
                "Payload bytes handed to the print head; their rate is the delivered speed.",
                StreamReaderStats::bytes);
        family(
                out,
                taken,
                "sluice_reader_buffered_seconds",
                "gauge",
                "The reader's chunks in hand ahead of the print head, in seconds at its pace.",
                stats -> {
                    long rate = stats.targetRateBytesPerSecond().orElse(0);
                    return rate == 0 ? 0 : (double) stats.bufferedBytes() / rate;
                });
        family(
                out,
                taken,
                "sluice_reader_starvation_events_total",
                "counter",
                "Chunks that were not there at their due time.",
                StreamReaderStats::starvationEvents);
        family(
                out,
                taken,
                "sluice_reader_lateness_p99_seconds",
                "gauge",
                "The 99th percentile of the chunks' handout past their due time.",
                stats -> stats.latenessP99Nanos() / 1e9);
        family(
                out,
                taken,
                "sluice_reader_end_of_stream",
                "gauge",
                "1 once the reader has read the stream to its end.",
                stats -> stats.endOfStream() ? 1 : 0);
        return out.toString();
    }

    private interface Value {
        double of(StreamReaderStats stats);
    }

    private void family(
            StringBuilder out,
            Map<Stream, StreamReaderStats> taken,
            String name,
            String type,
            String help,
            Value value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        for (var entry : taken.entrySet()) {
            Stream s = entry.getKey();
            out.append(name)
                    .append("{sluice_job=\"")
                    .append(escape(s.job))
                    .append("\",stream=\"")
                    .append(escape(s.stream))
                    .append("\",output_location=\"")
                    .append(escape(s.location))
                    .append("\",host=\"")
                    .append(escape(host))
                    .append("\"} ")
                    .append(value.of(entry.getValue()))
                    .append('\n');
        }
    }

    /** A label value as the text format has it: backslash, double quote and newline escaped. */
    static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /** Serves {@link #scrape} at {@code GET /metrics} on {@code address}; returns the server. */
    HttpServer serve(InetSocketAddress address) throws IOException {
        HttpServer server = HttpServer.create(address, 0);
        server.createContext(
                "/metrics",
                exchange -> {
                    try (exchange) {
                        if (!exchange.getRequestMethod().equals("GET")) {
                            exchange.sendResponseHeaders(405, -1);
                            return;
                        }
                        byte[] body = scrape().getBytes(StandardCharsets.UTF_8);
                        exchange.getResponseHeaders()
                                .set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                        exchange.sendResponseHeaders(200, body.length);
                        try (OutputStream os = exchange.getResponseBody()) {
                            os.write(body);
                        }
                    }
                });
        server.start();
        return server;
    }
}
