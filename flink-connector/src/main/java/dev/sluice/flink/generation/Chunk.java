package dev.sluice.flink.generation;

import dev.sluice.client.write.ChunkRecords;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A piece of a stream on its way from a generator to its output location: what the generation job
 * emits and {@code SluiceSink} writes as a chunk record (docs/formats.md, "Chunk record"). Chunks
 * of one stream are numbered from 0 without gaps; the last one carries {@code eos}.
 *
 * @param outputLocation the node that reads the stream; its chunk topic is {@code
 *     ChunkTopics.forOutputLocation(outputLocation)}
 */
@PublicEvolving
public record Chunk(
        String job, String stream, String outputLocation, long seq, boolean eos, byte[] payload) {

    public Chunk {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(outputLocation, "outputLocation");
        Objects.requireNonNull(payload, "payload");
        if (seq < 0) {
            throw new IllegalArgumentException("seq " + seq + " < 0");
        }
    }

    @Override
    public String toString() {
        return ChunkRecords.describe(job, stream, outputLocation, seq, eos, payload.length);
    }
}
