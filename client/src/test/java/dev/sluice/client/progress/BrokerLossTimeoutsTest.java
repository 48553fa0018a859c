package dev.sluice.client.progress;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

class BrokerLossTimeoutsTest {

    @Test
    void propertiesWithoutTimeoutsGetSecondsNotKafkasHalfMinute() {
        Properties given = new Properties();
        given.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "kafka:9092");

        Properties props = BrokerLossTimeouts.withDefaults(given);

        assertThat(props)
                .containsEntry(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "kafka:9092")
                .containsEntry(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000")
                .containsEntry(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "2000")
                .containsEntry(
                        ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "5000");
        // The caller's properties are left as they were.
        assertThat(given).containsOnlyKeys(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG);
    }

    @Test
    void aTimeoutTheUserSetWins() {
        Properties given = new Properties();
        given.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");

        assertThat(BrokerLossTimeouts.withDefaults(given))
                .containsEntry(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000")
                .containsEntry(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "2000");
    }
}
