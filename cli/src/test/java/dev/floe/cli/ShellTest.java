package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Drives the interactive shell through JLine over a dumb terminal fed from a stream. */
class ShellTest {
  @TempDir
  Path dir;

  private Cli.Outcome shell(String input) {
    return Cli.run(input, Map.of("FLOE_HISTORY", dir.resolve("history").toString()), true,
        "sql", "--warehouse", dir.resolve("wh").toString());
  }

  @Test
  void multiLineStatementsRunAtTheTopLevelSemicolon() throws Exception {
    Cli.Outcome r = shell("""
        CREATE TABLE t (x integer,
                        label text);
        INSERT INTO t
        VALUES (1, 'one; still a string'),
               (2, 'two');
        SELECT sum(x) AS total,
               max(label) AS last_label -- a comment; not the end
        FROM t;
        \\q
        """);

    assertThat(r.status()).isZero();
    assertThat(r.out())
        .contains("Type \\? for help")
        .contains("CREATE TABLE\n")
        .contains("INSERT 0 2\n")
        .contains("""
             total | last_label\s
            -------+------------
                 3 | two
            (1 row)
            """)
        .containsPattern("Time: \\d+\\.\\d{3} ms");
    assertThat(r.err()).startsWith("NOTICE: created a new warehouse");
    // The multi-line statement is one history entry.
    assertThat(Files.readString(dir.resolve("history"))).contains("SELECT sum(x) AS total,");
  }

  @Test
  void ctrlDOnAContinuationLineEndsTheInput() {
    // Ctrl-D (EOT) on the empty second line of an unfinished statement: the shell ends, nothing runs
    Cli.Outcome r = shell("SELECT 42 AS answer\n\u0004;\nSELECT 'after' AS later;\n");
    assertThat(r.status()).isZero();
    assertThat(r.out()).doesNotContain("answer").doesNotContain("later");
  }

  @Test
  void thePromptShowsTheTransactionState() {
    Cli.Outcome r = shell("""
        BEGIN;
        SELECT
          1;
        SELECT * FROM nowhere;
        ROLLBACK;
        SELECT 2 AS two;
        """);
    // psql's: = or - (continuation), then * in a block, ! in a failed block
    assertThat(r.out()).contains("=> BEGIN").contains("=*> ").contains("=!> ROLLBACK")
        .contains("=> ").doesNotContain("=!> SELECT 2");
  }

  @Test
  void errorsShowTheLineWithACaretAndTheShellGoesOn() {
    Cli.Outcome r = shell("""
        SELECT 1 AS a;
        SELECT *
          FORM nowhere;
        SELECT 2 AS b;
        """);

    assertThat(r.status()).isZero();
    assertThat(r.err()).contains("""
        ERROR 42601: syntax error at or near "FORM"
        LINE 2:   FORM nowhere
                  ^
        """);
    assertThat(r.out()).contains(" a \n---\n 1\n(1 row)").contains(" b \n---\n 2\n(1 row)");
  }

  @Test
  void backslashCommands() {
    Cli.Outcome r = shell("""
        CREATE TABLE events (id bigint NOT NULL, at timestamptz) WITH (partitioning = ARRAY['day(at)']);
        CREATE TABLE keyed (id int PRIMARY KEY, name text DEFAULT 'none', n serial);
        CREATE INDEX keyed_name ON keyed (name);
        \\timing off
        \\dt
        \\d events
        \\d keyed
        \\pset null ∅
        SELECT NULL AS nothing;
        \\pset format csv
        SELECT 1 AS a, 2 AS b;
        \\dn
        \\l
        \\du
        \\di
        \\dv
        \\nonsense
        \\?
        """);

    assertThat(r.status()).isZero();
    assertThat(r.out())
        .contains("Timing is off.")
        .contains("""
             List of tables
             Schema |  Name \s
            --------+--------
             public | events
             public | keyed
            (2 rows)
            """)
        .contains("""
             Column |           Type           | Collation | Nullable | Default\s
            --------+--------------------------+-----------+----------+---------
             id     | bigint                   |           | not null |\s
             at     | timestamp with time zone |           |          |\s
            Partition key: day(at)
            """)
        .contains("Table \"public.events\"")
        .contains("""
             Column |  Type   | Collation | Nullable |                 Default                \s
            --------+---------+-----------+----------+-----------------------------------------
             id     | integer |           | not null |\s
             name   | text    |           |          | 'none'
             n      | integer |           | not null | nextval('public.keyed_n_seq'::regclass)
            Indexes:
                "keyed_pkey" PRIMARY KEY, btree (id)
                "keyed_name" btree (name)
            """)
        .contains(" nothing \n---------\n ∅\n(1 row)")
        .contains("a,b\n1,2\n")
        .contains("List of schemas")
        .contains(" floe | floe  | UTF8     | C       | C\n")
        .contains(" floe      | Superuser, Create role, Create DB\n")
        .contains(" public | keyed_name | index | floe  | keyed\n")
        .contains(" public | keyed_pkey | index | floe  | keyed\n")
        .contains("Did not find any relations.")
        .contains("\\timing [on|off]");
    assertThat(r.err()).contains("invalid command \\nonsense");
  }

  @Test
  void quitWordsAndEndOfInputLeave() {
    assertThat(shell("quit\nSELECT 1 AS never;\n").out()).doesNotContain("never");
    assertThat(shell("SELECT 1 AS shown;\n").out()).contains(" shown ");
  }

  @Test
  void expandedDisplayOutputToAFileAndThePager() throws Exception {
    Path file = dir.resolve("out.txt");
    Path paged = dir.resolve("paged.txt");
    Cli.Outcome r = Cli.run("""
        \\timing off
        \\x
        SELECT 1 AS first, 'one' AS second UNION ALL SELECT 3, 'three' ORDER BY 1;
        SELECT 1 AS none WHERE false;
        \\x off
        \\o %s
        SELECT 42 AS redirected;
        \\dn
        \\echo -n to the
        \\echo terminal
        \\o
        SELECT 'back' AS here;
        \\pset pager always
        SELECT 'shown by the pager' AS through;
        \\pset pager off
        SELECT 'plain' AS again;
        """.formatted(file), Map.of("FLOE_HISTORY", dir.resolve("history").toString(), "PAGER", "cat > " + paged),
        true, "sql", "--warehouse", dir.resolve("wh").toString());

    assertThat(r.status()).isZero();
    assertThat(r.out())
        .contains("Expanded display is on.\n")
        .contains("""
            -[ RECORD 1 ]-
            first  | 1
            second | one
            -[ RECORD 2 ]-
            first  | 3
            second | three

            """)
        .contains("=> (0 rows)\n\n") // psql's expanded display of an empty result
        .contains("Expanded display is off.\n")
        .contains("to thewh=> terminal\n") // -n: no line break, the prompt follows
        .contains(" here \n------\n back\n(1 row)\n")
        .contains("Pager is always used.\n")
        .contains("Pager usage is off.\n")
        .contains(" again \n-------\n plain\n(1 row)\n")
        .doesNotContain("        42\n").doesNotContain("List of schemas").doesNotContain(" shown by the pager\n");
    assertThat(Files.readString(file)).isEqualTo(" redirected \n------------\n         42\n(1 row)\n\n"
        + "List of schemas\n  Name  \n--------\n public\n(1 row)\n\n");
    assertThat(Files.readString(paged)).isEqualTo("      through       \n--------------------\n shown by the pager\n"
        + "(1 row)\n\n");
  }

  @Test
  void copyFromStdinReadsTheLinesTypedAfterIt() {
    Cli.Outcome r = shell("""
        CREATE TABLE typed (id int, name text);
        \\copy typed FROM stdin WITH (FORMAT csv)
        1,one
        2,two
        \\.
        SELECT count(*) AS n FROM typed;
        """);
    assertThat(r.out()).contains("Enter data to be copied followed by a newline.\n")
        .contains(">> ").contains("COPY 2\n").contains(" n \n---\n 2\n");
  }

  @Test
  void editTheLastStatementThenRunIt() throws Exception {
    Path editor = dir.resolve("editor.sh");
    Files.writeString(editor, "#!/bin/sh\nsed -i 's/21/2 * 21/' \"$1\"\n");
    editor.toFile().setExecutable(true);
    Cli.Outcome r = Cli.run("""
        SELECT 21 AS answer;
        \\e
        """, Map.of("FLOE_HISTORY", dir.resolve("history").toString(), "EDITOR", editor.toString()), true,
        "sql", "--warehouse", dir.resolve("wh").toString());
    assertThat(r.err()).doesNotContain("ERROR").doesNotContain("failed");
    assertThat(r.out()).contains(" answer \n--------\n     21\n")
        .contains("SELECT 2 * 21 AS answer;\n answer \n--------\n     42\n");
  }

  @Test
  void helpListsEveryCommandAndTheSyntaxOfStatements() {
    Cli.Outcome r = shell("""
        \\?
        \\h
        \\h merge
        \\h frobnicate
        """);
    for (String command : SqlCompleter.BACKSLASH_COMMANDS) {
      assertThat(r.out()).contains("  " + command.replace("+", "[+]"));
    }
    assertThat(r.out()).contains("Available help:").contains("CREATE TABLE AS")
        .contains("Command:     MERGE\nDescription: insert, update or delete rows by a join\nSyntax:\nMERGE INTO table")
        .contains("No help available for \"frobnicate\".");
  }

  @Test
  void describeAndListTablesWithDetail() {
    Cli.Outcome r = shell("""
        CREATE TABLE sized (id int, name text);
        INSERT INTO sized SELECT i, 'name ' || i FROM range(1000) r(i);
        \\dt+
        \\d+ sized
        """);
    assertThat(r.out())
        .containsPattern(" Schema \\| Name  \\| Type  \\| Owner \\| Persistence \\| Access method \\| +Size +\\| Description \n")
        .containsPattern(" public \\| sized \\| table \\| floe  \\| permanent   \\| iceberg       \\| \\d+ (bytes|kB) +\\| *\n")
        .contains(" Column |  Type   | Collation | Nullable | Default | Description \n")
        .containsPattern("Size: \\d+ (bytes|kB) \\(1 data files, 0 delete files, 1000 rows\\)\n")
        .contains("Access method: iceberg\n")
        .doesNotContain(" 0 bytes ");
  }
}
