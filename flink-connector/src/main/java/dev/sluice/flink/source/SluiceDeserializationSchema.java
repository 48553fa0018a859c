package dev.sluice.flink.source;

import java.io.IOException;
import java.io.Serializable;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.common.serialization.Deserializer;

/** Turns Kafka records into the source's elements: none, one or several per record. */
@PublicEvolving
public interface SluiceDeserializationSchema<T> extends Serializable, ResultTypeQueryable<T> {

    default void open(DeserializationSchema.InitializationContext context) throws Exception {}

    void deserialize(SluiceRecord record, Collector<T> out) throws IOException;

    /**
     * Reads records with a {@code KafkaSource} schema as it is: it gets each record as the {@code
     * ConsumerRecord} a KafkaConsumer returns (docs/flink-source.md, "Deserialization": PUSH
     * records have no timestamp type). Needs flink-connector-kafka, which the connector depends on
     * only optionally, on the job's class path.
     */
    static <T> SluiceDeserializationSchema<T> of(KafkaRecordDeserializationSchema<T> schema) {
        return new KafkaDeserializationSchemaAdapter<>(Objects.requireNonNull(schema));
    }

    /** Each record's value read by a Kafka {@link Deserializer} of this class, unconfigured. */
    static <T> SluiceDeserializationSchema<T> valueOnly(
            Class<? extends Deserializer<T>> deserializerClass) {
        return valueOnly(deserializerClass, Map.of());
    }

    /**
     * Each record's value read by a Kafka {@link Deserializer} of this class, made on each reader
     * and configured with {@code config} as a value deserializer, as {@code
     * KafkaRecordDeserializationSchema.valueOnly(Class, Map)}; null results are dropped.
     */
    static <T, D extends Deserializer<T>> SluiceDeserializationSchema<T> valueOnly(
            Class<D> deserializerClass, Map<String, String> config) {
        return new ValueDeserializerSchema<>(Objects.requireNonNull(deserializerClass), config);
    }

    /** Deserializes each record's value with {@code schema}; keys and headers are ignored. */
    static <T> SluiceDeserializationSchema<T> valueOnly(DeserializationSchema<T> schema) {
        return new SluiceDeserializationSchema<>() {
            private static final long serialVersionUID = 1L;

            @Override
            public void open(DeserializationSchema.InitializationContext context) throws Exception {
                schema.open(context);
            }

            @Override
            public void deserialize(SluiceRecord record, Collector<T> out) throws IOException {
                byte[] value = record.value();
                if (value != null) {
                    schema.deserialize(value, out);
                }
            }

            @Override
            public TypeInformation<T> getProducedType() {
                return schema.getProducedType();
            }
        };
    }
}
