package dev.sluice.flink.generation;

import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.Transport;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.flink.generation.scheduler.GenerationEnumerator;
import dev.sluice.flink.generation.scheduler.OnDemandPolicy;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.kafka.clients.CommonClientConfigs;

/** Builds a {@link GenerationSource}; {@link #build()} checks the settings. */
@PublicEvolving
public final class GenerationSourceBuilder {
    private final Properties kafka = new Properties();
    private String jobsTopic = JobClient.DEFAULT_JOBS_TOPIC;
    private String statusTopic = JobClient.DEFAULT_STATUS_TOPIC;
    private String progressTopic = DeliveryProgress.DEFAULT_TOPIC;
    private SchedulingPolicy policy = new OnDemandPolicy();
    private int maxJobs = 16;
    private Duration readerTimeout = Duration.ofSeconds(30);
    private Duration pollInterval = Duration.ofMillis(100);
    private final Map<String, String> hosts = new HashMap<>();
    private final Map<String, Transport> transports = new HashMap<>();
    private int tasksAheadPerStream = 2;
    private boolean speculation = true;
    private Duration preferredLeaderInterval = Duration.ofSeconds(5);

    GenerationSourceBuilder() {}

    public GenerationSourceBuilder setBootstrapServers(String servers) {
        return setProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, servers);
    }

    /** A Kafka client property for the scheduler's consumers and producer. */
    public GenerationSourceBuilder setProperty(String key, String value) {
        kafka.setProperty(Objects.requireNonNull(key), Objects.requireNonNull(value));
        return this;
    }

    public GenerationSourceBuilder setTopics(String jobs, String status, String progress) {
        this.jobsTopic = Objects.requireNonNull(jobs);
        this.statusTopic = Objects.requireNonNull(status);
        this.progressTopic = Objects.requireNonNull(progress);
        return this;
    }

    public GenerationSourceBuilder setSchedulingPolicy(SchedulingPolicy policy) {
        this.policy = Objects.requireNonNull(policy);
        return this;
    }

    /** Jobs live at once (16); a submission beyond is REFUSED for capacity. */
    public GenerationSourceBuilder setMaxJobs(int maxJobs) {
        this.maxJobs = maxJobs;
        return this;
    }

    /** How long an accepted job waits for the readers of its streams (30 s) before REFUSED. */
    public GenerationSourceBuilder setReaderTimeout(Duration timeout) {
        this.readerTimeout = Objects.requireNonNull(timeout);
        return this;
    }

    /**
     * How long the scheduler waits for commands and progress before it checks its deadlines (100
     * ms): commands and progress are handled as they come.
     */
    public GenerationSourceBuilder setPollInterval(Duration interval) {
        this.pollInterval = Objects.requireNonNull(interval);
        return this;
    }

    /**
     * The host of an output location, for locality: producers on it get its streams' tasks first,
     * and send their chunks the local way unless the stream's transport is KAFKA. An output
     * location not named here is its own host name.
     */
    public GenerationSourceBuilder setOutputLocationHost(String outputLocation, String host) {
        hosts.put(Objects.requireNonNull(outputLocation), Objects.requireNonNull(host));
        return this;
    }

    /**
     * How the chunks of the streams to {@code outputLocation} travel (docs/generation.md,
     * "Transports"); {@link Transport#AUTO} when not set. It combines with each job's own choice:
     * {@link Transport#KAFKA} when either says so, else {@link Transport#LOCAL} when either does. A
     * {@code LOCAL} output location's tasks go only to producers on its host (see {@link
     * #setOutputLocationHost}); their sinks send them the local way through the daemon socket the
     * sink is given.
     */
    public GenerationSourceBuilder setOutputLocationTransport(
            String outputLocation, Transport transport) {
        transports.put(
                Objects.requireNonNull(outputLocation, "outputLocation"),
                Objects.requireNonNull(transport, "transport"));
        return this;
    }

    /**
     * How many tasks of a stream a producer may hold that the stream's readers have not been
     * delivered yet (2): the scheduler gives it no further task of that stream until one is, and
     * meanwhile serves the other streams (docs/generation.md, "Room admission"). With the sink's
     * default cap a writer admits 4 tasks of a stream, so 2 leave a margin for the sink hearing of
     * progress later than the scheduler; a sink with a fixed cap below {@code tasksAheadPerStream ×
     * taskSize} per writer can still make a writer wait.
     */
    public GenerationSourceBuilder setTasksAheadPerStream(int tasks) {
        this.tasksAheadPerStream = tasks;
        return this;
    }

    /**
     * Whether the scheduler hands a late paced task to a second producer and keeps paced tasks from
     * producers too slow for them (true): docs/generation.md, "Speculative duplicates". Off, a
     * paced task waits for the producer it went to, however slow, until Flink declares that
     * producer lost.
     */
    public GenerationSourceBuilder setSpeculation(boolean speculation) {
        this.speculation = speculation;
        return this;
    }

    /**
     * How often the scheduler gives the live jobs' chunk topics back to their preferred leaders (5
     * s; {@link Duration#ZERO} turns it off): a partition led by another broker while its first
     * replica, the broker on its output location's host, is in sync again is elected back to it, so
     * that its chunks cross the network once again without waiting up to 5 minutes for Kafka's
     * periodic rebalance (docs/generation.md, "Chunk-topic leadership"). Off, leadership comes back
     * only when the cluster moves it.
     */
    public GenerationSourceBuilder setPreferredLeaderInterval(Duration interval) {
        this.preferredLeaderInterval = Objects.requireNonNull(interval, "interval");
        return this;
    }

    public GenerationSource build() {
        if (kafka.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG) == null) {
            throw new IllegalStateException("no bootstrap servers: call setBootstrapServers");
        }
        if (maxJobs < 1) {
            throw new IllegalStateException("max jobs " + maxJobs + ": at least 1");
        }
        if (tasksAheadPerStream < 1) {
            throw new IllegalStateException(
                    "tasks ahead per stream "
                            + tasksAheadPerStream
                            + ": at least 1, or a stream would never get a task;"
                            + " call setTasksAheadPerStream with 1 or more");
        }
        for (Duration d : new Duration[] {readerTimeout, pollInterval}) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalStateException("durations must be positive: " + d);
            }
        }
        if (preferredLeaderInterval.isNegative()
                || !preferredLeaderInterval.isZero() && preferredLeaderInterval.toMillis() == 0) {
            throw new IllegalStateException(
                    "preferred leader interval "
                            + preferredLeaderInterval
                            + ": at least 1 ms, or zero to turn it off;"
                            + " call setPreferredLeaderInterval with one of those");
        }
        if (jobsTopic.equals(statusTopic)
                || jobsTopic.equals(progressTopic)
                || statusTopic.equals(progressTopic)) {
            throw new IllegalStateException("the jobs, status and progress topics must differ");
        }
        Properties properties = new Properties();
        properties.putAll(kafka);
        return new GenerationSource(
                properties,
                jobsTopic,
                statusTopic,
                progressTopic,
                policy,
                new GenerationEnumerator.Settings(
                        maxJobs,
                        readerTimeout,
                        pollInterval,
                        Map.copyOf(hosts),
                        tasksAheadPerStream,
                        Map.copyOf(transports),
                        speculation,
                        preferredLeaderInterval));
    }
}
