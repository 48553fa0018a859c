package dev.sluice.printing;

import java.util.Locale;

/** The inks of a CMYK press; each one's raster is a stream of its own. */
public enum Channel {
    CYAN,
    MAGENTA,
    YELLOW,
    BLACK;

    /** The name of this channel's stream in a print job: {@code cyan}, {@code magenta}, … */
    public String streamName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The channel whose stream has that name. */
    public static Channel ofStream(String streamName) {
        for (Channel channel : values()) {
            if (channel.streamName().equals(streamName)) {
                return channel;
            }
        }
        throw new IllegalArgumentException(
                "no ink channel named '"
                        + streamName
                        + "': expected cyan, magenta, yellow or black");
    }
}
