package dev.sluice.flink.table;

import dev.sluice.client.segment.RecordHeader;
import dev.sluice.flink.source.SluiceRecord;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.data.GenericMapData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.DataType;

/**
 * The metadata columns a table reads from each record, with the Kafka SQL connector's keys and
 * types. Its {@code leader-epoch} is not among them: neither the daemon's records nor a {@link
 * SluiceRecord} carry it (docs/flink-sql.md, Metadata columns).
 */
enum ReadableMetadata {
    TOPIC("topic", DataTypes.STRING().notNull(), r -> StringData.fromString(r.topic())),

    PARTITION("partition", DataTypes.INT().notNull(), SluiceRecord::partition),

    // Key and value nullable, as the Kafka connector's, to ease their use in queries.
    HEADERS(
            "headers",
            DataTypes.MAP(DataTypes.STRING().nullable(), DataTypes.BYTES().nullable()).notNull(),
            ReadableMetadata::headers),

    OFFSET("offset", DataTypes.BIGINT().notNull(), SluiceRecord::offset),

    TIMESTAMP(
            "timestamp",
            DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).notNull(),
            r -> TimestampData.fromEpochMillis(r.timestamp())),

    // NoTimestampType in PUSH mode, whose records do not carry it.
    TIMESTAMP_TYPE(
            "timestamp-type",
            DataTypes.STRING().notNull(),
            r -> StringData.fromString(r.timestampType().toString()));

    final String key;
    final DataType dataType;
    private final Function<SluiceRecord, Object> read;

    ReadableMetadata(String key, DataType dataType, Function<SluiceRecord, Object> read) {
        this.key = key;
        this.dataType = dataType;
        this.read = read;
    }

    /** This column's value for a record, as Flink's internal data structures hold it. */
    Object read(SluiceRecord record) {
        return read.apply(record);
    }

    static ReadableMetadata ofKey(String key) {
        for (ReadableMetadata metadata : values()) {
            if (metadata.key.equals(key)) {
                return metadata;
            }
        }
        throw new IllegalArgumentException("no metadata column '" + key + "'");
    }

    /** A header named twice keeps its last value, as with the Kafka connector. */
    private static Object headers(SluiceRecord record) {
        Map<StringData, byte[]> map = new HashMap<>();
        for (RecordHeader header : record.headers()) {
            map.put(StringData.fromString(header.key()), header.value());
        }
        return new GenericMapData(map);
    }
}
