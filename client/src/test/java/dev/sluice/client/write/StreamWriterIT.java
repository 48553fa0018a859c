package dev.sluice.client.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.DeliveryProgressCodec;
import dev.sluice.client.read.StreamChunk;
import dev.sluice.client.read.StreamReader;
import dev.sluice.client.read.StreamReaderBuilder;
import dev.sluice.client.read.StreamSilentException;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link StreamWriter} against the real broker and a real {@code sluice-brokerd}, read back by
 * {@link StreamReader}s: every byte of one writer's stream, and of a stream three writers write in
 * shares at once, arrives in order with its end; a reader that stops holding its chunks stops the
 * writer at its in-flight bound until it reads on; wrong use is refused naming what is wrong.
 */
class StreamWriterIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    private static final int PARTITIONS = 3;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final AtomicInteger NAMES = new AtomicInteger();

    private static BrokerdClient brokerd;
    private static String progressTopic;

    @BeforeAll
    static void connect() {
        brokerd = BrokerdClient.builder(BROKERD.socket()).build();
        progressTopic = KAFKA.createTopic(1);
    }

    /** The byte at {@code offset} of every stream here: any byte out of place shows. */
    private static byte content(long offset) {
        return (byte) (offset * 131 ^ offset >>> 9);
    }

    private static byte[] content(long from, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = content(from + i);
        }
        return bytes;
    }

    private static String unique(String prefix) {
        return prefix + "-" + NAMES.incrementAndGet() + "-" + ProcessHandle.current().pid();
    }

    private static StreamWriterBuilder unbounded(String job, String topic) {
        return StreamWriter.builder(KAFKA.bootstrapServers(), job, "cyan")
                .topic(topic)
                .chunkSize(4096)
                .progressTopic(progressTopic);
    }

    private static StreamReaderBuilder reader(StreamReaderBuilder builder) {
        return builder.bootstrapServers(KAFKA.bootstrapServers())
                .progressTopic(progressTopic)
                .progressInterval(Duration.ofMillis(50));
    }

    /** What a reader got: the seqs, the bytes (checked in place), and whether the end came. */
    private record Read(List<Long> seqs, List<Integer> sizes, long bytes, boolean ended) {}

    /**
     * Reads {@code count} chunks, or to the end, checking that the stream continues at {@code
     * offset} with {@link #content}.
     */
    private static Read read(StreamReader reader, long offset, int count) throws IOException {
        List<Long> seqs = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        Await.until(
                () -> reader.stream() + " ends or " + count + " chunks come; got " + seqs,
                WAIT,
                () -> {
                    if (seqs.size() >= count || reader.isEndOfStream()) {
                        return true;
                    }
                    try (StreamChunk chunk = reader.acquire(Duration.ofMillis(500))) {
                        if (chunk != null) {
                            long at = offset + sum(sizes);
                            byte[] bytes = chunk.copyPayload();
                            assertThat(bytes)
                                    .as("chunk %d at stream offset %d", chunk.seq(), at)
                                    .isEqualTo(content(at, bytes.length));
                            seqs.add(chunk.seq());
                            sizes.add(bytes.length);
                        }
                    }
                    return false;
                });
        return new Read(seqs, sizes, sum(sizes), reader.isEndOfStream());
    }

    private static long sum(List<Integer> sizes) {
        return sizes.stream().mapToLong(Integer::longValue).sum();
    }

    private static List<Long> seqs(long from, long to) {
        return LongStream.range(from, to).boxed().toList();
    }

    @Test
    void oneWritersBytesArriveEveryOneInOrderWithTheEnd() throws Exception {
        String job = unique("job");
        String topic = KAFKA.createTopic(PARTITIONS);
        // Pieces of every size around the chunk's, through both kinds of publish.
        Random random = new Random(7);
        long written = 0;
        try (StreamWriter writer = unbounded(job, topic).open()) {
            for (int i = 0; i < 60; i++) {
                int length = random.nextInt(3 * 4096);
                if (i % 2 == 0) {
                    writer.publish(content(written, length));
                } else {
                    ByteBuffer buffer = ByteBuffer.allocateDirect(length + 3);
                    buffer.position(3);
                    buffer.put(content(written, length)).position(3);
                    writer.publish(buffer);
                    assertThat(buffer.hasRemaining()).isFalse();
                }
                written += length;
            }
            assertThat(writer.bytesWritten()).isEqualTo(written);
        }
        long chunks = (written + 4095) / 4096;
        try (StreamReader reader =
                reader(StreamReader.builder(brokerd, job, "cyan").topic(topic)).open()) {
            Read read = read(reader, 0, Integer.MAX_VALUE);
            assertThat(read.ended()).isTrue();
            assertThat(read.bytes()).isEqualTo(written);
            assertThat(read.seqs()).isEqualTo(seqs(0, chunks));
            // Every chunk full but the last, which the close ended.
            assertThat(read.sizes().subList(0, (int) chunks - 1)).containsOnly(4096);
        }
    }

    @Test
    void threeWritersOfOneStreamEachWriteTheirShareAndTheReaderGetsEveryByteInOrder()
            throws Exception {
        String location = unique("printer");
        KAFKA.broker().createTopic("sluice.chunks." + location, PARTITIONS);
        long taskBytes = 8192;
        long streamBytes = 100_000;
        JobSpec spec =
                new JobSpec(
                        unique("job"),
                        List.of("file:///srv/in.tiff"),
                        new GeneratorSpec("com.example.Gen", Map.of()),
                        taskBytes,
                        List.of(
                                new StreamSpec(
                                        "cyan",
                                        location,
                                        new SplitRule.Channel("c"),
                                        streamBytes,
                                        OptionalLong.empty(),
                                        1024)));
        ExecutorService threads = Executors.newFixedThreadPool(3);
        try (StreamReader reader = reader(StreamReader.builder(brokerd, spec, "cyan")).open()) {
            List<Future<Long>> writers = new ArrayList<>();
            for (int index = 0; index < 3; index++) {
                int share = index;
                writers.add(
                        threads.submit(() -> writeShare(spec, share, 3, taskBytes, streamBytes)));
            }
            Read read = read(reader, 0, Integer.MAX_VALUE);
            long written = 0;
            for (Future<Long> writer : writers) {
                written += writer.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            assertThat(written).isEqualTo(streamBytes);
            assertThat(read.ended()).isTrue();
            assertThat(read.bytes()).isEqualTo(streamBytes);
            // 12 tasks of 8 chunks, then the last task's 1,696 bytes in 2.
            assertThat(read.seqs()).isEqualTo(seqs(0, 12 * 8 + 2));
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * Writer {@code index} of {@code count}: the tasks {@code t % count == index}, their stream
     * offsets computed here, in pieces of odd sizes under a bound of two tasks in flight.
     */
    private static long writeShare(JobSpec spec, int index, int count, long taskBytes, long size)
            throws Exception {
        Random random = new Random(index);
        long written = 0;
        try (StreamWriter writer =
                StreamWriter.forJob(KAFKA.bootstrapServers(), spec, "cyan")
                        .share(index, count)
                        .inFlightBytes(2 * taskBytes)
                        .progressTopic(progressTopic)
                        .open()) {
            for (long task = index; task * taskBytes < size; task += count) {
                long from = task * taskBytes;
                long end = Math.min(size, from + taskBytes);
                while (from < end) {
                    int length = (int) Math.min(end - from, 1 + random.nextInt(3000));
                    writer.publish(content(from, length));
                    from += length;
                    written += length;
                }
            }
            assertThat(writer.shareBytes()).isEqualTo(written);
        }
        return written;
    }

    @Test
    void aReaderThatStopsStopsTheWriterAtItsBoundUntilItReadsOn() throws Exception {
        String job = unique("job");
        String topic = KAFKA.createTopic(PARTITIONS);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try (StreamReader reader =
                        reader(StreamReader.builder(brokerd, job, "cyan").topic(topic)).open();
                StreamWriter writer = unbounded(job, topic).inFlightBytes(4 * 4096).open()) {
            // Four chunks go, the fifth (one byte so far) waits for more or the close.
            writer.publish(content(0, 4 * 4096 + 1));
            assertThat(writer.bytesInFlight()).isEqualTo(4 * 4096);
            awaitRecords(topic, 4);

            // The reader holds nothing and reads nothing: no room for the fifth chunk.
            long start = System.nanoTime();
            assertThat(writer.publish(content(4 * 4096 + 1, 4096), Duration.ofMillis(300)))
                    .isFalse();
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(300_000_000L);
            assertThat(writer.bytesWritten()).as("nothing taken").isEqualTo(4 * 4096 + 1);

            Future<?> blocked =
                    thread.submit(
                            () -> {
                                writer.publish(content(4 * 4096 + 1, 4096));
                                return null;
                            });
            assertThatThrownBy(() -> blocked.get(500, TimeUnit.MILLISECONDS))
                    .isInstanceOf(TimeoutException.class);
            assertThat(KAFKA.broker().records(topic)).as("nothing sent while blocked").isEqualTo(4);
            // What the writer logs after waiting 10 s: whom it waits for.
            assertThat(writer.roomWait(TimeUnit.SECONDS.toNanos(10)))
                    .startsWith("stream " + job + "/cyan has waited 10 s to send chunk #4: ")
                    .contains("16384 bytes of it are in flight, its bound is 16384")
                    .contains(
                            "nothing of it has been reported delivered on the progress topic "
                                    + progressTopic);

            // The reader reads on: its progress frees the first chunks, the publish goes.
            Read first = read(reader, 0, 2);
            assertThat(first.seqs()).containsExactly(0L, 1L);
            blocked.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            awaitRecords(topic, 5);
            writer.close();

            Read rest = read(reader, first.bytes(), Integer.MAX_VALUE);
            assertThat(rest.ended()).isTrue();
            assertThat(rest.seqs()).containsExactly(2L, 3L, 4L, 5L);
            assertThat(first.bytes() + rest.bytes()).isEqualTo(5 * 4096 + 1);
        } finally {
            thread.shutdownNow();
        }
    }

    @Test
    void aWriterThatGoesSilentMidStreamIsToldToItsReaderAfterTheSilenceTimeout() throws Exception {
        String job = unique("job");
        String topic = KAFKA.createTopic(PARTITIONS);
        StreamWriter writer = unbounded(job, topic).open();
        try (StreamReader reader =
                reader(StreamReader.builder(brokerd, job, "cyan").topic(topic))
                        .silenceTimeout(Duration.ofSeconds(1))
                        .open()) {
            // Three chunks go out; the writer holds the last byte, which may end the stream.
            writer.publish(content(0, 3 * 4096 + 1));
            assertThat(read(reader, 0, 3).seqs()).containsExactly(0L, 1L, 2L);
            // The writer stops as a killed one would: no end, no later chunk to report a gap by.
            assertThatThrownBy(() -> reader.acquire(WAIT))
                    .isInstanceOfSatisfying(
                            StreamSilentException.class, e -> assertThat(e.nextSeq()).isEqualTo(3))
                    .hasMessageContaining("waiting for chunk 3: its writer may be gone");
        } finally {
            writer.close();
        }
    }

    @Test
    void anEmptyStreamEndsWithAnEmptyChunk() throws Exception {
        String job = unique("job");
        String topic = KAFKA.createTopic(PARTITIONS);
        unbounded(job, topic).open().close();
        try (StreamReader reader =
                reader(StreamReader.builder(brokerd, job, "cyan").topic(topic)).open()) {
            Read read = read(reader, 0, Integer.MAX_VALUE);
            assertThat(read.ended()).isTrue();
            assertThat(read.seqs()).containsExactly(0L);
            assertThat(read.bytes()).isZero();
        }
    }

    @Test
    void readersOneJobAfterTheOtherPublishTheirEndsThroughTheApplicationsProducer()
            throws Exception {
        List<String> jobs = List.of(unique("job"), unique("job"));
        String topic = KAFKA.createTopic(PARTITIONS);
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
        try (KafkaProducer<byte[], byte[]> shared =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (String job : jobs) {
                try (StreamWriter writer = unbounded(job, topic).open()) {
                    writer.publish(content(0, 5000));
                }
                try (StreamReader reader =
                        StreamReader.builder(brokerd, job, "cyan")
                                .topic(topic)
                                .progressProducer(shared)
                                .progressTopic(progressTopic)
                                .open()) {
                    assertThat(read(reader, 0, Integer.MAX_VALUE).bytes()).isEqualTo(5000);
                }
            }
            // Still the application's after both readers closed.
            shared.send(new ProducerRecord<>(topic, new byte[1])).get();
        }
        Set<String> ended = new HashSet<>();
        try (KafkaConsumer<byte[], byte[]> progress =
                new KafkaConsumer<>(
                        Map.of(
                                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                                KAFKA.bootstrapServers(),
                                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                                "earliest"),
                        new ByteArrayDeserializer(),
                        new ByteArrayDeserializer())) {
            progress.assign(List.of(new TopicPartition(progressTopic, 0)));
            Await.until(
                    () -> "the ends of " + jobs + " on " + progressTopic + "; got " + ended,
                    WAIT,
                    () -> {
                        for (var record : progress.poll(Duration.ofMillis(200))) {
                            DeliveryProgress read =
                                    DeliveryProgressCodec.decode(record.key(), record.value());
                            if (read.endOfStream() && jobs.contains(read.job())) {
                                ended.add(read.job());
                            }
                        }
                        return ended.containsAll(jobs);
                    });
        }
    }

    @Test
    void aClosedWriterRefusesMoreNamingTheStream() throws Exception {
        String job = unique("job");
        StreamWriter writer = unbounded(job, KAFKA.createTopic(1)).open();
        writer.publish(new byte[10]);
        writer.close();
        assertThat(writer.isClosed()).isTrue();
        assertThatThrownBy(() -> writer.publish(new byte[1]))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("stream " + job + "/cyan is closed");
        assertThatThrownBy(() -> writer.publish(new byte[1], Duration.ZERO))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(writer::flush).isInstanceOf(IllegalStateException.class);
        // A second close does nothing.
        writer.close();
    }

    @Test
    void aChunkTheTopicRefusesFailsTheNextCallNamingIt() throws Exception {
        String job = unique("job");
        String topic = unique("small");
        try (Admin admin = Admin.create(KAFKA.broker().clientProperties())) {
            admin.createTopics(
                            List.of(
                                    new NewTopic(topic, 1, (short) 1)
                                            .configs(Map.of("max.message.bytes", "2000"))))
                    .all()
                    .get();
        }
        StreamWriter writer = unbounded(job, topic).open();
        // The first chunk goes once a byte follows it.
        writer.publish(new byte[4096 + 1]);
        assertThatThrownBy(writer::flush)
                .isInstanceOf(IOException.class)
                .hasMessageContaining("could not send chunk " + job + "/cyan#0 4096 B")
                .hasMessageContaining("max.message.bytes");
        assertThatThrownBy(() -> writer.publish(new byte[1]))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(job + "/cyan#0");
        assertThatThrownBy(writer::close).isInstanceOf(IOException.class);
        assertThat(writer.isClosed()).isTrue();
    }

    @Test
    void aShareWrittenBeyondOrShortOfItsSizeIsRefusedNamingTheBytes() throws Exception {
        String location = unique("printer");
        KAFKA.broker().createTopic("sluice.chunks." + location, 1);
        JobSpec spec =
                new JobSpec(
                        unique("job"),
                        List.of("file:///srv/in.tiff"),
                        new GeneratorSpec("com.example.Gen", Map.of()),
                        4096,
                        List.of(
                                new StreamSpec(
                                        "cyan",
                                        location,
                                        new SplitRule.Channel("c"),
                                        10_000,
                                        OptionalLong.empty(),
                                        1024)));
        // Tasks 0 and 2 (4,096 and 1,808 bytes) are share 0 of 2.
        StreamWriter writer =
                StreamWriter.forJob(KAFKA.bootstrapServers(), spec, "cyan")
                        .share(0, 2)
                        .progressTopic(progressTopic)
                        .open();
        assertThat(writer.shareBytes()).isEqualTo(4096 + 1808);
        assertThatThrownBy(() -> writer.publish(new byte[4096 + 1809]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("5905 more bytes after 0")
                .hasMessageContaining("share 0 of 2 of 5904 bytes");
        assertThat(writer.bytesWritten()).as("none taken").isZero();

        writer.publish(content(0, 4096 + 100));
        assertThatThrownBy(writer::close)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("share 0 of 2 is 5904 bytes, 4196 were written");
        // What was written was sent: task 0's four chunks and the part chunk of task 2.
        assertThat(KAFKA.broker().records("sluice.chunks." + location)).isEqualTo(5);
    }

    /** Waits until the topic holds {@code count} records, all partitions. */
    private static void awaitRecords(String topic, long count) {
        Await.until(
                () -> topic + " holds " + count + " records, not " + KAFKA.broker().records(topic),
                WAIT,
                () -> KAFKA.broker().records(topic) >= count);
    }
}
