package dev.sluice.client.progress;

import dev.sluice.client.Limits;
import dev.sluice.client.annotation.PublicEvolving;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The bytes of a {@link DeliveryProgress} record on the progress topic (docs/formats.md, "Delivery
 * progress"): little-endian, fixed fields first, then the job and stream names as str16.
 *
 * <pre>
 * 0  u16 version (1 or 2)  2  u16 flags (bit 0: end of stream; version 2, bit 1: resubscribed)
 * 4  u16 reader_index      6  u16 reader_count
 * 8  i64 delivered_seq     16 i64 delivered_bytes
 * 24 str16 job             .. str16 stream
 * </pre>
 *
 * <p>Version 2 adds only the flag {@code RESUBSCRIBED}; the encoder writes version 1 whenever no
 * version-2 flag is set, so that decoders of version 1 keep reading every record that needs nothing
 * new.
 *
 * <p>Decoding is strict: anything the format does not allow is refused with an {@link
 * IllegalArgumentException} naming the field, in the {@code field = value: expectation} form of the
 * control protocol's codecs.
 */
@PublicEvolving
public final class DeliveryProgressCodec {
    /** The first version: flag bit 0 only. */
    public static final int VERSION_1 = 1;

    /** The newest version: version 1 plus flag bit 1, {@link #FLAG_RESUBSCRIBED}. */
    public static final int VERSION = 2;

    public static final int FLAG_END_OF_STREAM = 1;
    public static final int FLAG_RESUBSCRIBED = 2;

    /** Bytes before the names. */
    static final int FIXED_SIZE = 24;

    private DeliveryProgressCodec() {}

    /** The record's key, UTF-8 {@code job/stream}. */
    public static byte[] key(DeliveryProgress progress) {
        return progress.key().getBytes(StandardCharsets.UTF_8);
    }

    public static byte[] encode(DeliveryProgress progress) {
        byte[] job = progress.job().getBytes(StandardCharsets.UTF_8);
        byte[] stream = progress.stream().getBytes(StandardCharsets.UTF_8);
        ByteBuffer out =
                ByteBuffer.allocate(FIXED_SIZE + 2 + job.length + 2 + stream.length)
                        .order(ByteOrder.LITTLE_ENDIAN);
        int flags =
                (progress.endOfStream() ? FLAG_END_OF_STREAM : 0)
                        | (progress.resubscribed() ? FLAG_RESUBSCRIBED : 0);
        out.putShort((short) ((flags & FLAG_RESUBSCRIBED) != 0 ? VERSION : VERSION_1));
        out.putShort((short) flags);
        out.putShort((short) progress.readerIndex());
        out.putShort((short) progress.readerCount());
        out.putLong(progress.deliveredSeq());
        out.putLong(progress.deliveredBytes());
        out.putShort((short) job.length).put(job);
        out.putShort((short) stream.length).put(stream);
        return out.array();
    }

    /**
     * Reads a record's value.
     *
     * @throws IllegalArgumentException naming the first field the format does not allow
     */
    public static DeliveryProgress decode(byte[] value) {
        if (value == null) {
            throw new IllegalArgumentException("value = null: a progress record has a value");
        }
        ByteBuffer in = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        if (value.length < FIXED_SIZE) {
            throw new IllegalArgumentException(
                    "length = " + value.length + ": at least " + FIXED_SIZE + " bytes");
        }
        int version = Short.toUnsignedInt(in.getShort());
        if (version != VERSION_1 && version != VERSION) {
            throw new IllegalArgumentException(
                    "version = " + version + ": must be " + VERSION_1 + " or " + VERSION);
        }
        int flags = Short.toUnsignedInt(in.getShort());
        if (version == VERSION_1 && (flags & ~FLAG_END_OF_STREAM) != 0) {
            throw new IllegalArgumentException(
                    "flags = " + flags + ": only bit 0 (end of stream) is defined in version 1");
        }
        if ((flags & ~(FLAG_END_OF_STREAM | FLAG_RESUBSCRIBED)) != 0) {
            throw new IllegalArgumentException(
                    "flags = "
                            + flags
                            + ": only bit 0 (end of stream) and bit 1 (resubscribed) are defined");
        }
        int readerIndex = Short.toUnsignedInt(in.getShort());
        int readerCount = Short.toUnsignedInt(in.getShort());
        long deliveredSeq = in.getLong();
        long deliveredBytes = in.getLong();
        String job = str16(in, "job");
        String stream = str16(in, "stream");
        if (in.hasRemaining()) {
            throw new IllegalArgumentException(
                    "length = "
                            + value.length
                            + ": "
                            + in.remaining()
                            + " bytes left after the last field");
        }
        return new DeliveryProgress(
                job,
                stream,
                readerIndex,
                readerCount,
                deliveredSeq,
                deliveredBytes,
                (flags & FLAG_END_OF_STREAM) != 0,
                (flags & FLAG_RESUBSCRIBED) != 0);
    }

    /**
     * Reads a record's value and checks it against its key, which must be the value's {@code
     * job/stream}.
     */
    public static DeliveryProgress decode(byte[] key, byte[] value) {
        DeliveryProgress progress = decode(value);
        String text = key == null ? null : new String(key, StandardCharsets.UTF_8);
        if (!progress.key().equals(text)) {
            throw new IllegalArgumentException(
                    "key = " + text + ": must be the value's job/stream, " + progress.key());
        }
        return progress;
    }

    private static String str16(ByteBuffer in, String field) {
        if (in.remaining() < 2) {
            throw new IllegalArgumentException(
                    field + " = (missing): the value ends before its length");
        }
        int length = Short.toUnsignedInt(in.getShort());
        if (length > in.remaining()) {
            throw new IllegalArgumentException(
                    field
                            + " = "
                            + length
                            + " bytes: runs past the value's end ("
                            + in.remaining()
                            + " left)");
        }
        ByteBuffer bytes = in.slice(in.position(), length);
        in.position(in.position() + length);
        try {
            CharBuffer chars =
                    StandardCharsets.UTF_8
                            .newDecoder()
                            .onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .decode(bytes);
            return chars.toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException(field + " = " + length + " bytes: not UTF-8");
        }
    }

    static void check(
            String job,
            String stream,
            int readerIndex,
            int readerCount,
            long deliveredSeq,
            long deliveredBytes,
            boolean endOfStream) {
        checkName("job", job);
        checkName("stream", stream);
        if (!Limits.isReaderCount(readerCount)) {
            throw new IllegalArgumentException("reader_count = " + readerCount + ": 1 to 65535");
        }
        if (readerIndex < 0 || readerIndex >= readerCount) {
            throw new IllegalArgumentException(
                    "reader_index = "
                            + readerIndex
                            + ": 0 to reader_count - 1 ("
                            + (readerCount - 1)
                            + ")");
        }
        if (deliveredSeq < -1) {
            throw new IllegalArgumentException(
                    "delivered_seq = " + deliveredSeq + ": -1 (none yet) or a seq");
        }
        if (deliveredBytes < 0 || (deliveredSeq == -1 && deliveredBytes != 0)) {
            throw new IllegalArgumentException(
                    "delivered_bytes = "
                            + deliveredBytes
                            + ": at least 0, and 0 while delivered_seq is -1");
        }
        if (endOfStream && deliveredSeq == -1) {
            throw new IllegalArgumentException(
                    "flags = 1: the end of a stream comes with its last seq, not delivered_seq -1");
        }
    }

    public static void checkName(String field, String name) {
        if (!Limits.isName(name)) {
            throw new IllegalArgumentException(
                    field + " = " + name + ": 1 to 128 characters of [A-Za-z0-9._-]");
        }
    }
}
