package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobSpec;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.JobContext;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RipGeneratorTest {

    /** A sheet whose rows (97 dots) no task size below lines up with. */
    private static final PrintJob SHEET = new PrintJob("test", "unit test", 97, 61, 1);

    /** Prime, so tasks start and end mid-row, and more than the smallest chunk. */
    private static final long TASK_SIZE = 1031;

    private static final int CHUNK_SIZE = 1024;

    @TempDir Path dir;

    @Test
    void tasksOfAnySizeConcatenateToTheSequentialRaster() throws Exception {
        JobSpec job = job(image(), true);
        RasterImageProcessor rip =
                new RasterImageProcessor(TestChart.create(), SHEET.widthPx(), SHEET.heightPx());
        Map<Channel, byte[]> digests = SequentialRip.sha256(rip);
        try (RipGenerator generator = new RipGenerator()) {
            generator.preload(new JobContext(job, 0));
            for (Channel channel : Channel.values()) {
                byte[] streamed = stream(generator, job, channel);
                assertThat(streamed).isEqualTo(raster(rip, channel));
                assertThat(sha256(streamed)).isEqualTo(digests.get(channel));
            }
        }
        assertThat(digests.get(Channel.CYAN)).isNotEqualTo(digests.get(Channel.MAGENTA));
    }

    @Test
    void aTaskResumedPastItsFirstBytesGivesTheRest() throws Exception {
        JobSpec job = job(image(), true);
        try (RipGenerator generator = new RipGenerator()) {
            generator.preload(new JobContext(job, 0));
            ComputeTask task = ComputeTask.of(job, job.stream("black").orElseThrow(), 2);
            byte[] whole = generator.compute(task).readAllBytes();
            InputStream resumed = generator.compute(task);
            resumed.skipNBytes(500);
            assertThat(resumed.readAllBytes())
                    .isEqualTo(Arrays.copyOfRange(whole, 500, whole.length));
        }
    }

    @Test
    void withoutComputingTasksRepeatAFixedRow() throws Exception {
        JobSpec job = job(image(), false);
        RipGenerator generator = new RipGenerator();
        generator.preload(new JobContext(job, 0));
        RipGenerator another = new RipGenerator();
        another.preload(new JobContext(job, 0));
        int width = SHEET.widthPx();
        for (Channel channel : Channel.values()) {
            byte[] streamed = stream(generator, job, channel);
            assertThat(streamed).hasSize((int) SHEET.channelBytes());
            assertThat(stream(another, job, channel)).isEqualTo(streamed);
            for (int i = width; i < streamed.length; i++) {
                assertThat(streamed[i]).as("byte %d", i).isEqualTo(streamed[i % width]);
            }
            assertThat(Arrays.copyOf(streamed, width)).isNotEqualTo(new byte[width]);
        }
    }

    @Test
    void aMissingImageIsNamed() {
        URI missing = dir.resolve("nowhere.png").toUri();
        assertThatThrownBy(() -> new RipGenerator().preload(new JobContext(job(missing, true), 0)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("input image " + missing)
                .hasMessageContaining("does not exist");
    }

    @Test
    void aFileThatIsNoImageIsNamed() throws IOException {
        Path text = Files.writeString(dir.resolve("chart.png"), "not a picture");
        assertThatThrownBy(
                        () ->
                                new RipGenerator()
                                        .preload(new JobContext(job(text.toUri(), true), 0)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("input image " + text.toUri())
                .hasMessageContaining("is not an image");
    }

    @Test
    void theSheetParametersAreRequiredAndPositive() throws IOException {
        URI image = image();
        assertThatThrownBy(() -> preloadWith(image, Map.of("heightPx", "61")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parameter widthPx is required");
        assertThatThrownBy(() -> preloadWith(image, Map.of("widthPx", "97", "heightPx", "0")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parameter heightPx must be a positive number of dots")
                .hasMessageContaining("'0'");
        assertThatThrownBy(() -> preloadWith(image, Map.of("widthPx", "wide", "heightPx", "61")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'wide'");
        assertThatThrownBy(
                        () ->
                                preloadWith(
                                        image,
                                        Map.of("widthPx", "97", "heightPx", "61", "compute", "no")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("compute must be true or false");
    }

    @Test
    void aTaskPastTheRasterIsRefused() throws Exception {
        JobSpec job = job(image(), true);
        RipGenerator generator = new RipGenerator();
        generator.preload(
                new JobContext(
                        new JobSpec(
                                job.id(),
                                job.inputs(),
                                new GeneratorSpec(
                                        RipGenerator.class.getName(),
                                        Map.of("widthPx", "97", "heightPx", "10")),
                                job.taskSizeBytes(),
                                job.streams()),
                        0));
        ComputeTask task = ComputeTask.of(job, job.stream("cyan").orElseThrow(), 1);
        assertThatThrownBy(() -> generator.compute(task))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("past the 970 bytes of a 97 × 10 raster");
    }

    private void preloadWith(URI image, Map<String, String> parameters) throws Exception {
        JobSpec job = job(image, true);
        new RipGenerator()
                .preload(
                        new JobContext(
                                new JobSpec(
                                        job.id(),
                                        job.inputs(),
                                        new GeneratorSpec(RipGenerator.class.getName(), parameters),
                                        job.taskSizeBytes(),
                                        job.streams()),
                                0));
    }

    private JobSpec job(URI image, boolean compute) {
        return RipJobs.spec(
                "rip-test",
                SHEET,
                image,
                List.of("printer"),
                TASK_SIZE,
                CHUNK_SIZE,
                OptionalLong.empty(),
                compute);
    }

    private URI image() {
        return TestChart.write(dir).toUri();
    }

    /**
     * A channel's stream: every task in order, read in pieces of odd sizes and a byte at a time, as
     * a producer might.
     */
    private static byte[] stream(RipGenerator generator, JobSpec job, Channel channel)
            throws Exception {
        var spec = job.stream(channel.streamName()).orElseThrow();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int count = ComputeTask.count(job, spec);
        assertThat(count).isGreaterThan(3);
        for (int index = 0; index < count; index++) {
            ComputeTask task = ComputeTask.of(job, spec, index);
            InputStream bytes = generator.compute(task);
            out.write(bytes.read());
            byte[] piece = new byte[13 + index];
            long read = 1;
            for (int n; (n = bytes.read(piece, 1, piece.length - 1)) != -1; read += n) {
                out.write(piece, 1, n);
            }
            assertThat(read).isEqualTo(task.length());
            assertThat(bytes.read()).isEqualTo(-1);
        }
        return out.toByteArray();
    }

    private static byte[] raster(RasterImageProcessor rip, Channel channel) {
        byte[] raster = new byte[rip.widthPx() * rip.heightPx()];
        for (int y = 0; y < rip.heightPx(); y++) {
            rip.row(channel, y, raster, y * rip.widthPx());
        }
        return raster;
    }

    private static byte[] sha256(byte[] bytes) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(bytes);
    }
}
