package dev.sluice.client.segment;

import static dev.sluice.client.segment.SegmentLayout.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sides that die or leave: stale heartbeats, eviction, closing. A side "dies" here by its heartbeat
 * stopping, which is all the other side can observe of a crash.
 */
class SegmentLivenessTest {
    private static final Duration LIVENESS = Duration.ofSeconds(1);

    @TempDir Path dir;

    private SegmentWriter writer(int slots) throws Exception {
        return SegmentWriter.builder(dir.resolve("seg"))
                .objectKind(ObjectKind.CHUNKS)
                .slotCount(slots)
                .slotSize(1024)
                .laneCount(3)
                .livenessTimeout(LIVENESS)
                .create();
    }

    private static long publishEmpty(SegmentWriter writer) throws Exception {
        WritableSlot slot = writer.claim(Duration.ofSeconds(5));
        assertThat(slot).as("a free slot").isNotNull();
        return writer.publish(slot, 0, 0, -1, -1, -1);
    }

    @Test
    void deadReaderIsReclaimedWithoutAffectingOthers() throws Exception {
        try (SegmentWriter writer = writer(2);
                SegmentReader alive = SegmentReader.open(writer.path())) {
            // A reader process that attached lane 1 and then died: it never beats again.
            MappedSegment raw = MappedSegment.open(writer.path(), true);
            raw.readerHeartbeat(1, System.nanoTime());
            assertThat(raw.casLaneWord(1, laneWord(0, LANE_FREE), laneWord(1, LANE_ATTACHED)))
                    .isTrue();

            publishEmpty(writer);
            publishEmpty(writer);
            alive.poll(Duration.ofSeconds(5)).release();
            alive.poll(Duration.ofSeconds(5)).release();

            long id = publishEmpty(writer);
            assertThat(laneState(raw.laneWord(1))).as("dead lane taken back").isEqualTo(LANE_FREE);
            assertThat(laneEpoch(raw.laneWord(1))).isEqualTo(1);
            SegmentObject next = alive.poll(Duration.ofSeconds(5));
            assertThat(next.objectId()).isEqualTo(id);
            next.release();
        }
    }

    @Test
    void deadWriterIsDetectedOnceTheRingIsEmpty() throws Exception {
        try (SegmentWriter writer = writer(2);
                SegmentReader reader = SegmentReader.open(writer.path())) {
            publishEmpty(writer);
            writer.heartbeat.close();
            SegmentObject last = reader.poll(Duration.ofSeconds(5));
            assertThat(last).as("what was published is still delivered").isNotNull();
            last.release();
            assertThatThrownBy(() -> reader.poll(Duration.ofSeconds(10)))
                    .isInstanceOf(WriterDeadException.class);
        }
    }

    @Test
    void evictedReaderIsTold() throws Exception {
        try (SegmentWriter writer = writer(1);
                SegmentReader reader = SegmentReader.open(writer.path())) {
            publishEmpty(writer);
            SegmentObject held = reader.poll(Duration.ofSeconds(5));
            reader.heartbeat.close();

            assertThat(writer.claim(Duration.ofSeconds(5)))
                    .as("slot taken back from the stale lane")
                    .isNotNull();
            assertThatThrownBy(held::release).isInstanceOf(ReaderEvictedException.class);
            assertThatThrownBy(() -> reader.poll(Duration.ofMillis(10)))
                    .isInstanceOf(ReaderEvictedException.class);
        }
    }

    @Test
    void closedWriterWithEmptyRingIsTheEnd() throws Exception {
        SegmentWriter writer = writer(4);
        try (SegmentReader reader = SegmentReader.open(writer.path())) {
            publishEmpty(writer);
            publishEmpty(writer);
            writer.close();
            assertThat(Files.exists(writer.path())).as("unlinked").isFalse();

            reader.poll(Duration.ofSeconds(1)).release();
            reader.poll(Duration.ofSeconds(1)).release();
            assertThat(reader.poll(Duration.ofSeconds(5))).isNull();
            assertThat(reader.isEndOfStream()).isTrue();
            assertThat(reader.take()).isNull();
        }
    }

    @Test
    void leavingReaderGivesItsSlotsBackAndItsLaneToTheNext() throws Exception {
        try (SegmentWriter writer = writer(1)) {
            SegmentReader first = SegmentReader.open(writer.path());
            publishEmpty(writer);
            first.poll(Duration.ofSeconds(5));
            first.close();

            assertThat(writer.claim(Duration.ofSeconds(5)))
                    .as("slot of the closed lane")
                    .isNotNull();
            try (SegmentReader second = SegmentReader.open(writer.path())) {
                assertThat(second.lane()).isZero();
            }
        }
    }

    @Test
    void allLanesTakenIsAnError() throws Exception {
        try (SegmentWriter writer = writer(1);
                SegmentReader a = SegmentReader.open(writer.path());
                SegmentReader b = SegmentReader.open(writer.path());
                SegmentReader c = SegmentReader.open(writer.path())) {
            assertThat(List.of(a.lane(), b.lane(), c.lane())).containsExactly(0, 1, 2);
            assertThatThrownBy(() -> SegmentReader.open(writer.path()))
                    .isInstanceOf(SegmentException.class)
                    .hasMessageContaining("all 3 lanes");
        }
    }
}
