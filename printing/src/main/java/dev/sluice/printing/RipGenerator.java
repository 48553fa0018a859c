package dev.sluice.printing;

import dev.sluice.client.job.SplitRule;
import dev.sluice.flink.generation.ChunkGenerator;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.JobContext;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * The RIP as a Sluice generator: a print job's streams are its ink channels, and a task is a run of
 * bytes of one channel's raster in row-major order, computed lazily as the producer sends it.
 *
 * <p>The preload task reads the job's input image (its first input, a {@code file:} URI of an image
 * ImageIO reads, such as PNG or JPEG). Parameters: {@value #WIDTH_PX} and {@value #HEIGHT_PX}, the
 * sheet in dots; {@value #COMPUTE}, {@code true} by default: {@code false} sends a fixed row of
 * each channel over and over instead of computing the raster, which measures the system without the
 * RIP's cost (docs/printing.md, "The raster image processor").
 */
public final class RipGenerator implements ChunkGenerator {

    public static final String WIDTH_PX = "widthPx";
    public static final String HEIGHT_PX = "heightPx";
    public static final String COMPUTE = "compute";

    private RasterImageProcessor rip;
    private Map<Channel, byte[]> fixedRows;

    /** Producers make one per job by reflection. */
    public RipGenerator() {}

    @Override
    public void preload(JobContext job) throws IOException {
        int widthPx = dots(job, WIDTH_PX);
        int heightPx = dots(job, HEIGHT_PX);
        boolean compute = compute(job);
        rip = new RasterImageProcessor(readImage(job), widthPx, heightPx);
        if (!compute) {
            // The middle row: a stand-in that still looks like the job's ink.
            fixedRows = new EnumMap<>(Channel.class);
            for (Channel channel : Channel.values()) {
                byte[] row = new byte[widthPx];
                rip.row(channel, heightPx / 2, row, 0);
                fixedRows.put(channel, row);
            }
        }
    }

    @Override
    public InputStream compute(ComputeTask task) {
        if (rip == null) {
            throw new IllegalStateException("task " + task.id() + " before the job's preload");
        }
        Channel channel = channel(task);
        long end = task.offset() + task.length();
        long rasterBytes = (long) rip.widthPx() * rip.heightPx();
        if (end > rasterBytes) {
            throw new IllegalArgumentException(
                    "task "
                            + task.id()
                            + " ends at byte "
                            + end
                            + ", past the "
                            + rasterBytes
                            + " bytes of a "
                            + rip.widthPx()
                            + " × "
                            + rip.heightPx()
                            + " raster");
        }
        RasterStream.Rows rows;
        if (fixedRows != null) {
            byte[] row = fixedRows.get(channel);
            rows = y -> row;
        } else {
            byte[] row = new byte[rip.widthPx()];
            rows =
                    y -> {
                        rip.row(channel, y, row, 0);
                        return row;
                    };
        }
        return new RasterStream(rows, rip.widthPx(), task.offset(), end);
    }

    private static Channel channel(ComputeTask task) {
        SplitRule split = task.streamSpec().split();
        if (!(split instanceof SplitRule.Channel)) {
            throw new IllegalArgumentException(
                    "stream "
                            + task.stream()
                            + " of job "
                            + task.job().id()
                            + " must carry an ink channel (split rule Channel), got "
                            + split);
        }
        return Channel.ofStream(((SplitRule.Channel) split).channel());
    }

    private static int dots(JobContext job, String parameter) {
        String value = job.parameters().get(parameter);
        if (value == null) {
            throw new IllegalArgumentException(
                    "job " + job.jobId() + ": parameter " + parameter + " is required");
        }
        try {
            int dots = Integer.parseInt(value.trim());
            if (dots >= 1) {
                return dots;
            }
        } catch (NumberFormatException e) {
            // Reported below with the other bad values.
        }
        throw new IllegalArgumentException(
                "job "
                        + job.jobId()
                        + ": parameter "
                        + parameter
                        + " must be a positive number of dots, got '"
                        + value
                        + "'");
    }

    private static boolean compute(JobContext job) {
        String value = job.parameters().getOrDefault(COMPUTE, "true");
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(
                    "job "
                            + job.jobId()
                            + ": parameter "
                            + COMPUTE
                            + " must be true or false, got '"
                            + value
                            + "'");
        }
        return value.equals("true");
    }

    private static BufferedImage readImage(JobContext job) throws IOException {
        List<String> inputs = job.spec().inputs();
        if (inputs.isEmpty()) {
            throw new IllegalArgumentException(
                    "job " + job.jobId() + " has no input image: its inputs are empty");
        }
        URI uri = URI.create(inputs.get(0));
        String what = "input image " + uri + " of job " + job.jobId();
        if (!"file".equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException(what + ": only file: URIs are supported");
        }
        Path path;
        try {
            path = Path.of(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " is not a local file: " + e.getMessage(), e);
        }
        if (!Files.isRegularFile(path)) {
            throw new IOException(what + " does not exist");
        }
        BufferedImage image;
        try {
            image = ImageIO.read(path.toFile());
        } catch (IOException e) {
            throw new IOException(what + " cannot be read: " + e.getMessage(), e);
        }
        if (image == null) {
            throw new IOException(what + " is not an image ImageIO reads (PNG, JPEG, …)");
        }
        return image;
    }
}
