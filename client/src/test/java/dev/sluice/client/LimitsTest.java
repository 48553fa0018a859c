package dev.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LimitsTest {

    @Test
    void topicNamesFollowKafkasRule() {
        assertThat(Limits.isTopicName("sluice.progress")).isTrue();
        assertThat(Limits.isTopicName("a_B-9")).isTrue();
        assertThat(Limits.isTopicName("t".repeat(249))).isTrue();
        assertThat(Limits.isTopicName("t".repeat(250))).isFalse();
        assertThat(Limits.isTopicName("")).isFalse();
        assertThat(Limits.isTopicName(null)).isFalse();
        assertThat(Limits.isTopicName("no topic")).isFalse();
        assertThat(Limits.isTopicName("topic/1")).isFalse();
        assertThat(Limits.isTopicName(".")).isFalse();
        assertThat(Limits.isTopicName("..")).isFalse();
        assertThat(Limits.isTopicName("...")).isTrue();
    }

    @Test
    void namesAreOneTo128CharactersOfTheSafeAlphabet() {
        assertThat(Limits.isName("job-1.a_b")).isTrue();
        assertThat(Limits.isName("n".repeat(128))).isTrue();
        assertThat(Limits.isName("n".repeat(129))).isFalse();
        assertThat(Limits.isName("")).isFalse();
        assertThat(Limits.isName(null)).isFalse();
        assertThat(Limits.isName("job/1")).isFalse();
        assertThat(Limits.isName("jöb")).isFalse();
    }

    @Test
    void nameCharactersAreExactlyTheNameAlphabet() {
        for (char c = 0; c < 256; c++) {
            assertThat(Limits.isNameCharacter(c))
                    .as("character %d", (int) c)
                    .isEqualTo(Limits.isName(String.valueOf(c)));
        }
    }

    @Test
    void aStreamHasOneTo65535Readers() {
        assertThat(Limits.isReaderCount(1)).isTrue();
        assertThat(Limits.isReaderCount(65535)).isTrue();
        assertThat(Limits.isReaderCount(0)).isFalse();
        assertThat(Limits.isReaderCount(65536)).isFalse();
        assertThat(Limits.isReaderCount(-1)).isFalse();
    }

    @Test
    void slotCountsAreOneTo65536() {
        assertThat(Limits.isSlotCount(1)).isTrue();
        assertThat(Limits.isSlotCount(65536)).isTrue();
        assertThat(Limits.isSlotCount(0)).isFalse();
        assertThat(Limits.isSlotCount(65537)).isFalse();
        assertThat(Limits.isSlotCount(-1)).isFalse();
        assertThat(Limits.isSlotCount(1L << 32)).isFalse();
    }

    @Test
    void slotSizesAreMultiplesOf64From256To2To31Less64() {
        assertThat(Limits.isSlotSize(256)).isTrue();
        assertThat(Limits.isSlotSize((1L << 31) - 64)).isTrue();
        assertThat(Limits.isSlotSize(192)).isFalse();
        assertThat(Limits.isSlotSize(1000)).isFalse();
        assertThat(Limits.isSlotSize(1L << 31)).isFalse();
        assertThat(Limits.isSlotSize(-64)).isFalse();
    }
}
