package dev.sluice.flink.lifecycle.userjar;

import dev.sluice.flink.generation.ChunkGenerator;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.GenerationSource;
import dev.sluice.flink.lifecycle.UserCodeLoaders;
import java.io.InputStream;
import java.util.Arrays;

/** Zeros, as many as a task asks for; the producers make it from the job spec's class name. */
public final class CountingGenerator implements ChunkGenerator {
    static {
        UserCodeLoaders.record(CountingGenerator.class);
        UserCodeLoaders.record(GenerationSource.class);
    }

    @Override
    public InputStream compute(ComputeTask task) {
        long length = task.length();
        return new InputStream() {
            private long next;

            @Override
            public int read() {
                if (next >= length) {
                    return -1;
                }
                next++;
                return 0;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (next >= length) {
                    return -1;
                }
                int n = (int) Math.min(len, length - next);
                Arrays.fill(b, off, off + n, (byte) 0);
                next += n;
                return n;
            }
        };
    }
}
