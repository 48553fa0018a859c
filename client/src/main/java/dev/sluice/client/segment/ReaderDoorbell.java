package dev.sluice.client.segment;

import java.io.Closeable;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A reader's end of the doorbell: one connection to {@code <segment>.bell} that announces the lane,
 * then carries single "look again" bytes both ways. Once the connection breaks the reader goes on
 * without it (sleeping with backoff), as the spec allows.
 */
final class ReaderDoorbell implements IdleStrategy.Bell, Closeable {
    private static final long CONNECT_TIMEOUT_MILLIS = 1000;

    private final SocketChannel channel;
    private final Selector selector;
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(64);
    private final ByteBuffer one = ByteBuffer.allocateDirect(1);
    private boolean broken;

    private ReaderDoorbell(SocketChannel channel, Selector selector) {
        this.channel = channel;
        this.selector = selector;
    }

    /**
     * Connects and announces {@code lane}; {@code null} when there is no usable doorbell.
     * Non-blocking throughout: a writer that has not accepted for a while (its queue full) costs
     * this reader its doorbell, never a hang.
     */
    static ReaderDoorbell connect(Path path, int lane) {
        SocketChannel channel = null;
        Selector selector = null;
        try {
            channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            channel.configureBlocking(false);
            selector = Selector.open();
            if (!channel.connect(UnixDomainSocketAddress.of(path))) {
                channel.register(selector, SelectionKey.OP_CONNECT);
                selector.select(CONNECT_TIMEOUT_MILLIS);
                if (!channel.finishConnect()) {
                    throw new IOException("connect timed out");
                }
            }
            // One byte into an empty socket buffer always fits.
            channel.write(ByteBuffer.wrap(new byte[] {(byte) lane}));
            channel.register(selector, SelectionKey.OP_READ);
            return new ReaderDoorbell(channel, selector);
        } catch (IOException | RuntimeException e) {
            closeQuietly(selector);
            closeQuietly(channel);
            return null;
        }
    }

    /** Wakes the writer. */
    void ring() {
        if (broken) {
            return;
        }
        try {
            one.clear();
            channel.write(one);
        } catch (IOException e) {
            broken = true;
        }
    }

    @Override
    public boolean await(long nanos) throws IOException {
        if (broken) {
            return false;
        }
        if (selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos))) > 0) {
            selector.selectedKeys().clear();
            scratch.clear();
            try {
                if (channel.read(scratch) < 0) {
                    broken = true;
                }
            } catch (IOException e) {
                broken = true;
            }
        }
        return true;
    }

    @Override
    public void close() throws IOException {
        selector.close();
        channel.close();
    }

    private static void closeQuietly(Closeable closeable) {
        if (closeable != null) {
            try {
                closeable.close();
            } catch (IOException ignored) {
                // Nothing was set up on it yet.
            }
        }
    }
}
