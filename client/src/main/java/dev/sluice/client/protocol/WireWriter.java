package dev.sluice.client.protocol;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Appends a frame's fields, little-endian. */
final class WireWriter {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    /** Fails when the value does not fit: Java's wider ints must not wrap into a valid one. */
    void u16(String field, int value) throws ProtocolException {
        if (value < 0 || value > 0xFFFF) {
            throw new ProtocolException(field, value, "expected 0 to 65535");
        }
        fixed(value, 2);
    }

    void u32(String field, long value) throws ProtocolException {
        if (value < 0 || value > 0xFFFF_FFFFL) {
            throw new ProtocolException(field, value, "expected 0 to 4294967295");
        }
        fixed(value, 4);
    }

    void i32(int value) {
        fixed(value, 4);
    }

    void u64(long value) {
        fixed(value, 8);
    }

    /**
     * Fails only when the text has no UTF-8 form (an unpaired surrogate) or does not fit the u16
     * length; the codec checks the rest.
     */
    void str16(String field, String text) throws ProtocolException {
        byte[] utf8;
        try {
            ByteBuffer encoded =
                    StandardCharsets.UTF_8
                            .newEncoder()
                            .onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .encode(CharBuffer.wrap(text));
            utf8 = new byte[encoded.remaining()];
            encoded.get(utf8);
        } catch (CharacterCodingException e) {
            throw new ProtocolException(field, "a string", "holds an unpaired surrogate");
        }
        if (utf8.length > 0xFFFF) {
            throw new ProtocolException(field, utf8.length + " bytes", "longer than 65535");
        }
        fixed(utf8.length, 2);
        bytes.writeBytes(utf8);
    }

    void bytes32(byte[] value) {
        fixed(value.length, 4);
        bytes.writeBytes(value);
    }

    int size() {
        return bytes.size();
    }

    byte[] toByteArray() {
        return bytes.toByteArray();
    }

    private void fixed(long value, int size) {
        for (int i = 0; i < size; i++) {
            bytes.write((int) (value >>> (8 * i)));
        }
    }
}
