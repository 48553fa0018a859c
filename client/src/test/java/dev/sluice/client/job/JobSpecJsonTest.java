package dev.sluice.client.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class JobSpecJsonTest {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Test
    void readsThePrintingJob() {
        JobSpec job = JobSpecJson.parse(TestJobs.printingJobJson());

        assertThat(job.id()).isEqualTo("packaging-0001");
        assertThat(job.inputs()).hasSize(2).allMatch(input -> input.startsWith("file:///srv/"));
        assertThat(job.generator().className()).isEqualTo("dev.sluice.printing.RipGenerator");
        assertThat(job.generator().parameters()).containsEntry("widthPx", "3000");
        assertThat(job.taskSizeBytes()).isEqualTo(4L << 20);
        assertThat(job.streams())
                .extracting(StreamSpec::name)
                .containsExactly("cyan", "magenta", "yellow", "black");
        assertThat(job.streams())
                .extracting(StreamSpec::outputLocation)
                .containsExactly("printer-1", "printer-2", "printer-3", "printer-4");
        StreamSpec black = job.stream("black").orElseThrow();
        assertThat(black.split()).isEqualTo(new SplitRule.Channel("black"));
        assertThat(black.sizeBytes()).isEqualTo(9_000_000);
        assertThat(black.rateBytesPerSecond()).isEqualTo(OptionalLong.of(4_500_000));
        assertThat(black.chunkSizeBytes()).isEqualTo(1 << 20);
    }

    @Test
    void theExampleFileIsInTheWrittenForm() {
        String text = TestJobs.printingJobJson();

        assertThat(JobSpecJson.write(JobSpecJson.parse(text))).isEqualTo(text.strip());
    }

    @Test
    void writingThenReadingGivesTheSameSpec() {
        JobSpec job = JobSpecJson.parse(TestJobs.printingJobJson());
        JobSpec small = TestJobs.small("job-1");

        assertThat(JobSpecJson.parse(JobSpecJson.write(job))).isEqualTo(job);
        assertThat(JobSpecJson.parse(JobSpecJson.write(small))).isEqualTo(small);
    }

    @Test
    void defaultsAreWrittenOutSoTheTextIsStable() {
        String minimal =
                "{\"id\":\"j\",\"generator\":{\"className\":\"G\"},\"streams\":[{\"name\":\"s\","
                    + "\"outputLocation\":\"n\",\"split\":{\"type\":\"whole\"},\"sizeBytes\":5}]}";

        String written = JobSpecJson.write(JobSpecJson.parse(minimal));

        assertThat(written)
                .contains("\"inputs\" : [ ]")
                .contains("\"parameters\" : { }")
                .contains("\"taskSizeBytes\" : 67108864")
                .contains("\"chunkSizeBytes\" : 524288")
                .contains("\"weight\" : 1")
                .doesNotContain("rateBytesPerSecond");
        assertThat(JobSpecJson.write(JobSpecJson.parse(written))).isEqualTo(written);
    }

    @Test
    void parametersAreWrittenInKeyOrder() {
        String json =
                "{\"id\":\"j\",\"generator\":{\"className\":\"G\",\"parameters\":{\"b\":\"2\","
                        + "\"a\":\"1\"}},\"streams\":[{\"name\":\"s\",\"outputLocation\":\"n\","
                        + "\"split\":{\"type\":\"whole\"},\"sizeBytes\":5}]}";

        String written = JobSpecJson.write(JobSpecJson.parse(json));

        assertThat(written.indexOf("\"a\"")).isLessThan(written.indexOf("\"b\""));
    }

    static Stream<Arguments> badSpecs() {
        return Stream.of(
                bad(
                        "unknown top-level field",
                        job -> job.put("priority", 1),
                        "priority: unknown field (allowed: [generator, id, inputs, streams,"
                                + " survivesProducerLoss, taskSizeBytes, transport, weight])"),
                bad(
                        "unknown stream field",
                        job -> stream(job, 2).put("colour", "red"),
                        "streams[2].colour: unknown field"),
                bad(
                        "unknown generator field",
                        job -> ((ObjectNode) job.get("generator")).put("jar", "x.jar"),
                        "generator.jar: unknown field"),
                bad(
                        "unknown split field",
                        job -> split(job, 0).put("part", 1),
                        "streams[0].split.part: unknown field"),
                bad("missing id", job -> job.remove("id"), "id: is required"),
                bad(
                        "id with a space",
                        job -> job.put("id", "bad id"),
                        "id: must be 1 to 128 characters of [A-Za-z0-9._-], got 'bad id'"),
                bad(
                        "id too long",
                        job -> job.put("id", "x".repeat(129)),
                        "id: must be 1 to 128 characters"),
                bad("id a number", job -> job.put("id", 7), "id: must be a string, got integer 7"),
                bad(
                        "null value",
                        job -> job.putNull("taskSizeBytes"),
                        "taskSizeBytes: must not be null; leave the field out"),
                bad(
                        "inputs not an array",
                        job -> job.put("inputs", "file:///a"),
                        "inputs: must be an array, got string"),
                bad(
                        "relative input",
                        job -> ((ArrayNode) job.get("inputs")).set(1, "profiles/x.icc"),
                        "inputs[1]: must be an absolute URI (with a scheme), got 'profiles/x.icc'"),
                bad(
                        "input not a URI",
                        job -> ((ArrayNode) job.get("inputs")).set(0, "file:// bad"),
                        "inputs[0]: is not a URI"),
                bad(
                        "input a number",
                        job -> ((ArrayNode) job.get("inputs")).set(0, 3),
                        "inputs[0]: must be a string, got integer 3"),
                bad("missing generator", job -> job.remove("generator"), "generator: is required"),
                bad(
                        "generator a string",
                        job -> job.put("generator", "G"),
                        "generator: must be an object, got string"),
                bad(
                        "bad class name",
                        job -> ((ObjectNode) job.get("generator")).put("className", "a b"),
                        "generator.className: must be a Java class name, got 'a b'"),
                bad(
                        "parameter not a string",
                        job -> parameters(job).put("widthPx", 3000),
                        "generator.parameters.widthPx: must be a string, got integer 3000"),
                bad(
                        "parameters an array",
                        job -> ((ObjectNode) job.get("generator")).putArray("parameters"),
                        "generator.parameters: must be an object, got array"),
                bad("missing streams", job -> job.remove("streams"), "streams: is required"),
                bad(
                        "no streams",
                        job -> job.putArray("streams"),
                        "streams: must hold at least one stream"),
                bad(
                        "stream not an object",
                        job -> ((ArrayNode) job.get("streams")).set(1, "magenta"),
                        "streams[1]: must be an object, got string"),
                bad(
                        "duplicate stream name",
                        job -> stream(job, 1).put("name", "cyan"),
                        "streams[1].name: duplicate stream name 'cyan'"),
                bad(
                        "bad stream name",
                        job -> stream(job, 3).put("name", "black/k"),
                        "streams[3].name: must be 1 to 128 characters"),
                bad(
                        "missing output location",
                        job -> stream(job, 0).remove("outputLocation"),
                        "streams[0].outputLocation: is required"),
                bad(
                        "missing split",
                        job -> stream(job, 0).remove("split"),
                        "streams[0].split: is required"),
                bad(
                        "unknown split type",
                        job -> split(job, 0).put("type", "stripes"),
                        "streams[0].split.type: must be 'whole' or 'channel', got 'stripes'"),
                bad(
                        "channel split without channel",
                        job -> split(job, 2).remove("channel"),
                        "streams[2].split.channel: is required"),
                bad(
                        "bad channel name",
                        job -> split(job, 2).put("channel", ""),
                        "streams[2].split.channel: must be 1 to 128 characters"),
                bad(
                        "whole split with a channel",
                        job -> split(job, 0).put("type", "whole"),
                        "streams[0].split.channel: unknown field (allowed: [type])"),
                bad(
                        "whole split among others",
                        job -> {
                            split(job, 0).put("type", "whole");
                            split(job, 0).remove("channel");
                        },
                        "streams[0].split: a stream that carries the whole output must be the"
                                + " job's only stream"),
                bad(
                        "two streams of one channel",
                        job -> split(job, 1).put("channel", "cyan"),
                        "streams[1].split.channel: channel 'cyan' is already carried by stream"
                                + " 'cyan'"),
                bad(
                        "missing size",
                        job -> stream(job, 3).remove("sizeBytes"),
                        "streams[3].sizeBytes: is required"),
                bad(
                        "zero size",
                        job -> stream(job, 3).put("sizeBytes", 0),
                        "streams[3].sizeBytes: must be positive, got 0"),
                bad(
                        "fractional size",
                        job -> stream(job, 3).put("sizeBytes", 1.5),
                        "streams[3].sizeBytes: must be an integer, got number"),
                bad(
                        "size a string",
                        job -> stream(job, 3).put("sizeBytes", "9000000"),
                        "streams[3].sizeBytes: must be an integer, got string"),
                bad(
                        "size beyond a long",
                        job -> stream(job, 3).put("sizeBytes", BigInteger.TEN.pow(30)),
                        "streams[3].sizeBytes: is out of range, got"
                                + " 1000000000000000000000000000000"),
                bad(
                        "zero rate",
                        job -> stream(job, 1).put("rateBytesPerSecond", 0),
                        "streams[1].rateBytesPerSecond: must be positive, got 0"),
                bad(
                        "negative rate",
                        job -> stream(job, 1).put("rateBytesPerSecond", -5),
                        "streams[1].rateBytesPerSecond: must be positive, got -5"),
                bad(
                        "tiny chunk",
                        job -> stream(job, 1).put("chunkSizeBytes", 12),
                        "streams[1].chunkSizeBytes: must be between 1024 and 67108864, got 12"),
                bad(
                        "chunk over 64 MiB",
                        job -> stream(job, 1).put("chunkSizeBytes", (64 << 20) + 1),
                        "streams[1].chunkSizeBytes: must be between 1024 and 67108864, got"
                                + " 67108865"),
                bad(
                        "chunk beyond an int",
                        job -> stream(job, 1).put("chunkSizeBytes", 5_000_000_000L),
                        "streams[1].chunkSizeBytes: must be between 1024 and 67108864, got"
                                + " 5000000000"),
                bad(
                        "task smaller than a chunk",
                        job -> job.put("taskSizeBytes", 1000),
                        "taskSizeBytes: must be between the largest chunk size (1048576) and"
                                + " 1073741824, got 1000"),
                bad(
                        "task over 1 GiB",
                        job -> job.put("taskSizeBytes", (1L << 30) + 1),
                        "taskSizeBytes: must be between the largest chunk size (1048576) and"
                                + " 1073741824, got 1073741825"),
                bad("zero weight", job -> job.put("weight", 0), WEIGHT + "got 0"),
                bad("weight over 1000", job -> job.put("weight", 1001), WEIGHT + "got 1001"),
                bad(
                        "weight beyond an int",
                        job -> job.put("weight", 4_294_967_298L),
                        WEIGHT + "got 4294967298"),
                bad(
                        "weight not a number",
                        job -> job.put("weight", "2"),
                        "weight: must be an integer"),
                bad(
                        "null weight",
                        job -> job.putNull("weight"),
                        "weight: must not be null; leave the field out"),
                bad(
                        "unknown transport",
                        job -> job.put("transport", "carrier-pigeon"),
                        "transport: must be 'auto', 'kafka' or 'local', got 'carrier-pigeon'"),
                bad(
                        "transport in upper case",
                        job -> job.put("transport", "LOCAL"),
                        "transport: must be 'auto', 'kafka' or 'local', got 'LOCAL'"),
                bad(
                        "transport not a string",
                        job -> job.put("transport", 1),
                        "transport: must be a string, got integer 1"),
                bad(
                        "null transport",
                        job -> job.putNull("transport"),
                        "transport: must not be null; leave the field out"),
                bad(
                        "survivesProducerLoss not a boolean",
                        job -> job.put("survivesProducerLoss", "yes"),
                        "survivesProducerLoss: must be true or false, got string"),
                bad(
                        "null survivesProducerLoss",
                        job -> job.putNull("survivesProducerLoss"),
                        "survivesProducerLoss: must not be null; leave the field out"));
    }

    private static final String WEIGHT = "weight: must be between 1 and 1000, ";

    @Test
    void aJobsWeightIsReadAndWrittenAndOneWhenLeftOut() throws Exception {
        ObjectNode job = (ObjectNode) MAPPER.readTree(TestJobs.printingJobJson());
        job.remove("weight");
        assertThat(JobSpecJson.parse(MAPPER.writeValueAsString(job)).weight()).isEqualTo(1);

        job.put("weight", 1000);
        JobSpec heavy = JobSpecJson.parse(MAPPER.writeValueAsString(job));
        assertThat(heavy.weight()).isEqualTo(1000);
        assertThat(JobSpecJson.write(heavy)).contains("\"weight\" : 1000");
        assertThat(JobSpecJson.parse(JobSpecJson.write(heavy))).isEqualTo(heavy);
    }

    @Test
    void aJobsTransportIsReadAndWrittenAndAutoWhenLeftOut() throws Exception {
        ObjectNode job = (ObjectNode) MAPPER.readTree(TestJobs.printingJobJson());
        assertThat(JobSpecJson.parse(MAPPER.writeValueAsString(job)).transport())
                .isEqualTo(Transport.AUTO);

        for (Transport transport : Transport.values()) {
            job.put("transport", transport.json());
            JobSpec spec = JobSpecJson.parse(MAPPER.writeValueAsString(job));
            assertThat(spec.transport()).isEqualTo(transport);
            assertThat(JobSpecJson.parse(JobSpecJson.write(spec))).isEqualTo(spec);
        }
    }

    /** A reader that predates the field still reads every spec that asks nothing new of it. */
    @Test
    void anAutoTransportIsLeftOutOfTheWrittenFormAndTheOthersAreWrittenLast() throws Exception {
        JobSpec auto = JobSpecJson.parse(TestJobs.printingJobJson());
        assertThat(JobSpecJson.write(auto)).doesNotContain("transport");

        ObjectNode job = (ObjectNode) MAPPER.readTree(TestJobs.printingJobJson());
        job.put("transport", "kafka");
        String written = JobSpecJson.write(JobSpecJson.parse(MAPPER.writeValueAsString(job)));
        assertThat(written).endsWith("\"weight\" : 1,\n  \"transport\" : \"kafka\"\n}");
    }

    /** Written last and only when true, so that a reader older than the field reads the rest. */
    @Test
    void survivingAProducersLossIsReadAndWrittenAndFalseWhenLeftOut() throws Exception {
        JobSpec plain = JobSpecJson.parse(TestJobs.printingJobJson());
        assertThat(plain.survivesProducerLoss()).isFalse();
        assertThat(JobSpecJson.write(plain)).doesNotContain("survivesProducerLoss");

        ObjectNode job = (ObjectNode) MAPPER.readTree(TestJobs.printingJobJson());
        job.put("survivesProducerLoss", true);
        JobSpec surviving = JobSpecJson.parse(MAPPER.writeValueAsString(job));
        assertThat(surviving.survivesProducerLoss()).isTrue();
        assertThat(JobSpecJson.write(surviving))
                .endsWith("\"weight\" : 1,\n  \"survivesProducerLoss\" : true\n}");
        assertThat(JobSpecJson.parse(JobSpecJson.write(surviving))).isEqualTo(surviving);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badSpecs")
    void refusesWithTheJsonPath(String what, Consumer<ObjectNode> change, String message)
            throws Exception {
        ObjectNode job = (ObjectNode) MAPPER.readTree(TestJobs.printingJobJson());
        change.accept(job);
        String json = MAPPER.writeValueAsString(job);

        assertThatThrownBy(() -> JobSpecJson.parse(json))
                .isInstanceOf(JobSpecException.class)
                .hasMessageStartingWith(message);
    }

    @Test
    void refusesTextThatIsNotJson() {
        assertThatThrownBy(() -> JobSpecJson.parse("{\"id\": "))
                .isInstanceOf(JobSpecException.class)
                .hasMessageStartingWith("not valid JSON:")
                .hasMessageContaining("line 1");
        assertThatThrownBy(() -> JobSpecJson.parse("")).hasMessageStartingWith("empty document");
    }

    @Test
    void refusesARepeatedField() {
        assertThatThrownBy(() -> JobSpecJson.parse("{\"id\":\"a\",\"id\":\"b\"}"))
                .isInstanceOf(JobSpecException.class)
                .hasMessageStartingWith("not valid JSON: Duplicate field 'id'");
    }

    @Test
    void refusesTextAfterTheDocument() {
        String json = JobSpecJson.write(TestJobs.small("j")) + " {}";

        assertThatThrownBy(() -> JobSpecJson.parse(json))
                .isInstanceOf(JobSpecException.class)
                .hasMessageStartingWith("not valid JSON:");
    }

    @Test
    void refusesADocumentThatIsNotAnObject() {
        assertThatThrownBy(() -> JobSpecJson.parse("[1, 2]"))
                .isInstanceOf(JobSpecException.class)
                .hasMessage("must be an object, got array");
    }

    private static Arguments bad(String what, Consumer<ObjectNode> change, String message) {
        return Arguments.of(what, change, message);
    }

    private static ObjectNode stream(ObjectNode job, int index) {
        return (ObjectNode) job.get("streams").get(index);
    }

    private static ObjectNode split(ObjectNode job, int index) {
        return (ObjectNode) stream(job, index).get("split");
    }

    private static ObjectNode parameters(ObjectNode job) {
        JsonNode generator = job.get("generator");
        return (ObjectNode) generator.get("parameters");
    }
}
