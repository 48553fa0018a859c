package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.EnumSet;
import java.util.Set;

/**
 * Where a job is in its life (docs/formats.md, "Statuses"). A job is first ACCEPTED (its output
 * locations have readers and there is capacity) or REFUSED; it turns RUNNING when its readers say
 * they are ready, and COMPLETED when they have read everything. It may be CANCELLED by its user or
 * FAILED by a fault (a generator that throws, a reader that disappears) until it has ended.
 */
@PublicEvolving
public enum JobState {
    ACCEPTED,
    REFUSED,
    RUNNING,
    COMPLETED,
    CANCELLED,
    FAILED;

    /** Whether a job's first status may have this state. */
    public boolean isInitial() {
        return this == ACCEPTED || this == REFUSED;
    }

    /** Whether the job has ended: no status follows this one. */
    public boolean isTerminal() {
        return successors().isEmpty();
    }

    /** Whether a status with this state may be followed by one with {@code next}. */
    public boolean canMoveTo(JobState next) {
        return successors().contains(next);
    }

    private Set<JobState> successors() {
        return switch (this) {
            case ACCEPTED -> EnumSet.of(RUNNING, CANCELLED, FAILED);
            case RUNNING -> EnumSet.of(COMPLETED, CANCELLED, FAILED);
            case REFUSED, COMPLETED, CANCELLED, FAILED -> EnumSet.noneOf(JobState.class);
        };
    }
}
