package dev.sluice.flink.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.Transport;
import dev.sluice.client.read.StreamChunk;
import dev.sluice.client.read.StreamReader;
import dev.sluice.client.write.ChunkRecords;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import dev.sluice.flink.generation.Chunk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.zip.CRC32;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link SluiceSink} in a Flink job on a MiniCluster (parallelism 2), writing to a real broker,
 * read back by {@link StreamReader}s through a real {@code sluice-brokerd}: streams arrive
 * complete, in order, once, through Kafka or the local way; a reader that stops stops the
 * generation within the cap, and once it reads on, everything arrives.
 */
class SluiceSinkIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    // Retained: the local test reads the writers' counters after its job finished.
    private static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setConfiguration(METRICS.addToConfiguration(new Configuration()))
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final int PARTITIONS = 3;
    private static final int PARALLELISM = 2;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final AtomicInteger NAMES = new AtomicInteger();

    private static BrokerdClient brokerd;

    @BeforeAll
    static void connect() {
        brokerd = BrokerdClient.builder(BROKERD.socket()).build();
    }

    private static String uniqueName(String prefix) {
        return prefix + "-" + NAMES.incrementAndGet() + "-" + ProcessHandle.current().pid();
    }

    /** The bytes of chunk {@code seq} of {@code stream}: its name, then bytes that follow seq. */
    static byte[] payload(String stream, long seq, int size) {
        byte[] bytes = new byte[size];
        byte[] name = (stream + "-" + seq + ":").getBytes(StandardCharsets.UTF_8);
        System.arraycopy(name, 0, bytes, 0, Math.min(name.length, size));
        for (int i = name.length; i < size; i++) {
            bytes[i] = (byte) (seq * 31 + i);
        }
        return bytes;
    }

    /**
     * Turns number {@code i} of a sequence into a chunk of one of the job's streams: stream {@code
     * i % streams}, seq {@code i / streams}. A sequence source cut into contiguous ranges, one per
     * subtask, so both writers write every stream, each in increasing seq.
     */
    private static final class Generator implements MapFunction<Long, Chunk> {
        private final String job;
        private final String location;
        private final List<String> streams;
        private final long chunksPerStream;
        private final int fixedSize;
        private final Transport transport;

        Generator(
                String job,
                String location,
                List<String> streams,
                long chunksPerStream,
                int fixedSize,
                Transport transport) {
            this.job = job;
            this.location = location;
            this.streams = List.copyOf(streams);
            this.chunksPerStream = chunksPerStream;
            this.fixedSize = fixedSize;
            this.transport = transport;
        }

        @Override
        public Chunk map(Long i) {
            String stream = streams.get((int) (i % streams.size()));
            long seq = i / streams.size();
            return new Chunk(
                    job,
                    stream,
                    location,
                    seq,
                    seq == chunksPerStream - 1,
                    payload(stream, seq, size(seq, fixedSize)),
                    transport);
        }
    }

    /** Chunk sizes: fixed, or varying with seq (0: 1000 to 2499 bytes). */
    static int size(long seq, int fixedSize) {
        return fixedSize > 0 ? fixedSize : 1000 + (int) (seq * 37 % 1500);
    }

    private static JobClient startJob(
            String job,
            String location,
            List<String> streams,
            long chunksPerStream,
            int fixedSize,
            Transport transport,
            SluiceSink sink)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        env.fromSequence(0, chunksPerStream * streams.size() - 1)
                .map(new Generator(job, location, streams, chunksPerStream, fixedSize, transport))
                .returns(TypeInformation.of(Chunk.class))
                .sinkTo(sink);
        return env.executeAsync("sluice-sink-" + job);
    }

    private static SluiceSinkBuilder sink(String progressTopic) {
        return SluiceSink.builder()
                .setBootstrapServers(KAFKA.bootstrapServers())
                .setProgressTopic(progressTopic);
    }

    private static StreamReader openReader(
            String job, String stream, String topic, String progressTopic) throws IOException {
        return StreamReader.builder(brokerd, job, stream)
                .topic(topic)
                .partitions(PARTITIONS)
                .slots(8, 64 * 1024)
                .bootstrapServers(KAFKA.bootstrapServers())
                .progressTopic(progressTopic)
                .progressInterval(Duration.ofMillis(20))
                .open();
    }

    /** What a reader got: seqs in order, and a checksum of the payloads in that order. */
    private record Read(List<Long> seqs, long crc, boolean endSeen) {}

    /**
     * Reads {@code count} chunks (or to the end), checking each payload in place against the
     * generator's; returns the seqs.
     */
    private static List<Long> read(StreamReader reader, int count, int fixedSize, CRC32 crc)
            throws IOException {
        List<Long> seqs = new ArrayList<>();
        Await.until(
                () -> reader.stream() + " ends or " + count + " chunks come; got " + seqs.size(),
                WAIT,
                () -> {
                    if (seqs.size() >= count || reader.isEndOfStream()) {
                        return true;
                    }
                    try (StreamChunk chunk = reader.acquire(Duration.ofMillis(200))) {
                        if (chunk == null) {
                            return false;
                        }
                        ByteBuffer view = chunk.payload();
                        byte[] bytes = new byte[view.remaining()];
                        view.get(bytes);
                        assertThat(bytes)
                                .as("payload of %s #%d", reader.stream(), chunk.seq())
                                .isEqualTo(
                                        payload(
                                                reader.stream(),
                                                chunk.seq(),
                                                size(chunk.seq(), fixedSize)));
                        crc.update(bytes);
                        seqs.add(chunk.seq());
                    }
                    return false;
                });
        return seqs;
    }

    private static long expectedCrc(String stream, long chunks, int fixedSize) {
        CRC32 crc = new CRC32();
        for (long seq = 0; seq < chunks; seq++) {
            crc.update(payload(stream, seq, size(seq, fixedSize)));
        }
        return crc.getValue();
    }

    private static List<Long> range(long chunks) {
        return LongStream.range(0, chunks).boxed().toList();
    }

    @Test
    void twoStreamsArriveCompleteInOrderAndOnceAtTheirReaders() throws Exception {
        String location = uniqueName("printer");
        String topic = ChunkTopics.forOutputLocation(location);
        KAFKA.broker().createTopic(topic, PARTITIONS);
        String progressTopic = KAFKA.createTopic(1);
        String job = uniqueName("job");
        List<String> streams = List.of("cyan", "magenta");
        int chunks = 150;

        // A cap of 64 KiB per stream (32 KiB per writer), well below a stream's ~260 KB: the
        // writers wait for the readers' progress again and again on the way.
        SluiceSink sink = sink(progressTopic).setInFlightBytesPerStream(64 * 1024).build();
        writeAndReadCompletely(
                job, location, streams, chunks, Transport.KAFKA, sink, progressTopic);

        // On the topic: the format's headers, and each chunk on the partition the rule gives.
        Set<String> seen = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> record : readAll(topic)) {
            Map<String, String> headers = new HashMap<>();
            for (Header header : record.headers()) {
                assertThat(
                                headers.put(
                                        header.key(),
                                        new String(header.value(), StandardCharsets.UTF_8)))
                        .as("header %s once", header.key())
                        .isNull();
            }
            String stream = headers.get("sluice.stream");
            long seq = Long.parseLong(headers.get("sluice.seq"));
            assertThat(headers.get("sluice.job")).isEqualTo(job);
            assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo(stream);
            assertThat(headers.get("sluice.eos")).isEqualTo(seq == chunks - 1 ? "true" : null);
            assertThat(record.partition())
                    .as("%s #%d", stream, seq)
                    .isEqualTo(
                            (ChunkRecords.homePartition(job, stream, PARTITIONS) + seq)
                                    % PARTITIONS);
            seen.add(stream + "#" + seq);
        }
        assertThat(seen).hasSize(streams.size() * chunks);
    }

    @Test
    void aStoppedReaderStopsGenerationWithinTheCapAndOnceItReadsOnEverythingArrives()
            throws Exception {
        String location = uniqueName("printer");
        String topic = ChunkTopics.forOutputLocation(location);
        KAFKA.broker().createTopic(topic, PARTITIONS);
        String progressTopic = KAFKA.createTopic(1);
        String job = uniqueName("job");
        int chunks = 200;
        int chunkSize = 2048;
        long cap = 32 * 1024;
        int readFirst = 20;
        // Each of the 2 writers may hold cap / 2 = 8 chunks of the stream: the reader's 20, then
        // 8 more from the writer of seqs 0-99, 8 from the writer of seqs 100-199 (whose chunks
        // the reader cannot get to) and nothing else.
        long stopsAt = readFirst + cap / chunkSize;
        long bound = readFirst + (cap + PARALLELISM * chunkSize) / chunkSize;

        try (StreamReader reader = openReader(job, "black", topic, progressTopic);
                Admin admin = Admin.create(KAFKA.broker().clientProperties())) {
            LongSupplier written = () -> recordsIn(admin, topic);
            SluiceSink sink = sink(progressTopic).setInFlightBytesPerStream(cap).build();
            JobClient client =
                    startJob(
                            job,
                            location,
                            List.of("black"),
                            chunks,
                            chunkSize,
                            Transport.KAFKA,
                            sink);
            JobID jobId = client.getJobID();

            CRC32 crc = new CRC32();
            List<Long> seqs = read(reader, readFirst, chunkSize, crc);
            assertThat(seqs).isEqualTo(range(readFirst));

            // The reader stops acquiring. Generation goes on until each writer holds its part of
            // the cap, and never past the bound on the way.
            Await.until(
                    () ->
                            "generation stops at "
                                    + stopsAt
                                    + " chunks with 2 writers waiting; "
                                    + written.getAsLong()
                                    + " on the topic, "
                                    + sumGauge(jobId, "streamsWaiting")
                                    + " writers waiting",
                    WAIT,
                    () -> {
                        assertThat(written.getAsLong())
                                .as("chunks on the topic")
                                .isLessThanOrEqualTo(bound);
                        return written.getAsLong() == stopsAt
                                && sumGauge(jobId, "streamsWaiting") == 2;
                    });
            assertThat(sumGauge(jobId, "bytesInFlight")).isEqualTo(cap);
            assertThat(sumGauge(jobId, "inFlightShareBytes")).isEqualTo(cap);
            // And it stays stopped: 50 progress intervals of the reader, nothing more written.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (System.nanoTime() - until < 0) {
                assertThat(written.getAsLong()).isEqualTo(stopsAt);
                TimeUnit.MILLISECONDS.sleep(50);
            }
            assertThat(sumGauge(jobId, "streamsWaiting")).isEqualTo(2);
            assertThat(sumGauge(jobId, "timeWaitedMs")).isGreaterThanOrEqualTo(1000);

            // The reader reads on: every chunk, in order, nothing lost.
            seqs.addAll(read(reader, Integer.MAX_VALUE, chunkSize, crc));
            assertThat(seqs).isEqualTo(range(chunks));
            assertThat(crc.getValue()).isEqualTo(expectedCrc("black", chunks, chunkSize));
            assertThat(reader.isEndOfStream()).isTrue();
            client.getJobExecutionResult().get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(written.getAsLong()).isEqualTo(chunks);
        }
    }

    @Test
    void localChunksArriveCompleteInOrderAndOnceWithNothingOnTheTopic() throws Exception {
        String location = uniqueName("printer");
        String topic = ChunkTopics.forOutputLocation(location);
        KAFKA.broker().createTopic(topic, PARTITIONS);
        String progressTopic = KAFKA.createTopic(1);
        String job = uniqueName("job");
        List<String> streams = List.of("cyan", "magenta");
        int chunks = 150;

        // The same cap as through Kafka: the writers wait for the readers' progress on the way,
        // and the daemon holds the producer segments' slots while a reader is behind.
        SluiceSink sink =
                sink(progressTopic)
                        .setInFlightBytesPerStream(64 * 1024)
                        .setBrokerdSocket(BROKERD.socket())
                        .build();
        JobID jobId =
                writeAndReadCompletely(
                        job, location, streams, chunks, Transport.LOCAL, sink, progressTopic);

        // Nothing went through Kafka.
        try (Admin admin = Admin.create(KAFKA.broker().clientProperties())) {
            assertThat(recordsIn(admin, topic)).isZero();
        }
        assertThat(sumCounter(jobId, "localChunksSent")).isEqualTo(streams.size() * chunks);
        long bytes = 0;
        for (long seq = 0; seq < chunks; seq++) {
            bytes += size(seq, 0);
        }
        assertThat(sumCounter(jobId, "localBytesSent")).isEqualTo(streams.size() * bytes);
        // The same bytes under the output location's variable, as a reporter labels them.
        assertThat(sumCounter(jobId, "output_location\\." + location + "\\.bytesSent"))
                .isEqualTo(streams.size() * bytes);
        assertThat(sumCounter(jobId, "localChunksToKafka")).isZero();
        assertThat(sumCounter(jobId, "localChannelLosses")).isZero();
    }

    /**
     * Runs a job of {@code streams} × {@code chunks} chunks of varying sizes into {@code sink}
     * while a {@link StreamReader} per stream reads it: every stream arrives complete, in order and
     * once, payloads checked. Returns the job's id once it finished.
     */
    private static JobID writeAndReadCompletely(
            String job,
            String location,
            List<String> streams,
            int chunks,
            Transport transport,
            SluiceSink sink,
            String progressTopic)
            throws Exception {
        String topic = ChunkTopics.forOutputLocation(location);
        ExecutorService readers = Executors.newFixedThreadPool(streams.size());
        try {
            Map<String, Future<Read>> reads = new HashMap<>();
            for (String stream : streams) {
                reads.put(
                        stream,
                        readers.submit(
                                () -> {
                                    try (StreamReader reader =
                                            openReader(job, stream, topic, progressTopic)) {
                                        CRC32 crc = new CRC32();
                                        List<Long> seqs = read(reader, Integer.MAX_VALUE, 0, crc);
                                        return new Read(
                                                seqs, crc.getValue(), reader.isEndOfStream());
                                    }
                                }));
            }
            JobClient client = startJob(job, location, streams, chunks, 0, transport, sink);
            client.getJobExecutionResult().get(WAIT.toSeconds(), TimeUnit.SECONDS);

            for (String stream : streams) {
                Read read = reads.get(stream).get(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertThat(read.seqs()).as(stream).isEqualTo(range(chunks));
                assertThat(read.crc()).as(stream).isEqualTo(expectedCrc(stream, chunks, 0));
                assertThat(read.endSeen()).as(stream).isTrue();
            }
            return client.getJobID();
        } finally {
            readers.shutdownNow();
        }
    }

    /** A sink counter summed over the job's writers. */
    private static long sumCounter(JobID job, String name) {
        long sum = 0;
        for (Metric metric : METRICS.findMetrics(job, ".*sluice\\." + name).values()) {
            sum += ((Counter) metric).getCount();
        }
        return sum;
    }

    /** Records on the topic: the sum of its partitions' end offsets. */
    private static long recordsIn(Admin admin, String topic) {
        Map<TopicPartition, OffsetSpec> latest =
                IntStream.range(0, PARTITIONS)
                        .boxed()
                        .collect(
                                Collectors.toMap(
                                        p -> new TopicPartition(topic, p),
                                        p -> OffsetSpec.latest()));
        try {
            return admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS).values().stream()
                    .mapToLong(info -> info.offset())
                    .sum();
        } catch (Exception e) {
            throw new AssertionError("end offsets of " + topic, e);
        }
    }

    /** A sink gauge summed over the job's writers; 0 before they registered it. */
    private static long sumGauge(JobID job, String name) {
        long sum = 0;
        for (Metric metric : METRICS.findMetrics(job, ".*sluice\\." + name).values()) {
            sum += ((Number) ((Gauge<?>) metric).getValue()).longValue();
        }
        return sum;
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(String topic) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(
                        KAFKA.broker().clientProperties(),
                        new ByteArrayDeserializer(),
                        new ByteArrayDeserializer())) {
            List<TopicPartition> partitions =
                    IntStream.range(0, PARTITIONS)
                            .mapToObj(p -> new TopicPartition(topic, p))
                            .toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            Await.until(
                    topic + " is read to its end",
                    WAIT,
                    () -> {
                        if (partitions.stream().allMatch(p -> consumer.position(p) >= end.get(p))) {
                            return true;
                        }
                        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                        return false;
                    });
        }
        return records;
    }
}
