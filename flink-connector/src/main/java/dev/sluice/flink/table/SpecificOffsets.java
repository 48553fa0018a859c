package dev.sluice.flink.table;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.table.api.ValidationException;

/**
 * The offsets of {@code scan.startup.specific-offsets} and {@code scan.bounded.specific-offsets}:
 * {@code partition:0,offset:42;partition:1,offset:300}, the Kafka SQL connector's format.
 */
final class SpecificOffsets {
    private static final Pattern PAIR = Pattern.compile("partition:(\\d+),offset:(\\d+)");

    private SpecificOffsets() {}

    /** Offset by partition; refuses anything else, naming the option and the expected format. */
    static Map<Integer, Long> parse(String text, String optionKey) {
        Map<Integer, Long> offsets = new LinkedHashMap<>();
        for (String pair : text.split(";", -1)) {
            Matcher matcher = PAIR.matcher(pair.strip());
            if (!matcher.matches()) {
                throw invalid(text, optionKey, "'" + pair + "' is no partition and offset");
            }
            int partition;
            long offset;
            try {
                partition = Integer.parseInt(matcher.group(1));
                offset = Long.parseLong(matcher.group(2));
            } catch (NumberFormatException e) {
                throw invalid(text, optionKey, "'" + pair + "' is out of range");
            }
            if (offsets.put(partition, offset) != null) {
                throw invalid(text, optionKey, "partition " + partition + " is named twice");
            }
        }
        return offsets;
    }

    private static ValidationException invalid(String text, String optionKey, String why) {
        return new ValidationException(
                String.format(
                        "Option '%s' is '%s': %s. Write it as"
                                + " 'partition:0,offset:42;partition:1,offset:300'.",
                        optionKey, text, why));
    }
}
