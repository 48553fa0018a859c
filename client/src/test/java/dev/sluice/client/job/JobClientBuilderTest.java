package dev.sluice.client.job;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class JobClientBuilderTest {

    @Test
    void needsBootstrapServers() {
        assertThatThrownBy(() -> JobClient.builder().build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bootstrap servers are required");
        assertThatThrownBy(() -> JobClient.builder().bootstrapServers(" ").build())
                .hasMessage("bootstrap servers are required");
    }

    @Test
    void refusesABadTopicName() {
        assertThatThrownBy(
                        () ->
                                JobClient.builder()
                                        .bootstrapServers("127.0.0.1:9092")
                                        .jobsTopic("my jobs")
                                        .build())
                .hasMessageStartingWith("jobs topic must be a Kafka topic name");
        assertThatThrownBy(
                        () ->
                                JobClient.builder()
                                        .bootstrapServers("127.0.0.1:9092")
                                        .statusTopic("..")
                                        .build())
                .hasMessageStartingWith("status topic must be a Kafka topic name");
    }

    @Test
    void refusesOneTopicForBoth() {
        assertThatThrownBy(
                        () ->
                                JobClient.builder()
                                        .bootstrapServers("127.0.0.1:9092")
                                        .jobsTopic("t")
                                        .statusTopic("t")
                                        .build())
                .hasMessage("the jobs and status topics must differ, both are 't'");
    }
}
