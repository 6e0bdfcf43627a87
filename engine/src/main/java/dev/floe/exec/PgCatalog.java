package dev.floe.exec;

import dev.floe.FloeProperties;
import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.PgType;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.zip.CRC32;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * PostgreSQL's system catalogs ({@code pg_catalog}, {@code information_schema}) describing Floe's
 * schemas and tables, so that tools which learn a database by querying them (psql's {@code \d}, JDBC
 * {@code DatabaseMetaData}, SQLAlchemy's Inspector, BI tools) see Floe's tables with PostgreSQL's type
 * OIDs and modifiers, NOT NULL columns and primary keys.
 *
 * <p>The catalogs are DuckDB tables in an attached in-memory database ({@value #DB}), rebuilt when the
 * warehouse's catalog changed (any commit or DDL, by any process) and a query reads them. Object
 * identifiers are stable: derived from names, so a client may cache them across sessions. The functions
 * clients call on them ({@code format_type}, {@code pg_get_constraintdef}, {@code version()}, ...) are
 * macros in the same database, which {@code dev.floe.sql.QueryPrepass} routes calls to.
 */
final class PgCatalog {
  /** The attached database holding the catalogs. */
  static final String DB = dev.floe.sql.SystemFunctions.DB;
  static final int PG_CATALOG_OID = 11;
  static final int PUBLIC_OID = 2200;
  static final int INFORMATION_SCHEMA_OID = 13_000;
  static final int DATABASE_OID = 16_384;
  static final int OWNER_OID = 10;
  static final String OWNER = "floe";
  private static final int FIRST_USER_OID = 16_385;

  /** Relations of pg_catalog Floe provides (others are DuckDB's own, about DuckDB's objects). */
  static final Set<String> PG_CATALOG = Set.of("pg_namespace", "pg_class", "pg_attribute", "pg_type", "pg_index",
      "pg_constraint", "pg_attrdef", "pg_description", "pg_database", "pg_roles", "pg_user", "pg_am",
      "pg_tablespace", "pg_inherits", "pg_tables", "pg_views", "pg_matviews", "pg_indexes", "pg_proc", "pg_enum",
      "pg_range", "pg_extension", "pg_trigger", "pg_rewrite", "pg_policy", "pg_sequence", "pg_depend",
      "pg_collation", "pg_foreign_table", "pg_partitioned_table", "pg_statistic_ext", "pg_publication",
      "pg_publication_rel", "pg_publication_namespace", "pg_shdescription", "pg_settings", "pg_auth_members");
  static final Set<String> INFORMATION_SCHEMA = Set.of("schemata", "tables", "columns", "key_column_usage",
      "table_constraints", "views", "routines", "referential_constraints", "constraint_column_usage",
      "check_constraints", "sequences", "triggers");

  private final Engine engine;
  private final DuckDBConnection duck;
  private Map<String, String> fingerprint;
  private final Map<String, TableFacts> factsByLocation = new HashMap<>();

  /** What the catalogs say about one table (cached by its metadata file, which never changes). */
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PgCatalog.class);

  private record TableFacts(List<Column> columns, List<String> keys, String comment, Map<Integer, String> docs,
      long rows, Map<Integer, String> defaults, List<Indexes.Index> indexes, List<Constraints.Check> checks,
      List<Constraints.ForeignKey> foreignKeys, long bytes) {}

  /** A foreign key's pg_constraint row, written once every table has its oid. */
  private record PendingKey(int oid, int nsOid, int relOid, String table, List<String> columns,
      Constraints.ForeignKey key) {}

  PgCatalog(Engine engine, DuckDBConnection duck) {
    this.engine = engine;
    this.duck = duck;
    try (Statement st = duck.createStatement()) {
      st.execute("DETACH DATABASE IF EXISTS " + DB); // a failed earlier attempt
      st.execute("ATTACH ':memory:' AS " + DB);
      st.execute("CREATE SCHEMA " + DB + ".base");
      // every DuckDB database has its own pg_catalog and information_schema: Floe's live beside them
      st.execute("CREATE SCHEMA " + DB + ".pgcat");
      st.execute("CREATE SCHEMA " + DB + ".infoschema");
      for (String ddl : PgCatalogSql.TABLES) {
        st.execute(ddl.replace("$DB", DB));
      }
      for (String ddl : PgCatalogSql.VIEWS) {
        st.execute(ddl.replace("$DB", DB));
      }
      for (String ddl : PgCatalogSql.MACROS) {
        st.execute(ddl.replace("$DB", DB));
      }
      loadStatic();
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot create the PostgreSQL catalogs: " + e.getMessage(), e);
    }
  }

  /**
   * SQL for a system relation a query names ({@code pg_catalog.pg_class}, {@code pg_class},
   * {@code information_schema.tables}), or empty if the name is not one. Brings the catalogs up to date
   * first.
   */
  Optional<String> relation(List<String> parts) {
    Optional<String> name = systemName(parts);
    if (name.isEmpty()) {
      return Optional.empty();
    }
    refresh();
    return Optional.of("SELECT * FROM " + DB + "." + name.get().replace("pg_catalog.", "pgcat.")
        .replace("information_schema.", "infoschema."));
  }

  /**
   * {@code schema.relation} for a name that designates a system relation, without touching the catalogs:
   * {@code pg_catalog.pg_class}, {@code floe.pg_catalog.pg_class}, {@code pg_class} (pg_catalog is
   * searched before any schema, as in PostgreSQL), {@code information_schema.tables}.
   */
  static Optional<String> systemName(List<String> parts) {
    if (parts.isEmpty() || parts.size() > 3) {
      return Optional.empty();
    }
    String last = parts.get(parts.size() - 1).toLowerCase(Locale.ROOT);
    if (parts.size() == 1) {
      return PG_CATALOG.contains(last) || ActivityViews.NAMES.contains(last) ? Optional.of("pg_catalog." + last)
          : Optional.empty();
    }
    String schema = parts.get(parts.size() - 2).toLowerCase(Locale.ROOT);
    if (parts.size() == 3 && !parts.get(0).equalsIgnoreCase("floe")) {
      return Optional.empty();
    }
    if (schema.equals("pg_catalog") && (PG_CATALOG.contains(last) || ActivityViews.NAMES.contains(last))
        || schema.equals("information_schema") && INFORMATION_SCHEMA.contains(last)) {
      return Optional.of(schema + "." + last);
    }
    return Optional.empty();
  }

  /** Rebuilds the catalogs if the warehouse's tables changed since they were built. */
  synchronized void refresh() {
    Map<TableIdentifier, String> now = engine.tables().catalog().tableLocations();
    List<Namespace> namespaces = engine.tables().catalog().listNamespaces(Namespace.empty());
    Map<String, String> key = new LinkedHashMap<>();
    now.forEach((id, location) -> key.put("t:" + id, location));
    for (Namespace ns : namespaces) {
      key.put("n:" + ns, "");
    }
    List<String> sequences = engine.tables().catalog().sequenceNames();
    for (String sequence : sequences) {
      key.put("s:" + sequence, "");
    }
    Map<TableIdentifier, String> views = engine.tables().catalog().viewLocations();
    views.forEach((id, location) -> key.put("v:" + id, location));
    List<String> roles = engine.roles();
    roles.forEach(r -> key.put("r:" + r, ""));
    if (key.equals(fingerprint)) {
      return;
    }
    try {
      rebuild(namespaces, now, sequences, views, roles);
      fingerprint = key;
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot build the PostgreSQL catalogs: " + e.getMessage(), e);
    }
  }

  /** A table's pg_class oid and its columns' attribute numbers by field id, as of the last rebuild. */
  private record TableOids(int oid, Map<Integer, Integer> attnums) {}

  /** By {@code schema.table}, as of the last rebuild. */
  private volatile Map<String, TableOids> tableOids = Map.of();

  /**
   * Where RowDescription says a result column comes from: its table's oid and its attribute number, as
   * {@code pg_class} and {@code pg_attribute} show them. Empty if the table is not a Floe table the
   * catalogs know (they are brought up to date once for a table they do not list yet).
   */
  Optional<dev.floe.ColumnOrigin> origin(dev.floe.sql.QueryBinder.Origin origin) {
    List<String> name = origin.table();
    if (name.size() < 2 || name.get(name.size() - 2).equals("pg_catalog")
        || name.get(name.size() - 2).equals("information_schema")) {
      return Optional.empty(); // the emulated catalogs are no tables of the warehouse
    }
    String key = name.get(name.size() - 2) + "." + name.get(name.size() - 1);
    TableOids t = tableOids.get(key);
    if (t == null) {
      refresh();
      t = tableOids.get(key);
    }
    if (t == null) {
      return Optional.empty();
    }
    Integer attnum = t.attnums().get(origin.column().fieldId());
    return attnum == null ? Optional.empty() : Optional.of(new dev.floe.ColumnOrigin(t.oid(), attnum));
  }

  private void rebuild(List<Namespace> namespaces, Map<TableIdentifier, String> tables, List<String> sequences,
      Map<TableIdentifier, String> views, List<String> roles) throws SQLException {
    Map<String, TableOids> builtOids = new HashMap<>();
    Oids oids = new Oids();
    Map<String, Integer> nsOids = new LinkedHashMap<>();
    for (Namespace ns : namespaces) {
      String name = ns.toString();
      nsOids.put(name, name.equals("public") ? PUBLIC_OID : oids.next("n:" + name));
    }
    Map<String, FactsOf> live = new HashMap<>();
    for (Map.Entry<TableIdentifier, String> e : tables.entrySet()) {
      TableFacts facts = factsByLocation.get(e.getValue());
      if (facts == null) {
        try {
          Optional<Table> t = engine.tables().live(e.getKey());
          if (t.isEmpty()) {
            continue; // dropped meanwhile
          }
          facts = facts(t.get());
          factsByLocation.put(e.getValue(), facts);
        } catch (RuntimeException unreadable) {
          // one table's damaged metadata hides none of the others: it is listed, without columns, its
          // description saying why (\dt+, obj_description); not kept, so it is read again once repaired
          LOG.warn("table {} is listed without columns: its metadata cannot be read: {}", e.getKey(),
              unreadable.getMessage());
          facts = new TableFacts(List.of(), List.of(), "cannot be read: " + unreadable.getMessage(), Map.of(), 0,
              Map.of(), List.of(), List.of(), List.of(), 0);
        }
      }
      live.put(e.getValue(), new FactsOf(e.getKey(), facts));
    }
    factsByLocation.keySet().retainAll(live.keySet());

    try (Statement st = duck.createStatement()) {
      st.execute("BEGIN TRANSACTION");
      try {
        for (String t : List.of("namespace", "class", "attribute", "index", "constraint", "description", "attrdef",
            "viewdef", "role")) {
          st.execute("DELETE FROM " + DB + ".base.\"" + t + "\" WHERE oid_kind = 'user'");
        }
        try (DuckDBAppender ns = appender("namespace")) {
          for (Map.Entry<String, Integer> e : nsOids.entrySet()) {
            if (e.getValue() == PUBLIC_OID) {
              continue; // a static row
            }
            ns.beginRow().append(e.getValue()).append(e.getKey()).append(OWNER_OID).append("user").endRow();
          }
        }
        try (DuckDBAppender cls = appender("class");
            DuckDBAppender att = appender("attribute");
            DuckDBAppender idx = appender("index");
            DuckDBAppender con = appender("constraint");
            DuckDBAppender desc = appender("description");
            DuckDBAppender def = appender("attrdef");
            DuckDBAppender viewdef = appender("viewdef");
            DuckDBAppender role = appender("role")) {
          for (String name : roles) {
            role.beginRow().append(oids.next("r:" + name)).append(name).append("user").endRow();
          }
          for (TableIdentifier id : views.keySet()) {
            Integer nsOid = nsOids.get(id.namespace().toString());
            Optional<Views.View> view;
            try {
              view = Views.find(engine.tables(), id);
            } catch (RuntimeException unreadable) {
              LOG.warn("view {} is not listed: its metadata cannot be read: {}", id, unreadable.getMessage());
              continue;
            }
            if (nsOid == null || view.isEmpty()) {
              continue;
            }
            int viewOid = oids.next("v:" + id.namespace() + "." + id.name());
            List<Types.NestedField> fields = view.get().schema().columns();
            cls.beginRow().append(viewOid).append(id.name()).append(nsOid).append("v").append(fields.size())
                .append(false).append(0.0).append("user").append(0L).endRow();
            int attnum = 0;
            for (Types.NestedField field : fields) {
              PgType t = PgType.of(dev.floe.types.TypeMapping.fromIceberg(field.type(), Optional.empty()));
              att.beginRow().append(viewOid).append(field.name()).append(t.oid()).append(t.length()).append(++attnum)
                  .append(t.typmod()).append(false).append(t.isArray() ? 1 : 0).append("user").endRow();
            }
            viewdef.beginRow().append(viewOid).append(" " + view.get().sql() + ";").append("user").endRow();
          }
          for (String sequence : sequences) {
            int dot = sequence.lastIndexOf('.');
            Integer nsOid = dot < 0 ? null : nsOids.get(sequence.substring(0, dot));
            if (nsOid != null) {
              cls.beginRow().append(oids.next("s:" + sequence)).append(sequence.substring(dot + 1)).append(nsOid)
                  .append("S").append(0).append(false).append(0.0).append("user").append(0L).endRow();
            }
          }
          List<PendingKey> pending = new ArrayList<>();
          Map<String, TableFacts> byName = new HashMap<>();
          for (FactsOf f : live.values()) {
            byName.put(f.id().namespace() + "." + f.id().name(), f.facts());
          }
          for (FactsOf f : live.values()) {
            String schema = f.id().namespace().toString();
            Integer nsOid = nsOids.get(schema);
            if (nsOid == null) {
              continue;
            }
            String table = f.id().name();
            int relOid = oids.next("t:" + schema + "." + table);
            TableFacts facts = f.facts();
            boolean hasKey = !facts.keys().isEmpty();
            cls.beginRow().append(relOid).append(table).append(nsOid).append("r")
                .append(facts.columns().size()).append(hasKey).append((double) facts.rows()).append("user")
                .append(facts.bytes()).endRow();
            int attnum = 0;
            List<Integer> keyNums = new ArrayList<>();
            Map<Integer, Integer> attnums = new HashMap<>();
            builtOids.put(schema + "." + table, new TableOids(relOid, attnums));
            for (Column c : facts.columns()) {
              attnum++;
              attnums.put(c.fieldId(), attnum);
              PgType t = PgType.of(c.type());
              att.beginRow().append(relOid).append(c.name()).append(t.oid()).append(t.length()).append(attnum)
                  .append(t.typmod()).append(!c.nullable()).append(t.isArray() ? 1 : 0).append("user").endRow();
              if (facts.keys().contains(c.name())) {
                keyNums.add(attnum);
              }
              String defaultText = facts.defaults().get(c.fieldId());
              if (defaultText != null) {
                def.beginRow().append(oids.next("d:" + schema + "." + table + "." + attnum)).append(relOid)
                    .append(attnum).append(defaultText).append("user").endRow();
              }
              String doc = facts.docs().get(c.fieldId());
              if (doc != null) {
                desc.beginRow().append(relOid).append(1259).append(attnum).append(doc).append("user").endRow();
              }
            }
            if (facts.comment() != null) {
              desc.beginRow().append(relOid).append(1259).append(0).append(facts.comment()).append("user").endRow();
            }
            if (hasKey) {
              // keys in the order the key was declared
              List<Integer> ordered = new ArrayList<>();
              for (String k : facts.keys()) {
                for (int i = 0; i < facts.columns().size(); i++) {
                  if (facts.columns().get(i).name().equals(k)) {
                    ordered.add(i + 1);
                  }
                }
              }
              String indexName = table + "_pkey";
              int indexOid = oids.next("i:" + schema + "." + table);
              int conOid = oids.next("c:" + schema + "." + table);
              cls.beginRow().append(indexOid).append(indexName).append(nsOid).append("i").append(ordered.size())
                  .append(false).append((double) facts.rows()).append("user").append(0L).endRow();
              String keyList = String.join(", ", facts.keys().stream().map(PgCatalog::ident).toList());
              idx.beginRow().append(indexOid).append(relOid).append(ordered.size()).append(true).append(true)
                  .append(int2vector(ordered)).append("CREATE UNIQUE INDEX " + ident(indexName) + " ON "
                      + ident(schema) + "." + ident(table) + " USING btree (" + keyList + ")")
                  .append("user").endRow();
              con.beginRow().append(conOid).append(indexName).append(nsOid).append("p").append(relOid)
                  .append(indexOid).append(int2vector(ordered)).append("PRIMARY KEY (" + keyList + ")")
                  .append("user").append(0).append((String) null).append(" ").append(" ").endRow();
            }
            for (Indexes.Index index : facts.indexes()) {
              // CREATE INDEX's: columns by field id, as they are named now
              List<Integer> nums = new ArrayList<>();
              List<String> names = new ArrayList<>();
              for (int fieldId : index.fieldIds()) {
                Integer num = attnums.get(fieldId);
                if (num != null) {
                  nums.add(num);
                  names.add(ident(facts.columns().get(num - 1).name()));
                }
              }
              if (nums.isEmpty()) {
                continue; // its columns were dropped
              }
              int indexOid = oids.next("x:" + schema + "." + table + "." + index.name());
              cls.beginRow().append(indexOid).append(index.name()).append(nsOid).append("i").append(nums.size())
                  .append(false).append((double) facts.rows()).append("user").append(0L).endRow();
              idx.beginRow().append(indexOid).append(relOid).append(nums.size()).append(index.unique()).append(false)
                  .append(int2vector(nums)).append("CREATE " + (index.unique() ? "UNIQUE " : "") + "INDEX "
                      + ident(index.name()) + " ON " + ident(schema) + "." + ident(table) + " USING btree ("
                      + String.join(", ", names) + ")")
                  .append("user").endRow();
              if (index.constraint()) {
                con.beginRow().append(oids.next("u:" + schema + "." + table + "." + index.name()))
                    .append(index.name()).append(nsOid).append("u").append(relOid).append(indexOid)
                    .append(int2vector(nums)).append("UNIQUE (" + String.join(", ", names) + ")").append("user")
                    .append(0).append((String) null).append(" ").append(" ").endRow();
              }
            }
            List<String> columnNames = facts.columns().stream().map(Column::name).toList();
            for (Constraints.Check check : facts.checks()) {
              List<Integer> nums = new ArrayList<>();
              for (String c : Constraints.columnsOf(check.expression(), columnNames)) {
                nums.add(columnNames.indexOf(c) + 1);
              }
              con.beginRow().append(oids.next("k:" + schema + "." + table + "." + check.name())).append(check.name())
                  .append(nsOid).append("c").append(relOid).append(0).append(int2vector(nums))
                  .append("CHECK ((" + check.expression() + "))").append("user").append(0).append((String) null)
                  .append(" ").append(" ").endRow();
            }
            for (Constraints.ForeignKey fk : facts.foreignKeys()) {
              List<String> names = new ArrayList<>();
              for (int id : fk.columns()) {
                Integer num = attnums.get(id);
                names.add(num == null ? null : columnNames.get(num - 1));
              }
              if (!names.contains(null)) {
                pending.add(new PendingKey(oids.next("f:" + schema + "." + table + "." + fk.name()), nsOid, relOid,
                    table, names, fk));
              }
            }
          }
          for (PendingKey k : pending) {
            String parent = k.key().parent().namespace() + "." + k.key().parent().name();
            TableOids parentOids = builtOids.get(parent);
            TableFacts parentFacts = byName.get(parent);
            if (parentOids == null || parentFacts == null) {
              continue; // the table it references is gone
            }
            List<Integer> nums = new ArrayList<>();
            List<String> names = new ArrayList<>();
            for (int id : k.key().parentColumns()) {
              Integer num = parentOids.attnums().get(id);
              if (num != null) {
                nums.add(num);
                names.add(ident(parentFacts.columns().get(num - 1).name()));
              }
            }
            List<Integer> own = new ArrayList<>();
            for (int id : k.key().columns()) {
              Integer num = builtOids.values().stream().filter(o -> o.oid() == k.relOid()).findFirst()
                  .map(o -> o.attnums().get(id)).orElse(null);
              own.add(num == null ? 0 : num);
            }
            String parentName = k.key().parent().namespace().toString().equals("public") ? ident(k.key().parent()
                .name()) : ident(k.key().parent().namespace().toString()) + "." + ident(k.key().parent().name());
            con.beginRow().append(k.oid()).append(k.key().name()).append(k.nsOid()).append("f").append(k.relOid())
                .append(0).append(int2vector(own)).append("FOREIGN KEY (" + String.join(", ", k.columns().stream()
                    .map(PgCatalog::ident).toList()) + ") REFERENCES " + parentName + "(" + String.join(", ", names)
                    + ")" + action(" ON UPDATE ", k.key().onUpdate()) + action(" ON DELETE ", k.key().onDelete()))
                .append("user").append(parentOids.oid()).append(int2vector(nums))
                .append(String.valueOf(k.key().onUpdate())).append(String.valueOf(k.key().onDelete())).endRow();
          }
        }
        st.execute("COMMIT");
        tableOids = Map.copyOf(builtOids);
      } catch (SQLException | RuntimeException e) {
        st.execute("ROLLBACK");
        throw e;
      }
    }
  }

  private record FactsOf(TableIdentifier id, TableFacts facts) {}

  private DuckDBAppender appender(String table) throws SQLException {
    return duck.createAppender(DB, "base", table);
  }

  /** A smallint[] as DuckDB's appender takes it: text it casts. */
  private static String int2vector(List<Integer> nums) {
    return nums.toString();
  }

  private static TableFacts facts(Table t) {
    List<Column> columns = dev.floe.types.TypeMapping.columns(t.schema(), t.properties());
    List<String> keys = new ArrayList<>();
    for (Integer id : t.schema().identifierFieldIds()) {
      Types.NestedField f = t.schema().findField(id);
      if (f != null) {
        keys.add(f.name());
      }
    }
    // identifier fields are a set: keep the order of the columns, which is how they were declared
    List<String> ordered = new ArrayList<>();
    for (Column c : columns) {
      if (keys.contains(c.name())) {
        ordered.add(c.name());
      }
    }
    Map<Integer, String> docs = new HashMap<>();
    for (Types.NestedField f : t.schema().columns()) {
      if (f.doc() != null && !f.doc().isEmpty()) {
        docs.put(f.fieldId(), f.doc());
      }
    }
    long rows = summaryCount(t, "total-records");
    Map<Integer, String> defaults = new HashMap<>();
    for (Types.NestedField f : t.schema().columns()) {
      String expression = t.properties().get(FloeProperties.COLUMN_DEFAULT + f.fieldId());
      if (expression != null) {
        // a serial column's default, as PostgreSQL shows it
        defaults.put(f.fieldId(), expression.replaceAll("^" + Sequences.FUNCTION + "\\('(.*)'\\)$",
            "nextval('$1'::regclass)"));
      } else if (f.writeDefault() != null) {
        defaults.put(f.fieldId(), dev.floe.types.SqlLiterals.of(f.type(), f.writeDefault()));
      }
    }
    return new TableFacts(columns, ordered, t.properties().get("comment"), docs, rows, defaults, Indexes.of(t),
        Constraints.checks(t), Constraints.foreignKeys(t), summaryCount(t, "total-files-size"));
  }

  /** A foreign key's action as pg_get_constraintdef writes it after {@code clause}; nothing for NO ACTION. */
  private static String action(String clause, char action) {
    return switch (action) {
      case 'r' -> clause + "RESTRICT";
      case 'c' -> clause + "CASCADE";
      case 'n' -> clause + "SET NULL";
      case 'd' -> clause + "SET DEFAULT";
      default -> "";
    };
  }

  /** A total of the table's current snapshot's summary (rows, bytes of its files), 0 if it has none. */
  private static long summaryCount(Table t, String key) {
    if (t.currentSnapshot() == null || t.currentSnapshot().summary() == null) {
      return 0;
    }
    try {
      return Long.parseLong(t.currentSnapshot().summary().getOrDefault(key, "0"));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** Stable object identifiers from names; a collision takes the next free number. */
  private static final class Oids {
    private final Set<Integer> used = new HashSet<>();

    int next(String name) {
      CRC32 crc = new CRC32();
      crc.update(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      int oid = FIRST_USER_OID + (int) (crc.getValue() % (Integer.MAX_VALUE - FIRST_USER_OID));
      while (!used.add(oid)) {
        oid = oid == Integer.MAX_VALUE ? FIRST_USER_OID : oid + 1;
      }
      return oid;
    }
  }

  static String ident(String name) {
    return name.matches("[a-z_][a-z0-9_$]*") ? name : dev.floe.sql.Lexer.quoteIdentifier(name);
  }

  /** Rows that never change: the built-in schemas, types, the database, the owner role. */
  private void loadStatic() throws SQLException {
    try (DuckDBAppender ns = appender("namespace")) {
      ns.beginRow().append(PG_CATALOG_OID).append("pg_catalog").append(OWNER_OID).append("static").endRow();
      ns.beginRow().append(PUBLIC_OID).append("public").append(OWNER_OID).append("static").endRow();
      ns.beginRow().append(INFORMATION_SCHEMA_OID).append("information_schema").append(OWNER_OID).append("static")
          .endRow();
    }
    try (DuckDBAppender ty = appender("type")) {
      for (PgType t : PgType.SCALARS) {
        addType(ty, t);
        int array = PgType.arrayOid(t.oid());
        if (array != 0) {
          addType(ty, PgType.arrayOf(t));
        }
      }
    }
  }

  private static void addType(DuckDBAppender ty, PgType t) throws SQLException {
    String category = t.isArray() ? "A" : switch (t.oid()) {
      case 16 -> "B";
      case 20, 21, 23, 26, 700, 701, 1700 -> "N";
      case 1082, 1083, 1114, 1184 -> "D";
      case 1186 -> "T";
      case 17, 114, 2950, 3802 -> "U";
      case 705 -> "X";
      default -> "S";
    };
    ty.beginRow().append(t.oid()).append(t.name()).append(PG_CATALOG_OID).append(t.length())
        .append(t.length() > 0 && t.length() <= 8).append("b").append(category)
        .append(t.isArray() ? t.element().oid() : 0).append(t.isArray() ? 0 : PgType.arrayOid(t.oid()))
        .append(t.isArray() ? "array_in" : t.name() + "in").append(t.isArray() ? "array_out" : t.name() + "out")
        .endRow();
  }
}
