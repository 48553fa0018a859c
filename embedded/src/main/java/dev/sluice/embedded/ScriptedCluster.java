package dev.sluice.embedded;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A real Kafka broker and a real {@code sluice-brokerd} for the tests and benchmarks of readers in
 * other languages (python/), driven over stdin and stopped by its end.
 *
 * <p>{@code ScriptedCluster --brokerd BINARY [-X key=value]...} prints {@code
 * bootstrap.servers=HOST:PORT} and {@code socket=PATH}, then {@code ready}, and answers each line
 * of stdin with {@code ok} or {@code error: ...}:
 *
 * <ul>
 *   <li>{@code topic NAME PARTITIONS}: creates the topic;
 *   <li>{@code records TOPIC PARTITION COUNT SIZE}: record {@code i} with key {@code k<i>} and a
 *       value of {@code SIZE} bytes {@code 'a' + (i + j) % 26};
 *   <li>{@code chunks TOPIC JOB STREAM COUNT SIZE PARTITIONS [skip=SEQ|only=SEQ]}: the chunk
 *       records of a stream (docs/formats.md, "Chunk record"), {@code seq} 0 to {@code COUNT - 1}
 *       on partition {@code seq % PARTITIONS}, the payload as a record's value, {@code sluice.eos}
 *       on the last; all of them, all but one (a hole), or only that one.
 * </ul>
 */
public final class ScriptedCluster {
    private ScriptedCluster() {}

    public static void main(String[] args) throws Exception {
        Path brokerd = null;
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--brokerd" -> brokerd = Path.of(args[i + 1]);
                case "-X" -> {
                    String[] setting = args[i + 1].split("=", 2);
                    settings.put(setting[0], setting.length > 1 ? setting[1] : "");
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (brokerd == null) {
            throw new IllegalArgumentException(
                    "usage: ScriptedCluster --brokerd BINARY [-X key=value]...");
        }
        Path dir = Files.createTempDirectory("sluice-scripted-");
        // Chunks of 1 MiB and their headers are above Kafka's default message.max.bytes.
        try (KafkaBroker kafka =
                        KafkaBroker.builder()
                                .brokerProperty("message.max.bytes", String.valueOf(8 << 20))
                                .build();
                BrokerdProcess daemon =
                        BrokerdProcess.start(
                                brokerd,
                                kafka.bootstrapServers(),
                                dir.resolve("brokerd.sock"),
                                settings);
                KafkaProducer<byte[], byte[]> producer = producer(kafka)) {
            System.out.println("bootstrap.servers=" + kafka.bootstrapServers());
            System.out.println("socket=" + daemon.socket());
            System.out.println("log=" + daemon.logFile());
            System.out.println("ready");
            System.out.flush();
            BufferedReader lines =
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = lines.readLine()) != null; ) {
                try {
                    run(line.trim().split("\\s+"), kafka, producer);
                    System.out.println("ok");
                } catch (Exception e) {
                    System.out.println("error: " + e);
                }
                System.out.flush();
            }
        } finally {
            Directories.deleteRecursively(dir);
        }
    }

    private static void run(String[] words, KafkaBroker kafka, KafkaProducer<byte[], byte[]> out)
            throws Exception {
        switch (words[0]) {
            case "topic" -> kafka.createTopic(words[1], Integer.parseInt(words[2]));
            case "records" -> {
                int partition = Integer.parseInt(words[2]);
                long count = Long.parseLong(words[3]);
                int size = Integer.parseInt(words[4]);
                List<Future<?>> sent = new ArrayList<>();
                for (long i = 0; i < count; i++) {
                    byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
                    sent.add(
                            out.send(
                                    new ProducerRecord<>(
                                            words[1], partition, key, value(i, size))));
                }
                awaitAll(out, sent);
            }
            case "chunks" -> {
                long count = Long.parseLong(words[4]);
                int size = Integer.parseInt(words[5]);
                int partitions = Integer.parseInt(words[6]);
                String[] which = words.length > 7 ? words[7].split("=", 2) : new String[] {"all"};
                List<Future<?>> sent = new ArrayList<>();
                for (long seq = 0; seq < count; seq++) {
                    boolean named = which.length == 2 && Long.parseLong(which[1]) == seq;
                    if (which[0].equals("skip") && named || which[0].equals("only") && !named) {
                        continue;
                    }
                    ProducerRecord<byte[], byte[]> chunk =
                            new ProducerRecord<>(
                                    words[1],
                                    (int) (seq % partitions),
                                    words[3].getBytes(StandardCharsets.UTF_8),
                                    value(seq, size));
                    chunk.headers().add("sluice.job", words[2].getBytes(StandardCharsets.UTF_8));
                    chunk.headers().add("sluice.stream", words[3].getBytes(StandardCharsets.UTF_8));
                    chunk.headers()
                            .add(
                                    "sluice.seq",
                                    Long.toString(seq).getBytes(StandardCharsets.US_ASCII));
                    if (seq == count - 1) {
                        chunk.headers()
                                .add("sluice.eos", "true".getBytes(StandardCharsets.US_ASCII));
                    }
                    sent.add(out.send(chunk));
                }
                awaitAll(out, sent);
            }
            default -> throw new IllegalArgumentException("unknown command " + words[0]);
        }
    }

    private static void awaitAll(KafkaProducer<byte[], byte[]> out, List<Future<?>> sent)
            throws Exception {
        out.flush();
        for (Future<?> future : sent) {
            future.get();
        }
    }

    /** The value rule of the shared test content (python/tests/content.py, TestContent). */
    static byte[] value(long i, int size) {
        byte[] bytes = new byte[size];
        for (int j = 0; j < size; j++) {
            bytes[j] = (byte) ('a' + (i + j) % 26);
        }
        return bytes;
    }

    private static KafkaProducer<byte[], byte[]> producer(KafkaBroker kafka) {
        Properties properties = kafka.clientProperties();
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        properties.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        properties.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        properties.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 8 << 20);
        properties.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 256L << 20);
        return new KafkaProducer<>(properties);
    }
}
