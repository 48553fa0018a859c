package dev.sluice.flink.source.reader;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/** Whether a {@code sluice-brokerd} answers on a socket: what AUTO decides by. */
final class BrokerdProbe {
    private BrokerdProbe() {}

    static boolean answers(Path socket) {
        if (!Files.exists(socket)) {
            return false;
        }
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            return channel.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            return false;
        }
    }
}
