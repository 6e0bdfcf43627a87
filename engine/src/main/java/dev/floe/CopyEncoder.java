package dev.floe;

import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.vector.FieldVector;

/**
 * COPY TO's rows straight from Arrow batches into a byte buffer, in the statement's text, CSV or binary
 * format: each value's PostgreSQL text ({@link ArrowText}) is written in place and then escaped (text:
 * backslashes, control characters, the delimiter) or quoted (CSV) in place, which only the rare value that
 * needs it pays for. The bytes are those of {@link CopyFormats#line} and {@link dev.floe.PgValues#binary}.
 *
 * <p>Applies when the delimiter, quote and escape are ASCII ({@link #handles}); they are in PostgreSQL,
 * which refuses multi-byte ones.
 */
public final class CopyEncoder {
  private final Copy copy;
  private final List<Column> columns;
  private final PgType[] types;
  private final ZoneId zone;
  private final boolean binary;
  private final boolean csv;
  private final byte delimiter;
  private final byte quote;
  private final byte escape;
  private final byte[] nullBytes;
  private final FieldVector[] vectors;
  private final ArrowText.Encoder[] encoders;
  /** Per column: whether the batch has NULLs in it. */
  private final boolean[] nullable;
  /** Per column: whether its values' text never holds a character to escape or quote (a number's). */
  private final boolean[] plain;
  /** Whether the delimiter and quote are none of {@link ArrowText#PLAIN_CHARACTERS}. */
  private final boolean plainSafe;
  /** The bytes to escape (text) or quote for (CSV). */
  private final boolean[] special = new boolean[256];
  private List<FieldVector> batch;
  private byte[] scratch = new byte[256];

  public CopyEncoder(Copy copy, List<Column> columns, ZoneId zone) {
    this.copy = copy;
    this.columns = columns;
    this.types = columns.stream().map(c -> PgType.of(c.type())).toArray(PgType[]::new);
    this.zone = zone;
    this.binary = copy.format() == Copy.Format.BINARY;
    this.csv = copy.format() == Copy.Format.CSV;
    this.delimiter = (byte) copy.delimiter();
    this.quote = (byte) copy.quote();
    this.escape = (byte) copy.escape();
    this.nullBytes = copy.nullString().getBytes(StandardCharsets.UTF_8);
    this.vectors = new FieldVector[columns.size()];
    this.encoders = new ArrowText.Encoder[columns.size()];
    this.nullable = new boolean[columns.size()];
    this.plain = new boolean[columns.size()];
    this.plainSafe = ArrowText.PLAIN_CHARACTERS.indexOf(copy.delimiter()) < 0
        && (!csv || ArrowText.PLAIN_CHARACTERS.indexOf(copy.quote()) < 0);
    if (csv) {
      for (byte c : new byte[] {delimiter, quote, '\n', '\r'}) {
        special[c & 0xff] = true;
      }
    } else {
      for (byte c : new byte[] {'\\', delimiter, '\b', '\f', '\n', '\r', '\t', 0x0b}) {
        special[c & 0xff] = true;
      }
    }
  }

  /** Whether this encoder writes {@code c}'s format: its delimiter, quote and escape are single bytes. */
  public static boolean handles(Copy c) {
    return c.format() == Copy.Format.BINARY || c.delimiter() < 0x80 && c.quote() < 0x80 && c.escape() < 0x80;
  }

  /**
   * Takes the next batch's vectors: the rows {@link #row(OutBuffer, int)} writes from now on. A column without
   * NULLs in the batch is not asked for each value's.
   */
  public void batch(List<FieldVector> vectors) {
    batch = vectors;
    for (int k = 0; k < vectors.size(); k++) {
      FieldVector v = vectors.get(k);
      if (this.vectors[k] != v) {
        this.vectors[k] = v;
        encoders[k] = binary ? ArrowText.binary(v, columns.get(k), types[k], zone) : ArrowText.text(v, columns.get(k), zone);
      }
      nullable[k] = v.getNullCount() > 0;
      plain[k] = plainSafe && ArrowText.plain(v);
    }
  }

  /** Writes row {@code row} of the batch: a line with its newline, or a binary tuple. */
  public void row(OutBuffer out, int row) {
    int n = encoders.length;
    if (binary) {
      out.putShort(n);
    }
    for (int k = 0; k < n; k++) {
      if (binary) {
        if (nullable[k] && vectors[k].isNull(row)) {
          out.putInt(-1);
          continue;
        }
        int at = out.len;
        out.putInt(0);
        encoders[k].write(out, row);
        out.setInt(at, out.len - at - 4);
        continue;
      }
      if (k > 0) {
        out.put(delimiter);
      }
      if (nullable[k] && vectors[k].isNull(row)) {
        out.put(nullBytes);
        continue;
      }
      int from = out.len;
      encoders[k].write(out, row);
      if (csv) {
        csvField(out, from, n == 1, plain[k]);
      } else if (!plain[k]) {
        textField(out, from);
      }
    }
    if (!binary) {
      out.put((byte) '\n');
    }
  }

  /**
   * Escapes the value written from {@code from} as COPY's text format does: a backslash before a backslash
   * and the delimiter, {@code \b \f \n \r \t \v} for those control characters.
   */
  private void textField(OutBuffer out, int from) {
    byte[] b = out.buf;
    int end = out.len;
    int i = from;
    while (i < end && !special[b[i] & 0xff]) {
      i++;
    }
    if (i == end) {
      return;
    }
    int n = out.len - i;
    byte[] rest = take(b, i, n);
    out.len = i;
    out.ensure(2 * n);
    b = out.buf;
    int p = out.len;
    for (int j = 0; j < n; j++) {
      byte c = rest[j];
      byte letter = c >= 0 && c < 0x20 ? escaped(c) : 0;
      if (letter != 0) {
        b[p++] = '\\';
        b[p++] = letter;
      } else {
        if (c == '\\' || c == delimiter) {
          b[p++] = '\\';
        }
        b[p++] = c;
      }
    }
    out.len = p;
  }

  /** The letter a control character is escaped with in COPY's text format, or 0. */
  private static byte escaped(byte c) {
    return switch (c) {
      case '\b' -> 'b';
      case '\f' -> 'f';
      case '\n' -> 'n';
      case '\r' -> 'r';
      case '\t' -> 't';
      case 0x0b -> 'v';
      default -> 0;
    };
  }

  /**
   * Quotes the value written from {@code from} when CSV needs it: it holds the delimiter, the quote or a
   * line break (not looked for in a {@code plain} value), it reads as the NULL string, or it is {@code \.}
   * alone on its line (the end-of-data marker); quotes and escapes inside are escaped.
   */
  private void csvField(OutBuffer out, int from, boolean single, boolean plain) {
    byte[] b = out.buf;
    int end = out.len;
    int n = end - from;
    boolean needed = n == nullBytes.length && Arrays.equals(b, from, end, nullBytes, 0, n)
        || single && n == 2 && b[from] == '\\' && b[from + 1] == '.';
    for (int i = from; i < end && !needed && !plain; i++) {
      needed = special[b[i] & 0xff];
    }
    if (!needed) {
      return;
    }
    byte[] value = take(b, from, n);
    out.len = from;
    out.ensure(2 * n + 2);
    b = out.buf;
    int p = out.len;
    b[p++] = quote;
    for (int j = 0; j < n; j++) {
      byte c = value[j];
      if (c == quote || c == escape) {
        b[p++] = escape;
      }
      b[p++] = c;
    }
    b[p++] = quote;
    out.len = p;
  }

  private byte[] take(byte[] b, int from, int n) {
    if (scratch.length < n) {
      scratch = new byte[Math.max(n, scratch.length * 2)];
    }
    System.arraycopy(b, from, scratch, 0, n);
    return scratch;
  }

  /** The statement this encodes for. */
  public Copy copy() {
    return copy;
  }
}
