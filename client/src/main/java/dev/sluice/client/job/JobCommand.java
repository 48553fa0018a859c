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
}
