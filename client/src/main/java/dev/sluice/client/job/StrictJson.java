package dev.sluice.client.job;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Reads one JSON object field by field, refusing what the formats do not allow: unknown or repeated
 * fields, {@code null}s, values of the wrong type. The job model is read from a tree rather than
 * bound by Jackson so that every refusal can name the JSON path of its value.
 */
final class StrictJson {

    static final ObjectMapper MAPPER =
            new ObjectMapper()
                    .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
                    .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                    .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
                    .enable(SerializationFeature.INDENT_OUTPUT);

    private final ObjectNode node;
    private final String path;

    private StrictJson(ObjectNode node, String path) {
        this.node = node;
        this.path = path;
    }

    /** Parses a whole document; malformed JSON is refused with the line and column. */
    static JsonNode parse(byte[] json) {
        try {
            JsonNode tree = MAPPER.readTree(json);
            if (tree == null || tree.isMissingNode()) {
                throw new JobSpecException("", "empty document");
            }
            return tree;
        } catch (JsonProcessingException e) {
            throw new JobSpecException(
                    "",
                    "not valid JSON: "
                            + e.getOriginalMessage()
                            + (e.getLocation() == null
                                    ? ""
                                    : " (line "
                                            + e.getLocation().getLineNr()
                                            + ", column "
                                            + e.getLocation().getColumnNr()
                                            + ")"));
        } catch (IOException e) {
            throw new JobSpecException("", "not readable: " + e.getMessage());
        }
    }

    static String write(JsonNode tree) {
        try {
            return MAPPER.writeValueAsString(tree);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a tree of plain nodes always serializes", e);
        }
    }

    /** An object at {@code path} that may hold only the given fields. */
    static StrictJson object(JsonNode value, String path, Set<String> fields) {
        if (!(value instanceof ObjectNode object)) {
            throw new JobSpecException(path, "must be an object, got " + typeOf(value));
        }
        for (Iterator<String> names = object.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!fields.contains(name)) {
                throw new JobSpecException(
                        join(path, name), "unknown field (allowed: " + sorted(fields) + ")");
            }
        }
        return new StrictJson(object, path);
    }

    static String join(String parent, String field) {
        return parent.isEmpty() ? field : parent + "." + field;
    }

    static String typeOf(JsonNode value) {
        if (value == null || value.isNull()) {
            return "null";
        }
        if (value.isIntegralNumber()) {
            return "integer " + value.asText();
        }
        return value.getNodeType().name().toLowerCase(Locale.ROOT);
    }

    String path(String field) {
        return join(path, field);
    }

    Optional<JsonNode> optional(String field) {
        JsonNode value = node.get(field);
        if (value != null && value.isNull()) {
            throw new JobSpecException(path(field), "must not be null; leave the field out");
        }
        return Optional.ofNullable(value);
    }

    JsonNode required(String field) {
        return optional(field).orElseThrow(() -> new JobSpecException(path(field), "is required"));
    }

    String text(String field) {
        return asText(required(field), path(field));
    }

    OptionalLong optionalLong(String field) {
        Optional<JsonNode> value = optional(field);
        return value.isEmpty()
                ? OptionalLong.empty()
                : OptionalLong.of(asLong(value.get(), path(field)));
    }

    Optional<Boolean> optionalBoolean(String field) {
        Optional<JsonNode> value = optional(field);
        if (value.isPresent() && !value.get().isBoolean()) {
            throw new JobSpecException(
                    path(field), "must be true or false, got " + typeOf(value.get()));
        }
        return value.map(JsonNode::booleanValue);
    }

    long requiredLong(String field) {
        return asLong(required(field), path(field));
    }

    List<JsonNode> array(String field) {
        return asArray(required(field), path(field));
    }

    static String asText(JsonNode value, String path) {
        if (!value.isTextual()) {
            throw new JobSpecException(path, "must be a string, got " + typeOf(value));
        }
        return value.textValue();
    }

    static long asLong(JsonNode value, String path) {
        if (!value.isIntegralNumber()) {
            throw new JobSpecException(path, "must be an integer, got " + typeOf(value));
        }
        if (!value.canConvertToLong()) {
            throw new JobSpecException(path, "is out of range, got " + value.asText());
        }
        return value.longValue();
    }

    static List<JsonNode> asArray(JsonNode value, String path) {
        if (!value.isArray()) {
            throw new JobSpecException(path, "must be an array, got " + typeOf(value));
        }
        List<JsonNode> items = new ArrayList<>();
        value.forEach(items::add);
        return items;
    }

    private static List<String> sorted(Set<String> fields) {
        return fields.stream().sorted().toList();
    }
}
