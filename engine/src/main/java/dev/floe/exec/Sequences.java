package dev.floe.exec;

import dev.floe.catalog.SqliteCatalog;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import org.duckdb.DuckDBColumnType;
import org.duckdb.DuckDBFunctions;
import org.duckdb.DuckDBReadableVector;
import org.duckdb.DuckDBScalarFunctionBuilder;

/**
 * Sequences for {@code serial} and identity columns: durable counters in the catalog database, handed
 * out by this process in blocks (as PostgreSQL caches sequence values), so a million-row INSERT does not
 * make a million catalog writes. Values are unique and increasing per process; a crash or another
 * process leaves gaps, as in PostgreSQL. Exposed to SQL as the volatile function
 * {@code floe_nextval('schema.sequence')}.
 */
final class Sequences {
  static final String FUNCTION = "floe_nextval";
  private static final int BLOCK = 64;

  private final SqliteCatalog catalog;
  private final Map<String, long[]> blocks = new HashMap<>(); // name -> {next, end}

  Sequences(SqliteCatalog catalog) {
    this.catalog = catalog;
  }

  /** The SQL calling the next value of a sequence. */
  static String nextValueSql(String sequence) {
    return FUNCTION + "(" + dev.floe.sql.Lexer.quoteString(sequence) + ")";
  }

  synchronized long next(String name) {
    // nextval('t_id_seq') as users write it: sequences of serial columns live in their table's schema
    String sequence = name.contains(".") ? name : "public." + name;
    long[] b = blocks.computeIfAbsent(sequence, k -> new long[] {0, 0});
    if (b[0] >= b[1]) {
      if (!catalog.sequenceExists(sequence)) {
        blocks.remove(sequence);
        // raised inside DuckDB: the prefix carries PostgreSQL's SQLSTATE out (DuckErrors)
        throw new IllegalArgumentException(DuckErrors.PREFIX + dev.floe.SqlState.UNDEFINED_TABLE + ":relation \""
            + name + "\" does not exist");
      }
      b[0] = catalog.reserve(sequence, BLOCK);
      b[1] = b[0] + BLOCK;
    }
    return b[0]++;
  }

  void create(String sequence) {
    create(sequence, 1);
  }

  void create(String sequence, long start) {
    catalog.createSequence(sequence, start);
    synchronized (this) {
      blocks.remove(sequence);
    }
  }

  boolean exists(String sequence) {
    return catalog.sequenceExists(sequence);
  }

  boolean drop(String sequence) {
    synchronized (this) {
      blocks.remove(sequence);
    }
    return catalog.dropSequence(sequence);
  }

  /** Registers {@code floe_nextval(varchar) -> bigint} in the DuckDB instance of {@code conn}. */
  void register(Connection conn) throws SQLException {
    try (DuckDBScalarFunctionBuilder b = DuckDBFunctions.scalarFunction()) {
      b.withName(FUNCTION).withParameters(DuckDBColumnType.VARCHAR).withReturnType(DuckDBColumnType.BIGINT)
          .withVolatile()
          .withVectorizedFunction((in, out) -> {
            DuckDBReadableVector name = in.vector(0);
            for (long r = 0; r < in.rowCount(); r++) {
              if (name.isNull(r)) {
                out.setNull(r);
              } else {
                out.setLong(r, next(name.getString(r)));
              }
            }
          }).register(conn);
    }
  }
}
