package dev.floe.cdc;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.floe.FloeException;
import dev.floe.SqlState;
import java.util.List;
import java.util.Locale;

/** The envelope formats a change stream may come in (docs/cdc.md): one JSON value per envelope. */
public enum ChangeFormat {
  /** Cassandra-style cells with last-write-wins timestamps: {@link LwwEnvelopes}. */
  LWW,
  /** Debezium change events, with or without their schema: {@link DebeziumEvents}. */
  DEBEZIUM;

  /** Debezium's placeholder for an unchanged TOAST value, as text and as bytea's base64. */
  public static final String UNAVAILABLE = DebeziumEvents.UNAVAILABLE;
  public static final String UNAVAILABLE_BYTES = DebeziumEvents.UNAVAILABLE_BYTES;

  /**
   * Reads an envelope as a tree. An ObjectReader made once: ObjectMapper.readTree(String) resolves the
   * JsonNode type again for every call, an eighth of a batch's decoding.
   */
  private static final com.fasterxml.jackson.databind.ObjectReader JSON = new ObjectMapper().readerFor(JsonNode.class);

  /** The format named {@code name} ({@code lww} or {@code debezium}), or 22023. */
  public static ChangeFormat named(String name) {
    try {
      return valueOf(name.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "unknown change format \"" + name
          + "\": it is lww or debezium");
    }
  }

  /** A decoder of this format's envelopes into changes of a table of {@code shape}. */
  public Decoder decoder(TableShape shape) {
    return this == LWW ? new LwwEnvelopes(shape) : new DebeziumEvents(shape);
  }

  /** Decodes envelopes of one format for one table. */
  public interface Decoder {
    /**
     * The changes envelope {@code json} makes (none for a Debezium tombstone, {@code null}); each
     * change's position is the source position the envelope carries.
     *
     * @throws FloeException 22P02 for text that is not JSON, 22023 for an envelope that is not one of the
     *     format's, or the error of a value that does not fit its column
     */
    default List<Change> decode(String json) {
      JsonNode node;
      try {
        node = JSON.readTree(json);
      } catch (JsonProcessingException e) {
        throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type json",
            e.getOriginalMessage(), null, 0, null);
      }
      return decode(node);
    }

    List<Change> decode(JsonNode envelope);
  }

  /** 22023: an envelope that is not what the format says. */
  static FloeException invalid(String what) {
    return new FloeException(SqlState.INVALID_PARAMETER_VALUE, "invalid change envelope: " + what);
  }
}
