package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;

/** A record of the jobs topic: what the user asks of the scheduler. */
@PublicEvolving
public sealed interface JobCommand {

    /** The job the command is about; also the record's key. */
    String jobId();

    /** Run this job. */
    record Submit(JobSpec spec) implements JobCommand {
        public Submit {
            if (spec == null) {
                throw new JobSpecException("job", "is required");
            }
        }

        @Override
        public String jobId() {
            return spec.id();
        }
    }

    /** Stop this job, whatever it is doing, and release what it holds. */
    record Cancel(String jobId) implements JobCommand {
        public Cancel {
            Names.check("jobId", jobId);
        }
    }

    /**
     * End this job as FAILED with {@code reason}: what a writer sends when the job's chunks cannot
     * be written (too large, their topic missing, not authorized), so that the job fails rather
     * than the generation pipeline (docs/generation.md, "The scheduler").
     */
    record Fail(String jobId, String reason) implements JobCommand {
        public Fail {
            Names.check("jobId", jobId);
            if (reason == null || reason.isBlank()) {
                throw new JobSpecException("reason", "is required");
            }
        }
    }
}
