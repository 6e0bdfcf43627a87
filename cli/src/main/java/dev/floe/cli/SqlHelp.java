package dev.floe.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code \h}: the syntax of the statements Floe runs, as docs/sql.md, docs/mutations.md and docs/transactions.md
 * give it (shorter than psql's, and only what Floe accepts). SET, RESET and DISCARD are left out: a server
 * connection runs them, the shell's session does not (0A000).
 */
final class SqlHelp {
  private SqlHelp() {}

  private static final Map<String, String[]> TOPICS = new LinkedHashMap<>();

  private static void topic(String name, String description, String syntax) {
    TOPICS.put(name, new String[] {description, syntax});
  }

  static {
    topic("ALTER TABLE", "change a table's columns, options or history", """
        ALTER TABLE [ IF EXISTS ] name action [, ...]
        where action is one of:
            ADD [ COLUMN ] [ IF NOT EXISTS ] column type [ NOT NULL DEFAULT value | DEFAULT value ]
            DROP [ COLUMN ] [ IF EXISTS ] column
            RENAME [ COLUMN ] column TO new_column
            ALTER [ COLUMN ] column [ SET DATA ] TYPE type      -- widening only
            ALTER [ COLUMN ] column DROP NOT NULL
            SET ( option = value [, ...] )
            RESET ( option [, ...] )
        ALTER TABLE name RENAME TO new_name
        ALTER TABLE name EXECUTE rollback_to_snapshot(snapshot_id) | rollback_to_version(n)
        ALTER TABLE name EXECUTE expire_snapshots(retention_threshold => '7d')
        ALTER TABLE name EXECUTE remove_orphan_files(retention_threshold => '7d', dry_run => false)""");
    topic("BEGIN", "start a transaction block", """
        BEGIN [ WORK | TRANSACTION ] [ ISOLATION LEVEL level ] [ READ ONLY | READ WRITE ]
        START TRANSACTION [ ISOLATION LEVEL level ] [ READ ONLY | READ WRITE ]""");
    topic("COMMIT", "commit the current transaction block", "COMMIT [ WORK | TRANSACTION ]\nEND");
    topic("COPY", "copy rows between a table and the client (files: \\copy)", """
        COPY table [ ( column [, ...] ) ] FROM STDIN [ [ WITH ] ( option [, ...] ) ]
        COPY { table [ ( column [, ...] ) ] | ( query ) } TO STDOUT [ [ WITH ] ( option [, ...] ) ]
        \\copy ... FROM { 'file' | PROGRAM 'command' | STDIN | PSTDIN } ...
        \\copy ... TO { 'file' | PROGRAM 'command' | STDOUT | PSTDOUT } ...
        where option is one of:
            FORMAT { text | csv | binary }, HEADER [ boolean ], DELIMITER 'c', NULL 'text', QUOTE 'c', ESCAPE 'c'""");
    topic("CREATE INDEX", "record an index; the first one gives the table its sort order", """
        CREATE [ UNIQUE ] INDEX [ name ] ON table [ USING btree | hash | brin ] ( column [ ASC | DESC ] [, ...] )""");
    topic("CREATE SCHEMA", "create a schema (an Iceberg namespace)", "CREATE SCHEMA [ IF NOT EXISTS ] name");
    topic("CREATE SEQUENCE", "create a sequence", """
        CREATE SEQUENCE [ IF NOT EXISTS ] name [ START [ WITH ] n ] [ AS type ] [ CACHE n ] [ NO CYCLE ]""");
    topic("CREATE TABLE", "create an Iceberg table", """
        CREATE TABLE [ IF NOT EXISTS ] name (
            column type [ NOT NULL ] [ DEFAULT expression ] [ PRIMARY KEY ]
              [ GENERATED { ALWAYS | BY DEFAULT } AS IDENTITY ] [, ...]
            [, [ CONSTRAINT name ] PRIMARY KEY ( column [, ...] ) ]
        )
        [ PARTITIONED BY ( column | year(c) | month(c) | day(c) | hour(c) | bucket(n, c) | truncate(w, c) [, ...] ) ]
        [ WITH ( option = value [, ...] ) ]      -- format_version, sorted_by, tail, location, ...""");
    topic("CREATE TABLE AS", "create a table from a query's rows, in one commit", """
        CREATE TABLE [ IF NOT EXISTS ] name [ PARTITIONED BY ( ... ) ] [ WITH ( ... ) ] AS query [ WITH [ NO ] DATA ]""");
    topic("DELETE", "delete rows of a table", """
        DELETE FROM table [ [ AS ] alias ] [ USING from_item [, ...] ] [ WHERE condition ] [ RETURNING ... ]""");
    topic("DESCRIBE", "show a table's columns", "DESCRIBE table");
    topic("DROP INDEX", "remove an index (and the sort order it gave)", "DROP INDEX [ IF EXISTS ] name");
    topic("DROP SCHEMA", "remove a schema", "DROP SCHEMA [ IF EXISTS ] name [ RESTRICT | CASCADE ]");
    topic("DROP SEQUENCE", "remove sequences", "DROP SEQUENCE [ IF EXISTS ] name [, ...]");
    topic("DROP TABLE", "remove tables (PURGE also deletes their files)", "DROP TABLE [ IF EXISTS ] name [, ...] [ PURGE ]");
    topic("EXPLAIN", "show DuckDB's plan of a query", "EXPLAIN [ ANALYZE ] query");
    topic("INSERT", "add rows to a table", """
        INSERT INTO table [ AS alias ] [ ( column [, ...] ) ] [ OVERRIDING { SYSTEM | USER } VALUE ]
            { VALUES ( expression [, ...] ) [, ...] | query | DEFAULT VALUES }
            [ ON CONFLICT [ ( key_column [, ...] ) ] DO NOTHING
              | ON CONFLICT [ ( key_column [, ...] ) ] DO UPDATE SET column = expression [, ...] [ WHERE condition ] ]
            [ RETURNING ... ]""");
    topic("MERGE", "insert, update or delete rows by a join", """
        MERGE INTO table [ [ AS ] alias ] USING source [ [ AS ] alias ] ON condition
            WHEN MATCHED [ AND condition ] THEN { UPDATE SET column = expression [, ...] | DELETE | DO NOTHING }
            WHEN NOT MATCHED [ AND condition ] THEN { INSERT [ ( column [, ...] ) ] VALUES ( ... )
                                                    | INSERT DEFAULT VALUES | DO NOTHING } ...""");
    topic("RELEASE SAVEPOINT", "forget a savepoint", "RELEASE [ SAVEPOINT ] name");
    topic("ROLLBACK", "abort the current transaction block", "ROLLBACK [ WORK | TRANSACTION ]\nABORT");
    topic("ROLLBACK TO SAVEPOINT", "undo what the block did since a savepoint",
        "ROLLBACK [ WORK | TRANSACTION ] TO [ SAVEPOINT ] name");
    topic("SAVEPOINT", "remember the transaction block's state", "SAVEPOINT name");
    topic("SELECT", "read rows: any DuckDB query over Floe's tables", """
        [ WITH [ RECURSIVE ] name AS ( query ) [, ...] ]
        SELECT [ DISTINCT ] expression [ [ AS ] name ] [, ...]
            [ FROM table [ AS OF VERSION n | FOR SYSTEM_TIME AS OF timestamp ] [ [ AS ] alias ] [, ...] ]
            [ WHERE condition ] [ GROUP BY ... ] [ HAVING condition ] [ WINDOW ... ]
            [ { UNION | INTERSECT | EXCEPT } [ ALL ] select ]
            [ ORDER BY expression [ ASC | DESC ] [ NULLS { FIRST | LAST } ] [, ...] ]
            [ LIMIT n ] [ OFFSET n ]
        TABLE name""");
    topic("SET TRANSACTION", "set the block's isolation level and access mode",
        "SET TRANSACTION [ ISOLATION LEVEL level ] [ READ ONLY | READ WRITE ]");
    topic("SHOW", "list the tables or the schemas", """
        SHOW TABLES [ FROM schema ]
        SHOW SCHEMAS""");
    topic("START TRANSACTION", "start a transaction block",
        "START TRANSACTION [ ISOLATION LEVEL level ] [ READ ONLY | READ WRITE ]");
    topic("TRUNCATE", "delete every row of tables", "TRUNCATE [ TABLE ] name [, ...]");
    topic("UPDATE", "change rows of a table", """
        UPDATE table [ [ AS ] alias ] SET column = { expression | DEFAULT } [, ...]
            [ FROM from_item [, ...] ] [ WHERE condition ] [ RETURNING ... ]""");
    topic("VACUUM", "compact tables and expire old versions by their policies", "VACUUM [ FULL ] [ VERBOSE ] [ table [, ...] ]");
  }

  /** {@code \h}: the topics; {@code \h WORDS}: the syntax of the statements they name. */
  static void print(PrintStream out, List<String> words) {
    if (words.isEmpty()) {
      out.println("Available help:");
      List<String> names = new ArrayList<>(TOPICS.keySet());
      int rows = (names.size() + 2) / 3;
      for (int r = 0; r < rows; r++) {
        StringBuilder b = new StringBuilder();
        for (int c = 0; c < 3 && r + c * rows < names.size(); c++) {
          b.append(String.format(Locale.ROOT, "  %-24s", names.get(r + c * rows)));
        }
        out.println(b.toString().stripTrailing());
      }
      out.println();
      return;
    }
    String asked = String.join(" ", words).toUpperCase(Locale.ROOT).replaceAll("\\s+", " ").replaceAll(";$", "")
        .strip();
    List<String> shown = TOPICS.containsKey(asked) ? List.of(asked)
        : TOPICS.keySet().stream().filter(n -> n.startsWith(asked + " ") || n.startsWith(asked)).toList();
    if (shown.isEmpty()) {
      out.println("No help available for \"" + String.join(" ", words) + "\".");
      out.println("Try \\h with no arguments to see available help.");
      return;
    }
    for (String name : shown) {
      String[] t = TOPICS.get(name);
      out.println("Command:     " + name);
      out.println("Description: " + t[0]);
      out.println("Syntax:");
      out.println(t[1]);
      out.println();
    }
    out.println("See docs/sql.md, docs/mutations.md and docs/transactions.md.");
  }
}
