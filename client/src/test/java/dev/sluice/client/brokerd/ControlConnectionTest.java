package dev.sluice.client.brokerd;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A connection's two threads end with it (docs/architecture.md, "Threads"). */
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
}
