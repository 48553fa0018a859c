package dev.sluice.cluster;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code --name value} arguments of the cluster's programs. A bad one throws an {@link
 * IllegalArgumentException} naming it, which the programs' {@code main} turns into a line on stderr
 * and exit code 2.
 */
final class Arguments {
    private final Map<String, String> values;
    private final List<String> positional;

    private Arguments(Map<String, String> values, List<String> positional) {
        this.values = values;
        this.positional = positional;
    }

    static Arguments parse(String... args) {
        Map<String, String> values = new HashMap<>();
        List<String> positional = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                positional.add(args[i]);
            } else if (i + 1 < args.length) {
                values.put(args[i], args[++i]);
            } else {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
        }
        return new Arguments(values, positional);
    }

    String required(String name) {
        String value = values.get(name);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(name + " is required");
        }
        return value;
    }

    String optional(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    /** A positive number, {@code fallback} when not given. */
    double positive(String name, double fallback) {
        String value = values.get(name);
        if (value == null) {
            return fallback;
        }
        double parsed;
        try {
            parsed = Double.parseDouble(value);
        } catch (NumberFormatException e) {
            parsed = Double.NaN;
        }
        if (!(parsed > 0) || Double.isInfinite(parsed)) {
            throw new IllegalArgumentException(name + ": a positive number, got '" + value + "'");
        }
        return parsed;
    }

    /** An {@code ADDRESS:PORT} to listen on, null when not given. */
    InetSocketAddress address(String name) {
        String value = values.get(name);
        if (value == null) {
            return null;
        }
        int colon = value.lastIndexOf(':');
        int port = -1;
        if (colon > 0) {
            try {
                port = Integer.parseInt(value.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(
                    name + ": ADDRESS:PORT with a port of 1 to 65535, got '" + value + "'");
        }
        return new InetSocketAddress(value.substring(0, colon), port);
    }

    boolean flag(String name) {
        String value = values.getOrDefault(name, "false");
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(name + ": true or false, got '" + value + "'");
        }
        return value.equals("true");
    }

    List<String> positional() {
        return positional;
    }

    /** Ends a program whose arguments were bad: its name and why on stderr, exit code 2. */
    static void exit(String program, IllegalArgumentException e) {
        System.err.println(program + ": " + e.getMessage());
        System.exit(2);
    }
}
