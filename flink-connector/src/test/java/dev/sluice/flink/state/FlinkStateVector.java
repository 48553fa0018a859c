package dev.sluice.flink.state;

import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * One file under {@code testdata/flink-state/}: the state a serializer wrote there, and the version
 * it wrote it in (docs/formats.md, "Flink state").
 */
record FlinkStateVector<T>(
        String file, SimpleVersionedSerializer<T> serializer, int version, T state) {

    /** Whether this build's serializer writes this version, so the file is its output. */
    boolean isCurrent() {
        return version == serializer.getVersion();
    }

    byte[] write() throws IOException {
        return serializer.serialize(state);
    }

    T read(byte[] bytes) throws IOException {
        return serializer.deserialize(version, bytes);
    }

    /** The file's name: what a parameterized test shows. */
    @Override
    public String toString() {
        return file;
    }
}
