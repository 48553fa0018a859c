package dev.sluice.examples.source;

import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.Directories;
import dev.sluice.embedded.KafkaBroker;
import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.source.SluiceSource;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * What the jobs of this package run on, real and on this host: a KRaft Kafka broker, {@code
 * sluice-brokerd} next to it, and a topic of text, one line per record, its lines dealt to the
 * partitions in turn. Closing it stops both and removes their files.
 */
public final class EmbeddedTextTopic implements AutoCloseable {
    public static final String TOPIC = "text";
    public static final int PARTITIONS = 4;

    /**
     * Two subtasks per operator: a shared records subscription serving more than one reader, on two
     * cores.
     */
    public static final int PARALLELISM = 2;

    private final Path work;
    private final KafkaBroker broker;
    private final BrokerdProcess daemon;

    private EmbeddedTextTopic(Path work, KafkaBroker broker, BrokerdProcess daemon) {
        this.work = work;
        this.broker = broker;
        this.daemon = daemon;
    }

    /** Starts the broker and the daemon ({@code brokerd}), and writes {@code lines}. */
    public static EmbeddedTextTopic start(Path brokerd, List<String> lines) throws Exception {
        if (!Files.isExecutable(brokerd)) {
            throw new IOException(
                    "no sluice-brokerd at " + brokerd + ": build it with ./sluice build");
        }
        Path work = Files.createTempDirectory("sluice-example-");
        KafkaBroker broker = null;
        try {
            broker = KafkaBroker.builder().workDir(work.resolve("kafka")).build();
            broker.createTopic(TOPIC, PARTITIONS);
            write(broker, lines);
            BrokerdProcess daemon =
                    BrokerdProcess.start(
                            brokerd,
                            broker.bootstrapServers(),
                            work.resolve("brokerd.sock"),
                            Map.of());
            return new EmbeddedTextTopic(work, broker, daemon);
        } catch (Exception e) {
            if (broker != null) {
                broker.close();
            }
            Directories.deleteRecursively(work);
            throw e;
        }
    }

    /** The lines of the sample text the runner writes, a dozen about a mill and its sluice. */
    public static List<String> sampleText() throws IOException {
        try (InputStream in = EmbeddedTextTopic.class.getResourceAsStream("sample.txt")) {
            if (in == null) {
                throw new IOException("sample.txt is missing from the class path");
            }
            return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))
                    .lines()
                    .toList();
        }
    }

    private static void write(KafkaBroker broker, List<String> lines) {
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(
                        broker.clientProperties(),
                        new ByteArraySerializer(),
                        new ByteArraySerializer())) {
            for (int i = 0; i < lines.size(); i++) {
                producer.send(
                        new ProducerRecord<>(
                                TOPIC,
                                i % PARTITIONS,
                                null,
                                lines.get(i).getBytes(StandardCharsets.UTF_8)));
            }
        }
    }

    /** A Flink MiniCluster of {@link #PARALLELISM} in this JVM, listening on loopback only. */
    public static StreamExecutionEnvironment miniCluster() {
        Configuration conf = new Configuration();
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.ADDRESS, "127.0.0.1");
        return StreamExecutionEnvironment.createLocalEnvironment(PARALLELISM, conf);
    }

    /**
     * The topic's values in {@code env}, read by a SluiceSource in {@code mode} from the earliest
     * offsets to the end offsets it finds when the job starts.
     */
    public DataStream<byte[]> values(StreamExecutionEnvironment env, ReadMode mode) {
        SluiceSource<byte[]> source =
                SluiceSource.<byte[]>builder()
                        .setBootstrapServers(broker.bootstrapServers())
                        .setTopics(TOPIC)
                        .setReadMode(mode)
                        .setBrokerdSocket(daemon.socket())
                        .setStartingOffsets(SluiceOffsets.earliest())
                        .setBounded(SluiceOffsets.latest())
                        .setDeserializer(new ValueBytes())
                        .build();
        return env.fromSource(source, WatermarkStrategy.noWatermarks(), "sluice: " + TOPIC);
    }

    @Override
    public void close() throws Exception {
        try (AutoCloseable files = () -> Directories.deleteRecursively(work);
                KafkaBroker kafka = broker;
                BrokerdProcess brokerd = daemon) {
            // Closed in reverse: the daemon, the broker, then their files.
        }
    }
}
