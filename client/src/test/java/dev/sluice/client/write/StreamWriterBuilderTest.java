package dev.sluice.client.write;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * {@link StreamWriterBuilder#open()} refuses a wrong setting naming it, before it connects: the
 * cluster given here does not exist.
 */
class StreamWriterBuilderTest {
    private static final String NOWHERE = "localhost:1";
    private static final JobSpec JOB =
            new JobSpec(
                    "job-1",
                    List.of("file:///srv/in.tiff"),
                    new GeneratorSpec("com.example.Gen", Map.of()),
                    8192,
                    List.of(
                            new StreamSpec(
                                    "cyan",
                                    "printer-1",
                                    new SplitRule.Channel("c"),
                                    100_000,
                                    OptionalLong.empty(),
                                    4096),
                            new StreamSpec(
                                    "magenta",
                                    "printer-1",
                                    new SplitRule.Channel("m"),
                                    100_000,
                                    OptionalLong.empty(),
                                    4096)));

    private static StreamWriterBuilder unbounded() {
        return StreamWriter.builder(NOWHERE, "job-1", "cyan").outputLocation("printer-1");
    }

    private static void assertRefused(StreamWriterBuilder builder, String... naming) {
        assertThatThrownBy(builder::open)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContainingAll(naming);
    }

    @Test
    void anUnboundedStreamNeedsAPlaceAndAChunkSizeInTheJobModelsRange() {
        assertRefused(StreamWriter.builder(NOWHERE, "job-1", "cyan"), "no outputLocation");
        assertRefused(unbounded().topic("t"), "outputLocation and topic");
        assertRefused(unbounded().chunkSize(1023), "chunkSize", "1024", "1023");
        assertRefused(unbounded().chunkSize((64 << 20) + 1), "chunkSize");
        assertRefused(unbounded().share(0, 2), "share", "StreamWriter.forJob");
        assertRefused(StreamWriter.builder(" ", "job-1", "cyan").topic("t"), "bootstrap servers");
    }

    @Test
    void aJobsStreamTakesItsSizesFromTheSpecAndAShareWithinItsCount() {
        assertRefused(
                StreamWriter.forJob(NOWHERE, JOB, "yellow"), "no stream 'yellow'", "cyan, magenta");
        assertRefused(StreamWriter.forJob(NOWHERE, JOB, "cyan").chunkSize(2048), "chunkSize");
        assertRefused(
                StreamWriter.forJob(NOWHERE, JOB, "cyan").outputLocation("p"), "outputLocation");
        assertRefused(StreamWriter.forJob(NOWHERE, JOB, "cyan").share(3, 3), "share(3, 3)");
        assertRefused(StreamWriter.forJob(NOWHERE, JOB, "cyan").share(-1, 3), "share(-1, 3)");
        assertRefused(StreamWriter.forJob(NOWHERE, JOB, "cyan").share(0, 0), "share(0, 0)");
    }

    @Test
    void namesAndTheInFlightBoundAreChecked() {
        assertRefused(
                StreamWriter.builder(NOWHERE, "job 1", "cyan").outputLocation("p"), "job 'job 1'");
        assertRefused(
                StreamWriter.builder(NOWHERE, "job-1", "cyan/2").topic("t"), "stream 'cyan/2'");
        assertRefused(unbounded().inFlightBytes(0), "inFlightBytes");
    }

    @Test
    void theProducerIsAtLeastOnceAndTheProgressConsumerGroupless() {
        assertRefused(unbounded().property("value.serializer", "x"), "value.serializer");
        assertRefused(unbounded().property("transactional.id", "t"), "transactional.id");
        assertRefused(unbounded().property("acks", "0"), "acks = 0");
        assertRefused(unbounded().property("max.request.size", "lots"), "max.request.size");
        assertRefused(unbounded().progressConsumerProperty("group.id", "g"), "group.id");
    }

    @Test
    void aChunkLargerThanTheProducerMaySendIsRefusedAtOpenNamingTheSetting() {
        assertRefused(
                unbounded().chunkSize(4096).property("max.request.size", "2000"),
                "chunk job-1/cyan (its largest: 4096 B to printer-1, the longest seq, eos) is ",
                "max.request.size (2000)",
                "chunk size");
        assertRefused(
                StreamWriter.forJob(NOWHERE, JOB, "cyan").property("max.request.size", "4000"),
                "4096 B",
                "max.request.size (4000)",
                "chunkSizeBytes");
    }
}
