package dev.sluice.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.junit.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** Tests that find the cluster whole run first: the last one kills a broker. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KafkaClusterIT {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static KafkaCluster cluster;

    @BeforeAll
    static void start() {
        cluster = KafkaCluster.builder().brokers(3).build();
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void everyBrokerRegistersInARackOfItsOwnOnLoopback() throws Exception {
        try (Admin admin = Admin.create(cluster.clientProperties())) {
            Map<Integer, String> racks =
                    admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).stream()
                            .collect(Collectors.toMap(Node::id, Node::rack));
            assertThat(racks).isEqualTo(Map.of(1, "rack-1", 2, "rack-2", 3, "rack-3"));
        }
        assertThat(cluster.brokerIds()).containsExactly(1, 2, 3);
        assertThat(cluster.bootstrapServers().split(","))
                .hasSize(3)
                .allSatisfy(address -> assertThat(address).startsWith("127.0.0.1:"));
        assertThat(cluster.address(2)).isIn((Object[]) cluster.bootstrapServers().split(","));
    }

    @Test
    @Order(Integer.MAX_VALUE)
    void aConsumerInAFollowersRackReadsFromThatFollowerAndFromTheLeaderOnceItIsKilled()
            throws Exception {
        String topic = "replicated";
        cluster.createTopic(topic, 1, List.of(1, 2, 3));
        assertThat(cluster.leader(topic, 0)).isEqualTo(1);
        produce(topic, 0, 100);

        Properties props = cluster.clientProperties();
        props.put(ConsumerConfig.CLIENT_RACK_CONFIG, cluster.rack(3));
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        TopicPartition partition = new TopicPartition(topic, 0);
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            readUntil(consumer, values, 100);
            assertThat(preferredReadReplica(consumer, partition))
                    .as("the replica the leader sent the consumer to")
                    .isEqualTo(3);

            cluster.kill(3);
            produce(topic, 100, 200);
            readUntil(consumer, values, 200);
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            expected.add("v" + i);
        }
        assertThat(values).isEqualTo(expected);
        assertThat(cluster.leader(topic, 0)).isEqualTo(1);
    }

    @Test
    void anUnknownBrokerIsAClearError() {
        assertThatThrownBy(() -> cluster.rack(7))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no broker 7")
                .hasMessageContaining("[1, 2, 3]");
    }

    @Test
    void badBrokerConfigurationFailsTheStartWithTheBrokersOwnMessage() {
        assertThatThrownBy(
                        () ->
                                KafkaCluster.builder()
                                        .brokers(1)
                                        .brokerProperty("num.partitions", "not-a-number")
                                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("num.partitions");
    }

    private static void produce(String topic, int from, int to) throws Exception {
        try (KafkaProducer<String, String> producer =
                Clients.producer(cluster.clientProperties())) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k" + i, "v" + i)).get();
            }
        }
    }

    private static void readUntil(
            KafkaConsumer<String, String> consumer, List<String> values, int count) {
        Await.until(
                () -> count + " records are read, " + values.size() + " so far",
                WAIT,
                () -> {
                    for (ConsumerRecord<String, String> record :
                            consumer.poll(Duration.ofMillis(200))) {
                        values.add(record.value());
                    }
                    return values.size() >= count;
                });
    }

    /** The Java consumer's {@code preferred-read-replica} gauge of the partition (KIP-392). */
    private static Object preferredReadReplica(
            KafkaConsumer<String, String> consumer, TopicPartition partition) {
        for (Map.Entry<MetricName, ? extends Metric> metric : consumer.metrics().entrySet()) {
            MetricName name = metric.getKey();
            if (name.name().equals("preferred-read-replica")
                    && String.valueOf(partition.partition()).equals(name.tags().get("partition"))) {
                return metric.getValue().metricValue();
            }
        }
        return null;
    }
}
