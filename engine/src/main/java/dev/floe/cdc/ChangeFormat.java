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
   * Reads an envelope as a tree: one JSON value, nothing after it, its numbers exactly (a numeric column's
   * digits are not rounded through a double). An ObjectReader made once: ObjectMapper.readTree(String)
   * resolves the JsonNode type again for every call, an eighth of a batch's decoding.
   */
  private static final com.fasterxml.jackson.databind.ObjectReader JSON = new ObjectMapper()
      .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .readerFor(JsonNode.class);

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
            jsonDetail(e), null, 0, null);
      }
      return decode(node);
    }

    List<Change> decode(JsonNode envelope);
  }

  /**
   * What is wrong with a line that is not one JSON value, in the words of PostgreSQL's json input where it
   * has them, and never the parser's own location text.
   */
  static String jsonDetail(JsonProcessingException e) {
    if (e instanceof com.fasterxml.jackson.core.io.JsonEOFException) {
      return "The input string ended unexpectedly.";
    }
    if (e instanceof com.fasterxml.jackson.databind.exc.MismatchedInputException
        && e.getOriginalMessage().startsWith("Trailing token")) {
      return "Expected end of input, but found more: an envelope is one JSON value, alone on its line.";
    }
    String m = e.getOriginalMessage().replaceAll("\\s*\\(start marker at \\[Source:[^\\]]*\\]\\)", "")
        .replaceAll("\\s*at \\[Source:[^\\]]*\\]", "").replaceAll("\\s*\\n.*", "");
    long column = e.getLocation() == null ? -1 : e.getLocation().getColumnNr();
    return m + (column > 0 ? " (at character " + column + ")" : "") + ".";
  }

  /** 22023: an envelope that is not what the format says. */
  static FloeException invalid(String what) {
    return new FloeException(SqlState.INVALID_PARAMETER_VALUE, "invalid change envelope: " + what);
  }
}
