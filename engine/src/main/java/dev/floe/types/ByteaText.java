package dev.floe.types;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/** PostgreSQL's bytea input format: {@code \x} followed by hex digits, or the escape format. */
public final class ByteaText {
  private ByteaText() {}

  /**
   * The bytes a bytea literal denotes.
   *
   * @throws IllegalArgumentException with PostgreSQL's message when the text is not valid bytea input
   */
  public static byte[] parse(String value) {
    if (value.startsWith("\\x")) {
      String hex = value.substring(2).replaceAll("\\s", "");
      try {
        return HexFormat.of().parseHex(hex);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("invalid hexadecimal data: \"" + value + "\"");
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] raw = value.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < raw.length; i++) {
      if (raw[i] != '\\') {
        out.write(raw[i]);
      } else if (i + 1 < raw.length && raw[i + 1] == '\\') {
        out.write('\\');
        i++;
      } else if (i + 3 < raw.length && octal(raw[i + 1]) && octal(raw[i + 2]) && octal(raw[i + 3])) {
        out.write(((raw[i + 1] - '0') << 6) | ((raw[i + 2] - '0') << 3) | (raw[i + 3] - '0'));
        i += 3;
      } else {
        throw new IllegalArgumentException("invalid input syntax for type bytea");
      }
    }
    return out.toByteArray();
  }

  /** DuckDB SQL for the bytes: {@code unhex('...')}. */
  public static String sql(byte[] bytes) {
    return "unhex('" + HexFormat.of().formatHex(bytes) + "')";
  }

  private static boolean octal(byte b) {
    return b >= '0' && b <= '7';
  }
}
