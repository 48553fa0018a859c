package dev.sluice.client.read;

import dev.sluice.client.Limits;
import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.BufferModel;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.progress.BrokerLossTimeouts;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.DeliveryProgressCodec;
import dev.sluice.client.progress.ProgressReporter;
import dev.sluice.client.write.ChunkNumbering;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Settings of a {@link StreamReader}, made by {@link StreamReader#builder}; {@link #open()} checks
 * them, then wires the reader: the progress producer, the chunk source from the shared subscription
 * of its job and topic ({@link SharedChunkSubscription}), the pacing and the progress timer. A
 * topic is required, given or from the job spec.
 */
@PublicEvolving
public final class StreamReaderBuilder {
    /** How long a begun stream may be silent before its reader is told, unless set. */
    static final long DEFAULT_SILENCE_SECONDS = 60;

    static final Duration DEFAULT_SILENCE_TIMEOUT = Duration.ofSeconds(DEFAULT_SILENCE_SECONDS);

    private static final int DEFAULT_SLOT_COUNT = 16;
    static final long DEFAULT_HEAP_BUFFER_BYTES = 256L << 20;
    // Room for a chunk's Arrow IPC framing and its job and stream names beside the payload.
    private static final long SLOT_OVERHEAD = 64 << 10;

    private final BrokerdClient brokerd;
    private final String job;
    private final String stream;
    private JobSpec jobSpec;
    private String topic;
    private int partitions;
    private boolean localLeaders;
    // null: the job's rate if any; 0: not paced.
    private Long rate;
    private int readerIndex;
    private int readerCount = 1;
    private String bootstrapServers;
    // The application's, shared by its readers: none closes it.
    private Producer<byte[], byte[]> sharedProducer;
    private String progressTopic = DeliveryProgress.DEFAULT_TOPIC;
    private Duration progressInterval = Duration.ofMillis(100);
    private final Map<String, String> kafkaProperties = new TreeMap<>();
    private int slotCount = DEFAULT_SLOT_COUNT;
    private long slotSize;
    private long reorderWindowBytes;
    private long heapBufferBytes = DEFAULT_HEAP_BUFFER_BYTES;
    // null: one task of the stream at its rate when built from a job spec, else 0.
    private Duration startDelay;
    private Duration silenceTimeout = DEFAULT_SILENCE_TIMEOUT;

    StreamReaderBuilder(BrokerdClient brokerd, String job, String stream) {
        this.brokerd = Objects.requireNonNull(brokerd, "brokerd");
        this.job = job;
        this.stream = stream;
    }

    StreamReaderBuilder job(JobSpec spec) {
        this.jobSpec = spec;
        return this;
    }

    /** The chunk topic; by default the output location's of the job spec. */
    public StreamReaderBuilder topic(String topic) {
        this.topic = topic;
        return this;
    }

    /**
     * Reads the topic's partitions 0 to {@code count - 1}. By default the reader asks the cluster
     * how many there are ({@link #bootstrapServers} needed).
     */
    public StreamReaderBuilder partitions(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("partitions: at least 1, got " + count);
        }
        this.partitions = count;
        this.localLeaders = false;
        return this;
    }

    /**
     * Reads the partitions whose leader is the daemon's broker ({@code sluice.broker.id}): when the
     * chunks of this node's streams are written there.
     */
    public StreamReaderBuilder localLeaders() {
        this.localLeaders = true;
        this.partitions = 0;
        return this;
    }

    /**
     * Hands the chunks out at {@code bytesPerSecond}, counting starvation; overrides the job's
     * rate. For a shared stream this is this reader's rate, its share of the stream's.
     */
    public StreamReaderBuilder pacing(long bytesPerSecond) {
        if (bytesPerSecond < 1) {
            throw new IllegalArgumentException("rate: at least 1 byte/s, got " + bytesPerSecond);
        }
        this.rate = bytesPerSecond;
        return this;
    }

    /**
     * For a paced reader: hands the first chunk out this long after it came, so that the stream's
     * next chunks have a head start on the schedule; {@link Duration#ZERO} for none. A stream's
     * chunks come a task at a time, and a reader that starts at the first chunk has nothing in hand
     * when the next task of its stream is late. A jitter buffer, traded against latency. By
     * default, built from a job spec, one task of the stream at its rate ({@code taskSizeBytes /
     * rate}, docs/stream-reader.md, "Start delay"); without one, 0.
     */
    public StreamReaderBuilder startDelay(Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("start delay: negative, " + delay);
        }
        this.startDelay = delay;
        return this;
    }

    /**
     * How long a stream that began and has not ended may bring no chunk before {@code acquire}
     * throws a {@link StreamSilentException}, once per silence: its writer may be gone, killed
     * mid-stream with no later chunk for the daemon to report a gap by (docs/stream-reader.md,
     * "Silence"). {@value #DEFAULT_SILENCE_SECONDS} s by default; {@link Duration#ZERO} never
     * tells.
     */
    public StreamReaderBuilder silenceTimeout(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("silence timeout: negative, " + timeout);
        }
        this.silenceTimeout = timeout;
        return this;
    }

    /** Hands chunks out as fast as they come, even if the job gives a rate. */
    public StreamReaderBuilder noPacing() {
        this.rate = 0L;
        return this;
    }

    /**
     * Makes this reader number {@code index} of {@code count} readers of the stream: it gets the
     * chunks whose {@code seq % count == index}. The job's rate is then divided among them.
     */
    public StreamReaderBuilder share(int index, int count) {
        if (!Limits.isReaderCount(count)) {
            throw new IllegalArgumentException(
                    "share: reader count must be 1 to 65535, got " + count);
        }
        if (index < 0 || index >= count) {
            throw new IllegalArgumentException(
                    "share: reader index must be 0 to " + (count - 1) + ", got " + index);
        }
        this.readerIndex = index;
        this.readerCount = count;
        return this;
    }

    /**
     * The Kafka cluster, {@code host:port[,...]}: the reader then publishes its delivery progress
     * there, and looks up the topic's partitions unless given.
     */
    public StreamReaderBuilder bootstrapServers(String bootstrapServers) {
        this.bootstrapServers = bootstrapServers;
        return this;
    }

    /**
     * Publishes the delivery progress through {@code producer}, which the application owns and may
     * share among its readers, rather than through a producer of the reader's own ({@link
     * #bootstrapServers}; give one or the other). The reader looks the topic's partitions up
     * through it unless given, and never closes it: closing the reader waits for its own last
     * record alone.
     *
     * <p>Why: a producer of the reader's own is made and closed with every job's readers; in a
     * process that reads job after job, making and closing them (their metrics, connections and
     * buffers) was most of what the heap took in, and its young collections add to the paced
     * readers' lateness (docs/stream-reader.md, "Lateness and the start buffer").
     */
    public StreamReaderBuilder progressProducer(Producer<byte[], byte[]> producer) {
        this.sharedProducer = Objects.requireNonNull(producer, "producer");
        return this;
    }

    /** Where delivery progress goes; {@value DeliveryProgress#DEFAULT_TOPIC} by default. */
    public StreamReaderBuilder progressTopic(String topic) {
        this.progressTopic = topic;
        return this;
    }

    /**
     * At most one progress record per interval (and one at the end); 100 ms by default. Built from
     * a job spec, the reader sends one sooner when it was delivered a task's last chunk: a producer
     * waits for that before it gets the stream's next task (docs/stream-reader.md, "Delivery
     * progress").
     */
    public StreamReaderBuilder progressInterval(Duration interval) {
        this.progressInterval = Objects.requireNonNull(interval, "interval");
        return this;
    }

    /** A property of the progress producer (security, timeouts...); serializers are fixed. */
    public StreamReaderBuilder kafkaProperty(String key, String value) {
        kafkaProperties.put(Objects.requireNonNull(key), Objects.requireNonNull(value));
        return this;
    }

    /**
     * The subscription's segment: {@code count} slots of {@code size} bytes; a slot holds at least
     * one whole chunk record. By default 16 slots of the chunk size plus 64 KiB.
     */
    public StreamReaderBuilder slots(int count, long size) {
        this.slotCount = count;
        this.slotSize = size;
        return this;
    }

    /** The daemon's reorder window for this subscription; 0 (default) for the daemon's. */
    public StreamReaderBuilder reorderWindowBytes(long bytes) {
        this.reorderWindowBytes = bytes;
        return this;
    }

    /**
     * How many bytes of chunks that wait behind others paced readers of one subscription may keep
     * on the heap (default 256 MiB; 0: none). A paced reader holds its chunks until they are due;
     * kept in shared memory, the chunks of a stream that came early would hold every slot, and a
     * reader of another stream of the subscription would starve. The chunk a reader reads next
     * always stays in shared memory. The buffers are reused, by later subscriptions too: a process
     * keeps up to 256 MiB of them free once its readers used that many at once.
     */
    public StreamReaderBuilder heapBufferBytes(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("heap buffer: at least 0 bytes, got " + bytes);
        }
        this.heapBufferBytes = bytes;
        return this;
    }

    /**
     * Checks the settings, subscribes through the daemon and starts publishing progress.
     *
     * @throws IllegalArgumentException if a setting is wrong, before anything is opened
     * @throws IOException if the daemon cannot be reached or refuses, or the topic's partitions
     *     cannot be looked up
     */
    public StreamReader open() throws IOException {
        Settings settings = check();
        Producer<byte[], byte[]> producer = null;
        ChunkSource source = null;
        try {
            if (sharedProducer != null) {
                producer = sharedProducer;
            } else if (bootstrapServers != null) {
                producer = newProgressProducer(bootstrapServers, kafkaProperties);
            }
            // 0 partitions: the colocated leaders (SharedChunkSubscription.Key).
            int partitionsRead =
                    localLeaders
                            ? 0
                            : partitions > 0 ? partitions : partitionCount(producer, settings);
            ProgressReporter reporter =
                    producer == null
                            ? null
                            : new ProgressReporter(
                                    producer,
                                    producer != sharedProducer,
                                    progressTopic,
                                    progressInterval,
                                    settings.chunksPerTask(),
                                    Duration.ofSeconds(5));
            source =
                    SharedChunkSubscription.join(
                            new SharedChunkSubscription.Key(
                                    brokerd,
                                    settings.topic,
                                    job,
                                    partitionsRead,
                                    slotCount,
                                    settings.slotSize,
                                    reorderWindowBytes,
                                    heapBufferBytes),
                            stream,
                            settings.rate > 0,
                            // Each renewal is told at once in the next progress record
                            // (docs/stream-reader.md, "Delivery progress").
                            reporter == null ? () -> {} : reporter::resubscribed);
            StreamReader reader =
                    new StreamReader(
                            job,
                            stream,
                            settings.topic,
                            readerIndex,
                            readerCount,
                            source,
                            settings.rate,
                            settings.startDelayNanos,
                            settings.silenceNanos,
                            reporter);
            if (reporter != null) {
                // The first record, nothing delivered yet, tells the scheduler that the
                // stream has its reader: a job starts when all its streams have theirs. Set
                // before the timer starts, so that its first tick sends it: set after, a tick
                // that ran first found nothing, and the record waited a whole interval.
                reporter.update(reader.progress());
                reporter.start(job + "/" + stream + (readerCount > 1 ? "#" + readerIndex : ""));
            }
            return reader;
        } catch (IOException | RuntimeException e) {
            if (source != null) {
                try {
                    source.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            if (producer != null && producer != sharedProducer) {
                producer.close(Duration.ZERO);
            }
            throw e;
        }
    }

    /** Opens the reader behind the plain {@code poll / isClosed / close} facade. */
    public SimpleStreamReader openSimple() throws IOException {
        return new SimpleStreamReader(open());
    }

    /**
     * @param chunksPerTask where the stream's generation tasks end (docs/generation.md, "Tasks and
     *     chunks"), from the job spec; 0 without one
     */
    record Settings(
            String topic,
            long rate,
            long slotSize,
            long startDelayNanos,
            long silenceNanos,
            long chunksPerTask) {}

    Settings check() {
        DeliveryProgressCodec.checkName("job", job);
        DeliveryProgressCodec.checkName("stream", stream);
        String chunkTopic = topic;
        long chunkSize = StreamSpec.DEFAULT_CHUNK_SIZE_BYTES;
        OptionalLong jobRate = OptionalLong.empty();
        long taskBytes = 0;
        long chunksPerTask = 0;
        if (jobSpec != null) {
            StreamSpec spec =
                    jobSpec.stream(stream)
                            .orElseThrow(
                                    () ->
                                            new IllegalArgumentException(
                                                    "stream = "
                                                            + stream
                                                            + ": job "
                                                            + job
                                                            + " has no such stream (it has "
                                                            + jobSpec.streams().stream()
                                                                    .map(StreamSpec::name)
                                                                    .collect(
                                                                            Collectors.joining(
                                                                                    ", "))
                                                            + ")"));
            if (chunkTopic == null) {
                chunkTopic = ChunkTopics.forOutputLocation(spec.outputLocation());
            }
            chunkSize = spec.chunkSizeBytes();
            jobRate = spec.rateBytesPerSecond();
            // A stream shorter than a task is one task.
            taskBytes = Math.min(jobSpec.taskSizeBytes(), spec.sizeBytes());
            chunksPerTask = ChunkNumbering.chunksPerTask(jobSpec.taskSizeBytes(), chunkSize);
        }
        if (chunkTopic == null) {
            throw new IllegalArgumentException(
                    "topic: none given; name it, or build from the job spec");
        }
        checkTopic("topic", chunkTopic);
        long paced;
        if (rate != null) {
            paced = rate;
        } else if (jobRate.isPresent()) {
            paced = Math.max(1, jobRate.getAsLong() / readerCount);
        } else {
            paced = 0;
        }
        if (!localLeaders
                && partitions == 0
                && bootstrapServers == null
                && sharedProducer == null) {
            throw new IllegalArgumentException(
                    "partitions: none given; name them with partitions(n), ask for"
                            + " localLeaders(), or give bootstrapServers to look them up");
        }
        if (sharedProducer != null && (bootstrapServers != null || !kafkaProperties.isEmpty())) {
            throw new IllegalArgumentException(
                    "progress producer: given with bootstrapServers or kafkaProperty, which"
                            + " configure a producer of the reader's own; give one or the other");
        }
        if (bootstrapServers != null && bootstrapServers.isBlank()) {
            throw new IllegalArgumentException("bootstrap servers: empty");
        }
        if (bootstrapServers != null || sharedProducer != null) {
            checkTopic("progress topic", progressTopic);
            if (progressTopic.equals(chunkTopic)) {
                throw new IllegalArgumentException(
                        "progress topic: must differ from the chunk topic " + chunkTopic);
            }
            if (progressInterval.isNegative() || progressInterval.isZero()) {
                throw new IllegalArgumentException(
                        "progress interval: must be positive, got " + progressInterval);
            }
        }
        long size = slotSize > 0 ? slotSize : roundUp64(chunkSize + SLOT_OVERHEAD);
        return new Settings(
                chunkTopic,
                paced,
                size,
                startDelayNanos(paced, taskBytes, jobRate),
                silenceTimeout.toNanos(),
                chunksPerTask);
    }

    /**
     * The start delay given, or by default the job's buffer model ({@link BufferModel}): one task
     * of the stream at its rate, this reader's share of a task ({@code taskBytes / readerCount}) at
     * its own rate, which for the job's rate divided among the readers is {@code taskBytes / rate};
     * or, for a job that must survive a producer's loss, the time to find a producer slow and one
     * task on a survivor besides (docs/stream-reader.md, "Start delay"). 0 unpaced or without a job
     * spec.
     */
    private long startDelayNanos(long paced, long taskBytes, OptionalLong jobRate) {
        if (paced == 0) {
            return 0;
        }
        if (startDelay != null) {
            return startDelay.toNanos();
        }
        if (taskBytes == 0) {
            return 0;
        }
        // The job's rate rather than its share rounded down: the same time for every reader.
        double streamRate = rate == null ? jobRate.getAsLong() : (double) rate * readerCount;
        return BufferModel.startDelayNanos(taskBytes, streamRate, jobSpec.survivesProducerLoss());
    }

    private static long roundUp64(long n) {
        return (n + 63) & ~63L;
    }

    private static void checkTopic(String what, String name) {
        if (!Limits.isTopicName(name)) {
            throw new IllegalArgumentException(
                    what
                            + ": must be a Kafka topic name ([A-Za-z0-9._-], 1 to 249), got '"
                            + name
                            + "'");
        }
    }

    /** A reader's own progress producer: see {@link StreamReader#newProgressProducer}. */
    static Producer<byte[], byte[]> newProgressProducer(
            String bootstrapServers, Map<String, String> kafkaProperties) {
        Properties props = new Properties();
        // Progress is state, newest wins: a record not sent in a few seconds is stale anyway.
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        props.putAll(kafkaProperties);
        // A record waiting on a lost leader holds back every record after it: the scheduler hears
        // nothing of this reader until the producer gives up on that broker.
        props = BrokerLossTimeouts.withDefaults(props);
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static int partitionCount(Producer<byte[], byte[]> producer, Settings settings)
            throws IOException {
        List<PartitionInfo> infos;
        try {
            infos = producer.partitionsFor(settings.topic);
        } catch (KafkaException e) {
            throw new IOException(
                    "could not look up the partitions of topic " + settings.topic + ": " + e, e);
        }
        if (infos == null || infos.isEmpty()) {
            throw new IOException("topic " + settings.topic + " has no partitions");
        }
        return infos.size();
    }
}
