package dev.sluice.client.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * The topics a Sluice cluster needs, as {@code sluice-cli topics create | check} makes and checks
 * them (docs/formats.md, "Topics"): the jobs, status and progress topics of one partition each, one
 * ordered log every reader reads whole, and a chunk topic per output location, whose partitions
 * spread a stream's chunks over brokers (docs/sluice-sink.md, "Partitioning").
 *
 * @param replicationFactor the topics' replication factor; empty for the cluster's default
 */
record SluiceTopics(
        String jobsTopic,
        String statusTopic,
        String progressTopic,
        List<String> outputLocations,
        int chunkPartitions,
        Optional<Short> replicationFactor) {

    /** The chunk topics' partitions unless told: as the demo cluster's. */
    static final int DEFAULT_CHUNK_PARTITIONS = 4;

    SluiceTopics {
        outputLocations = List.copyOf(outputLocations);
        for (String location : outputLocations) {
            Names.check("output location", location);
        }
        if (chunkPartitions < 1) {
            throw new JobSpecException("chunk partitions", "at least 1, got " + chunkPartitions);
        }
    }

    /** Every topic, the control topics first, with its partitions and replication. */
    List<NewTopic> topics() {
        List<NewTopic> topics = new ArrayList<>();
        for (String control : List.of(jobsTopic, statusTopic, progressTopic)) {
            topics.add(new NewTopic(control, Optional.of(1), replicationFactor));
        }
        for (String location : outputLocations) {
            topics.add(
                    new NewTopic(
                            ChunkTopics.forOutputLocation(location),
                            Optional.of(chunkPartitions),
                            replicationFactor));
        }
        return topics;
    }
}
