package dev.sluice.client.brokerd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.protocol.Close;
import dev.sluice.client.protocol.ControlCodec;
import dev.sluice.client.protocol.ControlMessage;
import dev.sluice.client.protocol.ErrorCode;
import dev.sluice.client.protocol.ErrorMessage;
import dev.sluice.client.protocol.Frame;
import dev.sluice.client.protocol.FrameReader;
import dev.sluice.client.protocol.Heartbeat;
import dev.sluice.client.protocol.Produce;
import dev.sluice.client.protocol.Producing;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How {@link BrokerdClient#produce} reads the daemon's answers (docs/formats.md, "PRODUCE"),
 * against a peer that answers PRODUCE as the test says and records what the client sent.
 */
class LocalProducerRegistrationTest {
    private static final String TOPIC = "sluice.chunks.press-1";

    @TempDir Path dir;

    private final List<ControlMessage> received = new CopyOnWriteArrayList<>();

    /**
     * A daemon that answers PRODUCE with {@code answer(requestId)}'s frames, then reads until the
     * client hangs up; the future completes then.
     */
    private CompletableFuture<Void> fakeDaemon(
            ServerSocketChannel server, Function<Long, List<Frame>> answer) {
        return CompletableFuture.runAsync(
                () -> {
                    try (SocketChannel peer = server.accept()) {
                        FrameReader frames = new FrameReader(peer);
                        for (Frame frame; (frame = frames.read()) != null; ) {
                            if (!(frame.message() instanceof Heartbeat)) {
                                received.add(frame.message());
                            }
                            if (frame.message() instanceof Produce) {
                                for (Frame reply : answer.apply(frame.requestId())) {
                                    peer.write(ByteBuffer.wrap(ControlCodec.encode(reply)));
                                }
                            }
                        }
                    } catch (IOException e) {
                        // The client closed at once after CLOSE: what it sent was read.
                    }
                });
    }

    @Test
    void producingGivesTheIdAndCloseSendsCloseWithIt() throws Exception {
        Path socket = dir.resolve("daemon.sock");
        Path segment = dir.resolve("sluice-produce-0123456789abcdef");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture<Void> daemon =
                    fakeDaemon(server, id -> List.of(new Frame(id, new Producing(5))));
            LocalProducerRegistration registration =
                    BrokerdClient.builder(socket).build().produce(TOPIC, segment);
            assertThat(registration.producerId()).isEqualTo(5);
            assertThat(registration.isActive()).isTrue();

            registration.close();

            daemon.get(30, TimeUnit.SECONDS);
            assertThat(received)
                    .containsExactly(new Produce(TOPIC, segment.toString()), new Close(5));
            assertThat(registration.ended()).isDone();
            assertThat(registration.isActive()).isFalse();
        }
    }

    @Test
    void anErrorNamingTheProducerEndsItAtOnceWithTheDaemonsWords() throws Exception {
        Path socket = dir.resolve("daemon.sock");
        ErrorMessage malformed =
                new ErrorMessage(
                        5, ErrorCode.BAD_REQUEST, 1, 4, "producer 5: object 3 has no rows");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture<Void> daemon =
                    fakeDaemon(
                            server,
                            id ->
                                    List.of(
                                            new Frame(id, new Producing(5)),
                                            new Frame(0, malformed)));
            LocalProducerRegistration registration =
                    BrokerdClient.builder(socket).build().produce(TOPIC, dir.resolve("seg"));

            IOException cause = registration.ended().get(30, TimeUnit.SECONDS);

            assertThat(cause)
                    .isInstanceOfSatisfying(
                            BrokerdException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_REQUEST))
                    .hasMessageContaining("producer 5: object 3 has no rows");
            assertThat(registration.isActive()).isFalse();
            // The registration hung up: the fake daemon's read ends.
            daemon.get(30, TimeUnit.SECONDS);
            registration.close();
        }
    }

    @Test
    void aRefusalIsABrokerdExceptionWithTheDaemonsMessage() throws Exception {
        Path socket = dir.resolve("daemon.sock");
        ErrorMessage refusal =
                new ErrorMessage(
                        0, ErrorCode.BAD_REQUEST, 1, 4, "segment_path /x/seg: not a regular file");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture<Void> daemon =
                    fakeDaemon(server, id -> List.of(new Frame(id, refusal)));
            BrokerdClient client = BrokerdClient.builder(socket).build();
            assertThatThrownBy(() -> client.produce(TOPIC, Path.of("/x/seg")))
                    .isInstanceOfSatisfying(
                            BrokerdException.class,
                            e ->
                                    assertThat(e.daemonMessage())
                                            .isEqualTo("segment_path /x/seg: not a regular file"));
            daemon.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aRelativeSegmentPathIsRefusedBeforeAnythingIsSent() {
        BrokerdClient client = BrokerdClient.builder(dir.resolve("absent.sock")).build();
        assertThatThrownBy(() -> client.produce(TOPIC, Path.of("seg")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("segment path seg: not absolute");
    }
}
