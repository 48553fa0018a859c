package dev.sluice.examples.source;

import dev.sluice.flink.source.SluiceDeserializationSchema;
import dev.sluice.flink.source.SluiceRecord;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.util.Collector;

/** A record's value as it is, a {@code byte[]} of its own: what the jobs of this package read. */
public final class ValueBytes implements SluiceDeserializationSchema<byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public void deserialize(SluiceRecord record, Collector<byte[]> out) {
        out.collect(record.value());
    }

    @Override
    public TypeInformation<byte[]> getProducedType() {
        return PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO;
    }
}
