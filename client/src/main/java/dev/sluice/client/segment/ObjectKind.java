package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.List;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/** What one row of a segment's objects is: the header's {@code object_kind}. */
@PublicEvolving
public enum ObjectKind {
    /** One row per Kafka record. */
    RECORDS(1),
    /** One row per chunk of a data stream. */
    CHUNKS(2);

    private final int code;

    ObjectKind(int code) {
        this.code = code;
    }

    /** The value of {@code object_kind} in the header. */
    public int code() {
        return code;
    }

    /** The kind with this header code, or {@code null} for a code the format does not define. */
    public static ObjectKind fromCode(int code) {
        for (ObjectKind kind : values()) {
            if (kind.code == code) {
                return kind;
            }
        }
        return null;
    }

    /** The Arrow schema of this kind, as {@code docs/formats.md} "Object schemas" gives it. */
    public Schema schema() {
        return this == RECORDS ? recordsSchema() : chunksSchema();
    }

    private static Schema recordsSchema() {
        Field header =
                new Field(
                        "item",
                        FieldType.notNullable(ArrowType.Struct.INSTANCE),
                        List.of(
                                notNull("key", ArrowType.Utf8.INSTANCE),
                                notNull("value", ArrowType.Binary.INSTANCE)));
        return new Schema(
                List.of(
                        notNull("partition", new ArrowType.Int(32, true)),
                        notNull("offset", new ArrowType.Int(64, true)),
                        notNull("timestamp", new ArrowType.Timestamp(TimeUnit.MILLISECOND, "UTC")),
                        Field.nullable("key", ArrowType.Binary.INSTANCE),
                        Field.nullable("value", ArrowType.Binary.INSTANCE),
                        new Field(
                                "headers",
                                FieldType.notNullable(ArrowType.List.INSTANCE),
                                List.of(header))));
    }

    private static Schema chunksSchema() {
        return new Schema(
                List.of(
                        notNull("job", ArrowType.Utf8.INSTANCE),
                        notNull("stream", ArrowType.Utf8.INSTANCE),
                        notNull("seq", new ArrowType.Int(64, false)),
                        notNull("eos", ArrowType.Bool.INSTANCE),
                        notNull("payload", ArrowType.Binary.INSTANCE)));
    }

    private static Field notNull(String name, ArrowType type) {
        return Field.notNullable(name, type);
    }
}
