package dev.sluice.client.job;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.client.annotation.PublicEvolving;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;

/**
 * The JSON form of a {@link JobStatus}: {@code {"jobId": "...", "state": "REFUSED", "reason":
 * "...", "timestampMs": 1763841600000}}, {@code reason} left out when there is none.
 */
@PublicEvolving
public final class JobStatusJson {

    private static final Set<String> FIELDS = Set.of("jobId", "state", "reason", "timestampMs");

    private JobStatusJson() {}

    public static JobStatus parse(byte[] json) {
        StrictJson status = StrictJson.object(StrictJson.parse(json), "", FIELDS);
        String jobId = status.text("jobId");
        String stateName = status.text("state");
        JobState state;
        try {
            state = JobState.valueOf(stateName);
        } catch (IllegalArgumentException e) {
            throw new JobSpecException(
                    "state",
                    "must be one of "
                            + Arrays.toString(JobState.values())
                            + ", got '"
                            + stateName
                            + "'");
        }
        Optional<String> reason =
                status.optional("reason").map(value -> StrictJson.asText(value, "reason"));
        long timestamp = status.requiredLong("timestampMs");
        return new JobStatus(jobId, state, reason, timestamp);
    }

    public static byte[] write(JobStatus status) {
        ObjectNode tree = StrictJson.MAPPER.createObjectNode();
        tree.put("jobId", status.jobId());
        tree.put("state", status.state().name());
        status.reason().ifPresent(reason -> tree.put("reason", reason));
        tree.put("timestampMs", status.timestampMs());
        return StrictJson.write(tree).getBytes(StandardCharsets.UTF_8);
    }
}
