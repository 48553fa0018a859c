package dev.sluice.printing;

import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/** Print jobs as Sluice jobs: one stream per ink channel, computed by {@link RipGenerator}. */
public final class RipJobs {

    private RipJobs() {}

    /**
     * The job that prints {@code image} as {@code job}: streams cyan, magenta, yellow and black,
     * each the whole raster of its channel, stream i going to {@code outputLocations} i modulo
     * their count (one printer with four inputs, or several printers).
     *
     * @param compute false to send a fixed row instead of computing the raster (see {@link
     *     RipGenerator})
     */
    public static JobSpec spec(
            String id,
            PrintJob job,
            URI image,
            List<String> outputLocations,
            long taskSizeBytes,
            int chunkSizeBytes,
            OptionalLong rateBytesPerSecond,
            boolean compute) {
        if (outputLocations.isEmpty()) {
            throw new IllegalArgumentException("job " + id + " needs an output location");
        }
        List<StreamSpec> streams = new ArrayList<>();
        for (Channel channel : Channel.values()) {
            streams.add(
                    new StreamSpec(
                            channel.streamName(),
                            outputLocations.get(channel.ordinal() % outputLocations.size()),
                            new SplitRule.Channel(channel.streamName()),
                            job.channelBytes(),
                            rateBytesPerSecond,
                            chunkSizeBytes));
        }
        GeneratorSpec generator =
                new GeneratorSpec(
                        RipGenerator.class.getName(),
                        Map.of(
                                RipGenerator.WIDTH_PX, Integer.toString(job.widthPx()),
                                RipGenerator.HEIGHT_PX, Integer.toString(job.heightPx()),
                                RipGenerator.COMPUTE, Boolean.toString(compute)));
        return new JobSpec(id, List.of(image.toString()), generator, taskSizeBytes, streams);
    }

    /**
     * A task size near {@code targetBytes} that is a whole number of rows, at least one chunk and
     * at most {@link JobSpec#MAX_TASK_SIZE_BYTES}. A task that starts or ends mid-row computes that
     * whole row to send part of it, and so does its neighbour: with whole rows, no row of a channel
     * is computed twice.
     */
    public static long rowAlignedTaskSize(PrintJob job, long targetBytes, int chunkSizeBytes) {
        long row = job.widthPx();
        long maxRows = JobSpec.MAX_TASK_SIZE_BYTES / row;
        long minRows = (chunkSizeBytes + row - 1) / row;
        if (minRows > maxRows) {
            throw new IllegalArgumentException(
                    "print job "
                            + job.name()
                            + ": no whole number of its "
                            + row
                            + "-byte rows lies between a chunk of "
                            + chunkSizeBytes
                            + " bytes and the largest task of "
                            + JobSpec.MAX_TASK_SIZE_BYTES);
        }
        long rows = Math.max(minRows, Math.min(maxRows, Math.max(1, targetBytes / row)));
        return rows * row;
    }
}
