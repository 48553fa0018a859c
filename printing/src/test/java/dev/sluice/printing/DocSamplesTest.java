package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobSpecJson;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.embedded.junit.DocSamples;
import dev.sluice.flink.generation.ChunkGenerator;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.JobContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The samples of the project's pages hold against the code: every JSON job spec runs, stream by
 * stream, through the generator it names, and every Java sample compiles against the public API
 * (docs/formats.md, "Job spec"). A sample that names a class, a method or a parameter the code no
 * longer has fails here, not in a user's first hour.
 */
class DocSamplesTest {
    private static final Path ROOT = Path.of("..");

    /** What the Java samples use without importing it. */
    private static final String SAMPLE_IMPORTS =
            """
            import static org.apache.flink.api.common.eventtime.WatermarkStrategy.noWatermarks;
            import dev.sluice.client.brokerd.*;
            import dev.sluice.client.job.*;
            import dev.sluice.client.read.*;
            import dev.sluice.client.write.*;
            import dev.sluice.flink.generation.*;
            import dev.sluice.flink.sink.*;
            import dev.sluice.flink.source.*;
            import java.io.*;
            import java.nio.channels.WritableByteChannel;
            import java.nio.file.*;
            import java.time.Duration;
            import org.apache.flink.api.common.eventtime.WatermarkStrategy;
            import org.apache.flink.api.common.serialization.SimpleStringSchema;
            import org.apache.flink.streaming.api.datastream.DataStream;
            import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
            import org.slf4j.Logger;
            """;

    /**
     * What the samples use without declaring it, as fields: a sample may declare one of them too,
     * as the opening sample of docs/stream-reader.md does {@code brokerd}.
     */
    private static final String SAMPLE_CONTEXT =
            """
            static StreamExecutionEnvironment env;
            static SluiceSink sluiceSink;
            static BrokerdClient brokerd;
            static JobSpec jobSpec;
            static StreamReader reader;
            static WritableByteChannel printer;
            static OutputStream out;
            static Logger log;
            static Logger alerts;
            static int index;
            static byte[] render(long task) { return new byte[0]; }
            """;

    @Test
    void everyJobSpecRunsThroughItsGenerator(@TempDir Path dir) throws Exception {
        Path image = TestChart.write(dir);
        List<DocSamples.Sample> specs =
                DocSamples.of(ROOT, "json").stream()
                        .filter(s -> s.code().contains("\"generator\""))
                        .toList();
        assertThat(specs).as("job specs in the docs").isNotEmpty();

        for (DocSamples.Sample sample : specs) {
            JobSpec spec = JobSpecJson.parse(sample.code());
            // Its inputs are on an output node of the doc's; the test's image stands for them.
            String text = sample.code();
            for (String input : spec.inputs()) {
                text = text.replace(input, image.toUri().toString());
            }
            JobSpec runnable = JobSpecJson.parse(text);
            ChunkGenerator generator =
                    (ChunkGenerator)
                            Class.forName(runnable.generator().className())
                                    .getDeclaredConstructor()
                                    .newInstance();
            generator.preload(new JobContext(runnable, 0));
            for (StreamSpec stream : runnable.streams()) {
                long bytes = 0;
                int index = 0;
                for (long offset = 0; offset < stream.sizeBytes(); offset += spec.taskSizeBytes()) {
                    long length = Math.min(spec.taskSizeBytes(), stream.sizeBytes() - offset);
                    try (InputStream task =
                            generator.compute(
                                    new ComputeTask(
                                            runnable, stream.name(), index++, offset, length))) {
                        bytes += task.transferTo(OutputStream.nullOutputStream());
                    }
                }
                assertThat(bytes)
                        .as("%s: stream %s", sample.where(), stream.name())
                        .isEqualTo(stream.sizeBytes());
            }
            generator.close();
        }
    }

    @Test
    void everyJavaSampleCompilesAgainstThePublicApi() throws IOException {
        List<DocSamples.Sample> samples = DocSamples.of(ROOT, "java");
        assertThat(samples).as("Java samples in the docs").hasSizeGreaterThan(5);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        List<JavaFileObject> units = new ArrayList<>();
        for (int i = 0; i < samples.size(); i++) {
            units.add(unit("Sample" + i, samples.get(i)));
        }
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        StringWriter output = new StringWriter();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(null, null, null)) {
            boolean compiled =
                    compiler.getTask(
                                    output,
                                    files,
                                    diagnostics,
                                    List.of(
                                            "-proc:none",
                                            "-d",
                                            Files.createTempDirectory("doc-samples").toString(),
                                            "-classpath",
                                            System.getProperty(
                                                    "surefire.test.class.path",
                                                    System.getProperty("java.class.path"))),
                                    null,
                                    units)
                            .call();
            StringBuilder errors = new StringBuilder(output.toString());
            for (var d : diagnostics.getDiagnostics()) {
                SampleSource source = (SampleSource) d.getSource();
                errors.append(
                        String.format(
                                "%n%s, the sample that opens there: %s%n    at: %s",
                                source.sample.where(),
                                d.getMessage(null),
                                source.code
                                        .lines()
                                        .skip(d.getLineNumber() - 1)
                                        .findFirst()
                                        .orElse("")
                                        .strip()));
            }
            assertThat(compiled).as(errors.toString()).isTrue();
        }
    }

    /**
     * The sample as a compilation unit: its class declarations (from a line that opens one to the
     * line "}") as nested classes, the rest as the body of a method beside the reader's context.
     */
    private static SampleSource unit(String name, DocSamples.Sample sample) {
        StringBuilder classes = new StringBuilder();
        StringBuilder statements = new StringBuilder();
        boolean inClass = false;
        for (String line : sample.code().split("\n", -1)) {
            if (line.matches("(public )?(final )?(class|interface|record) .*")) {
                inClass = true;
            }
            (inClass ? classes : statements).append(line).append('\n');
            if (inClass && line.equals("}")) {
                inClass = false;
            }
        }
        String code =
                SAMPLE_IMPORTS
                        + "class "
                        + name
                        + " {\n"
                        + classes
                        + SAMPLE_CONTEXT
                        + "static void sample() throws Exception {\n"
                        + statements
                        + "}\n}\n";
        return new SampleSource(name, sample, code);
    }

    private static final class SampleSource extends SimpleJavaFileObject {
        final DocSamples.Sample sample;
        final String code;

        SampleSource(String name, DocSamples.Sample sample, String code) {
            super(URI.create("string:///" + name + ".java"), Kind.SOURCE);
            this.sample = sample;
            this.code = code;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return code;
        }
    }
}
