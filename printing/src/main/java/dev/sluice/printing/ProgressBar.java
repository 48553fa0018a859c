package dev.sluice.printing;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * One line per job: a bar, the bytes its readers received of its total, and the rate since it
 * started. On a terminal the lines are redrawn in place; elsewhere (a log, a test) a line per job
 * is printed every few seconds instead, so the output stays readable.
 */
final class ProgressBar {
    private static final int WIDTH = 30;
    private static final long LOG_EVERY_NANOS = 5_000_000_000L;

    /** A job to show: {@code received} is read from the printing thread, so it must be safe. */
    record Line(String label, long totalBytes, LongSupplier received) {}

    private final PrintStream out;
    private final boolean terminal;
    private final List<Line> lines;
    private final long startNanos = System.nanoTime();
    private boolean drawn;
    private long lastLogged;

    ProgressBar(PrintStream out, boolean terminal, List<Line> lines) {
        this.out = out;
        this.terminal = terminal;
        this.lines = List.copyOf(lines);
    }

    /** Draws the current state (on a terminal) or logs it when a log line is due. */
    void update() {
        long now = System.nanoTime();
        if (terminal) {
            if (drawn) {
                out.print("\033[" + lines.size() + "A");
            }
            draw(now);
            drawn = true;
        } else if (now - lastLogged >= LOG_EVERY_NANOS) {
            draw(now);
            lastLogged = now;
        }
    }

    /** The final state, always printed. */
    void finish() {
        if (terminal) {
            update();
        } else {
            draw(System.nanoTime());
        }
    }

    private void draw(long now) {
        double seconds = Math.max(1e-9, (now - startNanos) / 1e9);
        for (Line line : lines) {
            long received = line.received().getAsLong();
            double fraction = Math.min(1.0, received / (double) line.totalBytes());
            int filled = (int) Math.round(fraction * WIDTH);
            String bar =
                    "=".repeat(filled)
                            + (filled < WIDTH ? ">" + " ".repeat(WIDTH - filled - 1) : "");
            out.print(
                    String.format(
                            Locale.ROOT,
                            "  %-10s [%s] %3.0f%%  %7.1f / %7.1f MB  %6.1f MB/s%s%n",
                            line.label(),
                            bar,
                            fraction * 100,
                            received / 1e6,
                            line.totalBytes() / 1e6,
                            received / 1e6 / seconds,
                            terminal ? "\033[K" : ""));
        }
        out.flush();
    }
}
