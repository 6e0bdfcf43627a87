package dev.floe.types;

/** JSON text Floe writes itself. */
public final class JsonText {
  private static final String HEX = "0123456789ABCDEF";

  private JsonText() {}

  /**
   * Appends {@code s} as a JSON string literal (RFC 8259): quote and backslash escaped, control
   * characters as two-character escapes (newline, tab, ...) or as backslash-u and four upper-case hex
   * digits, everything else as is. This is also exactly what Jackson writes with its default settings,
   * so text Floe writes for Iceberg matches Iceberg's own.
   */
  public static StringBuilder appendString(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        default -> {
          if (c < 0x20) {
            b.append("\\u00").append(HEX.charAt(c >> 4)).append(HEX.charAt(c & 0xF));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"');
  }
}
