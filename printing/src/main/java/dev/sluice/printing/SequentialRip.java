package dev.sluice.printing;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * The reference run: one thread computes every row of every channel in order, as a RIP without
 * Sluice would. Its digests are what the streamed channels must hash to.
 */
public final class SequentialRip {

    private SequentialRip() {}

    /** The SHA-256 of each channel's whole raster, rows in order. */
    public static Map<Channel, byte[]> sha256(RasterImageProcessor rip) {
        Map<Channel, byte[]> digests = new EnumMap<>(Channel.class);
        byte[] row = new byte[rip.widthPx()];
        for (Channel channel : Channel.values()) {
            MessageDigest digest = newSha256();
            for (int y = 0; y < rip.heightPx(); y++) {
                rip.row(channel, y, row, 0);
                digest.update(row);
            }
            digests.put(channel, digest.digest());
        }
        return digests;
    }

    public static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
