package dev.floe.exec;

import dev.floe.Copy;
import dev.floe.FloeException;
import dev.floe.PgValues;
import dev.floe.SqlState;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import dev.floe.types.Utf8Text;

/**
 * PostgreSQL's COPY text and CSV formats: rows to lines (COPY TO) and text-format input to CSV that
 * DuckDB's reader loads (COPY FROM), with PostgreSQL's escapes and NULL markers.
 */
public final class CopyFormats {
  private CopyFormats() {}

  /** One row as a COPY line (with its newline) in the statement's format. */
  public static String line(Copy c, Object[] values, ZoneId zone) {
    StringBuilder b = new StringBuilder();
    for (int k = 0; k < values.length; k++) {
      if (k > 0) {
        b.append(c.delimiter());
      }
      if (values[k] == null) {
        b.append(c.nullString());
        continue;
      }
      String s = new String(PgValues.text(values[k], zone), StandardCharsets.UTF_8);
      if (c.format() == Copy.Format.CSV) {
        csvField(b, s, c, values.length == 1);
      } else {
        textField(b, s, c.delimiter());
      }
    }
    return b.append('\n').toString();
  }

  /** A header line of column names. */
  public static String header(Copy c, List<String> names) {
    StringBuilder b = new StringBuilder();
    for (int k = 0; k < names.size(); k++) {
      if (k > 0) {
        b.append(c.delimiter());
      }
      if (c.format() == Copy.Format.CSV) {
        csvField(b, names.get(k), c, false);
      } else {
        textField(b, names.get(k), c.delimiter());
      }
    }
    return b.append('\n').toString();
  }

  /**
   * A CSV field, quoted when it holds the delimiter, the quote or a line break, reads as the NULL string, or
   * is {@code \.} alone on its line ({@code single}: the only column), which would end the data.
   */
  private static void csvField(StringBuilder b, String s, Copy c, boolean single) {
    boolean quote = s.isEmpty() ? c.nullString().isEmpty() : s.equals(c.nullString()) || single && s.equals("\\.");
    for (int i = 0; i < s.length() && !quote; i++) {
      char ch = s.charAt(i);
      quote = ch == c.delimiter() || ch == c.quote() || ch == '\n' || ch == '\r';
    }
    if (!quote) {
      b.append(s);
      return;
    }
    b.append(c.quote());
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == c.quote() || ch == c.escape()) {
        b.append(c.escape());
      }
      b.append(ch);
    }
    b.append(c.quote());
  }

  private static void textField(StringBuilder b, String s, char delimiter) {
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      switch (ch) {
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t"); // whatever the delimiter, as PostgreSQL does
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        case 0x0b -> b.append("\\v");
        default -> {
          if (ch == delimiter) {
            b.append('\\');
          }
          b.append(ch);
        }
      }
    }
  }

  /**
   * Rewrites COPY text-format input as CSV in which every non-NULL value is quoted (so an empty string
   * and NULL stay apart), checking that each line has {@code columns} fields.
   *
   * @return the number of data lines
   */
  public static long textToCsv(Path text, Path csv, Copy c, int columns) throws IOException {
    checkUtf8(text); // PostgreSQL's words for bytes that are not UTF-8, or NUL
    long lineNo = 0;
    long rows = 0;
    try (BufferedReader r = Files.newBufferedReader(text, StandardCharsets.UTF_8);
        BufferedWriter w = Files.newBufferedWriter(csv, StandardCharsets.UTF_8)) {
      String line;
      boolean skipHeader = c.header();
      while ((line = r.readLine()) != null) {
        lineNo++;
        if (line.endsWith("\r")) {
          line = line.substring(0, line.length() - 1);
        }
        if (line.equals("\\.")) {
          break;
        }
        if (skipHeader) {
          skipHeader = false;
          continue;
        }
        List<String> fields = split(line, c.delimiter());
        if (fields.size() > columns) {
          throw new FloeException(SqlState.BAD_COPY_FILE_FORMAT, "extra data after last expected column", 
              "COPY line " + lineNo + ": \"" + abbreviate(line) + "\"", null, 0, null);
        }
        if (fields.size() < columns) {
          throw new FloeException(SqlState.BAD_COPY_FILE_FORMAT, "missing data for column " + (fields.size() + 1),
              "COPY line " + lineNo + ": \"" + abbreviate(line) + "\"", null, 0, null);
        }
        for (int k = 0; k < fields.size(); k++) {
          if (k > 0) {
            w.write(',');
          }
          String raw = fields.get(k);
          if (raw.equals(c.nullString())) {
            continue; // unquoted empty: NULL
          }
          String v = unescape(raw, lineNo);
          w.write('"');
          w.write(v.replace("\"", "\"\""));
          w.write('"');
        }
        w.write('\n');
        rows++;
      }
    }
    return rows;
  }

  /**
   * Rewrites COPY binary-format input (PGCOPY signature, tuples of length-prefixed values) as CSV in which
   * every non-NULL value is quoted, decoding each value by its column's type.
   *
   * @return the number of rows
   */
  public static long binaryToCsv(Path binary, Path csv, List<dev.floe.PgType> types) throws IOException {
    long rows = 0;
    try (java.io.DataInputStream in = new java.io.DataInputStream(new java.io.BufferedInputStream(
            Files.newInputStream(binary)));
        BufferedWriter w = Files.newBufferedWriter(csv, StandardCharsets.UTF_8)) {
      byte[] signature = new byte[11];
      try {
        in.readFully(signature);
      } catch (java.io.EOFException e) {
        throw badBinary("COPY file signature not recognized");
      }
      if (!java.util.Arrays.equals(signature, new byte[] {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n',
          0})) {
        throw badBinary("COPY file signature not recognized");
      }
      int flags = in.readInt();
      if ((flags & 0x10000) != 0) {
        throw badBinary("COPY with OIDs is not supported");
      }
      int extension = in.readInt();
      if (extension < 0 || in.skipBytes(extension) != extension) {
        throw badBinary("invalid COPY file header (missing length)");
      }
      while (true) {
        short fields;
        try {
          fields = in.readShort();
        } catch (java.io.EOFException e) {
          break; // no trailer: PostgreSQL accepts the end of data here too
        }
        if (fields == -1) {
          break;
        }
        if (fields != types.size()) {
          throw badBinary("row field count is " + fields + ", expected " + types.size());
        }
        for (int k = 0; k < fields; k++) {
          int len = in.readInt();
          if (k > 0) {
            w.write(',');
          }
          if (len == -1) {
            continue;
          }
          if (len < 0 || len > 1 << 30) {
            throw badBinary("invalid field size");
          }
          byte[] v = new byte[len];
          in.readFully(v);
          w.write('"');
          w.write(PgValues.binaryToText(v, types.get(k)).replace("\"", "\"\""));
          w.write('"');
        }
        w.write('\n');
        rows++;
      }
    } catch (java.io.EOFException e) {
      throw badBinary("unexpected EOF in COPY data");
    }
    return rows;
  }

  private static FloeException badBinary(String message) {
    return new FloeException(SqlState.BAD_COPY_FILE_FORMAT, message);
  }

  /** Splits at unescaped delimiters, keeping escapes for {@link #unescape}. */
  private static List<String> split(String line, char delimiter) {
    List<String> fields = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    for (int i = 0; i < line.length(); i++) {
      char ch = line.charAt(i);
      if (ch == '\\' && i + 1 < line.length()) {
        cur.append(ch).append(line.charAt(++i));
      } else if (ch == delimiter) {
        fields.add(cur.toString());
        cur.setLength(0);
      } else {
        cur.append(ch);
      }
    }
    fields.add(cur.toString());
    return fields;
  }

  /**
   * A text-format field's value: its backslash escapes read as PostgreSQL reads them (hex and octal
   * escapes are bytes), and the whole checked as UTF-8 without NUL (22021, as PostgreSQL).
   */
  private static String unescape(String s, long lineNo) {
    try {
      if (s.indexOf('\\') < 0) {
        return Utf8Text.checkNoNul(s);
      }
      java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(s.length() + 8);
      StringBuilder run = new StringBuilder();
      for (int i = 0; i < s.length(); i++) {
        char ch = s.charAt(i);
        if (ch != '\\' || i + 1 >= s.length()) {
          run.append(ch);
          continue;
        }
        char n = s.charAt(++i);
        int simple = switch (n) {
          case 'b' -> '\b';
          case 'f' -> '\f';
          case 'n' -> '\n';
          case 'r' -> '\r';
          case 't' -> '\t';
          case 'v' -> 0x0b;
          default -> -1;
        };
        if (simple >= 0) {
          run.append((char) simple);
          continue;
        }
        int radix = n == 'x' ? 16 : n >= '0' && n <= '7' ? 8 : 0;
        int from = n == 'x' ? i + 1 : i;
        int end = from;
        while (radix > 0 && end < s.length() && end < from + (radix == 16 ? 2 : 3)
            && Character.digit(s.charAt(end), radix) >= 0) {
          end++;
        }
        if (end == from) {
          run.append(n); // \x without a digit, or any other character: itself
          continue;
        }
        bytes.writeBytes(run.toString().getBytes(StandardCharsets.UTF_8));
        run.setLength(0);
        bytes.write(Integer.parseInt(s.substring(from, end), radix) & 0xff);
        i = end - 1;
      }
      bytes.writeBytes(run.toString().getBytes(StandardCharsets.UTF_8));
      return Utf8Text.decode(bytes.toByteArray());
    } catch (FloeException e) {
      throw e.withDetail("COPY line " + lineNo);
    }
  }

  /** Fails with 22021, as PostgreSQL, unless the file is valid UTF-8 without NUL. */
  public static void checkUtf8(Path file) throws IOException {
    try (java.io.InputStream in = Files.newInputStream(file)) {
      byte[] buf = new byte[64 * 1024];
      int have = 0;
      int n;
      while ((n = in.read(buf, have, buf.length - have)) > 0) {
        int end = have + n;
        int done = Utf8Text.checkPiece(buf, 0, end);
        have = end - done;
        System.arraycopy(buf, done, buf, 0, have); // an unfinished sequence goes on in the next read
      }
      if (have > 0) {
        throw Utf8Text.invalid(buf, 0, have);
      }
    }
  }

  /** Cuts the data at a line holding only {@code \.} (the end-of-data marker), if there is one. */
  public static void dropEndMarker(Path file) throws IOException {
    long size = Files.size(file);
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
        java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
      // the marker is at the end: look at the last few bytes only
      int tail = (int) Math.min(size, 8);
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(tail);
      ch.read(b, size - tail);
      String end = new String(b.array(), StandardCharsets.ISO_8859_1);
      for (String marker : new String[] {"\\.\r\n", "\\.\n", "\\."}) {
        if (end.endsWith(marker)) {
          int at = end.length() - marker.length();
          // only a marker on a line of its own
          if (at == 0 && size == tail || at > 0 && end.charAt(at - 1) == '\n') {
            ch.truncate(size - marker.length());
          }
          return;
        }
      }
    }
  }

  private static String abbreviate(String line) {
    return line.length() > 80 ? line.substring(0, 80) + "..." : line;
  }
}
