package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.write.ChunkRecords;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Whether a submitted job's chunks fit, as Kafka records, the chunk topics they go to: a topic
 * takes no record larger than its {@code max.message.bytes}, so the job's first chunk sent through
 * Kafka would fail it. Checked at submission, so that such a job is REFUSED naming the limit and
 * what to change (docs/generation.md, "The scheduler"). A stock Kafka takes 1048588 bytes: a 1 MiB
 * chunk and its headers do not fit, the default 512 KiB chunk does.
 */
final class OversizedChunks {
    private OversizedChunks() {}

    /**
     * Why the job cannot be written, for its first stream whose largest record is larger than its
     * chunk topic takes; empty when every stream fits or its topic's limit is not known.
     *
     * @param kafkaStreams the job's streams whose chunks may go through Kafka
     * @param maxMessageBytes the chunk topics' {@code max.message.bytes}, where known
     */
    static Optional<String> reason(
            String job, List<StreamSpec> kafkaStreams, Map<String, Integer> maxMessageBytes) {
        for (StreamSpec stream : kafkaStreams) {
            String topic = ChunkTopics.forOutputLocation(stream.outputLocation());
            Integer limit = maxMessageBytes.get(topic);
            int chunk = stream.chunkSizeBytes();
            int record = ChunkRecords.largestRecordBytes(job, stream.name(), chunk);
            if (limit == null || record <= limit) {
                continue;
            }
            int fitting = largestFittingChunk(job, stream.name(), limit);
            String lower =
                    fitting >= StreamSpec.MIN_CHUNK_SIZE_BYTES
                            ? "lower its chunkSizeBytes to " + fitting + " or less"
                            : "no chunk size fits it";
            return Optional.of(
                    "stream "
                            + stream.name()
                            + ": its chunks of "
                            + chunk
                            + " B are up to "
                            + record
                            + " bytes as Kafka records, more than its chunk topic "
                            + topic
                            + " takes (max.message.bytes = "
                            + limit
                            + "): "
                            + lower
                            + ", or raise the topic's max.message.bytes (and the generation"
                            + " sink's max.request.size to match)");
        }
        return Optional.empty();
    }

    private static int largestFittingChunk(String job, String stream, int limit) {
        // From above: an empty chunk's record has the least overhead, and a longer chunk adds its
        // bytes and a few of its length's varint, so this takes a few steps down at most.
        int chunk = limit - ChunkRecords.largestRecordBytes(job, stream, 0);
        while (chunk > 0 && ChunkRecords.largestRecordBytes(job, stream, chunk) > limit) {
            chunk--;
        }
        return chunk;
    }
}
