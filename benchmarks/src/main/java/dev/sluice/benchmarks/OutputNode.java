package dev.sluice.benchmarks;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobSpecJson;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@link GenerationReader} process: one output-location node of the generation benchmark, kept
 * for every job run on one set of parts, and told each job's streams on its stdin.
 */
final class OutputNode implements AutoCloseable {
    /** The nodes of one set of parts, by output location, each started at its first job. */
    static final class Group implements AutoCloseable {
        private final Path daemonSocket;
        private final String bootstrapServers;
        private final Map<String, OutputNode> nodes = new HashMap<>();

        Group(Path daemonSocket, String bootstrapServers) {
            this.daemonSocket = daemonSocket;
            this.bootstrapServers = bootstrapServers;
        }

        OutputNode of(String location) throws IOException {
            OutputNode node = nodes.get(location);
            if (node == null) {
                node = start(daemonSocket, bootstrapServers);
                nodes.put(location, node);
            }
            return node;
        }

        /** The processes of the nodes started so far. */
        List<Long> pids() {
            return nodes.values().stream().map(node -> node.process.pid()).toList();
        }

        @Override
        public void close() throws IOException, InterruptedException {
            for (OutputNode node : nodes.values()) {
                node.close();
            }
        }
    }

    private final Process process;
    private final BufferedReader out;
    private final Writer in;

    private OutputNode(Process process) {
        this.process = process;
        this.out =
                new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    private static OutputNode start(Path daemonSocket, String bootstrapServers) throws IOException {
        return new OutputNode(
                ChildProcess.start(
                        ChildProcess.java(
                                GenerationReader.class,
                                List.of(daemonSocket.toString(), bootstrapServers))));
    }

    /**
     * Hands the node a job's streams; returns once their readers are open, so the job may be
     * submitted. {@code rate}: each stream's bytes/s, 0 for as fast as the chunks come.
     */
    void read(JobSpec job, long rate, long startDelayMillis, List<String> streams)
            throws IOException, InterruptedException {
        in.write(
                String.join(
                                " ",
                                Long.toString(rate),
                                Long.toString(startDelayMillis),
                                String.join(",", streams))
                        + "\t"
                        // On one line: JSON escapes the line breaks inside its strings.
                        + JobSpecJson.write(job).replace('\n', ' ')
                        + "\n");
        in.flush();
        String line = nextLine();
        if (!"ready".equals(line)) {
            throw new IllegalStateException("reader pid " + process.pid() + " said " + line);
        }
    }

    /** The result line of the job last handed over, once every stream was read to its end. */
    ReadResult result() throws IOException, InterruptedException {
        return ReadResult.parse(nextLine());
    }

    private String nextLine() throws IOException, InterruptedException {
        String line = out.readLine();
        if (line == null) {
            ChildProcess.check(process);
            throw new IllegalStateException("reader pid " + process.pid() + " stopped talking");
        }
        return line;
    }

    /** Ends the node's input; a node still reading (a run that failed) is killed. */
    @Override
    public void close() throws IOException, InterruptedException {
        try {
            in.close();
        } catch (IOException e) {
            // The process is gone already: nothing left to tell it.
        }
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }
}
