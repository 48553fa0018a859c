package dev.sluice.flink.source.split;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.flink.source.enumerator.SluiceEnumeratorState;
import dev.sluice.flink.source.enumerator.SluiceEnumeratorStateSerializer;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class SerializersTest {
    private static final SluiceSplit BOUNDED =
            new SluiceSplit(new TopicPartition("orders", 3), 17, 99, "10.0.0.7");
    private static final SluiceSplit UNBOUNDED =
            new SluiceSplit(
                    new TopicPartition("ünïcode-topic", 0), 0, SluiceSplit.NO_STOPPING_OFFSET, "");

    @Test
    void splitsRoundTrip() throws IOException {
        SluiceSplitSerializer serializer = new SluiceSplitSerializer();
        for (SluiceSplit split : List.of(BOUNDED, UNBOUNDED)) {
            assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(split)))
                    .isEqualTo(split);
        }
    }

    @Test
    void enumeratorStateRoundTrips() throws IOException {
        SluiceEnumeratorStateSerializer serializer = new SluiceEnumeratorStateSerializer();
        SluiceEnumeratorState state =
                new SluiceEnumeratorState(
                        Set.of(new TopicPartition("a", 0), new TopicPartition("b", 7)),
                        List.of(BOUNDED, UNBOUNDED),
                        true);
        assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(state)))
                .isEqualTo(state);
    }

    @Test
    void anUnknownVersionOrCorruptBytesAreRefusedClearly() throws IOException {
        SluiceSplitSerializer splits = new SluiceSplitSerializer();
        byte[] bytes = splits.serialize(BOUNDED);
        assertThatThrownBy(() -> splits.deserialize(2, bytes))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("version 2");
        assertThatThrownBy(() -> splits.deserialize(1, Arrays.copyOf(bytes, bytes.length - 3)))
                .isInstanceOf(IOException.class);

        SluiceEnumeratorStateSerializer states = new SluiceEnumeratorStateSerializer();
        byte[] state =
                states.serialize(new SluiceEnumeratorState(Set.of(), List.of(BOUNDED), false));
        byte[] lying = state.clone();
        lying[3] = 0x7f; // an assigned-partition count far beyond the bytes
        assertThatThrownBy(() -> states.deserialize(1, lying))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("corrupt");
        byte[] trailing = Arrays.copyOf(state, state.length + 1);
        assertThatThrownBy(() -> states.deserialize(1, trailing))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("after");
    }
}
