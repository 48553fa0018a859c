package dev.sluice.client;

import dev.sluice.client.annotation.Internal;
import java.util.regex.Pattern;

/**
 * The names and limits every part of the Java side checks against, in one place, as the native side
 * keeps them in {@code layout::kMaxSlots}. Each caller words its own error, so that a message names
 * the setting or field it is about; the rule itself lives only here.
 */
@Internal
public final class Limits {

    /**
     * Slots one segment holds at most: the header's {@code slot_count} and SUBSCRIBE's bound
     * (docs/formats.md, Header and SUBSCRIBE).
     */
    public static final int MAX_SLOTS = 65536;

    /** The smallest slot: a header and a small object (docs/formats.md, SUBSCRIBE). */
    public static final long MIN_SLOT_SIZE = 256;

    /** Slots are whole multiples of this many bytes (docs/formats.md, Header). */
    public static final long SLOT_ALIGNMENT = 64;

    /** The largest slot: one Java mapping holds at most 2^31 - 1 bytes; 2^31 - 64. */
    public static final long MAX_SLOT_SIZE = (1L << 31) - SLOT_ALIGNMENT;

    /** Kafka's own limit on the length of a topic name. */
    public static final int MAX_TOPIC_NAME_LENGTH = 249;

    /**
     * The longest Sluice name (job id, stream, output location, channel): names travel in Kafka
     * keys and headers and in file names on output nodes (docs/formats.md, Job commands and
     * statuses).
     */
    public static final int MAX_NAME_LENGTH = 128;

    /**
     * Readers that share one stream at most: delivery progress carries {@code reader_count} as a
     * u16 (docs/formats.md, Delivery progress).
     */
    public static final int MAX_READERS_PER_STREAM = 65535;

    private static final Pattern TOPIC_NAME =
            Pattern.compile("[A-Za-z0-9._-]{1," + MAX_TOPIC_NAME_LENGTH + "}");
    private static final Pattern NAME =
            Pattern.compile("[A-Za-z0-9._-]{1," + MAX_NAME_LENGTH + "}");

    private Limits() {}

    /**
     * Whether a string is a name Kafka accepts for a topic: 1 to 249 characters of {@code
     * [A-Za-z0-9._-]}, and neither {@code .} nor {@code ..}.
     */
    public static boolean isTopicName(String topic) {
        return topic != null
                && TOPIC_NAME.matcher(topic).matches()
                && !topic.equals(".")
                && !topic.equals("..");
    }

    /** Whether a string is a Sluice name: 1 to 128 characters of {@code [A-Za-z0-9._-]}. */
    public static boolean isName(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    /** Whether a character is one of {@code [A-Za-z0-9._-]}, the alphabet of every name. */
    public static boolean isNameCharacter(char c) {
        return (c >= 'A' && c <= 'Z')
                || (c >= 'a' && c <= 'z')
                || (c >= '0' && c <= '9')
                || c == '.'
                || c == '_'
                || c == '-';
    }

    /** Whether this many readers can share a stream: 1 to {@value #MAX_READERS_PER_STREAM}. */
    public static boolean isReaderCount(int readerCount) {
        return readerCount >= 1 && readerCount <= MAX_READERS_PER_STREAM;
    }

    /** Whether a slot can have this size: a multiple of 64 from 256 to 2^31 - 64. */
    public static boolean isSlotSize(long slotSize) {
        return slotSize >= MIN_SLOT_SIZE
                && slotSize <= MAX_SLOT_SIZE
                && slotSize % SLOT_ALIGNMENT == 0;
    }

    /** Whether a segment can have this many slots: 1 to {@value #MAX_SLOTS}. */
    public static boolean isSlotCount(long slotCount) {
        return slotCount >= 1 && slotCount <= MAX_SLOTS;
    }
}
