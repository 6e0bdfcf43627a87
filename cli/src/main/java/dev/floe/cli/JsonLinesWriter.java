package dev.floe.cli;

import dev.floe.Column;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.SqlType;
import dev.floe.Values;
import dev.floe.types.JsonText;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * JSON Lines: one object per row, keys in column order. Booleans and numbers are JSON booleans and numbers
 * (numeric keeps its exact digits), NULL is {@code null}, lists are arrays and structs objects; NaN and
 * infinities, which JSON has no number for, are the strings {@code "NaN"}, {@code "Infinity"} and
 * {@code "-Infinity"}, as PostgreSQL's {@code to_json} writes them. A {@code json} column is embedded as is.
 * Everything else (dates, timestamps, uuid, bytea, intervals) is a string in PostgreSQL's text form.
 */
final class JsonLinesWriter implements ResultWriter {
  private final PrintStream out;

  JsonLinesWriter(PrintStream out) {
    this.out = out;
  }

  @Override
  public long write(Result result) {
    List<Column> columns = result.columns();
    String[] keys = new String[columns.size()];
    for (int c = 0; c < keys.length; c++) {
      StringBuilder key = new StringBuilder();
      JsonText.appendString(key, columns.get(c).name());
      keys[c] = key.append(':').toString();
    }
    StringBuilder line = new StringBuilder();
    long count = 0;
    for (Row row : result) {
      line.setLength(0);
      line.append('{');
      for (int c = 0; c < keys.length; c++) {
        if (c > 0) {
          line.append(',');
        }
        line.append(keys[c]);
        Object value = row.get(c);
        if (value instanceof String json && columns.get(c).type().kind() == SqlType.Kind.JSON) {
          line.append(json);
        } else {
          appendValue(line, value);
        }
      }
      out.append(line.append("}\n"));
      count++;
    }
    return count;
  }

  static void appendValue(StringBuilder b, Object value) {
    if (value == null) {
      b.append("null");
    } else if (value instanceof Boolean bool) {
      b.append(bool.booleanValue());
    } else if (value instanceof Byte || value instanceof Short || value instanceof Integer || value instanceof Long
        || value instanceof BigInteger) {
      b.append(value);
    } else if (value instanceof BigDecimal d) {
      b.append(d.toPlainString());
    } else if (value instanceof Double || value instanceof Float) {
      double d = ((Number) value).doubleValue();
      String text = Values.toText(value);
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        JsonText.appendString(b, text);
      } else {
        b.append(text);
      }
    } else if (value instanceof List<?> list) {
      b.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          b.append(',');
        }
        appendValue(b, list.get(i));
      }
      b.append(']');
    } else if (value instanceof Map<?, ?> map) {
      b.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          b.append(',');
        }
        first = false;
        JsonText.appendString(b, String.valueOf(e.getKey()));
        b.append(':');
        appendValue(b, e.getValue());
      }
      b.append('}');
    } else {
      JsonText.appendString(b, Values.toText(value));
    }
  }
}
