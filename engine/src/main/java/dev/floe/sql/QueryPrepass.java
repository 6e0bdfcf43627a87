package dev.floe.sql;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.types.ByteaText;
import dev.floe.types.PgDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * Rewrites the PostgreSQL (and Trino/Spark) query syntax DuckDB's parser lacks, before DuckDB parses
 * the query: {@code TABLE name} becomes {@code SELECT * FROM name}; a column or table named by a word
 * DuckDB reserves ({@link DuckKeywords}) is quoted; bytea, date and timestamp literals
 * are read as PostgreSQL reads them ({@code '\\x00ff'::bytea}, {@code DATE '0044-03-15 BC'}); and
 * time-travel clauses after table
 * names are replaced, "name + clause" together, with a marker table name DuckDB accepts, the clause
 * remembered. Time-travel forms:
 *
 * <pre>
 *   t AS OF VERSION n                 t AS OF TIMESTAMP '...'
 *   t FOR SYSTEM_TIME AS OF '...'     t FOR TIMESTAMP AS OF '...'     t TIMESTAMP AS OF '...'
 *   t FOR VERSION AS OF snapshot-id | 'branch-or-tag'                 t VERSION AS OF ...
 * </pre>
 *
 * An alias may follow the clause. DuckDB's own {@code t AT (VERSION => n)} needs no rewriting.
 */
final class QueryPrepass {
  static final String MARKER_PREFIX = "__floe_tt_";

  /** The rewritten text, the clauses by marker index, and the edits (for mapping error positions back). */
  record Result(String text, List<TimeTravel> clauses, List<String> tableNames, TextEdits edits) {}

  private QueryPrepass() {}

  static Result rewrite(String sql) {
    List<Token> tokens = Lexer.tokenize(sql);
    TextEdits edits = new TextEdits();
    List<TimeTravel> clauses = new ArrayList<>();
    List<String> names = new ArrayList<>();
    // time travel first: the clause goes whole, so nothing inside it is rewritten here
    java.util.BitSet replaced = new java.util.BitSet();
    for (int k = 1; k < tokens.size(); k++) {
      Token prev = tokens.get(k - 1);
      if (!prev.isIdentifier() || (k >= 2 && tokens.get(k - 2).isOp("::"))) {
        continue;
      }
      int valueIndex;
      TimeTravel.Kind kind;
      Token t = tokens.get(k);
      if (t.isKeyword("for") && isAsOf(tokens, k + 2)) {
        Token what = tokens.get(k + 1);
        if (what.isKeyword("system_time") || what.isKeyword("timestamp")) {
          kind = TimeTravel.Kind.TIMESTAMP;
        } else if (what.isKeyword("version") || what.isKeyword("system_version")) {
          kind = TimeTravel.Kind.SNAPSHOT;
        } else {
          continue;
        }
        valueIndex = k + 4;
      } else if (t.isKeyword("as") && k + 2 < tokens.size() && tokens.get(k + 1).isKeyword("of")) {
        Token what = tokens.get(k + 2);
        if (what.isKeyword("version")) {
          kind = TimeTravel.Kind.VERSION;
        } else if (what.isKeyword("timestamp") || what.isKeyword("system_time")) {
          kind = TimeTravel.Kind.TIMESTAMP;
        } else {
          continue;
        }
        valueIndex = k + 3;
      } else if ((t.isKeyword("version") || t.isKeyword("timestamp")) && isAsOf(tokens, k + 1)) {
        kind = t.isKeyword("version") ? TimeTravel.Kind.SNAPSHOT : TimeTravel.Kind.TIMESTAMP;
        valueIndex = k + 3;
      } else {
        continue;
      }
      int end = valueEnd(tokens, valueIndex, sql);
      String value = sql.substring(tokens.get(valueIndex).start(), tokens.get(end - 1).end());
      int marker = clauses.size();
      clauses.add(new TimeTravel(kind, value, t.position()));
      names.add(prev.value());
      edits.replace(prev.start(), tokens.get(end - 1).end(), Lexer.quoteIdentifier(MARKER_PREFIX + marker));
      replaced.set(prev.start(), tokens.get(end - 1).end());
      k = end;
    }
    for (int k = 0; k < tokens.size() - 1; k++) {
      Token t = tokens.get(k);
      Token before = k > 0 ? tokens.get(k - 1) : null;
      if (replaced.get(t.start())) {
        continue; // in a time-travel clause: its value is read (and rewritten) on its own
      }
      int pg = PgSyntax.rewrite(tokens, k, edits);
      if (pg > k) {
        k = pg - 1;
        continue;
      }
      if (DuckKeywords.isName(tokens, k)) {
        edits.replace(t.start(), t.end(), Lexer.quoteIdentifier(t.value()));
        continue;
      }
      int[] typed = typedLiteral(tokens, k);
      if (typed != null) {
        Token literal = tokens.get(typed[1]);
        String replacement = literalSql(typed[2], literal);
        if (replacement != null) {
          boolean whole = typed[2] == BYTEA || typed[2] == NUMERIC;
          edits.replace(whole ? t.start() : literal.start(), whole ? tokens.get(typed[0] - 1).end() : literal.end(),
              replacement);
        }
        k = typed[0] - 1;
        continue;
      }
      if (t.type() == Token.Type.STRING && (t.text().startsWith("E'") || t.text().startsWith("e'"))) {
        edits.replace(t.start(), t.end(), Lexer.quoteString(t.value())); // DuckDB reads E'' escapes differently
        continue;
      }
      if (t.isKeyword("table") && tokens.get(k + 1).isIdentifier()
          && (before == null || before.isOp("(") || before.isKeyword("union") || before.isKeyword("intersect")
              || before.isKeyword("except") || before.isKeyword("all") || before.isKeyword("distinct"))) {
        edits.replace(t.start(), t.end(), "SELECT * FROM");
      }
    }
    String text = edits.isEmpty() ? sql : edits.apply(sql);
    return new Result(text, clauses, names, edits);
  }

  private static final int BYTEA = -1;
  private static final int NUMERIC = -2;
  private static final java.util.regex.Pattern NUMBER =
      java.util.regex.Pattern.compile("\\s*[-+]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?\\s*");

  /**
   * If a typed literal of bytea, numeric, date or a timestamp type starts at {@code k} ({@code 'x'::date},
   * {@code ('x')::date}, {@code CAST('x' AS date)}, {@code date 'x'}): the index after it, the string's
   * index, and its type (a {@link PgDateTime.Kind} ordinal, {@link #BYTEA} or {@link #NUMERIC});
   * otherwise null.
   */
  private static int[] typedLiteral(List<Token> tokens, int k) {
    Token t = tokens.get(k);
    int[] type;
    if (t.type() == Token.Type.STRING && k + 2 < tokens.size() && tokens.get(k + 1).isOp("::")
        && (type = type(tokens, k + 2)) != null) {
      return new int[] {type[1], k, type[0]};
    }
    // ('x')::date, as pgjdbc writes a parameter into the text of a simple query
    if (t.isOp("(") && k + 4 < tokens.size() && tokens.get(k + 1).type() == Token.Type.STRING
        && tokens.get(k + 2).isOp(")") && tokens.get(k + 3).isOp("::") && (type = type(tokens, k + 4)) != null) {
      return new int[] {type[1], k + 1, type[0]};
    }
    if (t.type() == Token.Type.IDENT && (k == 0 || !tokens.get(k - 1).isOp("::")) && (type = type(tokens, k)) != null
        && type[1] < tokens.size() && tokens.get(type[1]).type() == Token.Type.STRING) {
      return new int[] {type[1] + 1, type[1], type[0]};
    }
    if (t.isKeyword("cast") && k + 4 < tokens.size() && tokens.get(k + 1).isOp("(")
        && tokens.get(k + 2).type() == Token.Type.STRING && tokens.get(k + 3).isKeyword("as")
        && (type = type(tokens, k + 4)) != null && type[1] < tokens.size() && tokens.get(type[1]).isOp(")")) {
      return new int[] {type[1] + 1, k + 2, type[0]};
    }
    return null;
  }

  /** The type named at {@code k} (a {@link PgDateTime.Kind} ordinal, BYTEA or NUMERIC) and the index after it. */
  private static int[] type(List<Token> tokens, int k) {
    Token t = tokens.get(k);
    if (t.isKeyword("bytea")) {
      return new int[] {BYTEA, k + 1};
    }
    if ((t.isKeyword("numeric") || t.isKeyword("decimal")) && !(k + 1 < tokens.size() && tokens.get(k + 1).isOp("("))) {
      return new int[] {NUMERIC, k + 1};
    }
    if (t.isKeyword("date")) {
      return new int[] {PgDateTime.Kind.DATE.ordinal(), k + 1};
    }
    if (t.isKeyword("timestamptz")) {
      return new int[] {PgDateTime.Kind.TIMESTAMPTZ.ordinal(), k + 1};
    }
    if (!t.isKeyword("timestamp")) {
      return null;
    }
    if (k + 3 < tokens.size() && (tokens.get(k + 1).isKeyword("with") || tokens.get(k + 1).isKeyword("without"))
        && tokens.get(k + 2).isKeyword("time") && tokens.get(k + 3).isKeyword("zone")) {
      return new int[] {(tokens.get(k + 1).isKeyword("with") ? PgDateTime.Kind.TIMESTAMPTZ
          : PgDateTime.Kind.TIMESTAMP).ordinal(), k + 4};
    }
    return new int[] {PgDateTime.Kind.TIMESTAMP.ordinal(), k + 1};
  }

  /**
   * What replaces a typed literal: for bytea the whole literal, as {@code unhex('...')} (PostgreSQL reads
   * {@code '\x00ff'::bytea} as hex; DuckDB's blob cast reads \x00 and then letters); for a number of
   * type numeric without a precision the whole literal, as the number; for a date or timestamp the string, in a form DuckDB reads as PostgreSQL reads it ({@code '0044-03-15 BC'});
   * null when it stays as it is.
   */
  private static String literalSql(int type, Token literal) {
    try {
      if (type == BYTEA) {
        return ByteaText.sql(ByteaText.parse(literal.value()));
      }
      if (type == NUMERIC) {
        // a number literal keeps all its digits; DuckDB's bare numeric is DECIMAL(18,3), which loses them
        // (pgjdbc writes parameters so: '0.000000001'::numeric)
        return NUMBER.matcher(literal.value()).matches() ? dev.floe.types.SqlLiterals.decimal(literal.value()) : null;
      }
      String text = PgDateTime.duckdbText(literal.value(), PgDateTime.Kind.values()[type]).orElse(literal.value());
      return text.equals(literal.value()) && !literal.text().startsWith("E") && !literal.text().startsWith("e")
          ? null : Lexer.quoteString(text);
    } catch (IllegalArgumentException e) {
      throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, e.getMessage(), literal.position());
    } catch (FloeException e) {
      throw e.withPosition(literal.position());
    }
  }

  private static boolean isAsOf(List<Token> tokens, int k) {
    return k + 1 < tokens.size() && tokens.get(k).isKeyword("as") && tokens.get(k + 1).isKeyword("of");
  }

  /** Index after the time-travel value starting at {@code k}. */
  private static int valueEnd(List<Token> tokens, int k, String sql) {
    Token t = tokens.get(k);
    switch (t.type()) {
      case NUMBER, STRING, PARAM -> {
        return k + 1;
      }
      case OP -> {
        if (t.isOp("-") && tokens.get(k + 1).type() == Token.Type.NUMBER) {
          return k + 2;
        }
        if (t.isOp("(")) {
          int depth = 0;
          for (int j = k; j < tokens.size(); j++) {
            if (tokens.get(j).isOp("(")) {
              depth++;
            } else if (tokens.get(j).isOp(")") && --depth == 0) {
              return j + 1;
            }
          }
        }
      }
      case IDENT -> {
        // TIMESTAMP '...', DATE '...', TIMESTAMPTZ '...', TIMESTAMP WITH TIME ZONE '...'
        int j = k + 1;
        if (t.isKeyword("timestamp") && tokens.get(j).isKeyword("with")) {
          j += 3;
        }
        if ((t.isKeyword("timestamp") || t.isKeyword("timestamptz") || t.isKeyword("date"))
            && j < tokens.size() && tokens.get(j).type() == Token.Type.STRING) {
          return j + 1;
        }
        if (t.isKeyword("current_timestamp") || t.isKeyword("now")) {
          return t.isKeyword("now") && tokens.get(k + 1).isOp("(") ? k + 3 : k + 1;
        }
      }
      default -> { }
    }
    throw FloeException.syntax("time travel needs a literal or a parenthesized expression, not \""
        + (t.type() == Token.Type.EOF ? "end of input" : t.text()) + "\"", t.position());
  }
}
