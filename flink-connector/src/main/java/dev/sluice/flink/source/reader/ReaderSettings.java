package dev.sluice.flink.source.reader;

import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.enumerator.TopicSubscriber;
import dev.sluice.flink.source.reader.push.PushSettings;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * What a source reader is made from.
 *
 * @param sourceId the same for every reader of one source, in every run of its job
 * @param groupId the consumer group offsets are committed to; empty for none
 * @param clientIdPrefix what the {@code client.id} of each Kafka client of the source starts with
 *     ({@link #clientId})
 * @param topicSubscriber what the source reads: a reader subscribes to one of its topics for a
 *     moment to check what PUSH needs
 */
@Internal
public record ReaderSettings(
        ReadMode mode,
        PushSettings push,
        Properties kafkaProperties,
        String groupId,
        boolean commitOffsetsOnCheckpoint,
        String sourceId,
        String clientIdPrefix,
        TopicSubscriber topicSubscriber)
        implements Serializable {

    /**
     * The {@code client.id} of a Kafka client of subtask {@code subtask}: {@code
     * <prefix>-<subtask>}, as {@code KafkaSource} names its consumers, with {@code -<role>} after
     * it for the clients beside the reading one (docs/flink-source.md, "Client ids").
     *
     * @param role empty for the PULL consumer; {@code stop}, {@code commit} for the others
     */
    public String clientId(int subtask, String role) {
        return clientIdPrefix + "-" + subtask + (role.isEmpty() ? "" : "-" + role);
    }

    /** The source's Kafka properties with this {@code client.id}. */
    public Properties kafkaProperties(String clientId) {
        Properties properties = new Properties();
        properties.putAll(kafkaProperties);
        properties.setProperty(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        return properties;
    }

    /**
     * The source's properties as Flink configuration: where {@code SourceReaderBase} finds its
     * settings ({@code source.reader.element.queue.capacity}, ...), as {@code KafkaSource} passes
     * its properties to it.
     */
    public Configuration readerConfiguration() {
        Map<String, String> map = new HashMap<>();
        kafkaProperties
                .stringPropertyNames()
                .forEach(key -> map.put(key, kafkaProperties.getProperty(key)));
        return Configuration.fromMap(map);
    }
}
