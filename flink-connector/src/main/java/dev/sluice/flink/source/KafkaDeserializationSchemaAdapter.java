package dev.sluice.flink.source;

import java.io.IOException;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;

/**
 * A {@code KafkaSource} deserialization schema reading {@link SluiceRecord}s, each handed to it as
 * the {@code ConsumerRecord} a KafkaConsumer would have returned ({@link
 * KafkaRecords#consumerRecord}). Its own class, so that flink-connector-kafka, an optional
 * dependency, is loaded only by jobs that use it.
 */
final class KafkaDeserializationSchemaAdapter<T> implements SluiceDeserializationSchema<T> {
    private static final long serialVersionUID = 1L;

    private final KafkaRecordDeserializationSchema<T> schema;

    KafkaDeserializationSchemaAdapter(KafkaRecordDeserializationSchema<T> schema) {
        this.schema = schema;
    }

    @Override
    public void open(DeserializationSchema.InitializationContext context) throws Exception {
        schema.open(context);
    }

    @Override
    public void deserialize(SluiceRecord record, Collector<T> out) throws IOException {
        schema.deserialize(KafkaRecords.consumerRecord(record), out);
    }

    @Override
    public TypeInformation<T> getProducedType() {
        return schema.getProducedType();
    }
}
