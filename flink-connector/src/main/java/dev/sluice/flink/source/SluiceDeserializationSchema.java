package dev.sluice.flink.source;

import java.io.IOException;
import java.io.Serializable;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.util.Collector;

/** Turns Kafka records into the source's elements: none, one or several per record. */
@PublicEvolving
public interface SluiceDeserializationSchema<T> extends Serializable, ResultTypeQueryable<T> {

    default void open(DeserializationSchema.InitializationContext context) throws Exception {}

    void deserialize(SluiceRecord record, Collector<T> out) throws IOException;

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
