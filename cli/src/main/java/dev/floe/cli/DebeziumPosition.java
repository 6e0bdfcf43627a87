package dev.floe.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.floe.FloeException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The position a batch records: {@code lsn:<LSN> {"partition": ..., "offset": ...}}, the LSN of the
 * connector's offset as PostgreSQL prints it ({@code 0/16B3748}), then the connector's source partition
 * and offset as JSON, which {@link FloeOffsets} hands back to Debezium when it starts again.
 */
final class DebeziumPosition {
  private static final ObjectMapper JSON = new ObjectMapper();

  private DebeziumPosition() {}

  static String of(Map<String, ?> partition, Map<String, ?> offset) {
    Map<String, Object> both = new LinkedHashMap<>();
    both.put("partition", partition);
    both.put("offset", offset);
    Object lsn = offset.get("lsn");
    try {
      return "lsn:" + (lsn instanceof Number n ? lsn(n.longValue()) : "?") + " " + JSON.writeValueAsString(both);
    } catch (JsonProcessingException e) {
      throw FloeException.internal("cannot write Debezium's offset " + offset, e);
    }
  }

  /** PostgreSQL's text form of an LSN. */
  static String lsn(long lsn) {
    return Long.toHexString(lsn >>> 32).toUpperCase(Locale.ROOT) + "/"
        + Long.toHexString(lsn & 0xFFFFFFFFL).toUpperCase(Locale.ROOT);
  }

  /** The {@code lsn:...} part of a position. */
  static String lsnOf(String position) {
    int space = position.indexOf(' ');
    return space < 0 ? position : position.substring(0, space);
  }

  /** The partition and offset a position holds, if it is one of this command's. */
  static Optional<JsonNode> parse(String position) {
    int space = position.indexOf(' ');
    if (!position.startsWith("lsn:") || space < 0) {
      return Optional.empty(); // another source's (floe cdc apply's <file>:<line>): start afresh
    }
    try {
      JsonNode n = JSON.readTree(position.substring(space + 1));
      return n.path("partition").isObject() && n.path("offset").isObject() ? Optional.of(n) : Optional.empty();
    } catch (JsonProcessingException e) {
      return Optional.empty();
    }
  }
}
