package dev.sluice.flink.source.reader;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.flink.source.split.SluiceSplit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.testutils.MetricListener;
import org.apache.flink.runtime.metrics.groups.InternalSourceReaderMetricGroup;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class SluiceSourceReaderMetricsTest {
    private final MetricListener listener = new MetricListener();
    private final List<Set<TopicPartition>> asked = new ArrayList<>();
    private final SluiceSourceReaderMetrics metrics =
            new SluiceSourceReaderMetrics(
                    InternalSourceReaderMetricGroup.mock(listener.getMetricGroup()),
                    (partitions, answer) -> asked.add(Set.copyOf(partitions)));
    private final TopicPartition p0 = new TopicPartition("t", 0);
    private final TopicPartition p1 = new TopicPartition("t", 1);

    private long pendingRecords() {
        Gauge<Long> gauge = listener.<Long>getGauge("pendingRecords").orElseThrow();
        return gauge.getValue();
    }

    private long partitionGauge(TopicPartition partition, String name) {
        Gauge<Long> gauge =
                listener.<Long>getGauge(
                                SluiceSourceReaderMetrics.GROUP,
                                "topic",
                                partition.topic(),
                                "partition",
                                String.valueOf(partition.partition()),
                                name)
                        .orElseThrow();
        return gauge.getValue();
    }

    @Test
    void pendingRecordsRunFromTheNextRecordToTheLogEndOrTheSplitsStop() {
        metrics.reading(new SluiceSplit(p0, 10, SluiceSplit.NO_STOPPING_OFFSET, "h"));
        metrics.reading(new SluiceSplit(p1, 0, 50, "h"));
        assertThat(pendingRecords()).as("no log end known yet").isZero();
        assertThat(asked).containsExactly(Set.of(p0, p1));

        metrics.logEnd(p0, 100);
        metrics.logEnd(p1, 80);
        assertThat(pendingRecords()).as("90 from 10 to 100, 50 from 0 to the stop").isEqualTo(140);

        metrics.partition(p0).emitted(39);
        metrics.partition(p1).emitted(9);
        assertThat(pendingRecords()).isEqualTo(60 + 40);

        metrics.finished(p1);
        assertThat(pendingRecords()).as("a finished split has nothing pending").isEqualTo(60);
        assertThat(asked.get(asked.size() - 1)).containsExactly(p0);
    }

    @Test
    void offsetsAreMinusOneUntilARecordIsEmittedOrACommitSucceeds() {
        metrics.reading(new SluiceSplit(p0, 10, SluiceSplit.NO_STOPPING_OFFSET, "h"));
        assertThat(partitionGauge(p0, "currentOffset")).isEqualTo(-1);
        assertThat(partitionGauge(p0, "committedOffset")).isEqualTo(-1);

        metrics.partition(p0).emitted(10);
        metrics.partition(p0).emitted(11);
        metrics.committed(Map.of(p0, 11L));
        metrics.commitFailed();
        assertThat(partitionGauge(p0, "currentOffset")).isEqualTo(11);
        assertThat(partitionGauge(p0, "committedOffset")).isEqualTo(11);
        assertThat(
                        listener.getCounter(SluiceSourceReaderMetrics.GROUP, "commitsSucceeded")
                                .orElseThrow()
                                .getCount())
                .isEqualTo(1);
        assertThat(
                        listener.getCounter(SluiceSourceReaderMetrics.GROUP, "commitsFailed")
                                .orElseThrow()
                                .getCount())
                .isEqualTo(1);
    }
}
