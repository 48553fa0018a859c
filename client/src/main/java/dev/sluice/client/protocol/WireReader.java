package dev.sluice.client.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads a frame's fields in order, little-endian, never past the frame's end; every failure is a
 * {@link ProtocolException} naming the field.
 */
final class WireReader {
    private final ByteBuffer bytes;

    WireReader(ByteBuffer bytes) {
        this.bytes = bytes.slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    int remaining() {
        return bytes.remaining();
    }

    int u16(String field) throws ProtocolException {
        need(field, 2, "2 bytes");
        return Short.toUnsignedInt(bytes.getShort());
    }

    long u32(String field) throws ProtocolException {
        need(field, 4, "4 bytes");
        return Integer.toUnsignedLong(bytes.getInt());
    }

    /** An unsigned 64-bit field, as Java's long holds it: the same 64 bits. */
    long u64(String field) throws ProtocolException {
        need(field, 8, "8 bytes");
        return bytes.getLong();
    }

    int i32(String field) throws ProtocolException {
        need(field, 4, "4 bytes");
        return bytes.getInt();
    }

    long i64(String field) throws ProtocolException {
        need(field, 8, "8 bytes");
        return bytes.getLong();
    }

    /** A str16: u16 length, then well-formed UTF-8. */
    String str16(String field) throws ProtocolException {
        int length = u16(field);
        byte[] raw = take(field, length);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new ProtocolException(field, quote(raw), "not well-formed UTF-8");
        }
    }

    /** A bytes32: u32 length, then the bytes. */
    byte[] bytes32(String field) throws ProtocolException {
        return take(field, u32(field));
    }

    private byte[] take(String field, long length) throws ProtocolException {
        need(field, length, length + " bytes");
        byte[] raw = new byte[(int) length];
        bytes.get(raw);
        return raw;
    }

    private void need(String field, long size, String what) throws ProtocolException {
        if (size > bytes.remaining()) {
            throw new ProtocolException(
                    field,
                    what,
                    "runs past the end of the frame, which has "
                            + bytes.remaining()
                            + " bytes left");
        }
    }

    /**
     * Quotes at most 64 bytes for an error message: recognisable, bounded in size, and ASCII (other
     * bytes as {@code \xNN}), as the C++ codec does.
     */
    static String quote(byte[] raw) {
        int max = 64;
        StringBuilder quoted = new StringBuilder("\"");
        for (int i = 0; i < Math.min(raw.length, max); i++) {
            int b = raw[i] & 0xFF;
            if (b >= 0x20 && b < 0x7F && b != '"' && b != '\\') {
                quoted.append((char) b);
            } else {
                quoted.append(String.format("\\x%02x", b));
            }
        }
        if (raw.length > max) {
            quoted.append("...");
        }
        return quoted.append('"').toString();
    }

    static String quote(String text) {
        return quote(text.getBytes(StandardCharsets.UTF_8));
    }
}
