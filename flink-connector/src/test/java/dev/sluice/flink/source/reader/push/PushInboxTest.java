package dev.sluice.flink.source.reader.push;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class PushInboxTest {

    @Test
    @Timeout(30)
    void noDaemonAtTheSocketFailsTheReaderNamingThePathAndTheOption(@TempDir Path dir) {
        Path socket = dir.resolve("absent.sock");
        PushInbox inbox =
                new PushInbox(new PushSettings(socket.toString(), 4, 1024, 4, false), "s");
        try {
            PushMember member = inbox.member("orders");
            member.subscription.assign(member, 0, 0);

            // The shared subscription subscribes on its own thread, and fails the reader then.
            assertThatThrownBy(
                            () -> {
                                while (inbox.next(100) == null) {
                                    // next() waits for the failure, 100 ms at a time.
                                }
                            })
                    .isInstanceOf(PushInbox.PushFailedException.class)
                    .hasMessageStartingWith(
                            "the sluice-brokerd subscription failed: cannot connect to"
                                    + " sluice-brokerd at "
                                    + socket)
                    .hasMessageContaining("start the daemon")
                    .hasMessageEndingWith(
                            "(the source's daemon socket: SluiceSourceBuilder.setBrokerdSocket,"
                                    + " or the table option sluice.brokerd-socket)");
        } finally {
            inbox.close();
        }
    }
}
