package dev.floe.write;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.types.SqlLiterals;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Partition values computed in DuckDB SQL must equal Iceberg's own transforms for every type and for
 * edge values (negative numbers, pre-1970 instants, multi-byte strings), or other engines would prune
 * Floe's files wrongly.
 */
class PartitionSqlTest {
  private static Connection duck;
  private final Random random = new Random(20261129);

  @BeforeAll
  static void open() throws Exception {
    duck = DriverManager.getConnection("jdbc:duckdb:");
    PartitionFunctions.register(duck);
    try (Statement st = duck.createStatement()) {
      st.execute("SET TimeZone = 'America/Los_Angeles'"); // transforms must not depend on the session zone
    }
  }

  @AfterAll
  static void close() throws Exception {
    duck.close();
  }

  @Test
  void temporalTransforms() throws Exception {
    for (Type type : List.of(Types.DateType.get(), Types.TimestampType.withoutZone(),
        Types.TimestampType.withZone())) {
      List<Object> values = new ArrayList<>();
      boolean date = type.typeId() == Type.TypeID.DATE;
      long unit = date ? 1 : 86_400_000_000L;
      for (long edge : new long[] {0, -1, 1, -365, 365 * 30}) {
        values.add(date ? (Object) (int) edge : (Object) (edge * unit));
        if (!date) {
          values.add(edge * unit - 1);
          values.add(edge * unit + 3_600_000_000L - 1);
        }
      }
      for (int i = 0; i < 200; i++) {
        long days = random.nextInt(200_000) - 100_000;
        values.add(date ? (Object) (int) days : (Object) (days * unit + (long) (random.nextDouble() * unit)));
      }
      check(type, date ? List.of("year", "month", "day") : List.of("year", "month", "day", "hour"), values);
      check(type, List.of("bucket[16]", "bucket[7]"), values);
    }
  }

  @Test
  void numericStringAndBinaryTransforms() throws Exception {
    List<Object> ints = new ArrayList<>(List.of(0, -1, 1, Integer.MIN_VALUE, Integer.MAX_VALUE, -10, 10, -11));
    List<Object> longs = new ArrayList<>(List.of(0L, -1L, Long.MIN_VALUE + 100, Long.MAX_VALUE - 100, -25L));
    for (int i = 0; i < 200; i++) {
      ints.add(random.nextInt());
      longs.add(random.nextLong() / 4);
    }
    check(Types.IntegerType.get(), List.of("identity", "bucket[16]", "bucket[3]", "truncate[10]", "truncate[7]"), ints);
    check(Types.LongType.get(), List.of("identity", "bucket[16]", "truncate[10]", "truncate[1000]"), longs);

    List<Object> strings = new ArrayList<>(List.of("", "a", "héllo wörld", "日本語のテキスト", "emoji 🙂🙃 mix", "x".repeat(40)));
    for (int i = 0; i < 100; i++) {
      StringBuilder b = new StringBuilder();
      for (int k = random.nextInt(12); k > 0; k--) {
        b.appendCodePoint(random.nextBoolean() ? 'a' + random.nextInt(26) : 0x3040 + random.nextInt(90));
      }
      strings.add(b.toString());
    }
    check(Types.StringType.get(), List.of("identity", "bucket[16]", "truncate[3]", "truncate[1]"), strings);

    for (Types.DecimalType d : List.of(Types.DecimalType.of(9, 2), Types.DecimalType.of(38, 10))) {
      List<Object> decimals = new ArrayList<>(List.of(BigDecimal.ZERO.setScale(d.scale()),
          new BigDecimal("-0.01").setScale(d.scale()), new BigDecimal("12.34").setScale(d.scale())));
      for (int i = 0; i < 100; i++) {
        BigInteger unscaled = new BigInteger(d.precision() > 18 ? 100 : 28, random);
        decimals.add(new BigDecimal(random.nextBoolean() ? unscaled : unscaled.negate(), d.scale()));
      }
      check(d, List.of("identity", "bucket[16]", "truncate[100]", "truncate[7]"), decimals);
    }

    List<Object> uuids = new ArrayList<>();
    List<Object> bytes = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      uuids.add(new UUID(random.nextLong(), random.nextLong()));
      byte[] b = new byte[random.nextInt(20)];
      random.nextBytes(b);
      bytes.add(ByteBuffer.wrap(b));
    }
    check(Types.UUIDType.get(), List.of("identity", "bucket[16]"), uuids);
    check(Types.BinaryType.get(), List.of("bucket[16]"), bytes);
    check(Types.TimeType.get(), List.of("identity", "bucket[16]"),
        List.of(0L, 1L, 86_399_999_999L, 3_600_000_000L * 13 + 7));
  }

  private void check(Type type, List<String> transforms, List<Object> values) throws Exception {
    Schema schema = new Schema(Types.NestedField.optional(1, "c", type));
    for (String name : transforms) {
      PartitionSpec spec = spec(schema, name);
      PartitionField field = spec.fields().get(0);
      @SuppressWarnings("unchecked")
      Transform<Object, Object> t = (Transform<Object, Object>) field.transform();
      var fn = t.bind(type);
      for (Object value : values) {
        String expr = PartitionSql.transform(field, schema, SqlLiterals.of(type, value));
        try (Statement st = duck.createStatement();
            ResultSet rs = st.executeQuery("SELECT " + PartitionSql.readable(field, schema, expr))) {
          rs.next();
          Object actual = PartitionSql.internal(field, schema, rs, 1);
          Object expected = fn.apply(value);
          assertThat(actual).as("%s(%s) of %s", name, type, value).isEqualTo(expected);
        }
      }
    }
  }

  private static PartitionSpec spec(Schema schema, String transform) {
    PartitionSpec.Builder b = PartitionSpec.builderFor(schema);
    if (transform.startsWith("bucket[")) {
      return b.bucket("c", Integer.parseInt(transform.substring(7, transform.length() - 1))).build();
    }
    if (transform.startsWith("truncate[")) {
      return b.truncate("c", Integer.parseInt(transform.substring(9, transform.length() - 1))).build();
    }
    return switch (transform) {
      case "identity" -> b.identity("c").build();
      case "year" -> b.year("c").build();
      case "month" -> b.month("c").build();
      case "day" -> b.day("c").build();
      case "hour" -> b.hour("c").build();
      default -> throw new IllegalArgumentException(transform);
    };
  }
}
