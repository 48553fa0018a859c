package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.Objects;
import java.util.Optional;

/**
 * One step of a job's life, as the scheduler publishes it on the status topic.
 *
 * @param jobId the job
 * @param state the state the job entered
 * @param reason why: required for REFUSED and FAILED (the user must learn what to fix), optional
 *     otherwise
 * @param timestampMs when the scheduler decided, in milliseconds since the epoch
 */
@PublicEvolving
public record JobStatus(String jobId, JobState state, Optional<String> reason, long timestampMs) {

    public JobStatus {
        Names.check("jobId", jobId);
        if (state == null) {
            throw new JobSpecException("state", "is required");
        }
        Objects.requireNonNull(reason, "reason (use Optional.empty())");
        if ((state == JobState.REFUSED || state == JobState.FAILED) && reason.isEmpty()) {
            throw new JobSpecException("reason", "is required when the state is " + state);
        }
        if (timestampMs < 0) {
            throw new JobSpecException("timestampMs", "must not be negative, got " + timestampMs);
        }
    }

    /** A status without a reason, stamped now. */
    public static JobStatus now(String jobId, JobState state) {
        return new JobStatus(jobId, state, Optional.empty(), System.currentTimeMillis());
    }

    /** A status with a reason, stamped now. */
    public static JobStatus now(String jobId, JobState state, String reason) {
        return new JobStatus(jobId, state, Optional.of(reason), System.currentTimeMillis());
    }
}
