package dev.sluice.flink.source;

import java.io.IOException;
import java.util.Map;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.TypeExtractor;
import org.apache.flink.util.Collector;
import org.apache.flink.util.InstantiationUtil;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Each record's value read by a Kafka {@link Deserializer}, made and configured on each reader, as
 * {@code KafkaRecordDeserializationSchema.valueOnly(Class, Map)} does. A null result (a tombstone,
 * most deserializers) emits nothing.
 */
final class ValueDeserializerSchema<T> implements SluiceDeserializationSchema<T> {
    private static final long serialVersionUID = 1L;

    private final Class<? extends Deserializer<T>> deserializerClass;
    private final Map<String, String> config;
    private transient Deserializer<T> deserializer;

    ValueDeserializerSchema(
            Class<? extends Deserializer<T>> deserializerClass, Map<String, String> config) {
        this.deserializerClass = deserializerClass;
        this.config = Map.copyOf(config);
    }

    @Override
    public void open(DeserializationSchema.InitializationContext context) throws Exception {
        deserializer = InstantiationUtil.instantiate(deserializerClass);
        deserializer.configure(config, false);
    }

    @Override
    public void deserialize(SluiceRecord record, Collector<T> out) throws IOException {
        T value =
                deserializer.deserialize(
                        record.topic(), KafkaRecords.headers(record), record.value());
        if (value != null) {
            out.collect(value);
        }
    }

    @Override
    public TypeInformation<T> getProducedType() {
        return TypeExtractor.createTypeInfo(Deserializer.class, deserializerClass, 0, null, null);
    }
}
