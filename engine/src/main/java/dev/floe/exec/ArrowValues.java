package dev.floe.exec;

import dev.floe.Column;
import dev.floe.SqlType;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.util.Text;

/** Reads values out of Arrow vectors as the Java types {@link dev.floe.Row} documents. */
public final class ArrowValues {
  private ArrowValues() {}

  /** The value at {@code row} of a result vector, as {@link dev.floe.Row#get} gives it. */
  public static Object get(FieldVector v, int row, Column column) {
    if (v.isNull(row)) {
      return null;
    }
    Object value = read(v, row);
    if (column.type().kind() == SqlType.Kind.UUID && value instanceof String s) {
      return UUID.fromString(s);
    }
    if (column.type().kind() == SqlType.Kind.SMALLINT && value instanceof Integer i) {
      return i.shortValue();
    }
    return value;
  }

  private static Object read(FieldVector v, int row) {
    if (v.isNull(row)) {
      return null;
    }
    if (v instanceof MapVector m) {
      StructVector entries = (StructVector) m.getDataVector();
      FieldVector keys = entries.getChild(MapVector.KEY_NAME);
      FieldVector values = entries.getChild(MapVector.VALUE_NAME);
      Map<Object, Object> out = new LinkedHashMap<>();
      for (int i = m.getElementStartIndex(row); i < m.getElementEndIndex(row); i++) {
        out.put(read(keys, i), read(values, i));
      }
      return out;
    }
    if (v instanceof ListVector l) {
      FieldVector items = l.getDataVector();
      List<Object> out = new ArrayList<>();
      for (int i = l.getElementStartIndex(row); i < l.getElementEndIndex(row); i++) {
        out.add(read(items, i));
      }
      return out;
    }
    if (v instanceof StructVector st) {
      Map<Object, Object> out = new LinkedHashMap<>();
      for (FieldVector child : st.getChildrenFromFields()) {
        out.put(child.getName(), read(child, row));
      }
      return out;
    }
    if (v instanceof BitVector b) {
      return b.get(row) != 0;
    } else if (v instanceof TinyIntVector t) {
      return (short) t.get(row);
    } else if (v instanceof SmallIntVector s) {
      return s.get(row);
    } else if (v instanceof IntVector i) {
      return i.get(row);
    } else if (v instanceof BigIntVector b) {
      return b.get(row);
    } else if (v instanceof Float4Vector f) {
      return f.get(row);
    } else if (v instanceof Float8Vector f) {
      return f.get(row);
    } else if (v instanceof DecimalVector d) {
      return d.getObject(row);
    } else if (v instanceof VarCharVector s) {
      return new String(s.get(row), java.nio.charset.StandardCharsets.UTF_8);
    } else if (v instanceof VarBinaryVector b) {
      return b.get(row);
    } else if (v instanceof DateDayVector d) {
      return LocalDate.ofEpochDay(d.get(row));
    } else if (v instanceof TimeMicroVector t) {
      return LocalTime.ofNanoOfDay(t.get(row) * 1000L);
    } else if (v instanceof TimeStampMicroTZVector t) {
      return OffsetDateTime.ofInstant(micros(t.get(row)), ZoneOffset.UTC);
    } else if (v instanceof TimeStampMicroVector t) {
      return LocalDateTime.ofInstant(micros(t.get(row)), ZoneOffset.UTC);
    }
    return plain(v.getObject(row));
  }

  private static Instant micros(long micros) {
    return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000L);
  }

  /** Other Arrow types (intervals, unions, ...): Arrow's own object, with text as String. */
  private static Object plain(Object o) {
    return o instanceof Text t ? t.toString() : o;
  }

}
