package dev.floe.sql;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The PostgreSQL syntax that catalog queries of clients (psql, JDBC drivers, ORMs) use and DuckDB's
 * parser lacks or reads differently, rewritten before DuckDB parses the query:
 *
 * <ul>
 *   <li>calls of the functions in {@link SystemFunctions} (qualified with {@code pg_catalog.} or not)
 *       go to Floe's implementations; {@code current_user} and its kin without parentheses too;
 *   <li>{@code OPERATOR(pg_catalog.~)} becomes {@code ~};
 *   <li>casts to object-identifier types: {@code 'name'::regclass} looks the table up,
 *       {@code oid::regclass} names it, {@code ::regtype} formats a type; {@code ::name},
 *       {@code ::"char"} and friends become text, {@code ::pg_catalog.x} becomes {@code ::x};
 *   <li>{@code COLLATE pg_catalog.default} is dropped.
 * </ul>
 */
final class PgSyntax {
  private PgSyntax() {}

  private static final Set<String> TEXT_TYPES = Set.of("name", "char", "int2vector", "oidvector", "regproc",
      "regprocedure", "regoper", "regoperator", "regrole", "regconfig", "regdictionary", "sql_identifier",
      "character_data", "yes_or_no", "pg_node_tree", "aclitem", "xid", "cid", "tid");
  /** PostgreSQL functions DuckDB has under another name. */
  private static final java.util.Map<String, String> RENAMED = java.util.Map.ofEntries(
      java.util.Map.entry("json_build_object", "json_object"), java.util.Map.entry("jsonb_build_object", "json_object"),
      java.util.Map.entry("json_build_array", "json_array"), java.util.Map.entry("jsonb_build_array", "json_array"),
      java.util.Map.entry("json_agg", "json_group_array"), java.util.Map.entry("jsonb_agg", "json_group_array"),
      java.util.Map.entry("nextval", "floe_nextval"), java.util.Map.entry("currval", "floe_currval"),
      java.util.Map.entry("lastval", "floe_lastval"), java.util.Map.entry("setval", "floe_setval"),
      // chr(0) is an error in PostgreSQL (text holds no NUL), a NUL character in DuckDB
      java.util.Map.entry("chr", "floe_chr"),
      // PostgreSQL's errors where DuckDB returns NaN or infinity (sqrt(-1), ln(0), power(0, -1))
      java.util.Map.entry("sqrt", "floe_sqrt"), java.util.Map.entry("ln", "floe_ln"),
      java.util.Map.entry("log", "floe_log"), java.util.Map.entry("log10", "floe_log10"),
      java.util.Map.entry("power", "floe_power"), java.util.Map.entry("pow", "floe_pow"));
  /** PostgreSQL's name of a function call Floe renamed to one of its own (floe_nextval: nextval), or null. */
  static String renamedFrom(String duckName) {
    if (!duckName.startsWith("floe_")) {
      return null;
    }
    for (java.util.Map.Entry<String, String> e : RENAMED.entrySet()) {
      if (e.getValue().equals(duckName)) {
        return e.getKey();
      }
    }
    return null;
  }

  /** The catalogs' int2vector and oidvector columns, which Floe keeps as arrays. */
  private static final Set<String> VECTOR_COLUMNS = Set.of("indkey", "indoption", "indclass", "indcollation",
      "proargtypes", "tgattr");

  private static final Set<String> INTEGER_TYPES = Set.of("oid", "cardinal_number", "regtypearray");
  /**
   * Keywords before a name that is not a function call: a table ({@code INSERT INTO version (...)}) or
   * a time-travel clause ({@code t AS OF VERSION (1 + 1)}).
   */
  private static final Set<String> TABLE_CONTEXT = Set.of("into", "table", "update", "join", "from", "of", "for");

  /**
   * {@code pg_partition_ancestors(rel) WITH ORDINALITY} in FROM (psql's \\d asks it of a table's triggers):
   * a Floe table is no partition, so its one ancestor is itself, at depth 1; returns the index after the
   * rewritten tokens, or 0 when the call is not in that form.
   */
  private static int ancestorsAsRelation(List<Token> tokens, Token first, int nameIndex, TextEdits edits) {
    int depth = 0;
    int close = -1;
    for (int i = nameIndex + 1; i < tokens.size(); i++) {
      depth += tokens.get(i).isOp("(") ? 1 : tokens.get(i).isOp(")") ? -1 : 0;
      if (depth == 0) {
        close = i;
        break;
      }
    }
    if (close < 0 || close + 2 >= tokens.size() || !tokens.get(close + 1).isKeyword("with")
        || !tokens.get(close + 2).isKeyword("ordinality")) {
      return 0;
    }
    edits.replace(first.start(), tokens.get(nameIndex + 1).end(), "(SELECT "
        + SystemFunctions.qualified("pg_partition_ancestors") + "(");
    edits.replace(tokens.get(close).start(), tokens.get(close + 2).end(), ") AS relid, 1 AS depth)");
    return nameIndex + 2;
  }

  /**
   * Rewrites the construct starting at token {@code k}, if there is one.
   *
   * @return the index after the tokens consumed, or {@code k} when nothing was rewritten
   */
  static int rewrite(List<Token> tokens, int k, TextEdits edits) {
    Token t = tokens.get(k);
    if (t.isOp("::")) {
      return cast(tokens, k, edits);
    }
    if (t.isKeyword("operator") && k + 5 < tokens.size() && tokens.get(k + 1).isOp("(")
        && tokens.get(k + 2).isIdentifier() && tokens.get(k + 3).isOp(".") && tokens.get(k + 4).type() == Token.Type.OP
        && tokens.get(k + 5).isOp(")")) {
      edits.replace(t.start(), tokens.get(k + 5).end(), " " + tokens.get(k + 4).text() + " ");
      return k + 6;
    }
    if (t.isKeyword("collate") && k + 1 < tokens.size()) {
      Token next = tokens.get(k + 1);
      if (next.isKeyword("pg_catalog") && k + 3 < tokens.size() && tokens.get(k + 2).isOp(".")) {
        edits.replace(t.start(), tokens.get(k + 3).end(), "");
        return k + 4;
      }
      if (next.type() == Token.Type.QUOTED_IDENT && next.value().equals("default")) {
        edits.replace(t.start(), next.end(), "");
        return k + 2;
      }
      return k;
    }
    if (t.type() != Token.Type.IDENT) {
      return k;
    }
    Token before = k > 0 ? tokens.get(k - 1) : null;
    if (before != null && (before.isOp(".") || before.isOp("::"))) {
      return k; // a qualified name handled from its qualifier, or a type
    }
    // pg_catalog.f( / information_schema.f(
    int nameIndex = k;
    boolean qualified = false;
    if ((t.isKeyword("pg_catalog") || t.isKeyword("information_schema")) && k + 2 < tokens.size()
        && tokens.get(k + 1).isOp(".") && tokens.get(k + 2).type() == Token.Type.IDENT) {
      nameIndex = k + 2;
      qualified = true;
    }
    Token name = tokens.get(nameIndex);
    String fn = name.value();
    boolean call = nameIndex + 1 < tokens.size() && tokens.get(nameIndex + 1).isOp("(");
    if (!qualified && before != null && before.type() == Token.Type.IDENT && TABLE_CONTEXT.contains(before.value())) {
      return k;
    }
    if (call && fn.equals("pg_partition_ancestors")) {
      int after = ancestorsAsRelation(tokens, t, nameIndex, edits);
      if (after > 0) {
        return after;
      }
    }
    if (call && SystemFunctions.CALLED.contains(fn)) {
      edits.replace(t.start(), name.end(), SystemFunctions.qualified(fn));
      return nameIndex + 1;
    }
    if (call && RENAMED.containsKey(fn)) {
      edits.replace(t.start(), name.end(), RENAMED.get(fn));
      return nameIndex + 1;
    }
    if (call && qualified) {
      // pg_catalog.lower(...): DuckDB's own function (its pg_catalog schema has only a few, different ones)
      edits.replace(t.start(), name.start(), "");
      return nameIndex + 1;
    }
    if (!call && !qualified && (SystemFunctions.KEYWORDS.contains(fn) || fn.equals("current_schema"))) {
      String target = switch (fn) {
        case "current_catalog" -> "current_catalog";
        case "current_schema" -> "current_schema";
        default -> "current_user";
      };
      edits.replace(t.start(), t.end(), SystemFunctions.qualified(target) + "()");
      return k + 1;
    }
    return k;
  }

  /** {@code expr::type} at the {@code ::} token {@code k}. */
  private static int cast(List<Token> tokens, int k, TextEdits edits) {
    int typeStart = k + 1;
    if (typeStart >= tokens.size()) {
      return k;
    }
    int typeIndex = typeStart;
    if ((tokens.get(typeStart).isKeyword("pg_catalog") || tokens.get(typeStart).isKeyword("information_schema"))
        && typeStart + 2 < tokens.size() && tokens.get(typeStart + 1).isOp(".")) {
      typeIndex = typeStart + 2;
    }
    Token type = tokens.get(typeIndex);
    if (!type.isIdentifier()) {
      return k;
    }
    String name = type.value().toLowerCase(Locale.ROOT);
    Token end = type;
    int after = typeIndex + 1;
    boolean array = after + 1 < tokens.size() && tokens.get(after).isOp("[") && tokens.get(after + 1).isOp("]");
    switch (name) {
      case "regclass", "regtype", "regnamespace" -> {
        int operand = operandStart(tokens, k - 1);
        if (operand < 0 || array) {
          return k;
        }
        Token first = tokens.get(operand);
        String inner = "__OPERAND__";
        String call;
        if (name.equals("regclass")) {
          call = first.type() == Token.Type.STRING && operand == k - 1
              ? SystemFunctions.qualified("floe_regclass") + "(" + inner + ")"
              : SystemFunctions.qualified("floe_relname") + "(" + inner + ")";
        } else if (name.equals("regtype")) {
          call = SystemFunctions.qualified("format_type") + "(" + inner + ", NULL)";
        } else {
          call = SystemFunctions.qualified("floe_nspname") + "(" + inner + ")";
        }
        // wrap the operand: insert the call's head before it and its tail over "::type"
        int cut = call.indexOf(inner);
        edits.replace(first.start(), first.start(), call.substring(0, cut));
        edits.replace(tokens.get(k - 1).end(), end.end(), call.substring(cut + inner.length()));
        return typeIndex + 1;
      }
      default -> {
        Token column = tokens.get(k - 1);
        if ((name.equals("varchar") || name.equals("text")) && !array && column.type() == Token.Type.IDENT
            && VECTOR_COLUMNS.contains(column.value())) {
          // pg_index.indkey::varchar, as ORMs read it: int2vector's text is its numbers separated by spaces
          int operand = operandStart(tokens, k - 1);
          if (operand >= 0) {
            edits.replace(tokens.get(operand).start(), tokens.get(operand).start(), "array_to_string(");
            edits.replace(column.end(), end.end(), ", ' ')");
            return typeIndex + 1;
          }
        }
        String replacement = null;
        if (TEXT_TYPES.contains(name)) {
          replacement = "VARCHAR";
        } else if (INTEGER_TYPES.contains(name)) {
          replacement = "INTEGER";
        } else if (typeIndex != typeStart) {
          replacement = type.text(); // ::pg_catalog.text -> ::text
        }
        if (replacement == null) {
          return k;
        }
        edits.replace(tokens.get(typeStart).start(), end.end(), replacement);
        return typeIndex + 1;
      }
    }
  }

  /**
   * The first token of the operand that ends at token {@code last}: a literal, a (qualified) name, or a
   * parenthesized expression; -1 if it is something else.
   */
  private static int operandStart(List<Token> tokens, int last) {
    int start = primaryStart(tokens, last);
    // x::a::b: the operand of ::b is x::a
    while (start >= 2 && tokens.get(start - 1).isOp("::")) {
      start = primaryStart(tokens, start - 2);
    }
    return start;
  }

  private static int primaryStart(List<Token> tokens, int last) {
    if (last < 0) {
      return -1;
    }
    Token t = tokens.get(last);
    if (t.type() == Token.Type.STRING || t.type() == Token.Type.NUMBER || t.type() == Token.Type.PARAM) {
      return last;
    }
    if (t.isIdentifier()) {
      int i = last;
      while (i >= 2 && tokens.get(i - 1).isOp(".") && tokens.get(i - 2).isIdentifier()) {
        i -= 2;
      }
      return i;
    }
    if (t.isOp(")")) {
      int depth = 0;
      for (int i = last; i >= 0; i--) {
        if (tokens.get(i).isOp(")")) {
          depth++;
        } else if (tokens.get(i).isOp("(") && --depth == 0) {
          // a function call: include its name
          if (i > 0 && tokens.get(i - 1).isIdentifier()) {
            return primaryStart(tokens, i - 1);
          }
          return i;
        }
      }
    }
    return -1;
  }
}
