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

  private static final ObjectMapper MAPPER = new ObjectMapper()
      .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  /**
   * Reads an envelope as a tree. An ObjectReader made once: ObjectMapper.readTree(String) resolves the
   * JsonNode type again for every call, an eighth of a batch's decoding.
   */
  private static final com.fasterxml.jackson.databind.ObjectReader JSON = MAPPER.readerFor(JsonNode.class);

  /**
   * An envelope's tree: one JSON value and nothing after it, its numbers with a fraction or an exponent read
   * exactly (a numeric column's digits are not rounded through a double), but for a negative zero, which
   * only a double keeps (PostgreSQL's float8 {@code -0} comes as {@code -0.0}).
   */
  static JsonNode tree(String json) throws java.io.IOException {
    try (com.fasterxml.jackson.core.JsonParser p = new ExactNumbers(MAPPER.getFactory().createParser(json))) {
      JsonNode node = JSON.readTree(p);
      return node == null ? com.fasterxml.jackson.databind.node.MissingNode.getInstance() : node;
    }
  }

  /** A parser that has Jackson's tree keep each decimal number as a BigDecimal, but a negative zero as a double. */
  private static final class ExactNumbers extends com.fasterxml.jackson.core.util.JsonParserDelegate {
    ExactNumbers(com.fasterxml.jackson.core.JsonParser p) {
      super(p);
    }

    @Override
    public NumberTypeFP getNumberTypeFP() throws java.io.IOException {
      if (currentToken() == com.fasterxml.jackson.core.JsonToken.VALUE_NUMBER_FLOAT) {
        String t = getText();
        return t.startsWith("-") && new java.math.BigDecimal(t).signum() == 0 ? NumberTypeFP.DOUBLE64
            : NumberTypeFP.BIG_DECIMAL;
      }
      return super.getNumberTypeFP();
    }
  }

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
        node = tree(json);
      } catch (JsonProcessingException e) {
        throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type json",
            jsonDetail(e), null, 0, null);
      } catch (java.io.IOException e) { // reading a String fails only as JSON does
        throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type json",
            e.getMessage(), null, 0, null);
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
