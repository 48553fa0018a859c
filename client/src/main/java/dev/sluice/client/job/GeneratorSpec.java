package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The user code that computes a job's bytes: a class the producers load by name, and the parameters
 * it is given for this job.
 *
 * @param className the binary name of the generator class
 * @param parameters free-form settings for the generator, such as a resolution or a color profile
 */
@PublicEvolving
public record GeneratorSpec(String className, Map<String, String> parameters) {

    private static final Pattern BINARY_NAME =
            Pattern.compile("[\\p{L}_$][\\p{L}\\p{N}_$]*(\\.[\\p{L}_$][\\p{L}\\p{N}_$]*)*");

    public GeneratorSpec {
        if (className == null) {
            throw new JobSpecException("className", "is required");
        }
        if (!BINARY_NAME.matcher(className).matches()) {
            throw new JobSpecException(
                    "className", "must be a Java class name, got '" + className + "'");
        }
        if (parameters == null) {
            throw new JobSpecException("parameters", "is required");
        }
        parameters = Map.copyOf(parameters);
    }

    public GeneratorSpec(String className) {
        this(className, Map.of());
    }
}
