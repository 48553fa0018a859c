package dev.sluice.flink.source.reader.push;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Test;

class RowRunsTest {
    // Rows 0-9 of a batch: the partition's offsets where it has rows, with a gap (compaction or
    // a transaction marker) between rows 6 and 7.
    private static final long[] OFFSETS = {100, 101, 102, 103, 104, 105, 106, 110, 111, 112};
    private static final IntToLongFunction OFFSET_OF = row -> OFFSETS[row];

    private static List<Integer> rows(RowRuns runs) {
        List<Integer> rows = new ArrayList<>();
        for (int run = 0; run < runs.runs(); run++) {
            for (int row = runs.start(run); row < runs.end(run); row++) {
                rows.add(row);
            }
        }
        return rows;
    }

    /** Rows 0-2 and 5-9 of the partition: two runs, another partition's rows between them. */
    private static RowRuns twoRuns() {
        RowRuns runs = new RowRuns();
        runs.add(0, 2);
        runs.add(2, 3);
        runs.add(5, 10);
        return runs;
    }

    @Test
    void adjacentRowsExtendTheRunAndAGapStartsAnother() {
        RowRuns runs = twoRuns();
        assertThat(runs.runs()).isEqualTo(2);
        assertThat(rows(runs)).containsExactly(0, 1, 2, 5, 6, 7, 8, 9);
    }

    @Test
    void aStopInsideALaterRunKeepsTheRowsBeforeIt() {
        RowRuns runs = twoRuns();
        assertThat(runs.truncate(OFFSET_OF, 111)).isTrue();
        assertThat(rows(runs)).containsExactly(0, 1, 2, 5, 6, 7);
    }

    @Test
    void aStopInAGapOfOffsetsKeepsTheRowsBelowIt() {
        RowRuns runs = twoRuns();
        assertThat(runs.truncate(OFFSET_OF, 108)).isTrue();
        assertThat(rows(runs)).containsExactly(0, 1, 2, 5, 6);
    }

    @Test
    void aStopAtARunsFirstRowDropsTheRun() {
        RowRuns runs = twoRuns();
        assertThat(runs.truncate(OFFSET_OF, 105)).isTrue();
        assertThat(runs.runs()).isEqualTo(1);
        assertThat(rows(runs)).containsExactly(0, 1, 2);
    }

    @Test
    void aStopAtOrBeforeTheFirstRowLeavesNothing() {
        RowRuns runs = twoRuns();
        assertThat(runs.truncate(OFFSET_OF, 90)).isTrue();
        assertThat(runs.isEmpty()).isTrue();
        assertThat(rows(runs)).isEmpty();
    }

    @Test
    void theStopJustAfterTheLastRowIsReachedWithNothingLeftOut() {
        RowRuns runs = twoRuns();
        assertThat(runs.truncate(OFFSET_OF, 113)).isTrue();
        assertThat(rows(runs)).containsExactly(0, 1, 2, 5, 6, 7, 8, 9);
    }

    @Test
    void aStopBeyondTheLastRowIsNotReachedYet() {
        RowRuns runs = twoRuns();
        assertThat(runs.truncate(OFFSET_OF, 120)).isFalse();
        assertThat(rows(runs)).hasSize(8);
        assertThat(new RowRuns().truncate(OFFSET_OF, 120)).isFalse();
    }

    @Test
    void firstAtOrAfterSkipsRowsBelowAnOffsetAndFindsNoneAboveTheLast() {
        assertThat(RowRuns.firstAtOrAfter(OFFSET_OF, 0, 10, 0)).isEqualTo(0);
        assertThat(RowRuns.firstAtOrAfter(OFFSET_OF, 0, 10, 103)).isEqualTo(3);
        assertThat(RowRuns.firstAtOrAfter(OFFSET_OF, 0, 10, 107)).isEqualTo(7);
        assertThat(RowRuns.firstAtOrAfter(OFFSET_OF, 5, 10, 100)).isEqualTo(5);
        assertThat(RowRuns.firstAtOrAfter(OFFSET_OF, 0, 10, 113)).isEqualTo(10);
    }

    @Test
    void clearedRunsTakeNewRows() {
        RowRuns runs = twoRuns();
        runs.clear();
        assertThat(runs.isEmpty()).isTrue();
        runs.add(4, 6);
        assertThat(rows(runs)).containsExactly(4, 5);
    }
}
