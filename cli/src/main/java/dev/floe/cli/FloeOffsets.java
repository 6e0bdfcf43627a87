package dev.floe.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.OffsetBackingStore;
import org.apache.kafka.connect.util.Callback;

/**
 * Debezium's offset store, reading from the table: the offset the last committed batch recorded is handed
 * to the connector when it starts, and what Debezium stores afterwards (after each commit: see
 * {@link Follower}) is kept in memory, where the connector reads it back to tell PostgreSQL how far the slot
 * may advance. Nothing is written anywhere else: each batch's commit recorded its offset already. Debezium
 * makes the store by name (hence public, with a constructor of no arguments); it finds the follower's seed
 * by the id passed as {@code offset.storage.file.filename}.
 */
public final class FloeOffsets implements OffsetBackingStore {
  static final Map<String, JsonNode> SEEDS = new ConcurrentHashMap<>();
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Map<ByteBuffer, ByteBuffer> stored = new ConcurrentHashMap<>();
  private JsonNode seed;

  public FloeOffsets() {}

  @Override
  public void configure(WorkerConfig config) {
    seed = SEEDS.get(config.getString("offset.storage.file.filename"));
  }

  @Override
  public void start() {}

  @Override
  public void stop() {}

  /** What was stored under a key, else the seed's offset if the key names the seed's partition. */
  @Override
  public Future<Map<ByteBuffer, ByteBuffer>> get(Collection<ByteBuffer> keys) {
    Map<ByteBuffer, ByteBuffer> out = new HashMap<>();
    for (ByteBuffer key : keys) {
      ByteBuffer value = stored.get(key);
      if (value == null && seed != null && seedsKey(key)) {
        try {
          value = ByteBuffer.wrap(JSON.writeValueAsBytes(seed.get("offset")));
        } catch (JsonProcessingException e) {
          throw new IllegalStateException(e);
        }
      }
      if (value != null) {
        out.put(key, value.duplicate());
      }
    }
    return CompletableFuture.completedFuture(out);
  }

  /** A key is {@code ["<engine>", {partition}]}. */
  private boolean seedsKey(ByteBuffer key) {
    try {
      JsonNode k = JSON.readTree(StandardCharsets.UTF_8.decode(key.duplicate()).toString());
      return k.isArray() && k.size() == 2 && k.get(1).equals(seed.get("partition"));
    } catch (IOException e) {
      return false; // a key of another shape: not ours
    }
  }

  @Override
  public Future<Void> set(Map<ByteBuffer, ByteBuffer> values, Callback<Void> callback) {
    values.forEach((k, v) -> {
      if (v == null) {
        stored.remove(k);
      } else {
        stored.put(k, v);
      }
    });
    if (callback != null) {
      callback.onCompletion(null, null);
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public Set<Map<String, Object>> connectorPartitions(String connectorName) {
    return Set.of();
  }
}
