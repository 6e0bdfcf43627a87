package dev.floe.cdc;

import dev.floe.cdc.ColumnarBatch.Kind;
import dev.floe.cdc.ColumnarBatch.Refused;

/**
 * A strict JSON reader over one line, refusing ({@link Refused}) anything but JSON as Jackson's default
 * parser reads it; {@link #value} reads a column's value into {@link #bits} / {@link #text} /
 * {@link #isNull}.
 */
final class JsonCursor {
  private final TableShape shape;
  /** Per column, how its values are read. */
  private final Kind[] kinds;
  private String s;
  private int p;
  /** Member names read before, by their hash ({@link #plainName}). */
  private final String[] names = new String[64];
  /**
   * What the schema says of the value {@link #value} reads next (a decimal's scale, a timestamp number's
   * unit), as the tree decoder looks it up; null when it is not known yet (a payload read before its
   * schema): a value that depends on it is not taken.
   */
  JsonValues.Hint hint = JsonValues.Hint.NONE;
  /** Whether a value of the line was not read because {@link #hint} was not known. */
  boolean hintMissing;
  /** The last value {@link #value} read: NULL, a long (doubles as bits, booleans as 0/1), text. */
  boolean isNull;
  long bits;
  String text;

  JsonCursor(TableShape shape, Kind[] kinds) {
    this.shape = shape;
    this.kinds = kinds;
  }

  void reset(String line) {
    s = line;
    p = 0;
    hintMissing = false;
  }

  /** Where the cursor is in the line. */
  int position() {
    return p;
  }

  /** Whether the line's text from {@code from} to the cursor is {@code other}. */
  boolean sameText(int from, String other) {
    return other != null && other.length() == p - from && s.regionMatches(from, other, 0, other.length());
  }

  /** The line's text from {@code from} to the cursor. */
  String textFrom(int from) {
    return s.substring(from, p);
  }

  /**
   * Reads column {@code c}'s value: whether it is NULL (where {@code nullable}) or of the column's JSON
   * type, read as {@link JsonValues} reads it (text that fits its column, without NUL; {@code placeholders}:
   * not Debezium's unchanged-TOAST placeholder, which the tree decoder treats apart). False leaves it read
   * past.
   */
  boolean value(int c, boolean nullable, boolean placeholders) {
    char ch = peek();
    isNull = false;
    if (ch == 'n') {
      literal("null");
      isNull = true;
      return nullable;
    }
    switch (kinds[c]) {
      case TEXT -> {
        String raw = text(ch, placeholders);
        if (raw == null) {
          return false;
        }
        try { // as the tree decoder has it: char(n) without trailing spaces, varchar(n) cut to n if only spaces go
          text = dev.floe.tail.RowValues.text(shape.columns().get(c), shape.sqlType(c), raw);
        } catch (dev.floe.FloeException e) {
          return false; // too long, or a NUL
        }
        return true;
      }
      case UUID -> {
        if (ch != '"') {
          skip();
          return false;
        }
        String raw = string();
        try { // as the tree decoder reads it (PostgreSQL's forms), held in the canonical one
          text = JsonValues.uuid(raw).toString();
        } catch (IllegalArgumentException e) {
          return false;
        }
        return true;
      }
      case DATE, TIME, TIMESTAMP -> {
        if (ch != '"') {
          if (ch != '-' && (ch < '0' || ch > '9') || kinds[c] != Kind.DATE && hint == null) {
            hintMissing |= ch == '-' || ch >= '0' && ch <= '9';
            skip();
            return false;
          }
          int start = p;
          if (!number() || !parseLong(start, p)) {
            return false;
          }
          long l = parsed;
          if (kinds[c] == Kind.DATE) {
            bits = l; // days, as the tree decoder reads an integer for a date
            return JsonValues.storable(true, l); // else the tree decoder's 22008
          }
          try { // in the unit the schema's name for it says, as the tree decoder scales it
            bits = JsonValues.scaled(l, hint.name() == null ? "" : hint.name(), kinds[c] == Kind.TIME);
          } catch (ArithmeticException e) {
            return false;
          }
          return kinds[c] == Kind.TIME ? JsonValues.storableTime(bits) : JsonValues.storable(false, bits);
        }
        String raw = string();
        try { // as the tree decoder reads text, with its own code
          bits = kinds[c] == Kind.DATE ? JsonValues.date(raw) : kinds[c] == Kind.TIME ? JsonValues.time(raw)
              : JsonValues.timestamp(raw, shape.columns().get(c).type() instanceof
                  org.apache.iceberg.types.Types.TimestampType t && t.shouldAdjustToUTC());
        } catch (RuntimeException e) {
          return false;
        }
        return kinds[c] == Kind.TIME ? JsonValues.storableTime(bits) : JsonValues.storable(kinds[c] == Kind.DATE, bits);
      }
      case DECIMAL -> {
        java.math.BigDecimal d;
        try {
          if (ch == '"') {
            String raw = string();
            if (hint == null) {
              hintMissing = true;
              return false;
            }
            d = JsonValues.decimalText(raw, hint);
          } else if (ch == '-' || ch >= '0' && ch <= '9') {
            int start = p;
            number();
            d = new java.math.BigDecimal(s.substring(start, p)); // exactly, as the tree decoder's reader keeps numbers
          } else if (ch == '{') { // io.debezium.data.VariableScaleDecimal: its scale, its unscaled value in base64
            d = variableScale();
          } else {
            skip();
            return false;
          }
          text = JsonValues.fitted(d, (org.apache.iceberg.types.Types.DecimalType) shape.columns().get(c).type(),
              shape.columns().get(c)).toPlainString();
        } catch (Refused r) {
          throw r;
        } catch (RuntimeException e) {
          return false; // not a decimal, or too many digits for the column: the tree decoder's error
        }
        return true;
      }
      case BYTEA -> {
        String raw = text(ch, placeholders);
        if (raw == null) {
          return false;
        }
        try { // base64, as the tree decoder reads it
          text = new String(java.util.Base64.getDecoder().decode(raw), java.nio.charset.StandardCharsets.ISO_8859_1);
        } catch (IllegalArgumentException e) {
          return false;
        }
        return true;
      }
      case BOOLEAN -> {
        if (ch == 't') {
          literal("true");
          bits = 1;
        } else if (ch == 'f') {
          literal("false");
          bits = 0;
        } else {
          skip();
          return false;
        }
        return true;
      }
      default -> {
        if (ch != '-' && (ch < '0' || ch > '9')) {
          skip();
          return false;
        }
        int start = p;
        boolean integral = number();
        if (kinds[c] == Kind.DOUBLE || kinds[c] == Kind.REAL) {
          double d;
          if (integral) { // as a long first, as Jackson does (-0 is 0)
            if (!parseLong(start, p)) {
              return false;
            }
            d = kinds[c] == Kind.REAL ? (float) parsed : parsed;
          } else { // correctly rounded to the type, as the tree decoder reads its exact number (-0.0 kept)
            String digits = s.substring(start, p);
            d = kinds[c] == Kind.REAL ? Float.parseFloat(digits) : Double.parseDouble(digits);
            if (Double.isInfinite(d) || d == 0 && new java.math.BigDecimal(digits).signum() != 0) {
              return false; // out of the type's range: the tree decoder's 22003
            }
          }
          bits = Double.doubleToRawLongBits(d);
          return true;
        }
        if (!integral || !parseLong(start, p)) {
          return false;
        }
        long l = parsed;
        if (kinds[c] == Kind.INTEGER && (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE)
            || kinds[c] == Kind.SMALLINT && (l < Short.MIN_VALUE || l > Short.MAX_VALUE)) {
          return false;
        }
        bits = l;
        return true;
      }
    }
  }

  /**
   * A {@code {"scale": n, "value": "<base64>"}} object as the tree decoder reads it; anything else in it
   * refuses the batch. A value that is not base64 fails ({@link IllegalArgumentException}), read past.
   */
  private java.math.BigDecimal variableScale() {
    Long scale = null;
    String unscaled = null;
    if (open()) {
      do {
        String name = name();
        if (name.equals("scale") && scale == null) {
          scale = integer();
        } else if (name.equals("value") && unscaled == null && peek() == '"') {
          unscaled = string();
        } else {
          throw Refused.INSTANCE; // another member, or one twice: the tree decoder's business
        }
      } while (next());
    }
    if (scale == null || unscaled == null || scale != (int) (long) scale) {
      throw Refused.INSTANCE;
    }
    return new java.math.BigDecimal(new java.math.BigInteger(java.util.Base64.getDecoder().decode(unscaled)),
        (int) (long) scale);
  }

  /**
   * A string value starting with {@code ch}, or null (read past) when it is no string, or with
   * {@code placeholders} Debezium's unchanged-TOAST placeholder (the tree decoder treats it apart).
   */
  private String text(char ch, boolean placeholders) {
    if (ch != '"') {
      skip();
      return null;
    }
    String raw = string();
    return placeholders && (raw.equals(ChangeFormat.UNAVAILABLE) || raw.equals(ChangeFormat.UNAVAILABLE_BYTES))
        ? null : raw;
  }

  /** A JSON integer in the range of a long. */
  long integer() {
    int start = p;
    char c = peek();
    if (c != '-' && (c < '0' || c > '9') || !number()) {
      throw Refused.INSTANCE;
    }
    if (!parseLong(start, p)) {
      throw Refused.INSTANCE;
    }
    return parsed;
  }

  /** The integer {@link #parseLong} read last. */
  private long parsed;

  /** Reads the integer from {@code start} to {@code end} into {@link #parsed}: false if out of range. */
  private boolean parseLong(int start, int end) {
    try {
      parsed = Long.parseLong(s, start, end, 10);
      return true;
    } catch (NumberFormatException e) {
      return false; // out of range
    }
  }

  char peek() {
    if (p >= s.length()) {
      throw Refused.INSTANCE;
    }
    return s.charAt(p);
  }

  void ws() {
    int n = s.length();
    if (p < n) {
      char c = s.charAt(p);
      if (c > ' ') {
        return; // no white space: compact JSON, as Debezium's converter writes it
      }
      if (c == ' ' && p + 1 < n && s.charAt(p + 1) > ' ') {
        p++; // one space: JSON written with a space after each colon and comma
        return;
      }
    }
    while (p < s.length()) {
      char c = s.charAt(p);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        return;
      }
      p++;
    }
  }

  /** The end of the line (white space aside). */
  void end() {
    ws();
    if (p != s.length()) {
      throw Refused.INSTANCE;
    }
  }

  void expect(char c) {
    if (peek() != c) {
      throw Refused.INSTANCE;
    }
    p++;
  }

  void literal(String word) {
    if (!s.startsWith(word, p)) {
      throw Refused.INSTANCE;
    }
    p += word.length();
  }

  /** The start of an object's members: false for {@code {}}. Expects {@code {}. */
  boolean open() {
    expect('{');
    ws();
    if (peek() == '}') {
      p++;
      return false;
    }
    return true;
  }

  /** Debezium's unchanged-TOAST placeholders: of a text column, of a bytea column. */
  private static final String[] PLACEHOLDERS = {ChangeFormat.UNAVAILABLE, ChangeFormat.UNAVAILABLE_BYTES};

  /**
   * Whether the value at the cursor is Debezium's placeholder for an unchanged TOAST value, as text or
   * as bytea's base64, written without escapes: read past if so.
   */
  boolean placeholder() {
    if (p >= s.length() || s.charAt(p) != '"') {
      return false;
    }
    for (String x : PLACEHOLDERS) {
      int end = p + 1 + x.length();
      if (end < s.length() && s.charAt(p + 1) == x.charAt(0) && s.charAt(end) == '"'
          && s.regionMatches(p + 1, x, 0, x.length())) {
        p = end + 1;
        return true;
      }
    }
    return false;
  }

  /**
   * A string of a few values repeated line after line (an event's {@code op}): read as {@link #string}
   * reads it, the one read before returned again.
   */
  String word() {
    String w = plainName();
    return w != null ? w : string();
  }

  /** A member's name and its colon. */
  String name() {
    ws();
    String name = plainName();
    if (name == null) {
      name = string();
    }
    ws();
    expect(':');
    ws();
    return name;
  }

  /**
   * A member name without escapes, control characters or surrogates, read past; or null (nothing read).
   * Names repeat on every line, so one read before is returned again rather than made anew (it is
   * equal to what {@link #string} would make).
   */
  private String plainName() {
    int n = s.length();
    if (p >= n || s.charAt(p) != '"') {
      return null;
    }
    int start = p + 1;
    int hash = 0;
    int i = start;
    for (; i < n; i++) {
      char c = s.charAt(i);
      if (c == '"') {
        break;
      }
      if (c == '\\' || c < 0x20 || Character.isSurrogate(c)) {
        return null;
      }
      hash = 31 * hash + c;
    }
    if (i == n) {
      return null;
    }
    int length = i - start;
    int slot = (hash ^ (hash >>> 16)) & (names.length - 1);
    String name = names[slot];
    if (name == null || name.length() != length || !s.regionMatches(start, name, 0, length)) {
      name = s.substring(start, i);
      names[slot] = name;
    }
    p = i + 1;
    return name;
  }

  /** After a member's value: true if another follows, false at the object's end (read past). */
  boolean next() {
    ws();
    char c = peek();
    p++;
    if (c == ',') {
      return true;
    }
    if (c != '}') {
      throw Refused.INSTANCE;
    }
    return false;
  }

  /** {@code true}, {@code false} or {@code null} (null reads as {@code otherwise}); anything else refuses. */
  boolean bool(boolean otherwise) {
    char c = peek();
    if (c == 't') {
      literal("true");
      return true;
    }
    if (c == 'f') {
      literal("false");
      return false;
    }
    literal("null");
    return otherwise;
  }

  /** A number as JSON has it; whether it is an integer (no fraction, no exponent). */
  private boolean number() {
    boolean integral = true;
    if (peek() == '-') {
      p++;
    }
    char c = peek();
    if (c == '0') {
      p++;
    } else if (c >= '1' && c <= '9') {
      while (p < s.length() && s.charAt(p) >= '0' && s.charAt(p) <= '9') {
        p++;
      }
    } else {
      throw Refused.INSTANCE;
    }
    if (p < s.length() && s.charAt(p) == '.') {
      integral = false;
      p++;
      digits();
    }
    if (p < s.length() && (s.charAt(p) == 'e' || s.charAt(p) == 'E')) {
      integral = false;
      p++;
      if (p < s.length() && (s.charAt(p) == '+' || s.charAt(p) == '-')) {
        p++;
      }
      digits();
    }
    return integral;
  }

  private void digits() {
    int start = p;
    while (p < s.length() && s.charAt(p) >= '0' && s.charAt(p) <= '9') {
      p++;
    }
    if (p == start) {
      throw Refused.INSTANCE;
    }
  }

  /** A string's value, its escapes decoded; no raw control character, surrogates in pairs only. */
  String string() {
    expect('"');
    int start = p;
    while (true) {
      char c = peek();
      if (c == '"') {
        String v = s.substring(start, p);
        p++;
        return v;
      }
      if (c == '\\' || c < 0x20 || Character.isSurrogate(c)) {
        break;
      }
      p++;
    }
    StringBuilder b = new StringBuilder(p - start + 16).append(s, start, p);
    while (true) {
      char c = peek();
      p++;
      if (c == '"') {
        break;
      } else if (c < 0x20) {
        throw Refused.INSTANCE;
      } else if (c == '\\') {
        char e = peek();
        p++;
        switch (e) {
          case '"', '\\', '/' -> b.append(e);
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case 't' -> b.append('\t');
          case 'u' -> {
            if (p + 4 > s.length()) {
              throw Refused.INSTANCE;
            }
            int u = 0;
            for (int i = 0; i < 4; i++) {
              int h = Character.digit(s.charAt(p + i), 16);
              if (h < 0) {
                throw Refused.INSTANCE;
              }
              u = u * 16 + h;
            }
            p += 4;
            b.append((char) u);
          }
          default -> throw Refused.INSTANCE;
        }
      } else {
        b.append(c);
      }
    }
    String v = b.toString();
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < v.length() && Character.isLowSurrogate(v.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw Refused.INSTANCE;
      }
    }
    return v;
  }

  /** Skips any JSON value, checking its grammar. */
  void skip() {
    char c = peek();
    switch (c) {
      case '{' -> {
        if (open()) {
          do {
            name();
            skip();
          } while (next());
        }
      }
      case '[' -> {
        p++;
        ws();
        if (peek() == ']') {
          p++;
          return;
        }
        while (true) {
          ws();
          skip();
          ws();
          char d = peek();
          p++;
          if (d == ']') {
            return;
          }
          if (d != ',') {
            throw Refused.INSTANCE;
          }
        }
      }
      case '"' -> string();
      case 't' -> literal("true");
      case 'f' -> literal("false");
      case 'n' -> literal("null");
      default -> number();
    }
  }
}
