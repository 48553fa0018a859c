package dev.sluice.client.job;

import static dev.sluice.client.job.JobState.ACCEPTED;
import static dev.sluice.client.job.JobState.CANCELLED;
import static dev.sluice.client.job.JobState.COMPLETED;
import static dev.sluice.client.job.JobState.FAILED;
import static dev.sluice.client.job.JobState.REFUSED;
import static dev.sluice.client.job.JobState.RUNNING;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class JobStateTest {

    /**
     * The life of a job in docs/formats.md, "Statuses", written out once more to check the enum
     * against.
     */
    private static final Set<String> LEGAL =
            Set.of(
                    "ACCEPTED->RUNNING",
                    "ACCEPTED->CANCELLED",
                    "ACCEPTED->FAILED",
                    "RUNNING->COMPLETED",
                    "RUNNING->CANCELLED",
                    "RUNNING->FAILED");

    @Test
    void onlyTheLegalMovesAreAllowed() {
        for (JobState from : JobState.values()) {
            for (JobState to : JobState.values()) {
                assertThat(from.canMoveTo(to))
                        .as("%s -> %s", from, to)
                        .isEqualTo(LEGAL.contains(from + "->" + to));
            }
        }
    }

    @Test
    void aJobStartsAcceptedOrRefused() {
        assertThat(EnumSet.allOf(JobState.class))
                .filteredOn(JobState::isInitial)
                .containsExactlyInAnyOrder(ACCEPTED, REFUSED);
    }

    @Test
    void refusedCompletedCancelledAndFailedEndAJob() {
        assertThat(EnumSet.allOf(JobState.class))
                .filteredOn(JobState::isTerminal)
                .containsExactlyInAnyOrder(REFUSED, COMPLETED, CANCELLED, FAILED);
        assertThat(RUNNING.isTerminal()).isFalse();
    }
}
