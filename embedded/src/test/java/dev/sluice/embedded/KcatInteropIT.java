package dev.sluice.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** kcat, a Kafka client nobody here wrote, and the Java client read each other's records. */
class KcatInteropIT {

    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    @TempDir Path tmp;

    @Test
    void javaReadsWhatKcatProducedWithKeysAndChunkHeaders() throws Exception {
        String topic = KAFKA.createTopic(1);
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            lines.add("key-" + i + "\tchunk-" + i);
        }
        Path input = Files.write(tmp.resolve("input.txt"), lines);

        Run run =
                kcat(
                        input,
                        "-P",
                        "-b",
                        KAFKA.bootstrapServers(),
                        "-t",
                        topic,
                        "-K",
                        "\t",
                        "-H",
                        "sluice.job=job-1",
                        "-H",
                        "sluice.stream=cyan");

        assertThat(run.exitCode).as(run.stderr).isZero();
        List<ConsumerRecord<String, String>> read = Clients.consume(KAFKA.broker(), topic, 500);
        assertThat(read).hasSize(500);
        for (int i = 0; i < 500; i++) {
            ConsumerRecord<String, String> record = read.get(i);
            assertThat(record.key()).isEqualTo("key-" + i);
            assertThat(record.value()).isEqualTo("chunk-" + i);
            assertThat(header(record, "sluice.job")).isEqualTo("job-1");
            assertThat(header(record, "sluice.stream")).isEqualTo("cyan");
        }
    }

    @Test
    void kcatReadsWhatJavaProduced() throws Exception {
        String topic = KAFKA.createTopic(1);
        List<String> expected = new ArrayList<>();
        try (KafkaProducer<String, String> producer = Clients.producer(KAFKA.broker())) {
            for (int i = 0; i < 500; i++) {
                expected.add("k" + i + "=v" + i);
                producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
            }
        }

        Run run =
                kcat(
                        null,
                        "-C",
                        "-b",
                        KAFKA.bootstrapServers(),
                        "-t",
                        topic,
                        "-o",
                        "beginning",
                        "-c",
                        "500",
                        "-e",
                        "-f",
                        "%k=%s\\n");

        assertThat(run.exitCode).as(run.stderr).isZero();
        assertThat(run.stdout.lines().toList()).isEqualTo(expected);
    }

    private static String header(ConsumerRecord<?, ?> record, String key) {
        Header header = record.headers().lastHeader(key);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    private record Run(int exitCode, String stdout, String stderr) {}

    private Run kcat(Path stdin, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("kcat");
        command.addAll(List.of(args));
        Path out = tmp.resolve("kcat.out");
        Path err = tmp.resolve("kcat.err");
        ProcessBuilder builder =
                new ProcessBuilder(command)
                        .redirectOutput(out.toFile())
                        .redirectError(err.toFile());
        if (stdin != null) {
            builder.redirectInput(stdin.toFile());
        }
        Process process = builder.start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("kcat did not finish within 60 s: " + Files.readString(err));
        }
        return new Run(process.exitValue(), Files.readString(out), Files.readString(err));
    }
}
