package dev.sluice.client.write;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.ProgressListener;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Builds a {@link StreamWriter}; {@link #open()} checks that the settings fit together, refuses a
 * wrong one naming it, and connects. Made by {@link StreamWriter#forJob} (a sized stream of a job
 * spec) or {@link StreamWriter#builder} (an unbounded stream).
 */
@PublicEvolving
public final class StreamWriterBuilder {
    private final String bootstrapServers;
    private final JobSpec spec;
    private final String job;
    private final String stream;
    private final Properties producer = new Properties();
    private final Properties consumer = new Properties();
    private String outputLocation;
    private String topic;
    private Integer chunkSize;
    private Integer shareIndex;
    private int shareCount = 1;
    private Long inFlightBytes;
    private String progressTopic = DeliveryProgress.DEFAULT_TOPIC;

    StreamWriterBuilder(String bootstrapServers, JobSpec spec, String stream) {
        this.bootstrapServers = bootstrapServers;
        this.spec = spec;
        this.job = spec.id();
        this.stream = stream;
    }

    StreamWriterBuilder(String bootstrapServers, String job, String stream) {
        this.bootstrapServers = bootstrapServers;
        this.spec = null;
        this.job = job;
        this.stream = stream;
    }

    /**
     * The node that reads the stream: the writer sends to its chunk topic, {@code
     * sluice.chunks.<outputLocation>} (docs/formats.md, "Chunk topics"). Unbounded streams only: a
     * job spec gives its streams' locations.
     */
    public StreamWriterBuilder outputLocation(String outputLocation) {
        this.outputLocation = Objects.requireNonNull(outputLocation, "outputLocation");
        return this;
    }

    /** The chunk topic itself, instead of the output location's. */
    public StreamWriterBuilder topic(String topic) {
        this.topic = Objects.requireNonNull(topic, "topic");
        return this;
    }

    /**
     * The chunk size of an unbounded stream, {@value StreamSpec#MIN_CHUNK_SIZE_BYTES} to {@value
     * StreamSpec#MAX_CHUNK_SIZE_BYTES} bytes; {@value StreamSpec#DEFAULT_CHUNK_SIZE_BYTES} by
     * default. A job spec gives its streams' chunk sizes.
     */
    public StreamWriterBuilder chunkSize(int bytes) {
        this.chunkSize = bytes;
        return this;
    }

    /**
     * Makes this writer number {@code index} of {@code count} writers of a job's sized stream: it
     * writes the stream's tasks {@code t} with {@code t % count == index} (docs/stream-writer.md,
     * "Numbering"). Alone ({@code 0} of {@code 1}) by default.
     */
    public StreamWriterBuilder share(int index, int count) {
        this.shareIndex = index;
        this.shareCount = count;
        return this;
    }

    /**
     * The bound on this writer's bytes in flight: sent, not yet delivered by the stream's readers.
     * By default the sink's formula for one producer: four tasks of the job (at most 256 MiB), or
     * for an unbounded stream four tasks of the default size, 256 MiB (docs/stream-writer.md,
     * "Bytes in flight").
     */
    public StreamWriterBuilder inFlightBytes(long bytes) {
        this.inFlightBytes = bytes;
        return this;
    }

    /** Where the readers publish their delivery progress; {@code sluice-progress} by default. */
    public StreamWriterBuilder progressTopic(String topic) {
        this.progressTopic = Objects.requireNonNull(topic, "topic");
        return this;
    }

    /**
     * A property of the chunk producer, passed through (security, batching, timeouts, {@code
     * max.request.size}...). The serializers are the writer's; {@code acks} is {@code all} unless
     * set, and {@code 0} is refused, as is a {@code transactional.id}. The progress consumer takes
     * the connection and security ones.
     */
    public StreamWriterBuilder property(String key, String value) {
        producer.setProperty(Objects.requireNonNull(key), Objects.requireNonNull(value));
        return this;
    }

    /** A property of the progress consumer only, over what it takes from the producer's. */
    public StreamWriterBuilder progressConsumerProperty(String key, String value) {
        consumer.setProperty(Objects.requireNonNull(key), Objects.requireNonNull(value));
        return this;
    }

    /**
     * Checks the settings, connects, and starts following the readers' progress.
     *
     * @throws IllegalArgumentException if a setting is wrong, naming it, before anything is opened:
     *     also a chunk larger, as a record, than the producer's {@code max.request.size}
     * @throws IOException if the chunk topic or the progress topic does not exist
     */
    public StreamWriter open() throws IOException {
        Settings settings = check();
        KafkaProducer<byte[], byte[]> kafkaProducer =
                new KafkaProducer<>(
                        settings.producer, new ByteArraySerializer(), new ByteArraySerializer());
        KafkaConsumer<byte[], byte[]> progressConsumer = null;
        try {
            checkTopic(kafkaProducer, settings.topic);
            progressConsumer =
                    ProgressListener.newConsumer(
                            settings.consumer, settings.clientId + "-progress");
            return new StreamWriter(
                    job,
                    stream,
                    settings.topic,
                    settings.destination,
                    "share " + shareIndexOrZero() + " of " + shareCount,
                    settings.numbering,
                    settings.inFlightBytes,
                    kafkaProducer,
                    progressConsumer,
                    progressTopic);
        } catch (IOException | RuntimeException e) {
            // The writer closes both once made; until then they are ours.
            if (progressConsumer == null) {
                kafkaProducer.close(Duration.ZERO);
            }
            throw e;
        }
    }

    private int shareIndexOrZero() {
        return shareIndex == null ? 0 : shareIndex;
    }

    private static void checkTopic(KafkaProducer<byte[], byte[]> producer, String topic)
            throws IOException {
        List<PartitionInfo> partitions;
        try {
            partitions = producer.partitionsFor(topic);
        } catch (KafkaException e) {
            throw new IOException("chunk topic " + topic + ": " + e + "; create it", e);
        }
        if (partitions == null || partitions.isEmpty()) {
            throw new IOException("chunk topic " + topic + " not found: create it");
        }
    }

    /** What {@link #open()} opens with, checked. */
    private record Settings(
            String topic,
            String destination,
            ChunkNumbering numbering,
            long inFlightBytes,
            Properties producer,
            Properties consumer,
            String clientId) {}

    private Settings check() {
        if (bootstrapServers == null || bootstrapServers.isBlank()) {
            throw new IllegalArgumentException("bootstrap servers: required, host:port[,...]");
        }
        if (job == null || stream == null) {
            throw new IllegalArgumentException("job and stream: required");
        }
        if (topic != null && outputLocation != null) {
            throw new IllegalArgumentException(
                    "outputLocation and topic: give one, the topic of the location or another");
        }
        ChunkNumbering numbering;
        String location;
        long defaultInFlight;
        if (spec != null) {
            StreamSpec streamSpec =
                    spec.stream(stream)
                            .orElseThrow(
                                    () ->
                                            new IllegalArgumentException(
                                                    "job "
                                                            + job
                                                            + " has no stream '"
                                                            + stream
                                                            + "' (its streams: "
                                                            + spec.streams().stream()
                                                                    .map(StreamSpec::name)
                                                                    .collect(
                                                                            Collectors.joining(
                                                                                    ", "))
                                                            + ")"));
            if (outputLocation != null || chunkSize != null) {
                throw new IllegalArgumentException(
                        (outputLocation != null ? "outputLocation" : "chunkSize")
                                + ": the job spec gives the stream's; leave it out (or use"
                                + " StreamWriter.builder for a stream without a spec)");
            }
            if (shareCount < 1 || shareIndexOrZero() < 0 || shareIndexOrZero() >= shareCount) {
                throw new IllegalArgumentException(
                        "share("
                                + shareIndexOrZero()
                                + ", "
                                + shareCount
                                + "): count at least 1, index from 0 to count - 1");
            }
            numbering =
                    ChunkNumbering.share(
                            streamSpec.sizeBytes(),
                            spec.taskSizeBytes(),
                            streamSpec.chunkSizeBytes(),
                            shareIndexOrZero(),
                            shareCount);
            location = streamSpec.outputLocation();
            defaultInFlight =
                    InFlightAccounting.capPerStream(
                            spec.taskSizeBytes(),
                            1,
                            InFlightAccounting.DEFAULT_MAX_BYTES_PER_STREAM);
        } else {
            if (shareIndex != null) {
                throw new IllegalArgumentException(
                        "share: an unbounded stream has one writer; shares are for a sized stream"
                                + " of a job spec (StreamWriter.forJob)");
            }
            if (outputLocation == null && topic == null) {
                throw new IllegalArgumentException(
                        "no outputLocation: give the node that reads the stream (or a topic)");
            }
            int size = chunkSize == null ? StreamSpec.DEFAULT_CHUNK_SIZE_BYTES : chunkSize;
            if (size < StreamSpec.MIN_CHUNK_SIZE_BYTES || size > StreamSpec.MAX_CHUNK_SIZE_BYTES) {
                throw new IllegalArgumentException(
                        "chunkSize: "
                                + StreamSpec.MIN_CHUNK_SIZE_BYTES
                                + " to "
                                + StreamSpec.MAX_CHUNK_SIZE_BYTES
                                + " bytes, got "
                                + size);
            }
            numbering = ChunkNumbering.unbounded(size);
            location = outputLocation;
            defaultInFlight =
                    InFlightAccounting.capPerStream(
                            JobSpec.DEFAULT_TASK_SIZE_BYTES,
                            1,
                            InFlightAccounting.DEFAULT_MAX_BYTES_PER_STREAM);
        }
        String chunkTopic = topic != null ? topic : ChunkRecords.topic(location);
        String destination = location != null ? location : chunkTopic;
        ChunkRecords.checkNames(job, stream, destination, 0);
        if (inFlightBytes != null && inFlightBytes < 1) {
            throw new IllegalArgumentException("inFlightBytes: at least 1, got " + inFlightBytes);
        }

        Properties given = new Properties();
        given.putAll(producer);
        given.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        String clientId =
                ("sluice-writer-" + job + "-" + stream + "-" + shareIndexOrZero())
                        .replaceAll("[^A-Za-z0-9._-]+", "_");
        given.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        Properties producerProps;
        Properties consumerProps;
        try {
            producerProps = ChunkProducerSettings.checked(given);
            consumerProps = ProgressListener.consumerProperties(producerProps, consumer);
        } catch (IllegalStateException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        checkLargestChunkFits(producerProps, numbering, chunkTopic, destination);
        return new Settings(
                chunkTopic,
                destination,
                numbering,
                inFlightBytes != null ? inFlightBytes : defaultInFlight,
                producerProps,
                consumerProps,
                clientId);
    }

    /** The largest record the writer sends: a full chunk, the longest seq, with the end header. */
    private void checkLargestChunkFits(
            Properties producerProps,
            ChunkNumbering numbering,
            String chunkTopic,
            String destination) {
        int largest = numbering.isSized() && !numbering.hasChunk() ? 0 : numbering.length();
        ChunkProducerSettings.of(producerProps)
                .checkFits(
                        ChunkRecords.record(
                                chunkTopic,
                                0,
                                job,
                                stream,
                                Long.MAX_VALUE,
                                true,
                                new byte[largest]),
                        job
                                + "/"
                                + stream
                                + " (its largest: "
                                + largest
                                + " B to "
                                + destination
                                + ", the longest seq, eos)",
                        StreamWriter.CHUNK_SIZE_SETTING);
    }
}
