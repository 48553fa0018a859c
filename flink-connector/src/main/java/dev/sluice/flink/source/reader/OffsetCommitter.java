package dev.sluice.flink.source.reader;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits a completed checkpoint's offsets to the source's consumer group, in PUSH and PULL mode
 * alike. Commits only report progress (a restore reads the checkpoint, not them), so a failed one
 * is logged and the next checkpoint's commit covers it.
 */
final class OffsetCommitter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OffsetCommitter.class);

    private final Properties kafkaProperties;
    private final String groupId;
    private final SluiceSourceReaderMetrics metrics;
    private Admin admin;

    /**
     * @param kafkaProperties the admin client's, with its {@code client.id}
     */
    OffsetCommitter(Properties kafkaProperties, String groupId, SluiceSourceReaderMetrics metrics) {
        this.kafkaProperties = kafkaProperties;
        this.groupId = groupId;
        this.metrics = metrics;
    }

    void commit(Map<TopicPartition, Long> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        if (admin == null) {
            admin = Admin.create(kafkaProperties);
        }
        Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
        offsets.forEach(
                (partition, offset) -> commits.put(partition, new OffsetAndMetadata(offset)));
        admin.alterConsumerGroupOffsets(groupId, commits)
                .all()
                .whenComplete(
                        (ok, error) -> {
                            if (error != null) {
                                metrics.commitFailed();
                                LOG.warn(
                                        "committing {} to group {} failed: {}",
                                        offsets,
                                        groupId,
                                        error.toString());
                            } else {
                                metrics.committed(offsets);
                            }
                        });
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close();
        }
    }
}
