package dev.sluice.client.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The command envelope and the status record of {@code docs/formats.md}. */
class JobMessagesJsonTest {

    @Test
    void submitCarriesTheWholeSpec() {
        JobCommand submit = new JobCommand.Submit(JobSpecJson.parse(TestJobs.printingJobJson()));

        String json = new String(JobCommandJson.write(submit), StandardCharsets.UTF_8);

        assertThat(json).startsWith("{\n  \"type\" : \"SUBMIT\",\n  \"job\" : {");
        assertThat(JobCommandJson.parse(JobCommandJson.write(submit))).isEqualTo(submit);
        assertThat(submit.jobId()).isEqualTo("packaging-0001");
    }

    @Test
    void cancelCarriesTheJobId() {
        JobCommand cancel = new JobCommand.Cancel("job-9");

        assertThat(new String(JobCommandJson.write(cancel), StandardCharsets.UTF_8))
                .isEqualTo("{\n  \"type\" : \"CANCEL\",\n  \"jobId\" : \"job-9\"\n}");
        assertThat(JobCommandJson.parse(JobCommandJson.write(cancel))).isEqualTo(cancel);
    }

    @Test
    void failCarriesTheJobIdAndTheReason() {
        JobCommand fail = new JobCommand.Fail("job-9", "chunk too large");

        assertThat(new String(JobCommandJson.write(fail), StandardCharsets.UTF_8))
                .isEqualTo(
                        "{\n  \"type\" : \"FAIL\",\n  \"jobId\" : \"job-9\",\n  \"reason\" :"
                                + " \"chunk too large\"\n}");
        assertThat(JobCommandJson.parse(JobCommandJson.write(fail))).isEqualTo(fail);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "{}|type: is required",
                "{\"type\":\"PAUSE\",\"jobId\":\"j\"}|type: must be 'SUBMIT', 'CANCEL' or 'FAIL',"
                        + " got 'PAUSE'",
                "{\"type\":\"FAIL\",\"jobId\":\"j\"}|reason: is required",
                "{\"type\":\"FAIL\",\"jobId\":\"j\",\"reason\":\" \"}|reason: is required",
                "{\"type\":\"FAIL\",\"reason\":\"r\"}|jobId: is required",
                "{\"type\":\"CANCEL\"}|jobId: is required",
                "{\"type\":\"CANCEL\",\"jobId\":\"a b\"}|jobId: must be 1 to 128 characters",
                "{\"type\":\"CANCEL\",\"jobId\":\"j\",\"job\":{}}|job: unknown field",
                "{\"type\":\"SUBMIT\"}|job: is required",
                "{\"type\":\"SUBMIT\",\"job\":{\"id\":\"j\"}}|job.generator: is required",
                "{\"type\":\"SUBMIT\",\"job\":[]}|job: must be an object, got array",
                "{\"type\":\"SUBMIT\",\"job\":{},\"reason\":\"r\"}|reason: unknown field",
                "not json|not valid JSON:"
            })
    void refusesABadCommandWithTheJsonPath(String json, String message) {
        assertThatThrownBy(() -> JobCommandJson.parse(json.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(JobSpecException.class)
                .hasMessageStartingWith(message);
    }

    @Test
    void aSpecErrorInsideACommandIsPathedFromTheEnvelope() {
        String json =
                "{\"type\":\"SUBMIT\",\"job\":"
                        + TestJobs.printingJobJson()
                                .replace("\"chunkSizeBytes\" : 1048576", "\"chunkSizeBytes\" : 12")
                        + "}";

        assertThatThrownBy(() -> JobCommandJson.parse(json.getBytes(StandardCharsets.UTF_8)))
                .hasMessage(
                        "job.streams[0].chunkSizeBytes: must be between 1024 and 67108864, got 12");
    }

    @Test
    void statusRoundTripsWithAndWithoutReason() {
        JobStatus running = new JobStatus("j", JobState.RUNNING, Optional.empty(), 1_000);
        JobStatus refused =
                new JobStatus("j", JobState.REFUSED, Optional.of("no reader on printer-9"), 2_000);

        assertThat(new String(JobStatusJson.write(running), StandardCharsets.UTF_8))
                .isEqualTo(
                        "{\n  \"jobId\" : \"j\",\n  \"state\" : \"RUNNING\",\n"
                                + "  \"timestampMs\" : 1000\n}");
        assertThat(JobStatusJson.parse(JobStatusJson.write(running))).isEqualTo(running);
        assertThat(JobStatusJson.parse(JobStatusJson.write(refused))).isEqualTo(refused);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "{\"jobId\":\"j\",\"state\":\"DONE\",\"timestampMs\":1}|state: must be one of"
                        + " [ACCEPTED, REFUSED, RUNNING, COMPLETED, CANCELLED, FAILED], got 'DONE'",
                "{\"jobId\":\"j\",\"state\":\"FAILED\",\"timestampMs\":1}|reason: is required when"
                        + " the state is FAILED",
                "{\"jobId\":\"j\",\"state\":\"RUNNING\"}|timestampMs: is required",
                "{\"jobId\":\"j\",\"state\":\"RUNNING\",\"timestampMs\":-1}|timestampMs: must not"
                        + " be negative, got -1",
                "{\"jobId\":\"j\",\"state\":\"RUNNING\",\"timestampMs\":1,\"reason\":2}|reason:"
                        + " must be a string, got integer 2",
                "{\"jobId\":\"j\",\"state\":\"RUNNING\",\"timestampMs\":1,\"node\":\"x\"}|node:"
                        + " unknown field"
            })
    void refusesABadStatusWithTheJsonPath(String json, String message) {
        assertThatThrownBy(() -> JobStatusJson.parse(json.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(JobSpecException.class)
                .hasMessageStartingWith(message);
    }

    @Test
    void refusedAndFailedNeedAReason() {
        assertThatThrownBy(() -> JobStatus.now("j", JobState.REFUSED))
                .hasMessage("reason: is required when the state is REFUSED");
        assertThat(JobStatus.now("j", JobState.FAILED, "generator threw").reason())
                .contains("generator threw");
    }
}
