package dev.sluice.client.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class JobSpecTest {

    private static final GeneratorSpec GENERATOR = new GeneratorSpec("com.example.Gen");

    private static StreamSpec stream(String name, SplitRule split) {
        return new StreamSpec(name, "printer-1", split, 10_000);
    }

    @Test
    void defaultsAreHalfMebibyteChunksAndSixtyFourMebibyteTasks() {
        JobSpec job = TestJobs.small("job-1");

        assertThat(job.taskSizeBytes()).isEqualTo(64L << 20);
        assertThat(job.streams().get(0).chunkSizeBytes()).isEqualTo(512 << 10);
        assertThat(job.streams().get(0).rateBytesPerSecond()).isEmpty();
        assertThat(job.weight()).isEqualTo(1);
        assertThat(job.transport()).isEqualTo(Transport.AUTO);
    }

    @Test
    void aTransportIsRequired() {
        List<StreamSpec> streams = List.of(stream("s", new SplitRule.Whole()));

        assertThat(
                        new JobSpec("j", List.of(), GENERATOR, 1 << 20, streams, 1, Transport.LOCAL)
                                .transport())
                .isEqualTo(Transport.LOCAL);
        assertThatThrownBy(() -> new JobSpec("j", List.of(), GENERATOR, 1 << 20, streams, 1, null))
                .isInstanceOf(JobSpecException.class)
                .hasMessage("transport: is required");
    }

    @Test
    void kafkaWinsThenLocalWhenAJobAndItsOutputLocationChooseATransport() {
        for (Transport other : Transport.values()) {
            assertThat(Transport.combine(Transport.KAFKA, other)).isEqualTo(Transport.KAFKA);
            assertThat(Transport.combine(other, Transport.KAFKA)).isEqualTo(Transport.KAFKA);
        }
        assertThat(Transport.combine(Transport.LOCAL, Transport.AUTO)).isEqualTo(Transport.LOCAL);
        assertThat(Transport.combine(Transport.AUTO, Transport.LOCAL)).isEqualTo(Transport.LOCAL);
        assertThat(Transport.combine(Transport.LOCAL, Transport.LOCAL)).isEqualTo(Transport.LOCAL);
        assertThat(Transport.combine(Transport.AUTO, Transport.AUTO)).isEqualTo(Transport.AUTO);
    }

    @Test
    void aWeightIsFromOneToAThousand() {
        List<StreamSpec> streams = List.of(stream("s", new SplitRule.Whole()));

        assertThat(new JobSpec("j", List.of(), GENERATOR, 1 << 20, streams, 1000).weight())
                .isEqualTo(1000);
        assertThat(new JobSpec("j", List.of(), GENERATOR, 1 << 20, streams).weight()).isEqualTo(1);
        assertThatThrownBy(() -> new JobSpec("j", List.of(), GENERATOR, 1 << 20, streams, 0))
                .hasMessage("weight: must be between 1 and 1000, got 0");
        assertThatThrownBy(() -> new JobSpec("j", List.of(), GENERATOR, 1 << 20, streams, 1001))
                .hasMessage("weight: must be between 1 and 1000, got 1001");
    }

    @Test
    void isImmutableEvenWhenTheCallerKeepsItsCollections() {
        List<String> inputs = new ArrayList<>(List.of("file:///a"));
        Map<String, String> parameters = new HashMap<>(Map.of("k", "v"));
        List<StreamSpec> streams = new ArrayList<>(List.of(stream("s", new SplitRule.Whole())));
        JobSpec job =
                new JobSpec("j", inputs, new GeneratorSpec("com.example.Gen", parameters), streams);

        inputs.add("file:///b");
        parameters.put("k2", "v2");
        streams.clear();

        assertThat(job.inputs()).containsExactly("file:///a");
        assertThat(job.generator().parameters()).containsOnlyKeys("k");
        assertThat(job.streams()).hasSize(1);
        assertThatThrownBy(() -> job.streams().add(stream("t", new SplitRule.Whole())))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void findsAStreamByName() {
        JobSpec job =
                new JobSpec(
                        "j",
                        List.of(),
                        GENERATOR,
                        List.of(
                                stream("cyan", new SplitRule.Channel("c")),
                                stream("black", new SplitRule.Channel("k"))));

        assertThat(job.stream("black")).map(StreamSpec::split).contains(new SplitRule.Channel("k"));
        assertThat(job.stream("white")).isEmpty();
    }

    @Test
    void refusesTwoStreamsOfOneName() {
        assertThatThrownBy(
                        () ->
                                new JobSpec(
                                        "j",
                                        List.of(),
                                        GENERATOR,
                                        List.of(
                                                stream("cyan", new SplitRule.Channel("c")),
                                                stream("cyan", new SplitRule.Channel("m")))))
                .isInstanceOf(JobSpecException.class)
                .hasMessage("streams[1].name: duplicate stream name 'cyan'");
    }

    @Test
    void refusesTwoStreamsCarryingOneChannel() {
        assertThatThrownBy(
                        () ->
                                new JobSpec(
                                        "j",
                                        List.of(),
                                        GENERATOR,
                                        List.of(
                                                stream("a", new SplitRule.Channel("c")),
                                                stream("b", new SplitRule.Channel("c")))))
                .hasMessage(
                        "streams[1].split.channel: channel 'c' is already carried by stream 'a'");
    }

    @Test
    void aWholeStreamIsAlone() {
        assertThat(
                        new JobSpec(
                                        "j",
                                        List.of(),
                                        GENERATOR,
                                        List.of(stream("all", new SplitRule.Whole())))
                                .streams())
                .hasSize(1);
        assertThatThrownBy(
                        () ->
                                new JobSpec(
                                        "j",
                                        List.of(),
                                        GENERATOR,
                                        List.of(
                                                stream("all", new SplitRule.Whole()),
                                                stream("c", new SplitRule.Channel("c")))))
                .hasMessage(
                        "streams[0].split: a stream that carries the whole output must be the"
                                + " job's only stream");
    }

    @Test
    void refusesAJobWithoutStreams() {
        assertThatThrownBy(() -> new JobSpec("j", List.of(), GENERATOR, List.of()))
                .hasMessage("streams: must hold at least one stream");
    }

    @Test
    void refusesATaskSmallerThanAChunk() {
        List<StreamSpec> streams =
                List.of(
                        new StreamSpec(
                                "s", "n", new SplitRule.Whole(), 100, OptionalLong.empty(), 4096));

        assertThatThrownBy(() -> new JobSpec("j", List.of(), GENERATOR, 4095, streams))
                .hasMessage(
                        "taskSizeBytes: must be between the largest chunk size (4096) and"
                                + " 1073741824, got 4095");
        assertThat(new JobSpec("j", List.of(), GENERATOR, 4096, streams).taskSizeBytes())
                .isEqualTo(4096);
    }

    @Test
    void namesKeepToTheirCharset() {
        assertThat(Names.check("id", "A-z_0.9")).isEqualTo("A-z_0.9");
        assertThat(Names.check("id", "x".repeat(128))).hasSize(128);
        assertThatThrownBy(() -> Names.check("id", "x".repeat(129)))
                .hasMessageStartingWith("id: must be 1 to 128 characters of [A-Za-z0-9._-]");
        assertThatThrownBy(() -> Names.check("id", "")).isInstanceOf(JobSpecException.class);
        assertThatThrownBy(() -> Names.check("id", "a/b")).isInstanceOf(JobSpecException.class);
        assertThatThrownBy(() -> Names.check("id", "é")).isInstanceOf(JobSpecException.class);
    }

    @Test
    void streamLimitsAreInclusive() {
        SplitRule whole = new SplitRule.Whole();
        OptionalLong none = OptionalLong.empty();

        assertThat(new StreamSpec("s", "n", whole, 1, none, 1024).chunkSizeBytes()).isEqualTo(1024);
        assertThat(new StreamSpec("s", "n", whole, 1, none, 64 << 20).chunkSizeBytes())
                .isEqualTo(64 << 20);
        assertThatThrownBy(() -> new StreamSpec("s", "n", whole, 1, none, 1023))
                .hasMessage("chunkSizeBytes: must be between 1024 and 67108864, got 1023");
        assertThatThrownBy(() -> new StreamSpec("s", "n", whole, 0, none, 1024))
                .hasMessage("sizeBytes: must be positive, got 0");
        assertThatThrownBy(() -> new StreamSpec("s", "n", whole, 1, OptionalLong.of(0), 1024))
                .hasMessage("rateBytesPerSecond: must be positive, got 0");
    }
}
