package dev.floe.sql;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.apache.iceberg.Schema;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;

/**
 * Binds a query to Floe tables: finds every table reference in DuckDB's own parse tree
 * ({@code json_serialize_sql}), resolves it to an Iceberg table at the right snapshot, collects the
 * simple predicates that may prune its files, and rewrites the SQL text so that each reference reads a
 * relation over exactly the files of that snapshot. CTE names, DuckDB's own catalogs and table functions
 * are left to DuckDB.
 *
 * <p>Predicates are pushed only into references whose rows a WHERE (or inner join condition) filters
 * directly: the preserved side of outer joins, never a nullable side, so pruning cannot change results.
 */
public final class QueryBinder {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** PostgreSQL's limit on a select list (a RowDescription counts columns in 16 bits). */
  public static final int MAX_TARGETS = 1664;

  /** Resolves table names to Floe tables. */
  public interface Resolver {
    /**
     * The Floe table {@code parts} names (optionally at a time-travel target), or empty when Floe has
     * no such table and DuckDB should resolve the name itself.
     */
    Optional<Relation> resolve(List<String> parts, Optional<TimeTravel> timeTravel, int position);

    /**
     * Whether the text comes from a network client: then its table functions and unresolved names are
     * checked by {@link ClientAccess}.
     */
    default boolean clientSql() {
      return false;
    }

    /** The zone a timestamptz literal without an offset is read in: the session's TimeZone, as DuckDB's. */
    default java.time.ZoneId timeZone() {
      return java.time.ZoneOffset.UTC;
    }
  }

  /** A Floe table bound for reading. */
  public interface Relation {
    /** The Iceberg schema predicates are converted against; empty if the relation takes no predicates. */
    Optional<Schema> schema();

    /** SQL for the relation's rows, reading only files that may match {@code filter}. */
    String sql(Expression filter);

    /** The full name, {@code [catalog, schema, table]}, so {@code schema.table.column} can be resolved. */
    List<String> qualifiedName();

    /** The relation's columns with their declared SQL types. */
    List<dev.floe.Column> columns();

    /**
     * Whether this is the table a row-level statement (UPDATE, DELETE, MERGE) changes: Floe's SQL names
     * it by an alias, the table's own name when the user gave none, so {@code schema.table.column} must
     * still reach it.
     */
    default boolean changeTarget() {
      return false;
    }
  }

  /**
   * A bound query.
   *
   * @param sql DuckDB SQL over Floe's relations
   * @param relations every Floe table the query reads
   * @param untypedLiterals per output column, whether every value is a string literal or NULL (which
   *     PostgreSQL lets any column type accept); empty when unknown
   * @param columnNames the output column names as PostgreSQL gives them (unaliased expressions are
   *     {@code count}, {@code ?column?}, ...); empty when DuckDB's names are already right or unknown
   * @param origins per output column, the table column it passes through unchanged (its declared type:
   *     {@code varchar(10)} keeps its length in CREATE TABLE AS); empty when unknown
   * @param resultCasts per output column, the DuckDB type its values are cast to so that the column has
   *     PostgreSQL's type ({@code sum(integer)} is bigint, {@code avg(integer)} numeric); empty when none
   */
  public record Bound(String sql, List<Relation> relations, List<Boolean> untypedLiterals,
      List<String> columnNames, List<Optional<Origin>> origins,
      List<Optional<String>> resultCasts, Function<Integer, Integer> positionMap) {
    /** Per output column, the declared type of the table column it passes through; empty when unknown. */
    public List<Optional<dev.floe.SqlType>> declaredTypes() {
      return origins.stream().map(o -> o.map(x -> x.column().type())).toList();
    }

    /** 1-based position in the user's statement of a 0-based offset in {@link #sql()}; 0 if unknown. */
    public int originalPosition(int offset) {
      return positionMap.apply(offset);
    }
  }

  private final String original;
  private final java.util.function.IntUnaryOperator positions;
  private final Resolver resolver;
  private QueryPrepass.Result pre;
  private String text;
  private int[] byteToChar;
  private final List<Ref> refs = new ArrayList<>();
  private final List<Select> selects = new ArrayList<>();
  private final List<JsonNode> longColumnRefs = new ArrayList<>();
  private JsonNode top;
  private Select topSelect;

  private QueryBinder(String original, java.util.function.IntUnaryOperator positions, Resolver resolver) {
    this.original = original;
    this.positions = positions;
    this.resolver = resolver;
  }

  /**
   * Binds {@code query}.
   *
   * @param baseOffset where {@code query} starts in the statement the user wrote (for error positions)
   * @param serializer DuckDB's {@code json_serialize_sql} over a text
   */
  public static Bound bind(String query, int baseOffset, Function<String, String> serializer, Resolver resolver) {
    return bind(query, offset -> baseOffset + offset + 1, serializer, resolver);
  }

  /**
   * Binds a query composed from pieces of the user's statement.
   *
   * @param positions maps a 0-based offset in {@code query} to a 1-based position in the user's statement
   *     (0 where it has none)
   */
  public static Bound bind(String query, java.util.function.IntUnaryOperator positions,
      Function<String, String> serializer, Resolver resolver) {
    return Predicates.inZone(resolver.timeZone(), () -> new QueryBinder(query, positions, resolver).run(serializer));
  }

  private static final class Ref {
    JsonNode node;
    int start;
    int end;
    List<String> parts;
    String bindingName;
    boolean aliased;
    List<String> columnAliases = List.of();
    Optional<TimeTravel> timeTravel = Optional.empty();
    boolean preserved;
    Relation relation;
    final List<Expression> filters = new ArrayList<>();
  }

  private static final class Select {
    final List<Ref> refs = new ArrayList<>();
    final List<JsonNode> predicates = new ArrayList<>();
  }

  private Bound run(Function<String, String> serializer) {
    try {
      pre = QueryPrepass.rewrite(original);
    } catch (FloeException e) {
      // its position is in this query's text: the user's statement may hold more before it
      throw e.position() <= 0 ? e : new FloeException(e.sqlState(), e.getMessage(), e.detail().orElse(null),
          e.hint().orElse(null), positions.applyAsInt(e.position() - 1), e.getCause());
    }
    text = pre.text();
    JsonNode tree;
    try {
      tree = JSON.readTree(serializer.apply(text));
    } catch (IOException e) {
      throw FloeException.internal("cannot read DuckDB's parse tree", e);
    }
    if (tree.path("error").asBoolean(false)) {
      throw parseError(tree, serializer);
    }
    JsonNode statements = tree.path("statements");
    if (statements.size() != 1) {
      throw FloeException.syntax("expected exactly one statement", positions.applyAsInt(0));
    }
    JsonNode top = statements.get(0).path("node");
    if (top.path("select_list").size() > MAX_TARGETS) {
      throw new FloeException(SqlState.TOO_MANY_COLUMNS, "target lists can have at most " + MAX_TARGETS + " entries");
    }
    List<Boolean> untyped = untypedLiterals(top);
    List<String> names = OutputNames.of(top);
    this.top = top;
    walk(top, Set.of());
    List<Optional<String>> casts = resultCasts();
    if (!casts.isEmpty() && names.isEmpty()) {
      names = OutputNames.all(top); // the casts need the outer select that carries the names
    }
    List<Relation> relations = new ArrayList<>();
    for (Ref ref : refs) {
      if (ref.relation != null) {
        relations.add(ref.relation);
      }
    }
    for (Select s : selects) {
      pushDown(s);
    }
    TextEdits edits = new TextEdits();
    List<List<String>> unaliased = new ArrayList<>();
    for (Ref ref : refs) {
      if (ref.relation == null) {
        continue;
      }
      Expression filter = Expressions.alwaysTrue();
      for (Expression e : ref.filters) {
        filter = Expressions.and(filter, e);
      }
      StringBuilder replacement = new StringBuilder("(").append(ref.relation.sql(filter)).append(") AS ")
          .append(Lexer.quoteIdentifier(ref.bindingName));
      if (!ref.columnAliases.isEmpty()) {
        replacement.append('(');
        for (int k = 0; k < ref.columnAliases.size(); k++) {
          if (k > 0) {
            replacement.append(", ");
          }
          replacement.append(Lexer.quoteIdentifier(ref.columnAliases.get(k)));
        }
        replacement.append(')');
      }
      edits.replace(ref.start, ref.end, replacement.toString());
      List<String> full = ref.relation.qualifiedName();
      if (!ref.aliased || ref.relation.changeTarget() && !full.isEmpty()
          && ref.bindingName.equalsIgnoreCase(full.get(full.size() - 1))) {
        unaliased.add(full);
      }
    }
    rewriteQualifiedColumns(edits, unaliased);
    String sql = edits.isEmpty() ? text : edits.apply(text);
    TextEdits ttEdits = pre.edits();
    return new Bound(sql, relations, untyped, names, origins(), names.isEmpty() ? List.of() : casts,
        offset -> {
      int inText = edits.isEmpty() ? offset : edits.toOriginal(offset);
      int inOriginal = ttEdits.isEmpty() ? inText : ttEdits.toOriginal(inText);
      return positions.applyAsInt(inOriginal);
    });
  }

  private static List<Boolean> untypedLiterals(JsonNode node) {
    if (!node.path("type").asText().equals("SELECT_NODE")) {
      return List.of();
    }
    JsonNode from = node.path("from_table");
    JsonNode select = node.path("select_list");
    List<Boolean> result = new ArrayList<>();
    if (from.path("type").asText().equals("EXPRESSION_LIST") && select.size() == 1
        && select.get(0).path("class").asText().equals("STAR")) {
      JsonNode rows = from.path("values");
      if (rows.isEmpty()) {
        return List.of();
      }
      for (int k = 0; k < rows.get(0).size(); k++) {
        boolean all = true;
        for (JsonNode row : rows) {
          all &= isUntyped(row.path(k));
        }
        result.add(all);
      }
      return result;
    }
    for (JsonNode item : select) {
      result.add(isUntyped(item));
    }
    return result;
  }

  private static boolean isUntyped(JsonNode expr) {
    String kind = expr.path("literal").path("kind").asText();
    return expr.path("class").asText().equals("CONSTANT") && (kind.equals("STRING") || kind.equals("NULL_LITERAL"));
  }

  /**
   * {@code schema.table.column} (or {@code catalog.schema.table.column}) keeps working after the table
   * became a subquery aliased {@code table}: such a qualifier names an unaliased Floe table when it is
   * a suffix of that table's full name.
   */
  private void rewriteQualifiedColumns(TextEdits edits, List<List<String>> unaliased) {
    for (JsonNode col : longColumnRefs) {
      JsonNode names = col.path("column_names");
      int n = names.size();
      List<String> qualifier = new ArrayList<>();
      for (int k = 0; k < n - 1; k++) {
        qualifier.add(names.get(k).asText());
      }
      for (List<String> full : unaliased) {
        if (qualifier.size() < 2 || qualifier.size() > full.size()) {
          continue;
        }
        List<String> suffix = full.subList(full.size() - qualifier.size(), full.size());
        boolean matches = true;
        for (int k = 0; k < suffix.size(); k++) {
          matches &= suffix.get(k).equalsIgnoreCase(qualifier.get(k));
        }
        if (!matches) {
          continue;
        }
        int start = charOffset(col.path("query_location"));
        int end = charOffset(col.path("query_location").asLong() + col.path("query_location_length").asLong());
        if (start >= 0 && end >= 0) {
          edits.replace(start, end, Lexer.quoteIdentifier(full.get(full.size() - 1)) + "."
              + Lexer.quoteIdentifier(names.get(n - 1).asText()));
        }
        break;
      }
    }
  }

  // ------------------------------------------------------------------ tree walk

  private void walk(JsonNode node, Set<String> ctes) {
    if (node == null || node.isNull() || node.isValueNode()) {
      return;
    }
    if (node.isArray()) {
      for (JsonNode child : node) {
        walk(child, ctes);
      }
      return;
    }
    Set<String> scope = enterCtes(node, ctes);
    String type = node.path("type").asText();
    if (type.equals("SELECT_NODE")) {
      visitSelect(node, scope);
      return;
    }
    if (type.equals("BASE_TABLE") && node.has("table_name")) {
      addRef(node, scope, false, null);
      return;
    }
    if (type.equals("TABLE_FUNCTION") && resolver.clientSql()) {
      int start = charOffset(node.path("query_location"));
      if (start < 0 || originalPosition(start) > 0) {
        ClientAccess.checkTableFunction(node, start < 0 ? 0 : originalPosition(start));
      }
    }
    if (type.equals("COLUMN_REF") && node.path("column_names").size() >= 3) {
      longColumnRefs.add(node);
    }
    Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> f = fields.next();
      if (!f.getKey().equals("cte_map")) {
        walk(f.getValue(), scope);
      }
    }
  }

  /** Walks the CTE bodies of a node and returns the names visible in its body. */
  private Set<String> enterCtes(JsonNode node, Set<String> outer) {
    JsonNode map = node.path("cte_map").path("map");
    if (!map.isArray() || map.isEmpty()) {
      return outer;
    }
    Set<String> scope = new HashSet<>(outer);
    for (JsonNode entry : map) {
      String name = entry.path("key").asText().toLowerCase(Locale.ROOT);
      JsonNode body = entry.path("value").path("query_node");
      Set<String> bodyScope = scope;
      if (body.path("type").asText().equals("RECURSIVE_CTE_NODE")) {
        bodyScope = new HashSet<>(scope);
        bodyScope.add(name);
      }
      walk(body, bodyScope);
      scope.add(name);
    }
    return scope;
  }

  private void visitSelect(JsonNode node, Set<String> scope) {
    Select select = new Select();
    collectFrom(node.path("from_table"), scope, true, select);
    select.predicates.addAll(Predicates.conjuncts(node.get("where_clause")));
    Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> f = fields.next();
      if (!f.getKey().equals("from_table") && !f.getKey().equals("cte_map")) {
        walk(f.getValue(), scope);
      }
    }
    selects.add(select);
    if (node == top) {
      topSelect = select;
    }
  }

  /**
   * Casts that give aggregates of integer columns PostgreSQL's result types, where DuckDB's differ:
   * {@code sum(smallint | integer)} is bigint (DuckDB: int128), {@code avg} of any integer is numeric
   * (DuckDB: double). Only for a plain column argument, whose type is known.
   */
  private List<Optional<String>> resultCasts() {
    if (topSelect == null) {
      return List.of();
    }
    List<Optional<String>> casts = new ArrayList<>();
    boolean any = false;
    for (JsonNode item : top.path("select_list")) {
      String cls = item.path("class").asText();
      if (cls.equals("STAR") || cls.equals("COLUMNS")) {
        return List.of();
      }
      Optional<String> cast = Optional.empty();
      String fn = item.path("function_name").asText().toLowerCase(Locale.ROOT);
      // DuckDB 2 lists "arguments" [{name, expression}]; earlier versions "children"
      JsonNode args = item.has("arguments") ? item.path("arguments") : item.path("children");
      JsonNode arg = args.size() == 1 ? (args.get(0).has("expression") ? args.get(0).path("expression") : args.get(0))
          : null;
      if (cls.equals("FUNCTION") && (fn.equals("sum") || fn.equals("avg")) && arg != null
          && !item.path("distinct").asBoolean() && arg.path("class").asText().equals("COLUMN_REF")) {
        Ref owner = owner(topSelect, arg);
        if (owner != null) {
          JsonNode names = arg.path("column_names");
          String column = names.get(names.size() - 1).asText();
          for (dev.floe.Column c : owner.relation.columns()) {
            if (!c.name().equalsIgnoreCase(column)) {
              continue;
            }
            dev.floe.SqlType.Kind kind = c.type().kind();
            boolean small = kind == dev.floe.SqlType.Kind.SMALLINT || kind == dev.floe.SqlType.Kind.INTEGER;
            if (fn.equals("sum") && small) {
              cast = Optional.of("BIGINT");
            } else if (fn.equals("avg") && (small || kind == dev.floe.SqlType.Kind.BIGINT)) {
              cast = Optional.of("DECIMAL(38,16)"); // PostgreSQL prints avg(int) with 16 decimals
            }
          }
        }
      }
      any |= cast.isPresent();
      casts.add(cast);
    }
    return any ? casts : List.of();
  }

  /** The table column an output column passes through: the table's qualified name, and the column. */
  public record Origin(List<String> table, dev.floe.Column column) {}

  /** Origins of output columns that are plain column references (or a lone {@code *}). */
  private List<Optional<Origin>> origins() {
    if (topSelect == null) {
      return List.of();
    }
    JsonNode items = top.path("select_list");
    if (items.size() == 1 && items.get(0).path("class").asText().equals("STAR")
        && items.get(0).path("relation_name").asText().isEmpty() && topSelect.refs.size() == 1
        && topSelect.refs.get(0).relation != null && topSelect.refs.get(0).columnAliases.isEmpty()
        && top.path("from_table").path("type").asText().equals("BASE_TABLE")) {
      Relation r = topSelect.refs.get(0).relation;
      if (r.schema().isEmpty()) {
        return List.of(); // a catalog or metadata relation: no table column to name
      }
      return r.columns().stream().map(c -> Optional.of(new Origin(r.qualifiedName(), c))).toList();
    }
    List<Optional<Origin>> origins = new ArrayList<>();
    for (JsonNode item : items) {
      String cls = item.path("class").asText();
      if (cls.equals("STAR") || cls.equals("COLUMNS")) {
        return List.of();
      }
      Optional<Origin> origin = Optional.empty();
      if (cls.equals("COLUMN_REF")) {
        Ref owner = owner(topSelect, item);
        if (owner != null && owner.relation.schema().isPresent()) {
          JsonNode names = item.path("column_names");
          String column = names.get(names.size() - 1).asText();
          for (dev.floe.Column c : owner.relation.columns()) {
            if (c.name().equalsIgnoreCase(column)) {
              origin = Optional.of(new Origin(owner.relation.qualifiedName(), c));
            }
          }
        }
      }
      origins.add(origin);
    }
    return origins;
  }

  private void collectFrom(JsonNode ref, Set<String> scope, boolean preserved, Select select) {
    if (ref == null || ref.isNull()) {
      return;
    }
    switch (ref.path("type").asText()) {
      case "BASE_TABLE" -> addRef(ref, scope, preserved, select);
      case "JOIN" -> {
        String join = ref.path("join_type").asText();
        String kind = ref.path("ref_type").asText();
        boolean simple = kind.equals("REGULAR") || kind.equals("CROSS") || kind.equals("NATURAL");
        boolean left = simple && (join.equals("INNER") || join.equals("LEFT") || join.equals("SEMI")
            || join.equals("ANTI"));
        boolean right = simple && (join.equals("INNER") || join.equals("RIGHT"));
        collectFrom(ref.path("left"), scope, preserved && left, select);
        collectFrom(ref.path("right"), scope, preserved && right, select);
        walk(ref.path("condition"), scope);
        if (preserved && simple && join.equals("INNER")) {
          select.predicates.addAll(Predicates.conjuncts(ref.get("condition")));
        }
      }
      default -> walk(ref, scope);
    }
  }

  private void addRef(JsonNode node, Set<String> scope, boolean preserved, Select select) {
    Ref ref = new Ref();
    ref.node = node;
    ref.start = charOffset(node.path("query_location"));
    ref.end = charOffset(node.path("query_location").asLong() + node.path("query_location_length").asLong());
    if (ref.start < 0 || ref.end < 0) {
      if (resolver.clientSql()) {
        throw ClientAccess.undefinedRelation(List.of(node.path("table_name").asText()), 0);
      }
      return;
    }
    List<String> parts = nameParts(ref.start);
    String table = node.path("table_name").asText();
    if (parts.isEmpty()) {
      if (resolver.clientSql() && originalPosition(ref.start) > 0) {
        throw ClientAccess.undefinedRelation(List.of(table), originalPosition(ref.start));
      }
      return; // a file DuckDB reads itself
    }
    if (parts.size() == 1 && node.path("schema_name").asText().isEmpty()
        && node.path("catalog_name").asText().isEmpty() && scope.contains(table.toLowerCase(Locale.ROOT))) {
      return; // a CTE
    }
    if (table.startsWith(QueryPrepass.MARKER_PREFIX)) {
      int index = Integer.parseInt(table.substring(QueryPrepass.MARKER_PREFIX.length()));
      ref.timeTravel = Optional.of(pre.clauses().get(index));
      parts.set(parts.size() - 1, pre.tableNames().get(index));
    }
    JsonNode at = node.path("at_clause");
    if (at.isObject()) {
      ref.timeTravel = Optional.of(atClause(at, ref.start));
    }
    if (!node.path("sample").isNull() && node.has("sample")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "TABLESAMPLE on Floe tables is not supported yet", originalPosition(ref.start));
    }
    ref.parts = parts;
    String alias = node.path("alias").asText();
    ref.aliased = !alias.isEmpty();
    ref.bindingName = ref.aliased ? alias : parts.get(parts.size() - 1);
    List<String> columnAliases = new ArrayList<>();
    for (JsonNode c : node.path("column_name_alias")) {
      columnAliases.add(c.asText());
    }
    ref.columnAliases = columnAliases;
    ref.preserved = preserved;
    try {
      ref.relation = resolver.resolve(parts, ref.timeTravel, originalPosition(ref.start)).orElse(null);
    } catch (FloeException e) {
      throw e.withPosition(originalPosition(ref.start));
    }
    if (ref.relation == null && resolver.clientSql() && originalPosition(ref.start) > 0) {
      throw ClientAccess.undefinedRelation(parts, originalPosition(ref.start));
    }
    if (ref.relation == null && ref.timeTravel.isPresent()) {
      throw FloeException.undefinedTable(String.join(".", parts), originalPosition(ref.start));
    }
    refs.add(ref);
    if (select != null) {
      select.refs.add(ref);
    }
  }

  private TimeTravel atClause(JsonNode at, int start) {
    String unit = at.path("unit").asText().toUpperCase(Locale.ROOT);
    JsonNode expr = at.path("expr");
    String value;
    if (expr.path("class").asText().equals("CONSTANT")) {
      String kind = expr.path("literal").path("kind").asText();
      String t = expr.path("literal").path("text").asText();
      value = kind.equals("STRING") ? Lexer.quoteString(t) : t;
    } else {
      int s = charOffset(expr.path("query_location"));
      int e = charOffset(expr.path("query_location").asLong() + expr.path("query_location_length").asLong());
      if (s < 0 || e < 0) {
        throw FloeException.syntax("AT (...) needs a literal value", originalPosition(start));
      }
      value = "(" + text.substring(s, e) + ")";
    }
    TimeTravel.Kind kind = switch (unit) {
      case "VERSION" -> TimeTravel.Kind.VERSION;
      case "TIMESTAMP" -> TimeTravel.Kind.TIMESTAMP;
      default -> throw FloeException.syntax("AT (" + unit + " => ...) is not a time-travel unit; use VERSION or "
          + "TIMESTAMP", originalPosition(start));
    };
    return new TimeTravel(kind, value, originalPosition(start));
  }

  /** The qualified name at the start of a table reference, folded as PostgreSQL folds identifiers. */
  private List<String> nameParts(int start) {
    List<Token> tokens = Lexer.tokenize(text.substring(start));
    List<String> parts = new ArrayList<>();
    int k = 0;
    while (k < tokens.size() && tokens.get(k).isIdentifier()) {
      parts.add(tokens.get(k).value());
      if (k + 1 < tokens.size() && tokens.get(k + 1).isOp(".")) {
        k += 2;
      } else {
        break;
      }
    }
    return parts; // empty: a string, which DuckDB reads as a file name (FROM 'data.parquet')
  }

  // ------------------------------------------------------------------ predicate pushdown

  private void pushDown(Select select) {
    if (select.predicates.isEmpty()) {
      return;
    }
    for (JsonNode conjunct : select.predicates) {
      Ref[] target = new Ref[1];
      boolean[] foreign = new boolean[1];
      Predicates.Columns columns = columnRef -> {
        Ref owner = owner(select, columnRef);
        if (owner == null) {
          foreign[0] = true;
          return null;
        }
        if (target[0] != null && target[0] != owner) {
          foreign[0] = true;
          return null;
        }
        target[0] = owner;
        JsonNode names = columnRef.path("column_names");
        return field(owner, names.get(names.size() - 1).asText());
      };
      Expression e = Predicates.convert(conjunct, columns);
      if (e != null && !foreign[0] && target[0] != null && target[0].preserved) {
        target[0].filters.add(e);
      }
    }
  }

  /** The Floe reference of {@code select} a column reference belongs to, or null if unknown or ambiguous. */
  private Ref owner(Select select, JsonNode columnRef) {
    JsonNode names = columnRef.path("column_names");
    String column = names.get(names.size() - 1).asText();
    if (names.size() == 1) {
      Ref found = null;
      for (Ref r : select.refs) {
        if (r.relation != null && r.relation.schema().isPresent() && field(r, column) != null) {
          if (found != null) {
            return null;
          }
          found = r;
        }
      }
      return found;
    }
    List<String> qualifier = new ArrayList<>();
    for (int k = 0; k < names.size() - 1; k++) {
      qualifier.add(names.get(k).asText().toLowerCase(Locale.ROOT));
    }
    Ref found = null;
    for (Ref r : select.refs) {
      boolean matches = qualifier.size() == 1
          ? r.bindingName.equalsIgnoreCase(qualifier.get(0))
          : !r.aliased && String.join(".", r.parts).equalsIgnoreCase(String.join(".", qualifier));
      if (matches) {
        if (found != null) {
          return null;
        }
        found = r;
      }
    }
    return found != null && found.relation != null && found.relation.schema().isPresent() ? found : null;
  }

  private static Types.NestedField field(Ref ref, String column) {
    Schema schema = ref.relation.schema().orElse(null);
    if (schema == null || !ref.columnAliases.isEmpty()) {
      return null;
    }
    Types.NestedField f = schema.findField(column);
    return f != null ? f : schema.caseInsensitiveFindField(column);
  }

  // ------------------------------------------------------------------ offsets and errors

  /** Char offset in {@link #text} of a UTF-8 byte offset DuckDB reports, or -1 if absent. */
  private int charOffset(JsonNode location) {
    if (location.isMissingNode() || location.isNull() || location.isBigInteger()) {
      return -1;
    }
    return charOffset(location.asLong());
  }

  private int charOffset(long byteOffset) {
    if (byteOffset < 0 || byteOffset > Integer.MAX_VALUE) {
      return -1;
    }
    if (byteToChar == null) {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      if (bytes.length == text.length()) {
        byteToChar = new int[0];
      } else {
        byteToChar = new int[bytes.length + 1];
        int c = 0;
        int b = 0;
        while (c < text.length()) {
          int cp = text.codePointAt(c);
          int width = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
          for (int k = 0; k < width; k++) {
            byteToChar[b + k] = c;
          }
          b += width;
          c += Character.charCount(cp);
        }
        byteToChar[bytes.length] = text.length();
      }
    }
    if (byteToChar.length == 0) {
      return byteOffset <= text.length() ? (int) byteOffset : -1;
    }
    return byteOffset < byteToChar.length ? byteToChar[(int) byteOffset] : -1;
  }

  private int originalPosition(int charOffsetInText) {
    int o = pre.edits().isEmpty() ? charOffsetInText : pre.edits().toOriginal(charOffsetInText);
    return positions.applyAsInt(o);
  }

  private FloeException parseError(JsonNode tree, Function<String, String> serializer) {
    String message = tree.path("error_message").asText("syntax error");
    String type = tree.path("error_type").asText();
    int position = 0;
    if (tree.has("position") && tree.path("position").asText().matches("\\d+")) {
      int c = charOffset(Long.parseLong(tree.path("position").asText()));
      if (c >= 0) {
        position = originalPosition(c);
        if (message.startsWith("syntax error at or near ") && endedTooSoon(c, serializer)) {
          message = "syntax error at end of input";
          position = originalPosition(text.stripTrailing().length());
        } else if (message.startsWith("syntax error at or near ")) {
          Token alias = starAlias(c);
          if (alias != null) {
            message = "syntax error at or near \"" + alias.text() + "\"";
            position = originalPosition(alias.start());
          }
        }
      }
    }
    FloeException depth = DepthLimit.error(message, position, null);
    if (depth != null) {
      return depth;
    }
    if (type.equalsIgnoreCase("parser")) {
      return FloeException.syntax(message, position);
    }
    return new FloeException(SqlState.FEATURE_NOT_SUPPORTED, message, position);
  }

  /** DuckDB's words that may follow a {@code *} in a select list; PostgreSQL's grammar allows none. */
  private static final Set<String> STAR_MODIFIERS = Set.of("exclude", "replace", "rename", "like", "similar",
      "ilike", "not", "glob", "from");

  /**
   * For a syntax error at offset {@code c} right after {@code * word} ({@code SELECT * FORM trips}), the
   * word: DuckDB reads it as an alias of the star and fails on the next token, where PostgreSQL, whose
   * grammar has no alias after a star, fails on the word itself.
   */
  private Token starAlias(int c) {
    List<Token> tokens;
    try {
      tokens = Lexer.tokenize(text);
    } catch (FloeException e) {
      return null;
    }
    for (int i = 2; i < tokens.size(); i++) {
      Token t = tokens.get(i);
      if (t.start() == c) {
        Token word = tokens.get(i - 1);
        // a bare star: t.* is an expression, which may take an alias in PostgreSQL too
        boolean star = tokens.get(i - 2).isOp("*") && (i < 3 || !tokens.get(i - 3).isOp("."));
        return star && word.type() == Token.Type.IDENT && !STAR_MODIFIERS.contains(word.value()) ? word : null;
      }
    }
    return null;
  }

  /**
   * Whether a syntax error DuckDB reports at the text's last token ({@code c}) is one of input that ended
   * too soon ({@code SELECT 1 +}), which PostgreSQL reports {@code at end of input}: DuckDB names the
   * last token either way. With a token appended, such a statement fails later, past the last token;
   * one whose last token is the mistake still fails there.
   */
  private boolean endedTooSoon(int c, Function<String, String> serializer) {
    List<Token> tokens;
    try {
      tokens = Lexer.tokenize(text);
    } catch (FloeException e) {
      return false;
    }
    Token last = null;
    for (Token t : tokens) {
      if (t.type() != Token.Type.EOF && !t.isOp(";")) {
        last = t;
      }
    }
    if (last == null || c < last.start() || c >= last.end()) {
      return false;
    }
    try {
      JsonNode probe = JSON.readTree(serializer.apply(text.substring(0, last.end()) + " )"));
      String at = probe.path("position").asText("");
      if (!probe.path("error").asBoolean(false) || !at.matches("\\d+")) {
        return true;
      }
      int moved = charOffset(Long.parseLong(at));
      return moved < 0 || moved >= last.end();
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }
}
