package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;

/**
 * Reads control frames off a blocking channel (the daemon's Unix socket), whatever sizes its reads
 * come in. A frame whose declared length is out of bounds is refused before its body is read.
 */
@Internal
public final class FrameReader {
    private final ReadableByteChannel channel;

    public FrameReader(ReadableByteChannel channel) {
        this.channel = channel;
    }

    /**
     * The next frame, decoded; {@code null} when the stream ends between frames.
     *
     * @throws ProtocolException for a frame that breaks the format, or a stream that ends inside
     *     one (naming {@code frame_length})
     */
    public Frame read() throws IOException {
        ByteBuffer prefix = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        fill(prefix);
        if (prefix.position() == 0) {
            return null;
        }
        if (prefix.hasRemaining()) {
            throw endedInside("missing", prefix.position());
        }
        long length = Integer.toUnsignedLong(prefix.getInt(0));
        ControlCodec.checkFrameLength(length);
        ByteBuffer frame = ByteBuffer.allocate(4 + (int) length);
        frame.put(prefix.flip());
        fill(frame);
        if (frame.hasRemaining()) {
            throw endedInside(length, frame.position());
        }
        return ControlCodec.decode(frame.flip());
    }

    /** Reads until the buffer is full or the stream ends. */
    private void fill(ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            int read = channel.read(buffer);
            if (read < 0) {
                return;
            }
            if (read == 0) {
                // A blocking channel never reads nothing into room; looping would spin.
                throw new IllegalStateException("FrameReader needs a blocking channel");
            }
        }
    }

    private static ProtocolException endedInside(Object frameLength, int received) {
        return new ProtocolException(
                "frame_length",
                frameLength,
                "the stream ended after " + received + " bytes of a frame");
    }
}
