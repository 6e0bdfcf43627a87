package dev.floe.slt;

import dev.floe.Values;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A SQL test script in the sqllogictest style:
 *
 * <pre>
 * # comment
 * statement ok
 * CREATE TABLE t (a int)
 *
 * statement error 42P01 [optional message fragment]
 * SELECT * FROM nope
 *
 * query II rowsort
 * SELECT a, a + 1 FROM t
 * ----
 * 1	2
 *
 * statement count 3                 (succeeds, and its row count, e.g. INSERT 0 3, is 3)
 * INSERT INTO t VALUES (1), (2), (3)
 *
 * query I nosort                    (the default: rows must come in this order)
 * SELECT a FROM t ORDER BY a
 * ----
 * 1
 *
 * restart          (close and reopen the warehouse)
 * </pre>
 *
 * <p>Expected values: a row line that contains a tab is split on tabs only and kept exactly as
 * written (so values may hold single spaces, or leading/trailing ones); a line without a tab is
 * stripped and split on runs of two or more spaces. NULL is {@code NULL}, the empty string
 * {@code (empty)}; other values are PostgreSQL's text form (booleans {@code t}/{@code f}). The letters
 * after {@code query} give the column count. {@code statement error} and {@code query error} take a
 * SQLSTATE, optionally {@code @N} (the error's position: the 1-based character of the statement it
 * points at, as PostgreSQL reports it), and optionally a fragment the error message must contain. {@code ${warehouse}} in SQL or in
 * expected values stands for the absolute path of the file's warehouse directory (to check files with
 * DuckDB's glob, read_parquet or read_json, or to give a table a location).
 *
 * <p>Running ({@link SqlLogicTest}): every record of a file runs even after a failure, and all failures
 * are reported together; a statement running longer than 30 s is cancelled and reported.
 * {@code -Dslt=insert,types} runs only the files whose names contain one of the parts;
 * {@code -Dslt.timing=true} prints per-file times and records slower than {@code -Dslt.slow} ms.
 */
record SltScript(List<Record> records) {
  enum Kind { STATEMENT_OK, STATEMENT_ERROR, QUERY, QUERY_ERROR, RESTART }

  record Record(Kind kind, int line, String sql, String expectedState, String expectedMessage, int columnCount,
      boolean rowsort, List<String> expectedRows, Long expectedCount) {
    Record(Kind kind, int line, String sql, String expectedState, String expectedMessage, int columnCount,
        boolean rowsort, List<String> expectedRows) {
      this(kind, line, sql, expectedState, expectedMessage, columnCount, rowsort, expectedRows, null);
    }

    /** This record with {@code ${warehouse}} replaced by {@code path} in its SQL and expected values. */
    Record withWarehouse(String path) {
      return new Record(kind, line, sql.replace(WAREHOUSE, path), expectedState, expectedMessage, columnCount,
          rowsort, expectedRows.stream().map(r -> r.replace(WAREHOUSE, path)).toList(), expectedCount);
    }
  }

  static final String WAREHOUSE = "${warehouse}";

  static SltScript parse(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file);
    List<Record> records = new ArrayList<>();
    int i = 0;
    while (i < lines.size()) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        i++;
        continue;
      }
      int start = i + 1;
      String[] head = line.split("\\s+", 4);
      if (head[0].equals("restart")) {
        records.add(new Record(Kind.RESTART, start, "", null, null, 0, false, List.of()));
        i++;
        continue;
      }
      i++;
      StringBuilder sql = new StringBuilder();
      while (i < lines.size() && !lines.get(i).isBlank() && !lines.get(i).strip().equals("----")) {
        sql.append(sql.length() > 0 ? "\n" : "").append(lines.get(i));
        i++;
      }
      switch (head[0]) {
        case "statement" -> {
          if (head.length > 1 && head[1].equals("ok")) {
            records.add(new Record(Kind.STATEMENT_OK, start, sql.toString(), null, null, 0, false, List.of()));
          } else if (head.length > 2 && head[1].equals("count") && head[2].matches("\\d+")) {
            records.add(new Record(Kind.STATEMENT_OK, start, sql.toString(), null, null, 0, false, List.of(),
                Long.parseLong(head[2])));
          } else if (head.length > 2 && head[1].equals("error")) {
            records.add(new Record(Kind.STATEMENT_ERROR, start, sql.toString(), head[2],
                head.length > 3 ? head[3] : null, 0, false, List.of()));
          } else {
            throw new IllegalArgumentException(file + ":" + start + ": bad statement header: " + line);
          }
        }
        case "query" -> {
          if (head.length > 2 && head[1].equals("error")) {
            records.add(new Record(Kind.QUERY_ERROR, start, sql.toString(), head[2],
                head.length > 3 ? head[3] : null, 0, false, List.of()));
            break;
          }
          if (head.length < 2) {
            throw new IllegalArgumentException(file + ":" + start + ": query needs column types: " + line);
          }
          boolean rowsort = head.length > 2 && head[2].equals("rowsort");
          if (head.length > 2 && !rowsort && !head[2].equals("nosort")) {
            throw new IllegalArgumentException(file + ":" + start + ": unknown sort mode: " + line);
          }
          List<String> rows = new ArrayList<>();
          if (i < lines.size() && lines.get(i).strip().equals("----")) {
            i++;
            while (i < lines.size() && !lines.get(i).isBlank()) {
              String row = lines.get(i);
              rows.add(row.indexOf('\t') >= 0 ? row.replace("\r", "")
                  : String.join("\t", row.strip().split("\\s{2,}")));
              i++;
            }
          }
          records.add(new Record(Kind.QUERY, start, sql.toString(), null, null, head[1].length(), rowsort, rows));
        }
        default -> throw new IllegalArgumentException(file + ":" + start + ": unknown record: " + line);
      }
    }
    return new SltScript(records);
  }

  static String format(Object value) {
    if (value == null) {
      return "NULL";
    }
    String text = Values.toText(value);
    return text.isEmpty() ? "(empty)" : text;
  }
}
