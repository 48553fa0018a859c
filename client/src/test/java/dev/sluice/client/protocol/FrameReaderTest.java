package dev.sluice.client.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.ReadableByteChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class FrameReaderTest {
    static List<Frame> someFrames() {
        return List.of(
                new Frame(1, new Release(7, 41)),
                new Frame(0, new Heartbeat(5, 10)),
                new Frame(2, new ErrorMessage(0, ErrorCode.INTERNAL, 1, 1, "x")),
                new Frame(3, new Close(Close.ALL)));
    }

    static byte[] concatenated(List<Frame> frames) throws Exception {
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        for (Frame frame : frames) {
            stream.write(ControlCodec.encode(frame));
        }
        return stream.toByteArray();
    }

    /** A channel over bytes that hands out at most {@code step} bytes per read. */
    static ReadableByteChannel trickle(byte[] bytes, int step) {
        ByteBuffer source = ByteBuffer.wrap(bytes);
        return new ReadableByteChannel() {
            @Override
            public int read(ByteBuffer into) {
                if (!source.hasRemaining()) {
                    return -1;
                }
                int count = Math.min(step, Math.min(into.remaining(), source.remaining()));
                into.put(source.slice().limit(count));
                source.position(source.position() + count);
                return count;
            }

            @Override
            public boolean isOpen() {
                return true;
            }

            @Override
            public void close() {}
        };
    }

    static List<Frame> readAll(FrameReader reader) throws Exception {
        List<Frame> frames = new ArrayList<>();
        for (Frame frame = reader.read(); frame != null; frame = reader.read()) {
            frames.add(frame);
        }
        return frames;
    }

    @Test
    void oneByteAtATimeGivesTheSameFrames() throws Exception {
        FrameReader reader = new FrameReader(trickle(concatenated(someFrames()), 1));
        assertThat(readAll(reader)).isEqualTo(someFrames());
    }

    @Test
    void manyFramesInOneReadComeOutOneByOne() throws Exception {
        byte[] bytes = concatenated(someFrames());
        FrameReader reader = new FrameReader(trickle(bytes, bytes.length));
        assertThat(readAll(reader)).isEqualTo(someFrames());
        assertThat(reader.read()).as("after the end").isNull();
    }

    @Test
    void anOversizedLengthIsRefusedBeforeTheBodyIsRead() {
        byte[] prefixOnly = {0x01, 0x00, 0x10, 0x00}; // 1 MiB + 1, and no body at all
        FrameReader reader = new FrameReader(trickle(prefixOnly, 4));
        assertThatThrownBy(reader::read)
                .isInstanceOf(ProtocolException.class)
                .hasMessageStartingWith("frame_length = 1048577: ");
    }

    @Test
    void anEndInsideAFrameNamesTheFrameLength() throws Exception {
        byte[] frame = ControlCodec.encode(someFrames().get(0));
        FrameReader reader = new FrameReader(trickle(Arrays.copyOf(frame, 10), 3));
        assertThatThrownBy(reader::read)
                .isInstanceOfSatisfying(
                        ProtocolException.class,
                        e -> assertThat(e.field()).isEqualTo("frame_length"))
                .hasMessage("frame_length = 28: the stream ended after 10 bytes of a frame");
    }

    @Test
    void anEndInsideTheLengthPrefixIsAnErrorToo() throws Exception {
        byte[] frame = ControlCodec.encode(someFrames().get(0));
        FrameReader reader = new FrameReader(trickle(Arrays.copyOf(frame, 2), 1));
        assertThatThrownBy(reader::read).hasMessageStartingWith("frame_length = missing: ");
    }

    @Test
    void aBrokenFrameIsRefusedNamingItsField() throws Exception {
        byte[] frame = ControlCodec.encode(someFrames().get(0));
        frame[4] = 9; // version
        FrameReader reader = new FrameReader(trickle(frame, 5));
        assertThatThrownBy(reader::read)
                .isInstanceOfSatisfying(
                        ProtocolException.class, e -> assertThat(e.field()).isEqualTo("version"));
    }

    @Test
    void framesWrittenInPiecesThroughAPipeAreReassembled() throws Exception {
        byte[] bytes = concatenated(someFrames());
        Pipe pipe = Pipe.open();
        Thread writer =
                new Thread(
                        () -> {
                            try (Pipe.SinkChannel sink = pipe.sink()) {
                                for (int at = 0; at < bytes.length; at += 5) {
                                    sink.write(
                                            ByteBuffer.wrap(
                                                    bytes, at, Math.min(5, bytes.length - at)));
                                    Thread.sleep(1);
                                }
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                        });
        writer.start();
        try (Pipe.SourceChannel source = pipe.source()) {
            assertThat(readAll(new FrameReader(source))).isEqualTo(someFrames());
        }
        writer.join();
    }
}
