package dev.sluice.client.brokerd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.protocol.ControlCodec;
import dev.sluice.client.protocol.Frame;
import dev.sluice.client.protocol.FrameReader;
import dev.sluice.client.protocol.StartPosition;
import dev.sluice.client.protocol.Subscribe;
import dev.sluice.client.protocol.Subscribed;
import dev.sluice.client.segment.ObjectKind;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BrokerdClientTest {
    private static final String SEGMENT = "sluice-brokerd.1.0badf00d.0123456789abcdef";

    @TempDir Path dir;

    /**
     * A daemon that answers the first SUBSCRIBE on its one connection with a SUBSCRIBED naming
     * {@code segmentDir} in protocol {@code version}, then reads until the reader hangs up; the
     * future completes then, or with what went wrong.
     */
    private CompletableFuture<Void> fakeDaemon(
            ServerSocketChannel server, Path segmentDir, int version) {
        return CompletableFuture.runAsync(
                () -> {
                    try (SocketChannel peer = server.accept()) {
                        FrameReader frames = new FrameReader(peer);
                        for (Frame frame; (frame = frames.read()) != null; ) {
                            if (frame.message() instanceof Subscribe) {
                                Subscribed answer =
                                        new Subscribed(
                                                1,
                                                ObjectKind.RECORDS,
                                                0,
                                                List.of(0),
                                                SEGMENT,
                                                new byte[] {1},
                                                version == 1 ? "" : segmentDir.toString());
                                peer.write(
                                        ByteBuffer.wrap(
                                                ControlCodec.encode(
                                                        new Frame(
                                                                frame.requestId(),
                                                                answer,
                                                                version))));
                            }
                        }
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                });
    }

    private static SubscriptionRequest oneRecordsPartition() {
        return SubscriptionRequest.builder("t").partitions(1, StartPosition.EARLIEST).build();
    }

    /**
     * A reader that does not see the daemon's segment folder (another host, another IPC namespace)
     * is told the file's path and the daemon's sluice.segment.dir, not only NoSuchFileException.
     */
    @Test
    void aSegmentTheReaderCannotOpenIsReportedWithItsPathAndTheDaemonsFolder() throws Exception {
        Path socket = dir.resolve("daemon.sock");
        Path daemonsFolder = dir.resolve("the-daemons-shm"); // absent from this reader's view
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture<Void> daemon = fakeDaemon(server, daemonsFolder, 2);
            BrokerdClient client = BrokerdClient.builder(socket).build();
            assertThatThrownBy(() -> client.subscribe(oneRecordsPartition()))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(
                            "cannot open the segment " + daemonsFolder.resolve(SEGMENT))
                    .hasMessageContaining("sluice.segment.dir " + daemonsFolder + " ")
                    .hasCauseInstanceOf(NoSuchFileException.class);
            daemon.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aDaemonThatAnswersInVersionOneNamesNoFolderAndIsRefused() throws Exception {
        Path socket = dir.resolve("daemon.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture<Void> daemon = fakeDaemon(server, dir, 1);
            BrokerdClient client = BrokerdClient.builder(socket).build();
            assertThatThrownBy(() -> client.subscribe(oneRecordsPartition()))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("protocol version 1")
                    .hasMessageContaining("sluice.segment.dir");
            daemon.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void theBuilderRefusesTimeoutsThatCannotWork() {
        assertThatThrownBy(
                        () ->
                                BrokerdClient.builder(dir.resolve("s"))
                                        .heartbeatTimeout(Duration.ZERO)
                                        .build())
                .hasMessageContaining("positive");
        assertThatThrownBy(
                        () ->
                                BrokerdClient.builder(dir.resolve("s"))
                                        .heartbeatTimeout(Duration.ofMillis(5))
                                        .build())
                .hasMessageContaining("at least 40 ms");
    }

    @Test
    void noDaemonOnTheSocketIsAnErrorAtOnceNamingThePathAndTheSetting() {
        Path socket = dir.resolve("absent.sock");
        BrokerdClient client = BrokerdClient.builder(socket).build();
        assertThatThrownBy(
                        () ->
                                client.subscribe(
                                        SubscriptionRequest.builder("t")
                                                .partitions(1, StartPosition.EARLIEST)
                                                .build()))
                .isInstanceOf(BrokerdUnreachableException.class)
                .hasMessageStartingWith("cannot connect to sluice-brokerd at " + socket + ": ")
                .hasMessageContaining("start the daemon")
                .hasMessageContaining("sluice.socket")
                .satisfies(
                        e ->
                                assertThat(((BrokerdUnreachableException) e).socket())
                                        .isEqualTo(socket));
        assertThat(dir.resolve("absent.sock")).doesNotExist();
    }
}
