package dev.sluice.flink.table;

import dev.sluice.flink.source.SluiceDeserializationSchema;
import dev.sluice.flink.source.SluiceRecord;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.util.Collector;

/**
 * A table's rows from Kafka records: the key format's columns, the value format's, then the
 * metadata columns, as the Kafka SQL connector's {@code DynamicKafkaDeserializationSchema} puts
 * them together. A value the value format yields no row for (a tombstone, for most formats) yields
 * no row; a key format yielding several rows yields one row per key row.
 */
final class RowDataDeserializer implements SluiceDeserializationSchema<RowData> {
    private static final long serialVersionUID = 1L;

    private final DeserializationSchema<RowData> keyFormat;
    private final DeserializationSchema<RowData> valueFormat;
    private final int physicalArity;
    private final int[] keyProjection;
    private final int[] valueProjection;
    private final ReadableMetadata[] metadata;
    private final TypeInformation<RowData> producedType;

    private transient List<RowData> keyRows;
    private transient SluiceRecord record;
    private transient Collector<RowData> out;

    /**
     * @param keyFormat null without a key format
     * @param physicalArity the produced row's columns before the metadata columns
     * @param keyProjection where each column of the key format's rows goes in the produced row
     * @param valueProjection where each column of the value format's rows goes
     * @param metadata the metadata columns after the physical ones, in order
     */
    RowDataDeserializer(
            DeserializationSchema<RowData> keyFormat,
            DeserializationSchema<RowData> valueFormat,
            int physicalArity,
            int[] keyProjection,
            int[] valueProjection,
            ReadableMetadata[] metadata,
            TypeInformation<RowData> producedType) {
        this.keyFormat = keyFormat;
        this.valueFormat = valueFormat;
        this.physicalArity = physicalArity;
        this.keyProjection = keyProjection.clone();
        this.valueProjection = valueProjection.clone();
        this.metadata = metadata.clone();
        this.producedType = producedType;
    }

    @Override
    public void open(DeserializationSchema.InitializationContext context) throws Exception {
        if (keyFormat != null) {
            keyFormat.open(context);
        }
        valueFormat.open(context);
        keyRows = new ArrayList<>();
    }

    @Override
    public void deserialize(SluiceRecord record, Collector<RowData> out) throws IOException {
        if (keyFormat == null && metadata.length == 0) {
            valueFormat.deserialize(record.value(), out);
            return;
        }
        keyRows.clear();
        if (keyFormat != null) {
            keyFormat.deserialize(record.key(), new ListCollector(keyRows));
        }
        this.record = record;
        this.out = out;
        try {
            valueFormat.deserialize(record.value(), new ProjectingCollector());
        } finally {
            this.record = null;
            this.out = null;
        }
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return producedType;
    }

    private void emit(RowData keyRow, RowData valueRow) {
        GenericRowData row =
                new GenericRowData(valueRow.getRowKind(), physicalArity + metadata.length);
        GenericRowData key = (GenericRowData) keyRow;
        GenericRowData value = (GenericRowData) valueRow;
        for (int i = 0; i < keyProjection.length; i++) {
            row.setField(keyProjection[i], key.getField(i));
        }
        for (int i = 0; i < valueProjection.length; i++) {
            row.setField(valueProjection[i], value.getField(i));
        }
        for (int i = 0; i < metadata.length; i++) {
            row.setField(physicalArity + i, metadata[i].read(record));
        }
        out.collect(row);
    }

    /** Takes the value format's rows and emits each with every key row and the metadata. */
    private final class ProjectingCollector implements Collector<RowData> {
        @Override
        public void collect(RowData valueRow) {
            if (keyProjection.length == 0) {
                emit(null, valueRow);
                return;
            }
            for (RowData keyRow : keyRows) {
                emit(keyRow, valueRow);
            }
        }

        @Override
        public void close() {}
    }

    private record ListCollector(List<RowData> rows) implements Collector<RowData> {
        @Override
        public void collect(RowData row) {
            rows.add(row);
        }

        @Override
        public void close() {}
    }
}
