package dev.sluice.client.write;

import dev.sluice.client.annotation.Internal;
import java.io.IOException;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The properties of a producer of chunk records, as every chunk writer takes them (the Flink sink,
 * the plain {@code StreamWriter}), and the limits they set on a record: chunks are written as bytes
 * with the writer's own serializers, at least once ({@code acks} is {@code all} unless set, {@code
 * 0} refused, no transactions: readers drop duplicates by {@code seq}, docs/sluice-sink.md, "At
 * least once, exactly once per stream"); a record larger than the producer may send is refused
 * before it is sent.
 *
 * @param maxRequestSize the producer's {@code max.request.size}
 * @param bufferMemory the producer's {@code buffer.memory}
 * @param compression the producer's {@code compression.type}
 */
@Internal
public record ChunkProducerSettings(
        int maxRequestSize, long bufferMemory, CompressionType compression) {

    /**
     * The given producer properties checked and completed: {@code acks = all} unless set.
     *
     * @throws IllegalStateException naming the property if one is refused: a serializer, a {@code
     *     transactional.id}, {@code acks = 0}, or a value Kafka's own rules refuse
     */
    public static Properties checked(Properties given) {
        for (String fixed :
                new String[] {
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG
                }) {
            if (given.containsKey(fixed)) {
                throw new IllegalStateException(
                        fixed
                                + ": chunks are written as bytes with the writer's own serializers;"
                                + " leave it out");
            }
        }
        if (given.containsKey(ProducerConfig.TRANSACTIONAL_ID_CONFIG)) {
            throw new IllegalStateException(
                    "transactional.id: chunks are written at least once (readers drop duplicates"
                            + " by seq), without transactions");
        }
        Properties checked = new Properties();
        checked.putAll(given);
        checked.putIfAbsent(ProducerConfig.ACKS_CONFIG, "all");
        if ("0".equals(checked.getProperty(ProducerConfig.ACKS_CONFIG).trim())) {
            throw new IllegalStateException(
                    "acks = 0: every chunk written must be acknowledged; use all or 1");
        }
        try {
            parse(checked);
        } catch (ConfigException e) {
            throw new IllegalStateException("producer properties: " + e.getMessage(), e);
        }
        return checked;
    }

    /** The limits of a producer of these properties, parsed by Kafka's rules (defaults filled). */
    public static ChunkProducerSettings of(Properties producer) {
        Map<String, Object> config = parse(producer);
        return new ChunkProducerSettings(
                (Integer) config.get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG),
                (Long) config.get(ProducerConfig.BUFFER_MEMORY_CONFIG),
                CompressionType.forName(
                        (String) config.get(ProducerConfig.COMPRESSION_TYPE_CONFIG)));
    }

    private static Map<String, Object> parse(Properties producer) {
        Properties withSerializers = new Properties();
        withSerializers.putAll(producer);
        withSerializers.put(
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        withSerializers.put(
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return ProducerConfig.configDef().parse(withSerializers);
    }

    /**
     * Checks that the producer can send {@code record}: its size (the producer's own upper bound:
     * payload, key, headers, batch overhead) is within {@code max.request.size} and {@code
     * buffer.memory}.
     *
     * @param chunk the chunk as messages name it
     * @param chunkSizeSetting the setting that makes the chunk smaller, for the message
     * @throws IllegalArgumentException naming the chunk, its size and the limit if not
     */
    public void checkFits(
            ProducerRecord<byte[], byte[]> record, String chunk, String chunkSizeSetting) {
        int size = ChunkRecords.serializedSizeUpperBound(record, compression);
        if (size > maxRequestSize || size > bufferMemory) {
            throw new IllegalArgumentException(
                    "chunk "
                            + chunk
                            + " is "
                            + size
                            + " bytes as a record, larger than the producer's "
                            + (size > maxRequestSize
                                    ? "max.request.size (" + maxRequestSize + ")"
                                    : "buffer.memory (" + bufferMemory + ")")
                            + ": lower "
                            + chunkSizeSetting
                            + ", or raise that property (and the topic's max.message.bytes)");
        }
    }

    /**
     * What a failed send of a chunk fails its writer with: the chunk, where it went, the error, and
     * for a record too large what to change.
     */
    public static IOException sendFailure(
            String chunk, String topic, int partition, Exception error, String chunkSizeSetting) {
        String hint =
                error instanceof RecordTooLargeException
                        ? "; the record is larger than the producer's max.request.size or the"
                                + " topic's max.message.bytes: lower "
                                + chunkSizeSetting
                                + " or raise them"
                        : "";
        return new IOException(
                "could not send chunk "
                        + chunk
                        + " ("
                        + topic
                        + "-"
                        + partition
                        + "): "
                        + error
                        + hint,
                error);
    }
}
