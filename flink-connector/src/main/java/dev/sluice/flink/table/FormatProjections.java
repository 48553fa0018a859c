package dev.sluice.flink.table;

import static dev.sluice.flink.table.SluiceConnectorOptions.KEY_FIELDS;
import static dev.sluice.flink.table.SluiceConnectorOptions.KEY_FIELDS_PREFIX;
import static dev.sluice.flink.table.SluiceConnectorOptions.KEY_FORMAT;
import static dev.sluice.flink.table.SluiceConnectorOptions.VALUE_FIELDS_INCLUDE;

import dev.sluice.flink.table.SluiceConnectorOptions.ValueFieldsStrategy;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.Projection;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.FieldsDataType;
import org.apache.flink.table.types.logical.RowType;

/**
 * Which physical columns the key format and the value format read, by position in the table's
 * physical row, from {@code key.fields}, {@code key.fields-prefix} and {@code
 * value.fields-include}, with the Kafka SQL connector's rules and messages (docs/flink-sql.md, Key
 * and value).
 */
final class FormatProjections {
    private FormatProjections() {}

    /** The key's columns in {@code key.fields}' order; none without a key format. */
    static int[] key(ReadableConfig options, DataType physicalDataType) {
        Optional<String> keyFormat = options.getOptional(KEY_FORMAT);
        Optional<List<String>> keyFields = options.getOptional(KEY_FIELDS);
        if (keyFormat.isEmpty() && keyFields.isPresent()) {
            throw new ValidationException(
                    String.format(
                            "The option '%s' can only be declared if a key format is defined using"
                                    + " '%s'.",
                            KEY_FIELDS.key(), KEY_FORMAT.key()));
        }
        if (keyFormat.isEmpty()) {
            return new int[0];
        }
        if (keyFields.isEmpty() || keyFields.get().isEmpty()) {
            throw new ValidationException(
                    String.format(
                            "A key format '%s' requires the declaration of one or more of key"
                                    + " fields using '%s'.",
                            KEY_FORMAT.key(), KEY_FIELDS.key()));
        }
        String prefix = options.getOptional(KEY_FIELDS_PREFIX).orElse("");
        List<String> columns = DataType.getFieldNames(physicalDataType);
        return keyFields.get().stream()
                .mapToInt(
                        field -> {
                            int position = columns.indexOf(field);
                            if (position < 0) {
                                throw new ValidationException(
                                        String.format(
                                                "Could not find the field '%s' in the table schema"
                                                        + " for usage in the key format. A key"
                                                        + " field must be a regular, physical"
                                                        + " column. The following columns can be"
                                                        + " selected in the '%s' option: %s",
                                                field, KEY_FIELDS.key(), columns));
                            }
                            if (!field.startsWith(prefix)) {
                                throw new ValidationException(
                                        String.format(
                                                "All fields in '%s' must be prefixed with '%s'"
                                                        + " when option '%s' is set but field"
                                                        + " '%s' is not prefixed.",
                                                KEY_FIELDS.key(),
                                                prefix,
                                                KEY_FIELDS_PREFIX.key(),
                                                field));
                            }
                            return position;
                        })
                .toArray();
    }

    /** The value's columns: all of them, or those not in the key ({@code EXCEPT_KEY}). */
    static int[] value(ReadableConfig options, DataType physicalDataType) {
        IntStream columns = IntStream.range(0, DataType.getFieldCount(physicalDataType));
        if (options.get(VALUE_FIELDS_INCLUDE) == ValueFieldsStrategy.EXCEPT_KEY) {
            int[] key = key(options, physicalDataType);
            return columns.filter(c -> IntStream.of(key).noneMatch(k -> k == c)).toArray();
        }
        if (options.getOptional(KEY_FIELDS_PREFIX).filter(p -> !p.isEmpty()).isPresent()) {
            throw new ValidationException(
                    String.format(
                            "A key prefix is not allowed when option '%s' is set to '%s'. Set it"
                                    + " to '%s' instead to avoid field overlaps.",
                            VALUE_FIELDS_INCLUDE.key(),
                            ValueFieldsStrategy.ALL,
                            ValueFieldsStrategy.EXCEPT_KEY));
        }
        return columns.toArray();
    }

    /**
     * The row a format decodes: the projected columns, named without {@code prefix} (the key format
     * sees its fields as the record's key names them).
     */
    static DataType formatType(DataType physicalDataType, int[] projection, String prefix) {
        DataType projected = Projection.of(projection).project(physicalDataType);
        if (prefix == null || prefix.isEmpty()) {
            return projected;
        }
        RowType row = (RowType) projected.getLogicalType();
        List<RowType.RowField> fields =
                row.getFields().stream()
                        .map(
                                f ->
                                        new RowType.RowField(
                                                f.getName().startsWith(prefix)
                                                        ? f.getName().substring(prefix.length())
                                                        : f.getName(),
                                                f.getType(),
                                                f.getDescription().orElse(null)))
                        .toList();
        return new FieldsDataType(
                new RowType(row.isNullable(), fields),
                projected.getConversionClass(),
                projected.getChildren());
    }
}
