package dev.sluice.client.annotation;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The types of a module's sources that carry an API annotation, read from the sources: the
 * annotations have CLASS retention, so reflection does not see them. Each test of a module's public
 * API compares the types found with a list checked in beside the test, so that widening or
 * narrowing the API shows in a diff of that list.
 */
public final class PublicApiSurface {
    private static final Pattern PACKAGE =
            Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    // Comments out first, so that an annotation named in a comment counts for nothing.
    private static final Pattern COMMENT =
            Pattern.compile(
                    "/\\*.*?\\*/|//[^\\n]*|'(?:\\\\.|[^'\\\\])'|\"(?:\\\\.|[^\"\\\\])*\"",
                    Pattern.DOTALL);

    private PublicApiSurface() {}

    /**
     * The fully qualified names of the types under {@code sourceRoot} annotated {@code annotation},
     * a nested type as {@code Outer.Inner}, sorted.
     */
    public static Set<String> annotatedTypes(Path sourceRoot, String annotation) {
        String simpleName = annotation.substring(annotation.lastIndexOf('.') + 1);
        Pattern declaration =
                Pattern.compile(
                        "@(?:"
                                + Pattern.quote(annotation)
                                + "|"
                                + Pattern.quote(simpleName)
                                + ")\\b(?:\\s*@\\w+(?:\\([^)]*\\))?)*\\s*(?:[a-z]+\\s+)*"
                                + "(?:class|interface|enum|record|@interface)\\s+(\\w+)");
        Set<String> types = new TreeSet<>();
        try (Stream<Path> files = Files.walk(sourceRoot)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String source = COMMENT.matcher(Files.readString(file)).replaceAll(" ");
                if (!source.contains("import " + annotation + ";")
                        && !source.contains("@" + annotation)) {
                    continue;
                }
                Matcher pkg = PACKAGE.matcher(source);
                String prefix = pkg.find() ? pkg.group(1) + "." : "";
                String fileType = file.getFileName().toString().replace(".java", "");
                Matcher m = declaration.matcher(source);
                while (m.find()) {
                    String name = m.group(1);
                    types.add(prefix + (name.equals(fileType) ? name : fileType + "." + name));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return types;
    }

    /**
     * How the types of {@code sourceRoot} annotated {@code annotation} differ from those {@code
     * list} names: empty when they are the same, else a message naming each type added and each
     * removed.
     */
    public static String differenceFromList(Path sourceRoot, String annotation, Path list)
            throws IOException {
        return difference(annotatedTypes(sourceRoot, annotation), listed(list), list);
    }

    /** The lines of a checked-in list that name types: neither blank nor a {@code #} comment. */
    public static Set<String> listed(Path list) throws IOException {
        Set<String> types = new TreeSet<>();
        for (String line : Files.readAllLines(list)) {
            String type = line.strip();
            if (!type.isEmpty() && !type.startsWith("#")) {
                types.add(type);
            }
        }
        return types;
    }

    /**
     * What differs between the types found and those listed, as a message naming each type added
     * and each removed; empty when they are the same.
     */
    public static String difference(Set<String> found, Set<String> listed, Path list) {
        List<String> added = new ArrayList<>(found);
        added.removeAll(listed);
        List<String> removed = new ArrayList<>(listed);
        removed.removeAll(found);
        if (added.isEmpty() && removed.isEmpty()) {
            return "";
        }
        return "the public API differs from "
                + list
                + " (update the list when the change is meant):"
                + (added.isEmpty() ? "" : "\n  added: " + String.join(", ", added))
                + (removed.isEmpty() ? "" : "\n  removed: " + String.join(", ", removed));
    }
}
