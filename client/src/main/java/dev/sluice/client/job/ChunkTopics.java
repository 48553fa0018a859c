package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.progress.DeliveryProgressCodec;

/**
 * Where a job's chunks travel: the topic of an output location (docs/formats.md, "Chunk topics").
 * One topic per output-location node, so the node's daemon reads its streams and only them.
 */
@PublicEvolving
public final class ChunkTopics {
    /** What the output location's id is appended to. */
    public static final String PREFIX = "sluice.chunks.";

    private ChunkTopics() {}

    /** {@code sluice.chunks.<outputLocation>}: the chunk topic of an output-location node. */
    public static String forOutputLocation(String outputLocation) {
        DeliveryProgressCodec.checkName("outputLocation", outputLocation);
        return PREFIX + outputLocation;
    }
}
