package dev.floe.exec;

import dev.floe.Column;
import dev.floe.Copy;
import dev.floe.PgType;
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
  }

  /** Whether this encoder writes {@code c}'s format: its delimiter, quote and escape are single bytes. */
  public static boolean handles(Copy c) {
    return c.format() == Copy.Format.BINARY || c.delimiter() < 0x80 && c.quote() < 0x80 && c.escape() < 0x80;
  }

  /** Writes row {@code row} of a batch: a line with its newline, or a binary tuple. */
  public void row(OutBuffer out, List<FieldVector> batch, int row) {
    if (binary) {
      out.putShort(batch.size());
    }
    for (int k = 0; k < batch.size(); k++) {
      FieldVector v = batch.get(k);
      if (binary) {
        if (v.isNull(row)) {
          out.putInt(-1);
          continue;
        }
        int at = out.len;
        out.putInt(0);
        encoder(v, k).write(out, row);
        out.setInt(at, out.len - at - 4);
        continue;
      }
      if (k > 0) {
        out.put(delimiter);
      }
      if (v.isNull(row)) {
        out.put(nullBytes);
        continue;
      }
      int from = out.len;
      encoder(v, k).write(out, row);
      if (csv) {
        csvField(out, from, batch.size() == 1);
      } else {
        textField(out, from);
      }
    }
    if (!binary) {
      out.put((byte) '\n');
    }
  }

  private ArrowText.Encoder encoder(FieldVector v, int k) {
    if (vectors[k] != v) {
      vectors[k] = v;
      encoders[k] = binary ? ArrowText.binary(v, columns.get(k), types[k], zone) : ArrowText.text(v, columns.get(k), zone);
    }
    return encoders[k];
  }

  /**
   * Escapes the value written from {@code from} as COPY's text format does: a backslash before a backslash
   * and the delimiter, {@code \b \f \n \r \t \v} for those control characters.
   */
  private void textField(OutBuffer out, int from) {
    byte[] b = out.buf;
    int i = from;
    while (i < out.len) {
      byte c = b[i];
      if (c == '\\' || c == delimiter || c >= 0 && c < 0x20 && escaped(c) != 0) {
        break;
      }
      i++;
    }
    if (i == out.len) {
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
   * line break, it reads as the NULL string, or it is {@code \.} alone on its line (the end-of-data marker);
   * quotes and escapes inside are escaped.
   */
  private void csvField(OutBuffer out, int from, boolean single) {
    byte[] b = out.buf;
    int n = out.len - from;
    boolean needed = n == nullBytes.length && Arrays.equals(b, from, out.len, nullBytes, 0, n)
        || single && n == 2 && b[from] == '\\' && b[from + 1] == '.';
    for (int i = from; i < out.len && !needed; i++) {
      byte c = b[i];
      needed = c == delimiter || c == quote || c == '\n' || c == '\r';
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
