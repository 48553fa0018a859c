package dev.sluice.client.brokerd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.protocol.Mode;
import dev.sluice.client.protocol.PartitionStart;
import dev.sluice.client.protocol.StartPosition;
import dev.sluice.client.protocol.Subscribe;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SubscriptionRequestTest {
    @Test
    void resumingStartsThePartitionsWithPositionsThereAndTheOthersAsAsked() {
        SubscriptionRequest request =
                SubscriptionRequest.builder("orders")
                        .partitions(3, StartPosition.LATEST)
                        .groupId("g")
                        .slots(16, 4096)
                        .build();
        Subscribe first = request.toSubscribe(Map.of());
        assertThat(first.partitions())
                .containsExactly(
                        PartitionStart.latest(0),
                        PartitionStart.latest(1),
                        PartitionStart.latest(2));
        Subscribe resumed = request.toSubscribe(Map.of(2, 40L, 0, 7L));
        assertThat(resumed.partitions())
                .containsExactly(
                        PartitionStart.at(0, 7),
                        PartitionStart.latest(1),
                        PartitionStart.at(2, 40));
        assertThat(resumed.groupId()).isEqualTo("g");
        assertThat(resumed.slotCount()).isEqualTo(16);
        assertThat(resumed.slotSize()).isEqualTo(4096);
    }

    @Test
    void theIsolationLevelIsCommittedUnlessAskedAndSurvivesAResume() {
        SubscriptionRequest.Builder builder =
                SubscriptionRequest.builder("t").partitions(2, StartPosition.EARLIEST);
        assertThat(builder.build().toSubscribe(Map.of()).readUncommitted()).isFalse();

        SubscriptionRequest uncommitted = builder.readUncommitted(true).build();

        assertThat(uncommitted.readUncommitted()).isTrue();
        assertThat(uncommitted.toSubscribe(Map.of()).readUncommitted()).isTrue();
        assertThat(uncommitted.toSubscribe(Map.of(1, 5L)).readUncommitted()).isTrue();
    }

    @Test
    void localLeadersNeedNoPartitionsAndResumeWithThoseItRead() {
        SubscriptionRequest request = SubscriptionRequest.builder("orders").localLeaders().build();
        assertThat(request.toSubscribe(Map.of()).localLeaders()).isTrue();
        assertThat(request.toSubscribe(Map.of(5, 9L)).partitions())
                .containsExactly(PartitionStart.at(5, 9));
    }

    @Test
    void chunkStreamsCarryTheJobFilterAndTheWindow() {
        Subscribe subscribe =
                SubscriptionRequest.builder("chunks")
                        .partitions(2, StartPosition.EARLIEST)
                        .chunkStreams("job-1")
                        .reorderWindowBytes(1 << 20)
                        .build()
                        .toSubscribe(Map.of());
        assertThat(subscribe.mode()).isEqualTo(Mode.CHUNK_STREAMS);
        assertThat(subscribe.jobFilter()).isEqualTo("job-1");
        assertThat(subscribe.reorderWindowBytes()).isEqualTo(1 << 20);
        assertThatThrownBy(
                        () ->
                                SubscriptionRequest.builder("records")
                                        .localLeaders()
                                        .reorderWindowBytes(1)
                                        .build())
                .hasMessageContaining("chunkStreams() only");
    }

    @Test
    void theBuilderRefusesWhatTheDaemonWould() {
        assertThatThrownBy(() -> SubscriptionRequest.builder("t").build())
                .hasMessageContaining("partitions");
        assertThatThrownBy(() -> SubscriptionRequest.builder("").localLeaders().build())
                .hasMessageContaining("topic");
        assertThatThrownBy(
                        () ->
                                SubscriptionRequest.builder("t")
                                        .localLeaders()
                                        .slots(4, 1000)
                                        .build())
                .hasMessageContaining("multiple of 64");
        assertThatThrownBy(
                        () ->
                                SubscriptionRequest.builder("t")
                                        .localLeaders()
                                        .slots(0, 4096)
                                        .build())
                .hasMessageContaining("slot count");
        assertThatThrownBy(
                        () ->
                                SubscriptionRequest.builder("t")
                                        .localLeaders()
                                        .slots(4, 4096)
                                        .maxOpenBatches(5)
                                        .build())
                .hasMessageContaining("max open batches");
    }
}
