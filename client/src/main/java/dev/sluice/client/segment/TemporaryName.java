package dev.sluice.client.segment;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Temporary names beside a segment's files: {@code NAME.tmp-} and 16 random hex digits (spec "File
 * layout"). The folder is shared with every local user ({@code /dev/shm}): a temporary name anyone
 * can predict, as {@code NAME.tmp-PID} was, can be created first and make the writer fail.
 */
final class TemporaryName {
    private static final SecureRandom RANDOM = new SecureRandom();

    /** How often a writer draws another name when one is taken, by chance or on purpose. */
    static final int ATTEMPTS = 8;

    private TemporaryName() {}

    static Path beside(Path path) {
        byte[] random = new byte[8];
        RANDOM.nextBytes(random);
        return path.resolveSibling(path.getFileName() + ".tmp-" + HexFormat.of().formatHex(random));
    }
}
