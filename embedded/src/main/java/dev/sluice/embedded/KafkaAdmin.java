package dev.sluice.embedded;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * What {@link KafkaBroker} and {@link KafkaCluster} ask of the brokers they started: topics made
 * and awaited, end offsets, and the produce that tells them ready. Every call takes fresh client
 * properties and fails with an {@link IllegalStateException} naming what it was doing.
 */
final class KafkaAdmin {
    private KafkaAdmin() {}

    /** What an {@link Admin} is asked. */
    interface Call<T> {
        T call(Admin admin) throws InterruptedException, ExecutionException, TimeoutException;
    }

    static <T> T call(Properties clientProperties, String what, Call<T> call) {
        try (Admin admin = Admin.create(clientProperties)) {
            return call.call(admin);
        } catch (ExecutionException e) {
            throw new IllegalStateException(what + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while " + what, e);
        } catch (TimeoutException e) {
            throw new IllegalStateException(what + " timed out", e);
        }
    }

    /**
     * Creates {@code topic} and returns once every broker that holds a replica has its log. The
     * controller acknowledges a creation, and even reports leaders, before the brokers have created
     * the partitions' logs; a producer racing that window gets NOT_LEADER_OR_FOLLOWER, and its
     * idempotent retries can then fail with out-of-order sequence errors.
     */
    static void createTopic(Properties clientProperties, NewTopic topic) {
        call(
                clientProperties,
                "creating topic " + topic.name(),
                admin -> {
                    admin.createTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
                    awaitLocalLogs(admin, topic.name());
                    return null;
                });
    }

    /** {@link #createTopic}, where a topic of that name already there is no error. */
    static void createTopicIfAbsent(Properties clientProperties, NewTopic topic) {
        try {
            createTopic(clientProperties, topic);
        } catch (IllegalStateException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
    }

    private static void awaitLocalLogs(Admin admin, String topic)
            throws InterruptedException, ExecutionException, TimeoutException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!hasLogs(admin, topic)) {
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("the brokers have no log for " + topic + " after 30 s");
            }
            // An admin round trip paces this wait; the pause keeps it off the two cores.
            Thread.sleep(20);
        }
    }

    /**
     * Whether every replica of {@code topic} has its log. A broker that does not know the topic yet
     * (its metadata lags the controller's) has none.
     */
    private static boolean hasLogs(Admin admin, String topic)
            throws InterruptedException, ExecutionException, TimeoutException {
        try {
            Collection<TopicPartitionReplica> replicas =
                    admin
                            .describeTopics(List.of(topic))
                            .allTopicNames()
                            .get(10, TimeUnit.SECONDS)
                            .get(topic)
                            .partitions()
                            .stream()
                            .flatMap(
                                    p ->
                                            p.replicas().stream()
                                                    .map(
                                                            node ->
                                                                    new TopicPartitionReplica(
                                                                            topic,
                                                                            p.partition(),
                                                                            node.id())))
                            .toList();
            return admin
                    .describeReplicaLogDirs(replicas)
                    .all()
                    .get(10, TimeUnit.SECONDS)
                    .values()
                    .stream()
                    .allMatch(info -> info.getCurrentReplicaLogDir() != null);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return false;
            }
            throw e;
        }
    }

    /** The records written to {@code topic} so far: the sum of its partitions' end offsets. */
    static long records(Properties clientProperties, String topic) {
        return call(
                clientProperties,
                "reading the end offsets of " + topic,
                admin -> {
                    Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
                    admin.describeTopics(List.of(topic))
                            .allTopicNames()
                            .get(30, TimeUnit.SECONDS)
                            .get(topic)
                            .partitions()
                            .forEach(
                                    p ->
                                            latest.put(
                                                    new TopicPartition(topic, p.partition()),
                                                    OffsetSpec.latest()));
                    return admin
                            .listOffsets(latest)
                            .all()
                            .get(30, TimeUnit.SECONDS)
                            .values()
                            .stream()
                            .mapToLong(ListOffsetsResultInfo::offset)
                            .sum();
                });
    }

    /** Produces one record with {@code acks=all} and returns once it is acknowledged. */
    static void produceOne(Properties clientProperties, String topic) {
        Properties props = new Properties();
        props.putAll(clientProperties);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 5_000);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 4_000);
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, new byte[] {1})).get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("readiness produce failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the broker", e);
        }
    }
}
