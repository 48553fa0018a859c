package dev.sluice.flink.source.reader.push;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.brokerd.BrokerdException;
import dev.sluice.client.brokerd.RecordsSubscription;
import dev.sluice.client.brokerd.SegmentFolderException;
import dev.sluice.client.brokerd.SubscriptionRequest;
import dev.sluice.client.protocol.ErrorCode;
import dev.sluice.client.protocol.StartPosition;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.flink.annotation.Internal;

/**
 * What reading in PUSH mode needs of this process, checked before a reader chooses it
 * (docs/flink-source.md, "What PUSH needs"): Arrow's access to direct memory, a daemon on the
 * socket that accepts this process's uid, and the daemon's segment folder readable from here.
 * Unmet, PUSH would fail at its first batch, with Arrow's message that names no setting, and a
 * restarted job would fail the same way again.
 */
@Internal
public final class PushRequirements {
    /** Where to put JVM options of a TaskManager, and the one PUSH needs. */
    static final String ADD_OPENS_SETTING =
            "env.java.opts.all: --add-opens=java.base/java.nio=ALL-UNNAMED";

    // A SUBSCRIBE is answered once the daemon has read the topic's metadata.
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);

    /**
     * @param daemonAnswers whether a daemon listens on the socket at all
     * @param unmet what PUSH needs and this process lacks, each naming what to set
     */
    public record Verdict(boolean daemonAnswers, List<String> unmet) {}

    private PushRequirements() {}

    /** Checks every need; subscribes to {@code topic} for a moment to see the daemon's answer. */
    public static Verdict check(Path socket, String topic) {
        List<String> unmet = new ArrayList<>();
        memoryAccessProblem().ifPresent(unmet::add);
        if (!Files.exists(socket)) {
            return new Verdict(false, unmet);
        }
        BrokerdClient client =
                BrokerdClient.builder(socket)
                        .requestTimeout(PROBE_TIMEOUT)
                        .reconnectTimeout(PROBE_TIMEOUT)
                        .build();
        // The smallest segment there is, for the topic's first partition from its end: the
        // daemon checks the uid on accepting the connection and makes the segment on SUBSCRIBE.
        SubscriptionRequest probe =
                SubscriptionRequest.builder(topic)
                        .partitions(1, StartPosition.LATEST)
                        .slots(1, 256)
                        .maxOpenBatches(1)
                        .build();
        try (RecordsSubscription subscription = client.subscribe(probe)) {
            return new Verdict(true, unmet);
        } catch (BrokerdException e) {
            if (e.code() == ErrorCode.NOT_AUTHORIZED) {
                unmet.add(notAuthorized(socket, e));
            }
            // Any other refusal (a topic not created yet, no room for a segment) is the daemon
            // answering this process; PUSH handles it as it comes.
            return new Verdict(true, unmet);
        } catch (SegmentFolderException e) {
            unmet.add("the daemon's segment folder readable from this process: " + e.getMessage());
            return new Verdict(true, unmet);
        } catch (IOException e) {
            return new Verdict(false, unmet);
        } catch (UnsupportedOperationException e) {
            // Arrow without memory access fails here too; that need is already named.
            return new Verdict(true, unmet);
        }
    }

    /**
     * Arrow Java reads a segment's buffers at their addresses, which it takes from a {@code
     * java.nio.Buffer} field that Java 17 hides unless {@code java.nio} is opened to it. Asks Arrow
     * itself, as a batch would, and turns its answer into the setting that fixes it.
     */
    static Optional<String> memoryAccessProblem() {
        try {
            MemoryUtil.getByteBufferAddress(ByteBuffer.allocateDirect(1));
            return Optional.empty();
        } catch (UnsupportedOperationException | LinkageError e) {
            return Optional.of(
                    "direct memory access for Arrow, which this JVM denies ("
                            + e.getMessage()
                            + "): set "
                            + ADD_OPENS_SETTING
                            + " in the Flink configuration (or give the TaskManager's JVM that"
                            + " option)");
        }
    }

    private static String notAuthorized(Path socket, BrokerdException e) {
        String uid = "this process's uid";
        String gid = "its gid";
        try {
            uid = "uid " + Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            gid = "gid " + Files.getAttribute(Path.of("/proc/self"), "unix:gid");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException ignored) {
            // Not Linux: the message names no number.
        }
        return "the daemon accepting this process: sluice-brokerd at "
                + socket
                + " refuses "
                + uid
                + " ("
                + e.getMessage()
                + "): grant it the topic in the daemon's sluice.allowed.topics, or every topic"
                + " in sluice.allowed.uids (or "
                + gid
                + " in sluice.allowed.gids), docs/brokerd.md, Security model";
    }
}
