package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;

/**
 * A job spec, command or status that breaks a rule of the job model. The message starts with the
 * JSON path of the offending value, e.g. {@code streams[1].chunkSizeBytes: must be between 1024 and
 * 67108864, got 12}, so a user can find it in a file of any size.
 */
@PublicEvolving
public final class JobSpecException extends IllegalArgumentException {

    private final String path;
    private final String problem;

    public JobSpecException(String path, String problem) {
        super(path.isEmpty() ? problem : path + ": " + problem);
        this.path = path;
        this.problem = problem;
    }

    /** The JSON path of the offending value; empty when the whole document is at fault. */
    public String path() {
        return path;
    }

    /** The message without the path. */
    public String problem() {
        return problem;
    }

    /**
     * The same problem seen from an enclosing object: the model's records know only their own
     * fields, the parser knows where the record sits in the document.
     */
    JobSpecException under(String parent) {
        if (parent.isEmpty()) {
            return this;
        }
        String joined = path.isEmpty() ? parent : parent + "." + path;
        JobSpecException moved = new JobSpecException(joined, problem);
        moved.setStackTrace(getStackTrace());
        return moved;
    }
}
