package dev.sluice.flink.source.reader;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.Await;
import dev.sluice.flink.source.split.SluiceSplit;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.testutils.MetricListener;
import org.apache.flink.runtime.metrics.groups.InternalSourceReaderMetricGroup;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class OffsetCommitterTest {
    /** A loopback port nobody listens on. */
    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    @Test
    void aCommitThatFailsCountsInCommitsFailedAndMovesNoCommittedOffset() throws Exception {
        MetricListener listener = new MetricListener();
        SluiceSourceReaderMetrics metrics =
                new SluiceSourceReaderMetrics(
                        InternalSourceReaderMetricGroup.mock(listener.getMetricGroup()),
                        (partitions, answer) -> {});
        TopicPartition partition = new TopicPartition("t", 0);
        metrics.reading(new SluiceSplit(partition, 0, SluiceSplit.NO_STOPPING_OFFSET, "h"));
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + closedPort());
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "1000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "500");
        Counter failed =
                listener.getCounter(SluiceSourceReaderMetrics.GROUP, "commitsFailed").orElseThrow();
        Counter succeeded =
                listener.getCounter(SluiceSourceReaderMetrics.GROUP, "commitsSucceeded")
                        .orElseThrow();
        try (OffsetCommitter committer = new OffsetCommitter(props, "group", metrics)) {
            committer.commit(Map.of(partition, 42L));
            Await.until(
                    "the commit to an unreachable broker fails",
                    Duration.ofSeconds(30),
                    () -> failed.getCount() == 1);
        }
        assertThat(succeeded.getCount()).isZero();
        Gauge<Long> committed =
                listener.<Long>getGauge(
                                SluiceSourceReaderMetrics.GROUP,
                                "topic",
                                "t",
                                "partition",
                                "0",
                                "committedOffset")
                        .orElseThrow();
        assertThat(committed.getValue()).isEqualTo(SluiceSourceReaderMetrics.UNKNOWN);
    }
}
