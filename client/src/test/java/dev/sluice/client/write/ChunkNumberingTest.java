package dev.sluice.client.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The numbering of docs/stream-writer.md, "Numbering": which seq each byte range of a share gets.
 */
class ChunkNumberingTest {

    /** A chunk as the numbering gives it: seq, length, eos. */
    private record Cut(long seq, int length, boolean eos) {}

    private static Cut cut(long seq, int length) {
        return new Cut(seq, length, false);
    }

    private static List<Cut> walk(ChunkNumbering numbering) {
        List<Cut> cuts = new ArrayList<>();
        while (numbering.hasChunk()) {
            cuts.add(new Cut(numbering.seq(), numbering.length(), numbering.eos()));
            numbering.advance();
        }
        return cuts;
    }

    @Test
    void eachWriterOfAShareTakesEveryCountthTaskNumberedAsAProducerNumbersIt() {
        // 10,000 bytes in tasks of 3,000 (the last 1,000) and chunks of 1,024: 3 chunks a task,
        // task t from seq 3t, the last task's only chunk the end.
        assertThat(walk(ChunkNumbering.share(10_000, 3_000, 1_024, 0, 3)))
                .containsExactly(
                        cut(0, 1_024), cut(1, 1_024), cut(2, 952), new Cut(9, 1_000, true));
        assertThat(walk(ChunkNumbering.share(10_000, 3_000, 1_024, 1, 3)))
                .containsExactly(cut(3, 1_024), cut(4, 1_024), cut(5, 952));
        assertThat(walk(ChunkNumbering.share(10_000, 3_000, 1_024, 2, 3)))
                .containsExactly(cut(6, 1_024), cut(7, 1_024), cut(8, 952));
        assertThat(ChunkNumbering.share(10_000, 3_000, 1_024, 0, 3).shareBytes()).isEqualTo(4_000);
        assertThat(ChunkNumbering.share(10_000, 3_000, 1_024, 1, 3).shareBytes()).isEqualTo(3_000);
    }

    @Test
    void theSharesOfAStreamCoverEverySeqOnceWithTheEndOnTheLast() {
        for (long streamBytes : new long[] {1, 1_023, 1_024, 1_025, 9_000, 10_000, 65_537}) {
            for (long taskBytes : new long[] {1_024, 3_000, 4_096, 20_000}) {
                for (int count = 1; count <= 4; count++) {
                    TreeMap<Long, Cut> all = new TreeMap<>();
                    long bytes = 0;
                    for (int index = 0; index < count; index++) {
                        ChunkNumbering share =
                                ChunkNumbering.share(streamBytes, taskBytes, 1_024, index, count);
                        long own = 0;
                        for (Cut c : walk(share)) {
                            assertThat(all.put(c.seq(), c)).as("seq %d twice", c.seq()).isNull();
                            assertThat(c.length()).isBetween(1, 1_024);
                            own += c.length();
                        }
                        assertThat(own).isEqualTo(share.shareBytes());
                        bytes += own;
                    }
                    String what = streamBytes + "/" + taskBytes + "/" + count;
                    assertThat(bytes).as(what).isEqualTo(streamBytes);
                    assertThat(all.firstKey()).as(what).isZero();
                    assertThat(all.lastKey()).as(what).isEqualTo(all.size() - 1);
                    assertThat(all.values().stream().filter(Cut::eos))
                            .as(what)
                            .containsExactly(all.lastEntry().getValue());
                }
            }
        }
    }

    @Test
    void aWriterBeyondTheStreamsTasksHasAnEmptyShare() {
        ChunkNumbering share = ChunkNumbering.share(1_000, 1_024, 1_024, 2, 3);
        assertThat(share.shareBytes()).isZero();
        assertThat(share.hasChunk()).isFalse();
    }

    @Test
    void anUnboundedStreamIsNumberedFromZeroAndNeverEndsByItself() {
        ChunkNumbering numbering = ChunkNumbering.unbounded(1_024);
        assertThat(numbering.isSized()).isFalse();
        assertThat(numbering.shareBytes()).isEqualTo(Long.MAX_VALUE);
        List<Cut> cuts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            cuts.add(new Cut(numbering.seq(), numbering.length(), numbering.eos()));
            numbering.advance();
        }
        assertThat(cuts).containsExactly(cut(0, 1_024), cut(1, 1_024), cut(2, 1_024));
        assertThat(numbering.hasChunk()).isTrue();
    }

    @Test
    void theBytesSentByAPublishAreTheChunksItCompletes() {
        ChunkNumbering share = ChunkNumbering.share(10_000, 3_000, 1_024, 0, 3);
        assertThat(share.bytesSentBy(0, 1_023)).isZero();
        assertThat(share.bytesSentBy(0, 1_024)).isEqualTo(1_024);
        assertThat(share.bytesSentBy(100, 924)).isEqualTo(1_024);
        assertThat(share.bytesSentBy(0, 3_000)).isEqualTo(3_000);
        // Across the task boundary to task 3, whose one chunk ends the stream.
        assertThat(share.bytesSentBy(0, 4_000)).isEqualTo(4_000);
        // Looking ahead moves nothing.
        assertThat(share.seq()).isZero();

        // Unbounded: the last chunk waits for a byte after it, or the close.
        ChunkNumbering unbounded = ChunkNumbering.unbounded(1_024);
        assertThat(unbounded.bytesSentBy(0, 0)).isZero();
        assertThat(unbounded.bytesSentBy(0, 1_024)).isZero();
        assertThat(unbounded.bytesSentBy(1_024, 1)).isEqualTo(1_024);
        assertThat(unbounded.bytesSentBy(0, 2_049)).isEqualTo(2_048);
    }

    @Test
    void wrongSizesAndSharesAreRefused() {
        assertThatThrownBy(() -> ChunkNumbering.share(1_000, 1_000, 1_024, 0, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a task at least a chunk");
        assertThatThrownBy(() -> ChunkNumbering.share(0, 2_048, 1_024, 0, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ChunkNumbering.share(1_000, 2_048, 1_024, 3, 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("share 3 of 3");
        assertThatThrownBy(() -> ChunkNumbering.share(1_000, 2_048, 1_024, -1, 3))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ChunkNumbering.unbounded(0))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
