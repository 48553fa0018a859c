package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.progress.DeliveryProgress;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * {@code sluice submit FILE | status [ID] | cancel ID | topics create|check}: the job topics from a
 * shell, and the topics a cluster needs.
 *
 * <p>Exit codes: 0 done, 1 the cluster failed us or refused the command (unreachable broker,
 * timeout, a missing topic, no such job to show or cancel, a submission whose job id exists
 * already), 2 the user's input is wrong (arguments, an unreadable or invalid spec file).
 */
@PublicEvolving
public final class JobCli {

    static final int OK = 0;
    static final int RUNTIME_ERROR = 1;
    static final int USAGE = 2;

    /**
     * The largest spec file read: a spec travels as one record of the jobs topic, which a producer
     * of default settings caps at 1 MiB ({@code max.request.size}), so nothing larger can be one.
     */
    static final int MAX_SPEC_BYTES = 1 << 20;

    static final String DEFAULT_BOOTSTRAP_SERVERS = "127.0.0.1:9092";

    private static final String USAGE_TEXT =
            String.join(
                    "\n",
                    "usage: sluice [OPTIONS] submit FILE    put the job of a JSON spec file on the"
                            + " jobs topic",
                    "       sluice [OPTIONS] status [ID]    a job's statuses, or every job's"
                            + " latest",
                    "       sluice [OPTIONS] cancel ID      ask the scheduler to cancel a job",
                    "       sluice [OPTIONS] topics create|check"
                            + "  create the missing topics Sluice needs, or list them",
                    "options:",
                    "  --bootstrap-servers HOST:PORT[,...]  default " + DEFAULT_BOOTSTRAP_SERVERS,
                    "  --jobs-topic NAME                    default "
                            + JobClient.DEFAULT_JOBS_TOPIC,
                    "  --status-topic NAME                  default "
                            + JobClient.DEFAULT_STATUS_TOPIC,
                    "  --progress-topic NAME                topics: default "
                            + DeliveryProgress.DEFAULT_TOPIC,
                    "  --output-location NAME               topics: its chunk topic too;"
                            + " repeatable",
                    "  --chunk-partitions N                 topics: default "
                            + SluiceTopics.DEFAULT_CHUNK_PARTITIONS,
                    "  --replication-factor N               topics: default the cluster's");

    /** Where the CLI's client connects; tests replace the connecting itself. */
    record Connection(String bootstrapServers, String jobsTopic, String statusTopic) {}

    private JobCli() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command and returns its exit code, writing only to the given streams. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, JobCli::connect);
    }

    static int run(
            String[] args,
            PrintStream out,
            PrintStream err,
            Function<Connection, JobClient> connect) {
        String bootstrapServers = DEFAULT_BOOTSTRAP_SERVERS;
        String jobsTopic = JobClient.DEFAULT_JOBS_TOPIC;
        String statusTopic = JobClient.DEFAULT_STATUS_TOPIC;
        String progressTopic = DeliveryProgress.DEFAULT_TOPIC;
        List<String> outputLocations = new ArrayList<>();
        String chunkPartitions = Integer.toString(SluiceTopics.DEFAULT_CHUNK_PARTITIONS);
        String replicationFactor = null;
        List<String> positional = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("-h") || arg.equals("--help")) {
                out.println(USAGE_TEXT);
                return OK;
            }
            if (!arg.startsWith("--")) {
                positional.add(arg);
                continue;
            }
            if (i + 1 == args.length) {
                return usage(err, "option " + arg + " needs a value");
            }
            String value = args[++i];
            switch (arg) {
                case "--bootstrap-servers" -> bootstrapServers = value;
                case "--jobs-topic" -> jobsTopic = value;
                case "--status-topic" -> statusTopic = value;
                case "--progress-topic" -> progressTopic = value;
                case "--output-location" -> outputLocations.add(value);
                case "--chunk-partitions" -> chunkPartitions = value;
                case "--replication-factor" -> replicationFactor = value;
                default -> {
                    return usage(err, "unknown option " + arg);
                }
            }
        }
        if (positional.isEmpty()) {
            return usage(err, "a command is required");
        }
        String command = positional.get(0);
        List<String> operands = positional.subList(1, positional.size());
        Connection connection = new Connection(bootstrapServers, jobsTopic, statusTopic);
        return switch (command) {
            case "submit" ->
                    operands.size() != 1
                            ? usage(err, "submit takes one spec file")
                            : submit(Path.of(operands.get(0)), connection, connect, out, err);
            case "status" ->
                    operands.size() > 1
                            ? usage(err, "status takes at most one job id")
                            : status(
                                    operands.isEmpty() ? null : operands.get(0),
                                    connection,
                                    connect,
                                    out,
                                    err);
            case "cancel" ->
                    operands.size() != 1
                            ? usage(err, "cancel takes one job id")
                            : cancel(operands.get(0), connection, connect, out, err);
            case "topics" -> {
                if (operands.size() != 1 || !operands.get(0).matches("create|check")) {
                    yield usage(err, "topics takes create or check");
                }
                SluiceTopics topics;
                try {
                    topics =
                            new SluiceTopics(
                                    jobsTopic,
                                    statusTopic,
                                    progressTopic,
                                    outputLocations,
                                    positive("--chunk-partitions", chunkPartitions),
                                    replicationFactor == null
                                            ? Optional.empty()
                                            : Optional.of(
                                                    (short)
                                                            positive(
                                                                    "--replication-factor",
                                                                    replicationFactor)));
                } catch (JobSpecException e) {
                    yield usage(err, e.getMessage());
                }
                yield TopicsCommand.run(
                        topics, operands.get(0).equals("create"), bootstrapServers, out, err);
            }
            default -> usage(err, "unknown command '" + command + "'");
        };
    }

    private static int submit(
            Path file,
            Connection connection,
            Function<Connection, JobClient> connect,
            PrintStream out,
            PrintStream err) {
        JobSpec spec;
        try (InputStream in = Files.newInputStream(file)) {
            // Read no further than a spec can go, so that /dev/zero or a huge file is refused.
            byte[] json = in.readNBytes(MAX_SPEC_BYTES + 1);
            if (json.length > MAX_SPEC_BYTES) {
                err.println(
                        "error: "
                                + file
                                + " is larger than "
                                + MAX_SPEC_BYTES
                                + " bytes, more than a job spec can be (one record of the jobs"
                                + " topic)");
                return USAGE;
            }
            spec = JobSpecJson.parse(json);
        } catch (IOException e) {
            err.println("error: cannot read " + file + ": " + e);
            return USAGE;
        } catch (JobSpecException e) {
            err.println("error: " + file + ": " + e.getMessage());
            return USAGE;
        }
        return withClient(
                connection,
                connect,
                err,
                client -> {
                    if (client.exists(spec.id())) {
                        err.println(
                                "error: job "
                                        + spec.id()
                                        + " already exists (on "
                                        + connection.statusTopic()
                                        + " or "
                                        + connection.jobsTopic()
                                        + "); the scheduler ignores a second submission of an"
                                        + " id: give the job a new id in "
                                        + file);
                        return RUNTIME_ERROR;
                    }
                    client.submit(spec);
                    out.println("submitted job " + spec.id() + " to " + connection.jobsTopic());
                    return OK;
                });
    }

    private static int status(
            String jobId,
            Connection connection,
            Function<Connection, JobClient> connect,
            PrintStream out,
            PrintStream err) {
        if (jobId != null) {
            try {
                Names.check("job id", jobId);
            } catch (JobSpecException e) {
                return usage(err, e.getMessage());
            }
        }
        return withClient(
                connection,
                connect,
                err,
                client -> {
                    if (jobId != null) {
                        List<JobStatus> statuses = client.statuses(jobId);
                        if (statuses.isEmpty()) {
                            err.println(
                                    "error: no status of job "
                                            + jobId
                                            + " on "
                                            + connection.statusTopic());
                            return RUNTIME_ERROR;
                        }
                        statuses.forEach(s -> out.println(format(s)));
                        return OK;
                    }
                    Map<String, JobStatus> latest = new LinkedHashMap<>();
                    client.statuses().forEach(s -> latest.put(s.jobId(), s));
                    latest.values().forEach(s -> out.println(format(s)));
                    return OK;
                });
    }

    private static int cancel(
            String jobId,
            Connection connection,
            Function<Connection, JobClient> connect,
            PrintStream out,
            PrintStream err) {
        try {
            Names.check("job id", jobId);
        } catch (JobSpecException e) {
            return usage(err, e.getMessage());
        }
        return withClient(
                connection,
                connect,
                err,
                client -> {
                    if (!client.exists(jobId)) {
                        err.println(
                                "error: no job "
                                        + jobId
                                        + " on "
                                        + connection.statusTopic()
                                        + " or "
                                        + connection.jobsTopic()
                                        + ", nothing to cancel");
                        return RUNTIME_ERROR;
                    }
                    client.cancel(jobId);
                    out.println("asked to cancel job " + jobId + " on " + connection.jobsTopic());
                    return OK;
                });
    }

    /** A cluster failure becomes exit code 1 with one line, not a stack trace. */
    private static int withClient(
            Connection connection,
            Function<Connection, JobClient> connect,
            PrintStream err,
            Function<JobClient, Integer> action) {
        try (JobClient client = connect.apply(connection)) {
            // A missing jobs topic would hold a submission until it timed out, with a warning a
            // second; a missing status topic has no status to show.
            Set<String> missing = client.missingTopics();
            if (!missing.isEmpty()) {
                err.println(
                        "error: no topic "
                                + String.join(", ", missing)
                                + " on the cluster at "
                                + connection.bootstrapServers()
                                + ": the generation job creates its topics when it starts; before"
                                + " that, create them with: sluice-cli --bootstrap-servers "
                                + connection.bootstrapServers()
                                + " topics create");
                return RUNTIME_ERROR;
            }
            return action.apply(client);
        } catch (IllegalArgumentException e) {
            return usage(err, e.getMessage());
        } catch (RuntimeException e) {
            err.println("error: " + e.getMessage());
            return RUNTIME_ERROR;
        }
    }

    private static int positive(String option, String value) {
        if (!value.matches("[1-9][0-9]{0,3}")) {
            throw new JobSpecException(option, "a number from 1 to 9999, got '" + value + "'");
        }
        return Integer.parseInt(value);
    }

    private static String format(JobStatus status) {
        return Instant.ofEpochMilli(status.timestampMs())
                + "  "
                + status.jobId()
                + "  "
                + status.state()
                + status.reason().map(reason -> "  " + reason).orElse("");
    }

    private static int usage(PrintStream err, String problem) {
        err.println("error: " + problem);
        err.println(USAGE_TEXT);
        return USAGE;
    }

    /**
     * Short timeouts: a user at a shell should hear about an unreachable broker in seconds, not
     * after the client's default minute.
     */
    private static JobClient connect(Connection connection) {
        return JobClient.builder()
                .bootstrapServers(connection.bootstrapServers())
                .jobsTopic(connection.jobsTopic())
                .statusTopic(connection.statusTopic())
                .property("max.block.ms", "15000")
                .property("request.timeout.ms", "10000")
                .property("delivery.timeout.ms", "15000")
                .property("default.api.timeout.ms", "15000")
                .build();
    }
}
