package dev.sluice.client.stream;

import dev.sluice.client.Limits;
import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.brokerd.SubscriptionRequest;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.protocol.StartPosition;
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
 * Reads one stream of a job on its output-location node, through the node's {@code sluice-brokerd}:
 * the stream's chunks in {@code seq} order, each once, zero-copy from shared memory, up to the end
 * of the stream.
 *
 * <pre>{@code
 * BrokerdClient brokerd = BrokerdClient.builder(Path.of("/run/sluice/brokerd.sock")).build();
 * try (StreamReader reader =
 *         StreamReader.builder(brokerd, jobSpec, "cyan")   // topic and rate from the job
 *                 .bootstrapServers("kafka-1:9092")         // partitions; delivery progress
 *                 .open()) {
 *     while (!reader.isEndOfStream()) {
 *         try (StreamChunk chunk = reader.acquire(Duration.ofSeconds(1))) {
 *             if (chunk != null) {
 *                 printer.write(chunk.payload());           // in place, until released
 *             }
 *         }
 *     }
 *     log.info("starved {} times", reader.stats().starvationEvents());
 * }
 * }</pre>
 *
 * <p><b>Chunks.</b> {@link #acquire} hands out one {@link StreamChunk} at a time; its payload is
 * the slot's memory, valid until {@link StreamChunk#release()}, which gives the slot back to the
 * daemon (that is the backpressure: a reader that holds on stops the daemon, which stops fetching).
 * After the last chunk ({@link StreamChunk#isEndOfStream()}) {@link #isEndOfStream()} is true, the
 * subscription is given back, and {@code acquire} returns null at once.
 *
 * <p><b>Gaps.</b> When the stream's next chunks are missing at the daemon past its {@code
 * sluice.gap.timeout.ms} (a producer lost them, or is that late), the daemon reports the hole once
 * (STREAM_GAP, docs/formats.md), and {@link #acquire} throws a {@link StreamGapException} naming
 * the job, the stream, the missing seqs and how long the daemon waited, once, when this reader has
 * got to the hole. The reader stays usable: {@code acquire} again waits on for the missing chunks,
 * which arrive in order if a producer writes them; whether to wait, alert or give up (close) is the
 * application's call. Every reader of a shared stream is told, as each one waits at the hole;
 * readers of other streams are not. {@link StreamReaderStats#gapsReported()} counts the holes told
 * and {@link StreamReaderStats#currentGap()} names the one still open.
 *
 * <p><b>Constant speed.</b> With a rate ({@link Builder#pacing}, or the job's), chunk {@code k + 1}
 * is handed out no earlier than {@code size(k) / rate} seconds after chunk {@code k}, on an
 * absolute schedule started by the first chunk; the reader waits parked ({@code
 * LockSupport.parkNanos}), never spinning. A chunk that is not there at its due time is a
 * <i>starvation event</i> (seed 001 §2.4, "constant speed ... avoiding starvation, with a best
 * effort principle"): it is counted in {@link #stats()}, with how late it came, and the schedule
 * goes on from when it came rather than rushing to catch up. Each chunk's lateness, its handout
 * past its due time, is reported as p50, p99 and max; the first chunk waits a start delay, by
 * default one task of the stream at its rate when built from a job spec (docs/stream-reader.md,
 * "Start delay").
 *
 * <p><b>Sharing a stream.</b> {@code share(i, n)} makes this reader one of {@code n}: it gets the
 * chunks whose {@code seq % n == i}, and still sees the end of the stream when the last chunk is
 * another reader's. Each reader thus gets ⌊S/n⌋ or ⌈S/n⌉ of the stream's S chunks, whoever polls
 * first or fastest: seed 002 §6.4 measured 75 % / 25 % between two readers because its elements
 * went to whichever reader asked first; here the share is fixed by {@code seq} before anyone asks.
 * The price: every reader's daemon subscription receives the whole stream and passes over the
 * chunks that are not its own (in shared memory, without copying them), so sharing is for spreading
 * the <i>processing</i> of a stream over several readers, not its transfer.
 *
 * <p><b>Delivery progress.</b> With {@link Builder#bootstrapServers}, the reader publishes its
 * {@link DeliveryProgress} on the progress topic (default {@value DeliveryProgress#DEFAULT_TOPIC}),
 * at most every {@link Builder#progressInterval} (100 ms) and at once at the end of the stream, so
 * the generation side can bound the bytes it has in flight.
 *
 * <p>Not thread-safe: one thread acquires and releases. {@link #stats()} may be called from any
 * thread.
 */
@PublicEvolving
public final class StreamReader implements AutoCloseable {
    private final String job;
    private final String stream;
    private final String topic;
    private final int readerIndex;
    private final int readerCount;
    private final ChunkDelivery delivery;
    private final ProgressReporter reporter;
    private boolean closed;

    private StreamReader(
            String job,
            String stream,
            String topic,
            int readerIndex,
            int readerCount,
            ChunkSource source,
            long rate,
            long startDelayNanos,
            ProgressReporter reporter) {
        this.job = job;
        this.stream = stream;
        this.topic = topic;
        this.readerIndex = readerIndex;
        this.readerCount = readerCount;
        this.reporter = reporter;
        this.delivery =
                new ChunkDelivery(
                        job,
                        stream,
                        source,
                        NanoClock.SYSTEM,
                        rate,
                        startDelayNanos,
                        readerIndex,
                        readerCount,
                        reporter == null ? progress -> {} : reporter::update);
    }

    /** A reader of {@code job}'s stream {@code stream}; give it a topic or a job spec. */
    public static Builder builder(BrokerdClient brokerd, String job, String stream) {
        return new Builder(brokerd, job, stream);
    }

    /**
     * A reader of a stream of {@code job}, which gives the topic (its output location's, {@link
     * ChunkTopics}), the slot size (from the chunk size) and, if the stream has one, the pacing
     * rate.
     */
    public static Builder builder(BrokerdClient brokerd, JobSpec job, String stream) {
        return new Builder(brokerd, Objects.requireNonNull(job, "job").id(), stream).job(job);
    }

    /**
     * This reader's next chunk, once it is due when paced: waits up to {@code timeout}, then
     * returns null. Null at once after the end of the stream.
     *
     * @throws IllegalStateException if the previous chunk was not released, or the reader is closed
     * @throws StreamGapException once per hole the daemon reported in the stream, when this reader
     *     has got to it; the reader stays usable, and acquiring again waits on for the missing
     *     chunks
     * @throws IOException if the daemon ended the subscription for good ({@link
     *     dev.sluice.client.brokerd.BrokerdException}) or the stream broke its order
     */
    public StreamChunk acquire(Duration timeout) throws IOException {
        return delivery.acquire(timeout.toNanos());
    }

    /** Whether the end of the stream was reached: no chunk will come anymore. */
    public boolean isEndOfStream() {
        return delivery.isEndOfStream();
    }

    /** The delivery so far; callable from any thread. */
    public StreamReaderStats stats() {
        return delivery.stats(
                reporter == null ? 0 : reporter.sent(), reporter == null ? 0 : reporter.failures());
    }

    /** The delivery progress now, as the progress topic gets it. */
    public DeliveryProgress progress() {
        return delivery.progress();
    }

    public String job() {
        return job;
    }

    public String stream() {
        return stream;
    }

    /** The chunk topic read. */
    public String topic() {
        return topic;
    }

    public int readerIndex() {
        return readerIndex;
    }

    public int readerCount() {
        return readerCount;
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * Gives the subscription back (a chunk still held is released with it) and publishes the last
     * delivery progress. Idempotent.
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            delivery.close();
        } finally {
            if (reporter != null) {
                reporter.close();
            }
        }
    }

    /**
     * Settings of a {@link StreamReader}; {@link #open()} checks them, then subscribes. A topic is
     * required, given or from the job spec.
     */
    @PublicEvolving
    public static final class Builder {
        private static final int DEFAULT_SLOT_COUNT = 16;
        private static final long DEFAULT_HEAP_BUFFER_BYTES = 256L << 20;
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
        private String progressTopic = DeliveryProgress.DEFAULT_TOPIC;
        private Duration progressInterval = Duration.ofMillis(100);
        private final Map<String, String> kafkaProperties = new TreeMap<>();
        private int slotCount = DEFAULT_SLOT_COUNT;
        private long slotSize;
        private long reorderWindowBytes;
        private long heapBufferBytes = DEFAULT_HEAP_BUFFER_BYTES;
        // null: one task of the stream at its rate when built from a job spec, else 0.
        private Duration startDelay;

        private Builder(BrokerdClient brokerd, String job, String stream) {
            this.brokerd = Objects.requireNonNull(brokerd, "brokerd");
            this.job = job;
            this.stream = stream;
        }

        private Builder job(JobSpec spec) {
            this.jobSpec = spec;
            return this;
        }

        /** The chunk topic; by default the output location's of the job spec. */
        public Builder topic(String topic) {
            this.topic = topic;
            return this;
        }

        /**
         * Reads the topic's partitions 0 to {@code count - 1}. By default the reader asks the
         * cluster how many there are ({@link #bootstrapServers} needed).
         */
        public Builder partitions(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("partitions: at least 1, got " + count);
            }
            this.partitions = count;
            this.localLeaders = false;
            return this;
        }

        /**
         * Reads the partitions whose leader is the daemon's broker ({@code sluice.broker.id}): when
         * the chunks of this node's streams are written there.
         */
        public Builder localLeaders() {
            this.localLeaders = true;
            this.partitions = 0;
            return this;
        }

        /**
         * Hands the chunks out at {@code bytesPerSecond}, counting starvation; overrides the job's
         * rate. For a shared stream this is this reader's rate, its share of the stream's.
         */
        public Builder pacing(long bytesPerSecond) {
            if (bytesPerSecond < 1) {
                throw new IllegalArgumentException(
                        "rate: at least 1 byte/s, got " + bytesPerSecond);
            }
            this.rate = bytesPerSecond;
            return this;
        }

        /**
         * For a paced reader: hands the first chunk out this long after it came, so that the
         * stream's next chunks have a head start on the schedule; {@link Duration#ZERO} for none. A
         * stream's chunks come a task at a time, and a reader that starts at the first chunk has
         * nothing in hand when the next task of its stream is late. A jitter buffer, traded against
         * latency. By default, built from a job spec, one task of the stream at its rate ({@code
         * taskSizeBytes / rate}, docs/stream-reader.md, "Start delay"); without one, 0.
         */
        public Builder startDelay(Duration delay) {
            if (delay.isNegative()) {
                throw new IllegalArgumentException("start delay: negative, " + delay);
            }
            this.startDelay = delay;
            return this;
        }

        /** Hands chunks out as fast as they come, even if the job gives a rate. */
        public Builder noPacing() {
            this.rate = 0L;
            return this;
        }

        /**
         * Makes this reader number {@code index} of {@code count} readers of the stream: it gets
         * the chunks whose {@code seq % count == index}. The job's rate is then divided among them.
         */
        public Builder share(int index, int count) {
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
         * The Kafka cluster, {@code host:port[,...]}: the reader then publishes its delivery
         * progress there, and looks up the topic's partitions unless given.
         */
        public Builder bootstrapServers(String bootstrapServers) {
            this.bootstrapServers = bootstrapServers;
            return this;
        }

        /** Where delivery progress goes; {@value DeliveryProgress#DEFAULT_TOPIC} by default. */
        public Builder progressTopic(String topic) {
            this.progressTopic = topic;
            return this;
        }

        /** At most one progress record per interval (and one at the end); 100 ms by default. */
        public Builder progressInterval(Duration interval) {
            this.progressInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /** A property of the progress producer (security, timeouts...); serializers are fixed. */
        public Builder kafkaProperty(String key, String value) {
            kafkaProperties.put(Objects.requireNonNull(key), Objects.requireNonNull(value));
            return this;
        }

        /**
         * The subscription's segment: {@code count} slots of {@code size} bytes; a slot holds at
         * least one whole chunk record. By default 16 slots of the chunk size plus 64 KiB.
         */
        public Builder slots(int count, long size) {
            this.slotCount = count;
            this.slotSize = size;
            return this;
        }

        /** The daemon's reorder window for this subscription; 0 (default) for the daemon's. */
        public Builder reorderWindowBytes(long bytes) {
            this.reorderWindowBytes = bytes;
            return this;
        }

        /**
         * How many bytes of chunks that wait behind others paced readers of one subscription may
         * keep on the heap (default 256 MiB; 0: none). A paced reader holds its chunks until they
         * are due; kept in shared memory, the chunks of a stream that came early would hold every
         * slot, and a reader of another stream of the subscription would starve. The chunk a reader
         * reads next always stays in shared memory.
         */
        public Builder heapBufferBytes(long bytes) {
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
                if (bootstrapServers != null) {
                    producer = producer();
                }
                // Every slot may hold a batch some reader of the shared subscription still reads.
                SubscriptionRequest.Builder request =
                        SubscriptionRequest.builder(settings.topic)
                                .chunkStreams(job)
                                .slots(slotCount, settings.slotSize)
                                .maxOpenBatches(slotCount)
                                .reorderWindowBytes(reorderWindowBytes);
                String partitionsRead;
                if (localLeaders) {
                    request.localLeaders();
                    partitionsRead = "local leaders";
                } else {
                    int count = partitions > 0 ? partitions : partitionCount(producer, settings);
                    request.partitions(count, StartPosition.EARLIEST);
                    partitionsRead = Integer.toString(count);
                }
                source =
                        SharedChunkSubscription.join(
                                brokerd,
                                request.build(),
                                String.join(
                                        "/",
                                        settings.topic,
                                        job,
                                        partitionsRead,
                                        Integer.toString(slotCount),
                                        Long.toString(settings.slotSize),
                                        Long.toString(reorderWindowBytes),
                                        Long.toString(heapBufferBytes)),
                                heapBufferBytes,
                                stream,
                                settings.rate > 0);
                ProgressReporter reporter = null;
                if (producer != null) {
                    reporter = new ProgressReporter(producer, progressTopic, Duration.ofSeconds(5));
                }
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
                                reporter);
                if (reporter != null) {
                    // The first record, nothing delivered yet, tells the scheduler that the
                    // stream has its reader: a job starts when all its streams have theirs. Set
                    // before the timer starts, so that its first tick sends it: set after, a tick
                    // that ran first found nothing, and the record waited a whole interval.
                    reporter.update(reader.progress());
                    reporter.start(
                            progressInterval,
                            job + "/" + stream + (readerCount > 1 ? "#" + readerIndex : ""));
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
                if (producer != null) {
                    producer.close(Duration.ZERO);
                }
                throw e;
            }
        }

        /** Opens the reader behind the plain {@code poll / isClosed / close} facade. */
        public SimpleStreamReader openSimple() throws IOException {
            return new SimpleStreamReader(open());
        }

        record Settings(String topic, long rate, long slotSize, long startDelayNanos) {}

        Settings check() {
            DeliveryProgressCodec.checkName("job", job);
            DeliveryProgressCodec.checkName("stream", stream);
            String chunkTopic = topic;
            long chunkSize = StreamSpec.DEFAULT_CHUNK_SIZE_BYTES;
            OptionalLong jobRate = OptionalLong.empty();
            long taskBytes = 0;
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
            if (!localLeaders && partitions == 0 && bootstrapServers == null) {
                throw new IllegalArgumentException(
                        "partitions: none given; name them with partitions(n), ask for"
                                + " localLeaders(), or give bootstrapServers to look them up");
            }
            if (bootstrapServers != null) {
                if (bootstrapServers.isBlank()) {
                    throw new IllegalArgumentException("bootstrap servers: empty");
                }
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
                    chunkTopic, paced, size, startDelayNanos(paced, taskBytes, jobRate));
        }

        /**
         * The start delay given, or by default one task of the stream at its rate: this reader's
         * share of a task ({@code taskBytes / readerCount}) at its own rate, which for the job's
         * rate divided among the readers is {@code taskBytes / rate}. The scheduler keeps at most
         * two tasks of a stream per producer ahead of its readers and hands the next out as soon as
         * their progress frees room, so with one task in hand a reader covers the next task's
         * computation as long as the producers compute faster than it reads (docs/stream-reader.md,
         * "Start delay"). 0 unpaced or without a job spec.
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
            return Math.round(taskBytes * 1e9 / streamRate);
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

        private Producer<byte[], byte[]> producer() {
            Properties props = new Properties();
            // Progress is state, newest wins: a record not sent in a few seconds is stale anyway.
            props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
            props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
            props.putAll(kafkaProperties);
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
                        "could not look up the partitions of topic " + settings.topic + ": " + e,
                        e);
            }
            if (infos == null || infos.isEmpty()) {
                throw new IOException("topic " + settings.topic + " has no partitions");
            }
            return infos.size();
        }
    }
}
