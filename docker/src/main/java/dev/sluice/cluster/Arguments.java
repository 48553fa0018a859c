package dev.sluice.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code --name value} arguments of the cluster's programs; a bad one ends the program with
 * exit code 2 and a line naming it.
 */
final class Arguments {
    private final String program;
    private final Map<String, String> values;
    private final List<String> positional;

    private Arguments(String program, Map<String, String> values, List<String> positional) {
        this.program = program;
        this.values = values;
        this.positional = positional;
    }

    static Arguments parse(String[] args, String program) {
        Map<String, String> values = new HashMap<>();
        List<String> positional = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                positional.add(args[i]);
            } else if (i + 1 < args.length) {
                values.put(args[i], args[++i]);
            } else {
                fail(program, args[i] + " needs a value");
            }
        }
        return new Arguments(program, values, positional);
    }

    String required(String name) {
        String value = values.get(name);
        if (value == null || value.isEmpty()) {
            fail(program, name + " is required");
        }
        return value;
    }

    String optional(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    List<String> positional() {
        return positional;
    }

    static void fail(String program, String message) {
        System.err.println(program + ": " + message);
        System.exit(2);
    }
}
