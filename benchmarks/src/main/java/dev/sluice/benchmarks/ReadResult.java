package dev.sluice.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What the readers of one job read: in one output node (the result line a {@link GenerationReader}
 * prints and {@link OutputNode} parses), or in all of the job's nodes together ({@link #of}).
 *
 * @param bytes payload bytes read, every stream
 * @param chunks chunks read
 * @param firstNanos wall clock (epoch nanoseconds, comparable across processes) of the first chunk
 * @param lastNanos that of the last chunk, when the last stream ended
 * @param streams per stream, its reader's outcome
 */
record ReadResult(
        long bytes, long chunks, long firstNanos, long lastNanos, List<StreamOutcome> streams) {

    /** The result line: key=value pairs, the streams' outcomes separated by commas. */
    String line() {
        return String.format(
                Locale.ROOT,
                "bytes=%d chunks=%d first_ns=%d last_ns=%d streams=%s",
                bytes,
                chunks,
                firstNanos,
                lastNanos,
                streams.stream().map(StreamOutcome::token).collect(Collectors.joining(",")));
    }

    static ReadResult parse(String line) {
        Map<String, String> values = ChildProcess.keyValues(line);
        return new ReadResult(
                Long.parseLong(values.get("bytes")),
                Long.parseLong(values.get("chunks")),
                Long.parseLong(values.get("first_ns")),
                Long.parseLong(values.get("last_ns")),
                List.of(values.get("streams").split(",")).stream()
                        .map(StreamOutcome::parse)
                        .toList());
    }

    /** The nodes' results of one job together: from the first chunk of any to the last of all. */
    static ReadResult of(List<ReadResult> nodes) {
        List<StreamOutcome> streams = new ArrayList<>();
        nodes.forEach(node -> streams.addAll(node.streams()));
        return new ReadResult(
                nodes.stream().mapToLong(ReadResult::bytes).sum(),
                nodes.stream().mapToLong(ReadResult::chunks).sum(),
                nodes.stream().mapToLong(ReadResult::firstNanos).min().orElseThrow(),
                nodes.stream().mapToLong(ReadResult::lastNanos).max().orElseThrow(),
                List.copyOf(streams));
    }
}
