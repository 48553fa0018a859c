package dev.sluice.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A benchmark's results as text: named columns, each with the format of its cells, and rows of
 * values. The same table is a CSV file (one row per run, read by {@code plot_*.py}) or a Markdown
 * table (the summary benchmarks/README.md quotes). Numbers are formatted in {@link Locale#ROOT},
 * whatever the machine's locale: a decimal comma would break the CSV.
 */
final class ResultTable {
    private final List<String> names = new ArrayList<>();
    private final List<String> formats = new ArrayList<>();
    private final List<List<String>> rows = new ArrayList<>();

    /** A column named {@code name} whose cells are their values in {@code format}. */
    ResultTable column(String name, String format) {
        if (!rows.isEmpty()) {
            throw new IllegalStateException("column " + name + " after the first row");
        }
        names.add(name);
        formats.add(format);
        return this;
    }

    /** A column of text cells: values as they are (formatted already, or names). */
    ResultTable column(String name) {
        return column(name, "%s");
    }

    /** A column of a table of runs: its name, its cells' format, and a run's value. */
    record Column<R>(String name, String format, Function<R, ?> value) {
        /** A text column: the run's value as it is. */
        Column(String name, Function<R, ?> value) {
            this(name, "%s", value);
        }
    }

    /** A row per run, its cells the columns' values of the run: a benchmark's CSV. */
    static <R> ResultTable of(List<R> runs, List<Column<R>> columns) {
        ResultTable table = new ResultTable();
        columns.forEach(column -> table.column(column.name(), column.format()));
        for (R run : runs) {
            table.row(columns.stream().map(column -> column.value().apply(run)).toArray());
        }
        return table;
    }

    /** A row: one value per column, in the columns' order. */
    ResultTable row(Object... values) {
        if (values.length != names.size()) {
            throw new IllegalArgumentException(
                    "a row of " + values.length + " values for " + names.size() + " columns");
        }
        List<String> cells = new ArrayList<>(values.length);
        for (int i = 0; i < values.length; i++) {
            cells.add(String.format(Locale.ROOT, formats.get(i), values[i]));
        }
        rows.add(cells);
        return this;
    }

    /** The header line, then a line per row; cells separated by commas. */
    String csv() {
        StringBuilder out = new StringBuilder(String.join(",", names)).append('\n');
        for (List<String> row : rows) {
            out.append(String.join(",", row)).append('\n');
        }
        return out.toString();
    }

    void writeCsv(Path file) throws IOException {
        Files.writeString(file, csv());
    }

    /** The header, the alignment line, then a line per row, in Markdown's pipe syntax. */
    String markdown() {
        StringBuilder out = new StringBuilder(line(names));
        out.append(names.stream().map(name -> "|---").collect(Collectors.joining())).append("|\n");
        rows.forEach(row -> out.append(line(row)));
        return out.toString();
    }

    private static String line(List<String> cells) {
        return "| " + String.join(" | ", cells) + " |\n";
    }
}
