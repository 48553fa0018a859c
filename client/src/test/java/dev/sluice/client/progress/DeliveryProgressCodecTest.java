package dev.sluice.client.progress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class DeliveryProgressCodecTest {
    private static final DeliveryProgress PROGRESS =
            new DeliveryProgress("job-1", "cyan", 1, 2, 41, 43_008, false);

    /** The example of docs/formats.md, "Delivery progress", byte for byte. */
    private static final String EXAMPLE_HEX =
            "0100" // version 1
                    + "0000" // flags
                    + "0100" // reader_index 1
                    + "0200" // reader_count 2
                    + "2900000000000000" // delivered_seq 41
                    + "00a8000000000000" // delivered_bytes 43008
                    + "0500"
                    + "6a6f622d31" // job "job-1"
                    + "0400"
                    + "6379616e"; // stream "cyan"

    @Test
    void encodesTheDocumentedBytes() {
        assertThat(HexFormat.of().formatHex(DeliveryProgressCodec.encode(PROGRESS)))
                .isEqualTo(EXAMPLE_HEX);
        assertThat(new String(DeliveryProgressCodec.key(PROGRESS), StandardCharsets.UTF_8))
                .isEqualTo("job-1/cyan");
    }

    /** The version-2 example of docs/formats.md, "Delivery progress": the same, resubscribed. */
    private static final String RESUBSCRIBED_HEX =
            "0200" // version 2
                    + "0200" // flags: RESUBSCRIBED
                    + EXAMPLE_HEX.substring(8);

    @Test
    void writesVersion2OnlyForARecordWithTheResubscribedFlag() {
        DeliveryProgress resubscribed = PROGRESS.withResubscribed(true);
        assertThat(HexFormat.of().formatHex(DeliveryProgressCodec.encode(resubscribed)))
                .isEqualTo(RESUBSCRIBED_HEX);
        assertThat(DeliveryProgressCodec.decode(HexFormat.of().parseHex(RESUBSCRIBED_HEX)))
                .isEqualTo(resubscribed);
        assertThat(resubscribed.withResubscribed(false)).isEqualTo(PROGRESS);
        assertThat(DeliveryProgressCodec.decode(example())).isEqualTo(PROGRESS);
        assertThat(PROGRESS.resubscribed()).isFalse();
    }

    @Test
    void readsAVersion2RecordWithoutVersion2Flags() {
        assertThat(DeliveryProgressCodec.decode(with(0, 2, 2))).isEqualTo(PROGRESS);
    }

    @Test
    void roundTrips() {
        DeliveryProgress end = new DeliveryProgress("j.2", "s_3", 0, 1, 9, 10_240, true);
        for (DeliveryProgress progress :
                new DeliveryProgress[] {
                    PROGRESS,
                    end,
                    new DeliveryProgress("j", "s", 65534, 65535, -1, 0, false),
                    end.withResubscribed(true),
                    new DeliveryProgress("j", "s", 0, 1, -1, 0, false, true)
                }) {
            assertThat(
                            DeliveryProgressCodec.decode(
                                    DeliveryProgressCodec.key(progress),
                                    DeliveryProgressCodec.encode(progress)))
                    .isEqualTo(progress);
        }
        assertThat(DeliveryProgressCodec.encode(end)[2]).isEqualTo((byte) 1);
        assertThat(DeliveryProgressCodec.encode(end)[0]).isEqualTo((byte) 1);
        assertThat(DeliveryProgressCodec.encode(end.withResubscribed(true))[2]).isEqualTo((byte) 3);
    }

    private static byte[] example() {
        return HexFormat.of().parseHex(EXAMPLE_HEX);
    }

    private static byte[] with(int offset, int bytes, long value) {
        ByteBuffer buffer = ByteBuffer.wrap(example()).order(ByteOrder.LITTLE_ENDIAN);
        switch (bytes) {
            case 2 -> buffer.putShort(offset, (short) value);
            case 8 -> buffer.putLong(offset, value);
            default -> throw new AssertionError(bytes);
        }
        return buffer.array();
    }

    @Test
    void refusesEachMalformedFieldByName() {
        assertRefused(with(0, 2, 3), "version = 3: must be 1 or 2");
        assertRefused(with(0, 2, 0), "version = 0: must be 1 or 2");
        assertRefused(
                with(2, 2, 2), "flags = 2: only bit 0 (end of stream) is defined in version 1");
        assertRefused(
                with(2, 2, 4), "flags = 4: only bit 0 (end of stream) is defined in version 1");
        byte[] version2Flag4 = with(2, 2, 4);
        version2Flag4[0] = 2;
        assertRefused(
                version2Flag4,
                "flags = 4: only bit 0 (end of stream) and bit 1 (resubscribed) are defined");
        assertRefused(with(4, 2, 2), "reader_index = 2: 0 to reader_count - 1 (1)");
        assertRefused(with(6, 2, 0), "reader_count = 0: 1 to 65535");
        assertRefused(with(8, 8, -2), "delivered_seq = -2: -1 (none yet) or a seq");
        assertRefused(
                with(16, 8, -1),
                "delivered_bytes = -1: at least 0, and 0 while delivered_seq is -1");
        assertRefused(with(24, 2, 200), "job = 200 bytes: runs past the value's end (11 left)");
        assertRefused(new byte[10], "length = 10: at least 24 bytes");
        byte[] trailing = java.util.Arrays.copyOf(example(), example().length + 1);
        assertRefused(trailing, "length = 38: 1 bytes left after the last field");
        byte[] slash = example();
        slash[29] = '/';
        assertRefused(slash, "job = job/1: 1 to 128 characters of [A-Za-z0-9._-]");
        byte[] notUtf8 = example();
        notUtf8[26] = (byte) 0xC0;
        assertRefused(notUtf8, "job = 5 bytes: not UTF-8");
        byte[] endWithoutSeq = with(8, 8, -1);
        ByteBuffer.wrap(endWithoutSeq)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(16, 0)
                .putShort(2, (short) 1);
        assertRefused(
                endWithoutSeq,
                "flags = 1: the end of a stream comes with its last seq, not delivered_seq -1");
    }

    @Test
    void theRecordChecksItsFieldsAsTheDecoderDoes() {
        assertThatThrownBy(() -> new DeliveryProgress("", "cyan", 0, 1, -1, 0, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("job = : 1 to 128 characters of [A-Za-z0-9._-]");
        assertThatThrownBy(() -> new DeliveryProgress("j", null, 0, 1, -1, 0, false))
                .hasMessage("stream = null: 1 to 128 characters of [A-Za-z0-9._-]");
        assertThatThrownBy(() -> new DeliveryProgress("j", "s", 0, 1, -1, 5, false))
                .hasMessageStartingWith("delivered_bytes = 5");
    }

    @Test
    void refusesAKeyThatIsNotTheValuesStream() {
        assertThatThrownBy(
                        () ->
                                DeliveryProgressCodec.decode(
                                        "job-1/magenta".getBytes(StandardCharsets.UTF_8),
                                        example()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("key = job-1/magenta: must be the value's job/stream, job-1/cyan");
        assertThatThrownBy(() -> DeliveryProgressCodec.decode(null, example()))
                .hasMessageStartingWith("key = null");
    }

    private static void assertRefused(byte[] value, String message) {
        assertThatThrownBy(() -> DeliveryProgressCodec.decode(value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message);
    }
}
