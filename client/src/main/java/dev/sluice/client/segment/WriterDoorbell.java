package dev.sluice.client.segment;

import java.io.Closeable;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The writer's end of the doorbell (spec "Doorbell"): listens at {@code <segment>.bell}, keeps one
 * connection per lane, rings a parked reader and is rung by readers that freed a slot.
 *
 * <p>Accepting is lazy, as the spec asks: the writer accepts while parked, after it sees a lane
 * newly ATTACHED, and when it must ring a lane it has no connection for yet (the reader sends its
 * lane byte before it ever parks, so the connection is queued by then). In steady state no call
 * here makes a system call.
 *
 * <p>Peers are checked with {@code SO_PEERCRED} (JDK 16+ {@link ExtendedSocketOptions}): only the
 * user owning the socket file, which is this process's user, may ring. The 0600 mode of the socket
 * file already keeps others from connecting; the check is the spec's second fence.
 */
final class WriterDoorbell implements IdleStrategy.Bell, Closeable {
    private static final ByteBuffer ONE = ByteBuffer.allocateDirect(1);

    private final Path path;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final UserPrincipal owner;
    private final SocketChannel[] lanes;
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(64);

    private WriterDoorbell(
            Path path,
            ServerSocketChannel server,
            Selector selector,
            UserPrincipal owner,
            int laneCount) {
        this.path = path;
        this.server = server;
        this.selector = selector;
        this.owner = owner;
        this.lanes = new SocketChannel[laneCount];
    }

    /**
     * Binds under a temporary name, restricts it to 0600 and renames it into place, so the socket
     * is never reachable with looser permissions than the segment.
     */
    static WriterDoorbell listen(Path path, int laneCount) throws IOException {
        Path tmp = TemporaryName.beside(path);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(tmp));
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
            Files.move(
                    tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            server.configureBlocking(false);
            Selector selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
            return new WriterDoorbell(path, server, selector, Files.getOwner(path), laneCount);
        } catch (IOException | RuntimeException e) {
            server.close();
            Files.deleteIfExists(tmp);
            throw e;
        }
    }

    /** Wakes the reader of {@code lane}; a lane without a working connection is skipped. */
    void ring(int lane) throws IOException {
        if (lanes[lane] == null) {
            acceptPending();
        }
        SocketChannel channel = lanes[lane];
        if (channel == null) {
            return;
        }
        try {
            // A full socket buffer (0 bytes written) already holds bytes that will wake the reader.
            channel.write(ONE.duplicate());
        } catch (IOException e) {
            drop(lane);
        }
    }

    /** Accepts the connections waiting in the queue, without blocking. */
    void acceptPending() throws IOException {
        poll(0);
    }

    /** Forgets the connection of a lane the writer reclaimed. */
    void drop(int lane) throws IOException {
        SocketChannel channel = lanes[lane];
        lanes[lane] = null;
        if (channel != null) {
            channel.close();
        }
    }

    @Override
    public boolean await(long nanos) throws IOException {
        poll(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)));
        return true;
    }

    /** Selects for up to {@code millis} ({@code 0}: without blocking) and handles what is ready. */
    private void poll(long millis) throws IOException {
        int ready = millis == 0 ? selector.selectNow() : selector.select(millis);
        if (ready == 0) {
            return;
        }
        Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
        while (keys.hasNext()) {
            SelectionKey key = keys.next();
            keys.remove();
            if (!key.isValid()) {
                continue;
            }
            if (key.isAcceptable()) {
                acceptAll();
            } else if (key.isReadable()) {
                read(key);
            }
        }
    }

    private void acceptAll() throws IOException {
        SocketChannel channel;
        while ((channel = server.accept()) != null) {
            if (!trusted(channel)) {
                channel.close();
                continue;
            }
            channel.configureBlocking(false);
            SelectionKey key = channel.register(selector, SelectionKey.OP_READ);
            // The lane byte was sent right after connecting: usually it is already here.
            read(key);
        }
    }

    private boolean trusted(SocketChannel channel) {
        try {
            UnixDomainPrincipal peer = channel.getOption(ExtendedSocketOptions.SO_PEERCRED);
            return peer.user().equals(owner);
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** The first byte of a connection names its lane; later bytes only mean "look again". */
    private void read(SelectionKey key) throws IOException {
        SocketChannel channel = (SocketChannel) key.channel();
        scratch.clear();
        int n;
        try {
            n = channel.read(scratch);
        } catch (IOException e) {
            n = -1;
        }
        if (n < 0) {
            closeConnection(key);
            return;
        }
        if (n > 0 && key.attachment() == null) {
            int lane = scratch.get(0) & 0xFF;
            if (lane >= lanes.length) {
                closeConnection(key);
                return;
            }
            if (lanes[lane] != null && lanes[lane] != channel) {
                lanes[lane].close();
            }
            lanes[lane] = channel;
            key.attach(lane);
        }
    }

    private void closeConnection(SelectionKey key) throws IOException {
        Object lane = key.attachment();
        if (lane != null && lanes[(Integer) lane] == key.channel()) {
            lanes[(Integer) lane] = null;
        }
        key.channel().close();
    }

    @Override
    public void close() throws IOException {
        for (int lane = 0; lane < lanes.length; lane++) {
            drop(lane);
        }
        selector.close();
        server.close();
        Files.deleteIfExists(path);
    }
}
