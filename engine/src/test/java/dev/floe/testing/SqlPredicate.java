package dev.floe.testing;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * A WHERE predicate over one table's columns that renders as SQL and evaluates in Java with SQL's
 * three-valued logic (null = unknown), on Iceberg generic records of the same schema. Ordering follows
 * PostgreSQL/DuckDB: text by code point (C collation), NaN equal to itself and above every number,
 * -0.0 equal to 0.0.
 */
public interface SqlPredicate {
  /** The predicate as SQL, its columns qualified with {@code qualifier} (e.g. {@code "a."}, or empty). */
  String sql(String qualifier);

  default String sql() {
    return sql("");
  }

  /** TRUE, FALSE, or null (unknown) for one row. */
  Boolean eval(Record row);

  default boolean matches(Record row) {
    return Boolean.TRUE.equals(eval(row));
  }

  // ------------------------------------------------------------------ building blocks

  /** A column of the read schema: its position in the rows, name and type. */
  record Col(int index, String name, Type type) {
    public String sql(String qualifier) {
      return qualifier + "\"" + name.replace("\"", "\"\"") + "\"";
    }
  }

  enum Op {
    EQ("="), NE("<>"), LT("<"), LE("<="), GT(">"), GE(">=");
    final String sql;

    Op(String sql) {
      this.sql = sql;
    }

    boolean test(int c) {
      return switch (this) {
        case EQ -> c == 0;
        case NE -> c != 0;
        case LT -> c < 0;
        case LE -> c <= 0;
        case GT -> c > 0;
        case GE -> c >= 0;
      };
    }
  }

  record Compare(Col col, Op op, Object value) implements SqlPredicate {
    public String sql(String q) {
      return col.sql(q) + " " + op.sql + " " + literal(col.type(), value);
    }

    public Boolean eval(Record row) {
      Object v = row.get(col.index());
      return v == null ? null : op.test(compare(col.type(), v, value));
    }
  }

  record Between(Col col, Object lower, Object upper) implements SqlPredicate {
    public String sql(String q) {
      return col.sql(q) + " BETWEEN " + literal(col.type(), lower) + " AND " + literal(col.type(), upper);
    }

    public Boolean eval(Record row) {
      Object v = row.get(col.index());
      return v == null ? null : compare(col.type(), lower, v) <= 0 && compare(col.type(), v, upper) <= 0;
    }
  }

  record In(Col col, List<Object> values, boolean negated) implements SqlPredicate {
    public String sql(String q) {
      return col.sql(q) + (negated ? " NOT IN (" : " IN (")
          + values.stream().map(v -> literal(col.type(), v)).collect(Collectors.joining(", ")) + ")";
    }

    public Boolean eval(Record row) {
      Object v = row.get(col.index());
      if (v == null) {
        return null;
      }
      boolean found = values.stream().anyMatch(x -> compare(col.type(), v, x) == 0);
      return negated != found;
    }
  }

  record IsNull(Col col, boolean negated) implements SqlPredicate {
    public String sql(String q) {
      return col.sql(q) + (negated ? " IS NOT NULL" : " IS NULL");
    }

    public Boolean eval(Record row) {
      return (row.get(col.index()) == null) != negated;
    }
  }

  record And(SqlPredicate left, SqlPredicate right) implements SqlPredicate {
    public String sql(String q) {
      return "(" + left.sql(q) + " AND " + right.sql(q) + ")";
    }

    public Boolean eval(Record row) {
      Boolean a = left.eval(row);
      Boolean b = right.eval(row);
      if (Boolean.FALSE.equals(a) || Boolean.FALSE.equals(b)) {
        return false;
      }
      return a == null || b == null ? null : true;
    }
  }

  record Or(SqlPredicate left, SqlPredicate right) implements SqlPredicate {
    public String sql(String q) {
      return "(" + left.sql(q) + " OR " + right.sql(q) + ")";
    }

    public Boolean eval(Record row) {
      Boolean a = left.eval(row);
      Boolean b = right.eval(row);
      if (Boolean.TRUE.equals(a) || Boolean.TRUE.equals(b)) {
        return true;
      }
      return a == null || b == null ? null : false;
    }
  }

  record Not(SqlPredicate inner) implements SqlPredicate {
    public String sql(String q) {
      return "NOT (" + inner.sql(q) + ")";
    }

    public Boolean eval(Record row) {
      Boolean a = inner.eval(row);
      return a == null ? null : !a;
    }
  }

  // ------------------------------------------------------------------ values

  DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS");
  DateTimeFormatter TS = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSS");

  /** Whether values of {@code type} have an order SQL and this class agree on. */
  public static boolean ordered(Type type) {
    return switch (type.typeId()) {
      case UUID, BINARY, FIXED -> false;
      default -> true;
    };
  }

  /** A SQL literal of exactly {@code type} holding {@code v} (a generic Iceberg value). */
  static String literal(Type type, Object v) {
    return switch (type.typeId()) {
      case BOOLEAN -> v.toString();
      case INTEGER, LONG -> v.toString();
      case FLOAT -> "CAST('" + v + "' AS REAL)";
      case DOUBLE -> "CAST('" + v + "' AS DOUBLE)";
      case DECIMAL -> ((BigDecimal) v).toPlainString();
      case STRING -> "'" + v.toString().replace("'", "''") + "'";
      case DATE -> "DATE '" + v + "'";
      case TIME -> "TIME '" + TIME.format((LocalTime) v) + "'";
      case TIMESTAMP -> v instanceof OffsetDateTime o
          ? "TIMESTAMPTZ '" + TS.format(o.toLocalDateTime()) + "+00'"
          : "TIMESTAMP '" + TS.format((LocalDateTime) v) + "'";
      case UUID -> "CAST('" + v + "' AS UUID)";
      case BINARY -> "unhex('" + hex((ByteBuffer) v) + "')";
      default -> throw new IllegalArgumentException("no literal for " + type);
    };
  }

  static String hex(ByteBuffer bb) {
    ByteBuffer dup = bb.duplicate();
    byte[] bytes = new byte[dup.remaining()];
    dup.get(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /** SQL comparison of two non-null values of {@code type}. */
  static int compare(Type type, Object a, Object b) {
    return switch (type.typeId()) {
      case BOOLEAN -> Boolean.compare((Boolean) a, (Boolean) b);
      case INTEGER, LONG -> Long.compare(((Number) a).longValue(), ((Number) b).longValue());
      case FLOAT, DOUBLE -> compareFloating(((Number) a).doubleValue(), ((Number) b).doubleValue());
      case DECIMAL -> ((BigDecimal) a).compareTo((BigDecimal) b);
      case STRING -> compareCodePoints(a.toString(), b.toString());
      case DATE -> ((LocalDate) a).compareTo((LocalDate) b);
      case TIME -> ((LocalTime) a).compareTo((LocalTime) b);
      case TIMESTAMP -> a instanceof OffsetDateTime x
          ? x.toInstant().compareTo(((OffsetDateTime) b).toInstant())
          : ((LocalDateTime) a).compareTo((LocalDateTime) b);
      case UUID, BINARY -> a.equals(b) ? 0 : 1; // equality only
      default -> throw new IllegalArgumentException("cannot compare " + type);
    };
  }

  static int compareFloating(double a, double b) {
    if (Double.isNaN(a) || Double.isNaN(b)) {
      return Double.isNaN(a) ? (Double.isNaN(b) ? 0 : 1) : -1;
    }
    return Double.compare(a + 0.0, b + 0.0); // -0.0 + 0.0 == +0.0
  }

  static int compareCodePoints(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int x = a.codePointAt(i);
      int y = b.codePointAt(j);
      if (x != y) {
        return Integer.compare(x, y);
      }
      i += Character.charCount(x);
      j += Character.charCount(y);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }

  // ------------------------------------------------------------------ random predicates

  /**
   * A random predicate on the columns of rows {@code sample} (which supplies literals that match
   * something), combining up to two simple predicates.
   */
  public static SqlPredicate random(List<Col> columns, List<Record> sample, Random rnd) {
    SqlPredicate p = simple(columns, sample, rnd);
    int shape = rnd.nextInt(10);
    if (shape == 0) {
      return new And(p, simple(columns, sample, rnd));
    } else if (shape == 1) {
      return new Or(p, simple(columns, sample, rnd));
    } else if (shape == 2) {
      return new Not(p);
    }
    return p;
  }

  static SqlPredicate simple(List<Col> columns, List<Record> sample, Random rnd) {
    Col col = columns.get(rnd.nextInt(columns.size()));
    Function<Random, Object> value = r -> {
      if (!sample.isEmpty() && r.nextInt(4) != 0) {
        Object v = sample.get(r.nextInt(sample.size())).get(col.index());
        if (v != null) {
          return v;
        }
      }
      return RandomValues.of(col.type(), r);
    };
    int kind = rnd.nextInt(12);
    if (kind < 2) {
      return new IsNull(col, kind == 1);
    }
    if (!ordered(col.type()) || col.type().typeId() == Type.TypeID.BOOLEAN) {
      if (kind < 8) {
        return new Compare(col, rnd.nextInt(4) == 0 ? Op.NE : Op.EQ, value.apply(rnd));
      }
      List<Object> values = new ArrayList<>();
      for (int k = 1 + rnd.nextInt(3); k > 0; k--) {
        values.add(value.apply(rnd));
      }
      return new In(col, values, kind == 11);
    }
    if (kind < 8) {
      Op op = Op.values()[rnd.nextInt(Op.values().length)];
      return new Compare(col, op, value.apply(rnd));
    }
    if (kind < 10) {
      Object a = value.apply(rnd);
      Object b = value.apply(rnd);
      if (compare(col.type(), a, b) > 0 && rnd.nextInt(4) != 0) {
        Object t = a;
        a = b;
        b = t;
      }
      return new Between(col, a, b);
    }
    List<Object> values = new ArrayList<>();
    for (int k = 1 + rnd.nextInt(3); k > 0; k--) {
      values.add(value.apply(rnd));
    }
    return new In(col, values, kind == 11);
  }

  /** The columns of a schema as predicate columns. */
  public static List<Col> columns(Types.StructType struct) {
    List<Col> out = new ArrayList<>();
    List<Types.NestedField> fields = struct.fields();
    for (int i = 0; i < fields.size(); i++) {
      out.add(new Col(i, fields.get(i).name(), fields.get(i).type()));
    }
    return out;
  }
}
