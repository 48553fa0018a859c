package dev.sluice.flink.sink;

import dev.sluice.client.Limits;
import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.ProgressListener;
import dev.sluice.client.write.ChunkProducerSettings;
import dev.sluice.client.write.InFlightAccounting;
import dev.sluice.client.write.LocalChunkChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Properties;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * Builds a {@link SluiceSink}; {@link #build()} checks that the settings fit together and refuses a
 * wrong one with an {@link IllegalStateException} naming it. Kafka properties ({@link
 * #setProperty}) reach the chunk producer as they are; the progress consumer gets the connection
 * and security ones.
 */
@PublicEvolving
public final class SluiceSinkBuilder {
    /** The formula's upper bound on a stream's in-flight bytes unless configured: 256 MiB. */
    public static final long DEFAULT_MAX_IN_FLIGHT_BYTES_PER_STREAM =
            InFlightAccounting.DEFAULT_MAX_BYTES_PER_STREAM;

    private final Properties producer = new Properties();
    private final Properties consumer = new Properties();
    private String progressTopic = DeliveryProgress.DEFAULT_TOPIC;
    private String jobsTopic = JobClient.DEFAULT_JOBS_TOPIC;
    private Long fixedCap;
    private long maxTaskSizeBytes = JobSpec.DEFAULT_TASK_SIZE_BYTES;
    private long maxCap = DEFAULT_MAX_IN_FLIGHT_BYTES_PER_STREAM;
    private ChunkPartitioning partitioning = ChunkPartitioning.SPREAD;
    private Duration progressPartitionRefresh = Duration.ofSeconds(30);
    private Path brokerdSocket;
    private LocalChunkChannel.Settings localChannel;

    SluiceSinkBuilder() {}

    public SluiceSinkBuilder setBootstrapServers(String servers) {
        return setProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, servers);
    }

    /**
     * A property of the chunk producer, passed through (security, batching, timeouts...). The
     * serializers are the sink's; {@code acks} is {@code all} unless set, and {@code 0} is refused,
     * as is a {@code transactional.id}: the sink is at-least-once.
     */
    public SluiceSinkBuilder setProperty(String key, String value) {
        producer.setProperty(Objects.requireNonNull(key), Objects.requireNonNull(value));
        return this;
    }

    public SluiceSinkBuilder setProperties(Properties properties) {
        properties.forEach((k, v) -> setProperty(k.toString(), v.toString()));
        return this;
    }

    /**
     * A property of the progress consumer only, over what it takes from the producer's (bootstrap
     * servers, {@code security.*}, {@code ssl.*}, {@code sasl.*}, connection timeouts).
     */
    public SluiceSinkBuilder setProgressConsumerProperty(String key, String value) {
        consumer.setProperty(Objects.requireNonNull(key), Objects.requireNonNull(value));
        return this;
    }

    /** Where stream readers publish their delivery progress; {@code sluice-progress} by default. */
    public SluiceSinkBuilder setProgressTopic(String topic) {
        this.progressTopic = Objects.requireNonNull(topic);
        return this;
    }

    /**
     * The scheduler's jobs topic ({@code sluice-jobs} by default): a writer that cannot write a
     * job's chunks (too large, its topic not authorized) sends the job's {@code FAIL} command
     * there, so that the job fails rather than the writer's task (docs/sluice-sink.md, "A job that
     * cannot be written").
     */
    public SluiceSinkBuilder setJobsTopic(String topic) {
        this.jobsTopic = Objects.requireNonNull(topic);
        return this;
    }

    /**
     * A fixed cap on each stream's bytes in flight (written, not yet delivered to its readers),
     * over all writers of the sink: each of the {@code P} writers holds at most {@code cap / P}.
     * Replaces the formula of {@link #setMaxTaskSizeBytes} and {@link
     * #setMaxInFlightBytesPerStream}.
     */
    public SluiceSinkBuilder setInFlightBytesPerStream(long bytes) {
        this.fixedCap = bytes;
        return this;
    }

    /**
     * The largest task size of the jobs written (64 MiB, the job spec's default): the cap of a
     * stream is this × the sink's parallelism × 4 (docs/sluice-sink.md, "Bounded buffering"), up to
     * {@link #setMaxInFlightBytesPerStream}.
     */
    public SluiceSinkBuilder setMaxTaskSizeBytes(long bytes) {
        this.maxTaskSizeBytes = bytes;
        return this;
    }

    /** The formula's upper bound on a stream's bytes in flight; 256 MiB by default. */
    public SluiceSinkBuilder setMaxInFlightBytesPerStream(long bytes) {
        this.maxCap = bytes;
        return this;
    }

    /** Which partition of its chunk topic a chunk goes to; {@link ChunkPartitioning#SPREAD}. */
    public SluiceSinkBuilder setPartitioning(ChunkPartitioning partitioning) {
        this.partitioning = Objects.requireNonNull(partitioning);
        return this;
    }

    /** How often the progress consumer looks for new partitions of the progress topic (30 s). */
    public SluiceSinkBuilder setProgressPartitionRefresh(Duration interval) {
        this.progressPartitionRefresh = Objects.requireNonNull(interval);
        return this;
    }

    /**
     * The control socket of {@code sluice-brokerd} on the writers' hosts, for the chunks that go
     * the local way ({@code Chunk.transport()} {@code LOCAL}): the writer puts them into a
     * shared-memory segment of its own that the daemon reads (docs/sluice-sink.md, "Transports").
     * Without it, those chunks go through Kafka, logged once per stream and counted ({@code
     * sluice.localChunksToKafka}).
     */
    public SluiceSinkBuilder setBrokerdSocket(Path socket) {
        this.brokerdSocket = Objects.requireNonNull(socket);
        return this;
    }

    /**
     * Where the local channels put their producer segments, how many slots they have and how long a
     * channel waits for its daemon to come back; {@link LocalChunkChannel.Settings#defaults()}
     * ({@code /dev/shm}, 8 slots, 60 s) unless set. Needs {@link #setBrokerdSocket}.
     */
    public SluiceSinkBuilder setLocalChannel(LocalChunkChannel.Settings settings) {
        this.localChannel = Objects.requireNonNull(settings);
        return this;
    }

    public SluiceSink build() {
        if (producer.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG) == null) {
            throw new IllegalStateException("no bootstrap servers: call setBootstrapServers");
        }
        Properties producerProps = ChunkProducerSettings.checked(producer);
        if (!Limits.isTopicName(progressTopic)) {
            throw new IllegalStateException(
                    "progress topic '"
                            + progressTopic
                            + "': 1 to 249 characters of [A-Za-z0-9._-]");
        }
        if (!Limits.isTopicName(jobsTopic)) {
            throw new IllegalStateException(
                    "jobs topic '" + jobsTopic + "': 1 to 249 characters of [A-Za-z0-9._-]");
        }
        if (fixedCap != null && fixedCap < 1) {
            throw new IllegalStateException(
                    "in-flight bytes per stream: at least 1, got " + fixedCap);
        }
        if (maxTaskSizeBytes < 1 || maxTaskSizeBytes > JobSpec.MAX_TASK_SIZE_BYTES) {
            throw new IllegalStateException(
                    "max task size: 1 to "
                            + JobSpec.MAX_TASK_SIZE_BYTES
                            + " bytes, got "
                            + maxTaskSizeBytes);
        }
        if (maxCap < 1) {
            throw new IllegalStateException(
                    "max in-flight bytes per stream: at least 1, got " + maxCap);
        }
        if (progressPartitionRefresh.isNegative() || progressPartitionRefresh.isZero()) {
            throw new IllegalStateException(
                    "progress partition refresh: positive, got " + progressPartitionRefresh);
        }
        if (brokerdSocket != null && !brokerdSocket.isAbsolute()) {
            throw new IllegalStateException(
                    "brokerd socket '"
                            + brokerdSocket
                            + "': not absolute; set the absolute path of the daemon's control"
                            + " socket (its sluice.socket)");
        }
        if (localChannel != null && brokerdSocket == null) {
            throw new IllegalStateException(
                    "local channel settings without a daemon to produce to: call"
                            + " setBrokerdSocket");
        }
        Properties consumerProps = ProgressListener.consumerProperties(producerProps, consumer);
        return new SluiceSink(
                new SinkSettings(
                        producerProps,
                        consumerProps,
                        progressTopic,
                        jobsTopic,
                        fixedCap == null ? 0 : fixedCap,
                        maxTaskSizeBytes,
                        maxCap,
                        partitioning,
                        progressPartitionRefresh,
                        brokerdSocket == null
                                ? null
                                : LocalTransportSettings.of(
                                        brokerdSocket,
                                        localChannel == null
                                                ? LocalChunkChannel.Settings.defaults()
                                                : localChannel)));
    }
}
