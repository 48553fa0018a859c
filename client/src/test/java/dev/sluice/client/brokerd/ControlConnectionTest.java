package dev.sluice.client.brokerd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.protocol.ControlCodec;
import dev.sluice.client.protocol.ErrorCode;
import dev.sluice.client.protocol.ErrorMessage;
import dev.sluice.client.protocol.Frame;
import dev.sluice.client.protocol.StreamGap;
import dev.sluice.embedded.junit.Await;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A connection's two threads end with it (docs/architecture.md, "Threads"); what the daemon sends
 * answering no request reaches the subscription.
 */
class ControlConnectionTest {
    @TempDir Path dir;

    @Test
    void closeReturnsOnceTheReaderAndHeartbeatThreadsEnded() throws Exception {
        Path socket = dir.resolve("brokerd.sock");
        try (ServerSocketChannel daemon = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            daemon.bind(UnixDomainSocketAddress.of(socket));
            Set<Thread> before = Thread.getAllStackTraces().keySet();
            ControlConnection connection = ControlConnection.open(socket, Duration.ofSeconds(10));
            try (SocketChannel accepted = daemon.accept()) {
                List<Thread> started =
                        Thread.getAllStackTraces().keySet().stream()
                                .filter(t -> !before.contains(t))
                                .filter(t -> t.getName().startsWith("sluice-brokerd-"))
                                .toList();
                assertThat(started)
                        .extracting(Thread::getName)
                        .contains("sluice-brokerd-control", "sluice-brokerd-heartbeat");

                connection.close();

                assertThat(started).noneMatch(Thread::isAlive);
                assertThat(connection.isOpen()).isFalse();
            }
        }
    }

    @Test
    void aStreamGapAnsweringNoRequestIsKeptForTheSubscriptionAndTheConnectionStaysOpen()
            throws Exception {
        Path socket = dir.resolve("brokerd.sock");
        StreamGap gap = new StreamGap(7, 2, 3, 1_500_000_000L, "job-1", "cyan");
        try (ServerSocketChannel daemon = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            daemon.bind(UnixDomainSocketAddress.of(socket));
            try (ControlConnection connection =
                            ControlConnection.open(socket, Duration.ofSeconds(10));
                    SocketChannel accepted = daemon.accept()) {
                // docs/formats.md, STREAM_GAP: request id 0, in version 3.
                accepted.write(ByteBuffer.wrap(ControlCodec.encode(new Frame(0, gap, 3))));

                // Polled: the reader thread queues it, and nothing wakes this one.
                StreamGap received =
                        Await.untilNonNull(
                                "the STREAM_GAP reaches the connection's queue",
                                Duration.ofSeconds(10),
                                connection::nextStreamGap);
                assertThat(received).isEqualTo(gap);
                assertThat(connection.nextStreamGap()).as("taken once").isNull();
                assertThat(connection.isOpen()).isTrue();
            }
        }
    }

    @Test
    void anErrorNamingASubscriptionAndTheEndOfTheConnectionAreToldAtOnceWithoutAPoll()
            throws Exception {
        Path socket = dir.resolve("brokerd.sock");
        ErrorMessage error = new ErrorMessage(9, ErrorCode.BAD_REQUEST, 1, 3, "object 3: no rows");
        try (ServerSocketChannel daemon = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            daemon.bind(UnixDomainSocketAddress.of(socket));
            try (ControlConnection connection =
                    ControlConnection.open(socket, Duration.ofSeconds(10))) {
                try (SocketChannel accepted = daemon.accept()) {
                    accepted.write(ByteBuffer.wrap(ControlCodec.encode(new Frame(0, error, 1))));
                    assertThat(connection.firstSubscriptionError().get(10, TimeUnit.SECONDS))
                            .isEqualTo(error);
                    assertThat(connection.ended()).isNotDone();
                    assertThat(connection.isOpen()).isTrue();
                }
                // The daemon's end of the socket closed (reset: it left the heartbeat unread).
                IOException cause = connection.ended().get(10, TimeUnit.SECONDS);
                assertThat(connection.isOpen()).isFalse();
                assertThat(connection.failure()).isSameAs(cause);
            }
        }
    }

    @Test
    void aDaemonThatRefusesAtOnceGivesItsReasonWhoeverSeesItFirst() throws Exception {
        // As the daemon refuses a uid it does not allow: ERROR on accepting, then close. Whether
        // open() or the reader thread meets the refusal first is a race, run many times: either
        // way the caller gets the daemon's reason, from open() or as the connection's end.
        Path socket = dir.resolve("brokerd.sock");
        ErrorMessage refusal =
                new ErrorMessage(0, ErrorCode.NOT_AUTHORIZED, 1, 3, "uid 1000 not allowed");
        int attempts = 300;
        try (ServerSocketChannel daemon = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            daemon.bind(UnixDomainSocketAddress.of(socket));
            Thread refuser =
                    new Thread(
                            () -> {
                                for (int i = 0; i < attempts; i++) {
                                    try (SocketChannel accepted = daemon.accept()) {
                                        accepted.write(
                                                ByteBuffer.wrap(
                                                        ControlCodec.encode(
                                                                new Frame(0, refusal, 1))));
                                    } catch (IOException e) {
                                        return;
                                    }
                                }
                            });
            refuser.start();
            for (int i = 0; i < attempts; i++) {
                IOException reason;
                try {
                    ControlConnection connection =
                            ControlConnection.open(socket, Duration.ofSeconds(10));
                    reason = connection.ended().get(10, TimeUnit.SECONDS);
                    connection.close();
                } catch (IOException e) {
                    reason = e;
                }
                assertThat(reason)
                        .as("attempt %d", i)
                        .isInstanceOfSatisfying(
                                BrokerdException.class,
                                e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_AUTHORIZED));
            }
            refuser.join(10_000);
        }
    }
}
