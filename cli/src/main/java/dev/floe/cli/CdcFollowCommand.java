package dev.floe.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.floe.Changes;
import dev.floe.FloeException;
import dev.floe.SqlState;
import io.debezium.embedded.EmbeddedEngineChangeEvent;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import org.apache.kafka.connect.source.SourceRecord;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code floe cdc follow}: a PostgreSQL table's changes, captured by Debezium's embedded engine from a
 * logical replication slot (pgoutput), folded into a Floe table with a primary key (docs/cdc-postgres.md).
 *
 * <p>Each batch Debezium hands over is one {@link Changes#apply} commit, and that commit records where the
 * batch ends: the position is {@code lsn:<LSN> <offset>}, the LSN as PostgreSQL writes it and the
 * connector's own offset as JSON. Debezium reads its offsets back from the table ({@link FloeOffsets}),
 * never from a file of its own, and only after the commit are the batch's records marked processed, which
 * is what lets PostgreSQL recycle the slot's WAL. So the offsets are never ahead of the table: a stop at any
 * moment resumes at the last committed batch, and what is replayed after it changes nothing (the fold is a
 * maximum per key).
 */
@Command(name = "follow", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = {"Follow a PostgreSQL table into a Floe table with a primary key: an initial snapshot, then "
        + "every change, through a logical replication slot (Debezium's embedded engine, plugin pgoutput).",
        "Each batch is one commit that also records the connector's position; stopped and started again, it "
            + "resumes after the last committed batch. Changes applied again change nothing.",
        "Needs the warehouse to itself (stop the server first). The password is read from an environment "
            + "variable (--password-env), never from the command line."},
    footer = {"", "Exit status: 0 stopped as asked (--stop-after, --stop-after-idle-ms, SIGINT/SIGTERM), 1 an error "
        + "(the batches before it stay committed), 2 a wrong command line. See docs/cdc-postgres.md."})
final class CdcFollowCommand implements Callable<Integer> {
  /** How many times Debezium restarts the connector after an error it may retry (a lost connection). */
  static final int RECONNECTS = 5;

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Where Debezium's heartbeats go ({@code topic.heartbeat.prefix}'s default). */
  private static final String HEARTBEATS = "__debezium-heartbeat";
  /** How much WAL a quiet table's slot may hold before a heartbeat's position is recorded: PostgreSQL's segment. */
  static final long WAL_SEGMENT = 16L << 20;

  private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  @ParentCommand
  CdcCommand cdc;

  @Spec
  CommandSpec spec;

  @Mixin
  WarehouseOption warehouse;

  @Mixin
  CatalogOption catalog;

  @Mixin
  MaintainOption maintain;

  @Option(names = "--postgres", required = true, paramLabel = "URL",
      description = "the PostgreSQL database: host[:port]/dbname, postgresql://host[:port]/dbname or "
          + "jdbc:postgresql://host[:port]/dbname, optionally with ?sslmode=MODE (port 5432 if omitted)")
  String postgres;

  @Option(names = "--user", paramLabel = "NAME",
      description = "the PostgreSQL role, which needs REPLICATION (default: $PGUSER, else postgres)")
  String user;

  @Option(names = "--password-env", paramLabel = "VARIABLE", defaultValue = "PGPASSWORD",
      description = "the environment variable holding the password (default: ${DEFAULT-VALUE}; unset: no password)")
  String passwordEnv;

  @Option(names = "--source-table", paramLabel = "SCHEMA.TABLE",
      description = "the PostgreSQL table to follow, as PostgreSQL spells it (default: public.<--table>)")
  String sourceTable;

  @Option(names = "--table", required = true, paramLabel = "TABLE",
      description = "the Floe table to apply the changes to; it has a primary key and the source's columns")
  String table;

  @Option(names = "--slot", paramLabel = "NAME",
      description = "the logical replication slot, made if missing (default: floe_<table>)")
  String slot;

  @Option(names = "--publication", paramLabel = "NAME",
      description = "the publication of the source table, made if missing (default: floe_<table>)")
  String publication;

  @Option(names = "--window-ms", paramLabel = "MS", defaultValue = "1000",
      description = "the longest a change waits for its commit (default: ${DEFAULT-VALUE}; Debezium hands changes "
          + "over at least every 5 s whatever this is)")
  long windowMs;

  @Option(names = "--batch", paramLabel = "N", defaultValue = "10000",
      description = "at most this many events per commit (default: ${DEFAULT-VALUE})")
  int batch;

  @Option(names = "--heartbeat-ms", paramLabel = "MS", defaultValue = "10000",
      description = "how often the position is recorded while the table has no change (default: ${DEFAULT-VALUE}); "
          + "PostgreSQL keeps the slot's WAL until it is")
  long heartbeatMs;

  @Option(names = "--stop-after", paramLabel = "N",
      description = "stop once at least N events were committed (the batch that reaches N is committed whole)")
  Long stopAfter;

  @Option(names = "--stop-after-idle-ms", paramLabel = "MS",
      description = "stop once caught up: no event came for MS milliseconds, and PostgreSQL has sent the slot all "
          + "it had written by then")
  Long stopAfterIdleMs;

  @Option(names = "--debezium-log", paramLabel = "LEVEL", defaultValue = "off",
      description = "the level of Debezium's and Kafka Connect's own log on standard error: off, error, warn, "
          + "info or debug (default: ${DEFAULT-VALUE})")
  String debeziumLog;

  @Override
  public Integer call() {
    checkOptions();
    Environment environment = cdc.main.environment();
    PostgresSource source = PostgresSource.parse(postgres, spec.commandLine());
    String role = user != null ? user : environment.variable("PGUSER").orElse("postgres");
    String password = environment.variable(passwordEnv).orElse(null);
    String[] qualified = sourceName();
    String slotName = slot != null ? slot : defaultName(table);
    String publicationName = publication != null ? publication : defaultName(table);
    quietLogs(debeziumLog);
    return warehouse.run(environment, false, catalog, (db, env) -> {
      Changes changes = db.changes(table, Changes.Format.DEBEZIUM);
      Optional<String> resumed = changes.position().filter(p -> DebeziumPosition.parse(p).isPresent());
      List<String> generated = PostgresPrecheck.run(source, role, password, qualified[0], qualified[1], slotName,
          publicationName, resumed, db.table(table).columns(), table);
      Follower f = new Follower(changes, resumed, env.out(), settings(source, role, password, qualified, slotName,
          publicationName, generated), new CaughtUp(source, role, password));
      env.out().println("following " + qualified[0] + "." + qualified[1] + " on " + source + " into " + table
          + " (slot " + slotName + ", publication " + publicationName + ")");
      f.resumed.ifPresent(p -> env.out().println("resuming after " + DebeziumPosition.lsnOf(p)));
      env.out().flush();
      try (MaintainOption.Running m = maintain.start(db, env)) {
        return f.run();
      }
    });
  }

  private void checkOptions() {
    var cl = spec.commandLine();
    if (batch < 1) {
      throw new ParameterException(cl, "--batch must be at least 1");
    }
    if (windowMs < 1) {
      throw new ParameterException(cl, "--window-ms must be at least 1");
    }
    if (heartbeatMs < 100) {
      throw new ParameterException(cl, "--heartbeat-ms must be at least 100");
    }
    if (stopAfter != null && stopAfter < 1 || stopAfterIdleMs != null && stopAfterIdleMs < 1) {
      throw new ParameterException(cl, "--stop-after and --stop-after-idle-ms must be at least 1");
    }
    if (slot != null && !NAME.matcher(slot).matches() || publication != null && !NAME.matcher(publication).matches()) {
      throw new ParameterException(cl, "--slot and --publication are lower-case letters, digits and _ (at most 63), "
          + "starting with a letter or _");
    }
    if (!Set.of("off", "error", "warn", "info", "debug", "trace").contains(debeziumLog.toLowerCase(Locale.ROOT))) {
      throw new ParameterException(cl, "--debezium-log is off, error, warn, info or debug, not \"" + debeziumLog
          + "\"");
    }
    if (sourceTable != null && sourceTable.indexOf('.') <= 0) {
      throw new ParameterException(cl, "--source-table is schema.table, was \"" + sourceTable + "\"");
    }
  }

  /** The source table's schema and name: --source-table as given, else public and the Floe table's name. */
  private String[] sourceName() {
    if (sourceTable != null) {
      int dot = sourceTable.indexOf('.');
      return new String[] {sourceTable.substring(0, dot), sourceTable.substring(dot + 1)};
    }
    String name = table.substring(table.lastIndexOf('.') + 1);
    return new String[] {"public", name.toLowerCase(Locale.ROOT)};
  }

  /** {@code floe_<table>}: the table's name folded to what a slot name may hold. */
  static String defaultName(String table) {
    String s = "floe_" + table.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
    return s.length() > 63 ? s.substring(0, 63) : s;
  }

  /** Debezium's and Kafka's loggers at {@code level}: their INFO lines would drown the batch lines. */
  private static void quietLogs(String level) {
    String l = level.toLowerCase(Locale.ROOT);
    for (String logger : List.of("io.debezium", "org.apache.kafka")) {
      System.setProperty("org.slf4j.simpleLogger.log." + logger, l);
    }
  }

  /** The embedded engine's and the connector's settings. */
  private Properties settings(PostgresSource source, String role, String password, String[] qualified, String slotName,
      String publicationName, List<String> generated) {
    Properties p = new Properties();
    p.setProperty("name", "floe-cdc-" + slotName);
    p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    // the offsets live in the table's commits (FloeOffsets); flushed at every batch, after its commit
    p.setProperty("offset.storage", FloeOffsets.class.getName());
    p.setProperty("offset.flush.interval.ms", "0");
    p.setProperty("database.hostname", source.host());
    p.setProperty("database.port", Integer.toString(source.port()));
    p.setProperty("database.dbname", source.database());
    p.setProperty("database.user", role);
    if (password != null) {
      p.setProperty("database.password", password);
    }
    source.sslmode().ifPresent(m -> p.setProperty("database.sslmode", m));
    p.setProperty("topic.prefix", slotName);
    p.setProperty("plugin.name", "pgoutput");
    p.setProperty("slot.name", slotName);
    p.setProperty("publication.name", publicationName);
    p.setProperty("publication.autocreate.mode", "filtered");
    // a partitioned table's changes come under its own name, not its partitions' (which the include list drops)
    p.setProperty("publish.via.partition.root", "true");
    p.setProperty("table.include.list", regex(qualified[0]) + "\\." + regex(qualified[1]));
    if (!generated.isEmpty()) { // never streamed (PostgreSQL does not publish them): not read by the snapshot either
      p.setProperty("column.exclude.list", String.join(",", generated.stream().map(c -> regex(qualified[0]) + "\\."
          + regex(qualified[1]) + "\\." + regex(c)).toList()));
    }
    p.setProperty("snapshot.mode", "initial");
    p.setProperty("max.batch.size", Integer.toString(batch));
    p.setProperty("max.queue.size", Integer.toString(Math.max(8192, batch * 2)));
    p.setProperty("poll.interval.ms", Long.toString(windowMs));
    p.setProperty("tombstones.on.delete", "false");
    p.setProperty("skipped.operations", "none"); // a TRUNCATE is followed too (Debezium skips it by default)
    // a NULL stays NULL: Kafka's JSON converter would otherwise write a column's DEFAULT in its place
    p.setProperty("converter.schemas.enable", "true");
    p.setProperty("converter.replace.null.with.default", "false");
    p.setProperty("errors.max.retries", Integer.toString(RECONNECTS));
    // a table that does not change while the database does: a heartbeat writes a logical message (no table,
    // nothing any transaction sees), whose position the follower records once the slot holds a WAL segment
    p.setProperty("heartbeat.interval.ms", Long.toString(heartbeatMs));
    p.setProperty("heartbeat.action.query", "SELECT pg_logical_emit_message(false, 'floe-heartbeat', '')");
    return p;
  }

  /** {@code name} as a regular expression matching only itself (Debezium's include lists are patterns). */
  private static String regex(String name) {
    StringBuilder b = new StringBuilder();
    for (char c : name.toCharArray()) {
      b.append(Character.isLetterOrDigit(c) || c == '_' ? "" : "\\").append(c);
    }
    return b.toString();
  }

  /**
   * Whether the follower has caught up with PostgreSQL, for {@code --stop-after-idle-ms}: quiet is not enough
   * (Debezium may still be waiting for the slot, or PostgreSQL decoding a backlog, or the change events be
   * waiting in Debezium's queue). Once the follower has been quiet, it writes a logical decoding message to
   * the WAL ({@code pg_logical_emit_message}, which no transaction sees); PostgreSQL streams the slot's
   * changes in WAL order, and Debezium hands them over in that order, so once that message (or anything
   * after it) has come through, every change of the table written before it has been committed.
   */
  static final class CaughtUp implements AutoCloseable {
    private final PostgresSource source;
    private final String role;
    private final String password;
    private Connection connection;
    private long quietSince = -1;
    /** The marker's LSN (-1: none written yet). */
    private long target = -1;
    /** The greatest LSN of a message or heartbeat that came through, after the changes before it committed. */
    private volatile long seen = -1;

    CaughtUp(PostgresSource source, String role, String password) {
      this.source = source;
      this.role = role;
      this.password = password;
    }

    /** A message or heartbeat at {@code lsn} came through, every change before it committed. */
    void seen(long lsn) {
      if (lsn > seen) {
        seen = lsn;
      }
    }

    /** Whether the follower, quiet since {@code since} (nanoTime), has caught up. */
    boolean check(long since) {
      if (since != quietSince) { // a batch came: start over
        quietSince = since;
        target = -1;
      }
      if (target < 0) {
        try {
          target = lsn(query("SELECT pg_logical_emit_message(false, 'floe-caught-up', '')::text"));
        } catch (SQLException e) {
          return true; // PostgreSQL cannot be asked: quiet is all there is to go by
        }
        return false;
      }
      return seen >= target;
    }

    /** An LSN as PostgreSQL prints it ({@code 16/B374D848}) as a number. */
    static long lsn(String text) {
      int slash = text.indexOf('/');
      return (Long.parseLong(text.substring(0, slash), 16) << 32) | Long.parseLong(text.substring(slash + 1), 16);
    }

    private String query(String sql) throws SQLException {
      if (connection == null) {
        connection = source.connect(role, password);
      }
      try (PreparedStatement s = connection.prepareStatement(sql); ResultSet r = s.executeQuery()) {
        return r.next() ? r.getString(1) : null;
      }
    }

    @Override
    public void close() {
      if (connection != null) {
        try {
          connection.close();
        } catch (SQLException e) {
          // closing anyway
        }
      }
    }
  }

  /**
   * Runs the engine and commits what it hands over: each batch of change events is applied as one commit
   * recording the batch's last offset, and only then marked processed. A stop waits for the batch being
   * committed; the batches after it are not applied (they come again at the next start).
   */
  private final class Follower {
    final Optional<String> resumed;
    private final Changes changes;
    private final CaughtUp caughtUp;
    private final PrintStream out;
    private final Properties settings;
    private final String seedId = UUID.randomUUID().toString();
    private final String dataTopics;
    /** Where Debezium puts logical decoding messages (the heartbeats' among them). */
    private final String messages;
    private final ReentrantLock batchLock = new ReentrantLock();
    private final CompletableFuture<Throwable> finished = new CompletableFuture<>();
    /** No more batches are applied. */
    private volatile boolean stopping;
    /** The engine is being closed. */
    private volatile boolean closing;
    private volatile boolean polling;
    private volatile long lastActivity = System.nanoTime();
    private volatile FloeException failure;
    private volatile long total;

    Follower(Changes changes, Optional<String> resumed, PrintStream out, Properties settings, CaughtUp caughtUp) {
      this.changes = changes;
      this.caughtUp = caughtUp;
      this.out = out;
      this.settings = settings;
      this.dataTopics = settings.getProperty("topic.prefix") + ".";
      this.messages = settings.getProperty("topic.prefix") + ".message";
      this.resumed = resumed;
      resumed.flatMap(DebeziumPosition::parse).ifPresent(n -> FloeOffsets.SEEDS.put(seedId, n));
      settings.setProperty("offset.storage.file.filename", seedId);
    }

    int run() {
      DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
          .using(settings)
          .using(new DebeziumEngine.ConnectorCallback() {
            @Override
            public void pollingStarted() {
              lastActivity = System.nanoTime();
              polling = true;
            }
          })
          .using((success, message, error) -> finished.complete(success ? null
              : error != null ? error : new IllegalStateException(message)))
          .notifying(this::handleBatch)
          .build();
      Thread runner = new Thread(engine, "floe-cdc-debezium");
      runner.setDaemon(true);
      // SIGINT, SIGTERM: the batch being committed is finished, the rest comes again at the next start
      try (CleanStop cleanStop = new CleanStop("floe-cdc-shutdown", out, () -> stop(engine))) {
        try {
          runner.start();
          Throwable error = await(engine);
          if (failure != null) {
            throw failure;
          }
          if (error != null && !stopping) {
            throw engineError(error);
          }
          out.println("applied " + total + " event(s) to " + table);
          cleanStop.ended();
          return Main.EXIT_OK;
        } finally {
          caughtUp.close();
          FloeOffsets.SEEDS.remove(seedId);
        }
      }
    }

    /** With --stop-after-idle-ms: no event for that long, and none on its way (see {@link CaughtUp}). */
    private boolean idle() {
      long since = lastActivity;
      if (stopAfterIdleMs == null || !polling || System.nanoTime() - since < stopAfterIdleMs * 1_000_000L) {
        return false;
      }
      return caughtUp.check(since);
    }

    /** Waits for the engine to end, stopping it when a stop condition holds; the engine's error, if any. */
    private Throwable await(DebeziumEngine<?> engine) {
      boolean interrupted = false;
      try {
        while (true) {
          try {
            return finished.get(50, TimeUnit.MILLISECONDS);
          } catch (java.util.concurrent.TimeoutException e) {
            if (!closing && (failure != null || stopAfter != null && total >= stopAfter || idle())) {
              stop(engine);
            }
          } catch (InterruptedException e) {
            interrupted = true; // stop, and still wait for the batch being committed
            stop(engine);
          } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
          }
        }
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }

    /**
     * Stops the engine once no batch is being committed (closing it interrupts its threads, and a commit is
     * not to be interrupted): later batches see {@code stopping} and leave their events unapplied.
     */
    private void stop(DebeziumEngine<?> engine) {
      batchLock.lock();
      try {
        if (closing) {
          return;
        }
        closing = true;
        stopping = true;
      } finally {
        batchLock.unlock();
      }
      for (int tries = 0; tries < 600 && !finished.isDone(); tries++) {
        try {
          engine.close();
          return;
        } catch (IllegalStateException e) {
          if (!String.valueOf(e.getMessage()).contains("starting")) {
            return; // stopped or stopping already
          }
          sleep(100); // tasks are starting (connections being opened): the engine may not be closed then
        } catch (IOException e) {
          return;
        }
      }
    }

    private static void sleep(long ms) {
      try {
        Thread.sleep(ms);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    /**
     * One batch from Debezium: its change events applied as one commit that records the offset of the last
     * of them, then the records up to that one marked processed. The records after it (a transaction's end)
     * and a batch that changed nothing (a replay) are not marked: the offset Debezium keeps, and so the slot's
     * position in PostgreSQL, never passes the one the table recorded.
     */
    private void handleBatch(List<ChangeEvent<String, String>> records,
        DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer) throws InterruptedException {
      batchLock.lock();
      try {
        if (stopping) {
          return; // not applied, not marked: the next start reads these events again
        }
        List<String> values = new ArrayList<>(records.size());
        int last = -1;
        for (int i = 0; i < records.size(); i++) {
          ChangeEvent<String, String> r = records.get(i);
          if (r.value() != null && r.destination() != null && r.destination().startsWith(dataTopics)
              && !r.destination().equals(messages)
              && r instanceof EmbeddedEngineChangeEvent<?, ?, ?> e && e.sourceRecord().sourceOffset() != null) {
            if (!keyChangeDelete(r)) {
              values.add(withOldKey(r));
            }
            last = i;
          }
        }
        if (values.isEmpty()) {
          heartbeat(records, committer);
          return;
        }
        int marker = lastMarker(records);
        SourceRecord end = ((EmbeddedEngineChangeEvent<?, ?, ?>) records.get(last)).sourceRecord();
        Changes.Applied a;
        try {
          a = commit(values, DebeziumPosition.of(end.sourcePartition(), end.sourceOffset()));
        } catch (FloeException e) {
          failure = e;
          stopping = true;
          return;
        }
        lastActivity = System.nanoTime();
        if (a.committed()) {
          for (int i = 0; i <= last; i++) {
            committer.markProcessed(records.get(i));
          }
          committer.markBatchFinished();
        }
        if (marker >= 0) {
          caughtUp.seen(lsnOf(records.get(marker)));
        }
        if (stopAfter != null && total >= stopAfter) {
          stopping = true; // no batch after this one; the engine is closed by the thread that waits for it
        }
      } finally {
        batchLock.unlock();
      }
    }

    /**
     * A batch of heartbeats alone (no change of the table for a while): the last one's position is recorded
     * once it is a WAL segment past the table's ({@link Changes#advance}), then the heartbeats are marked
     * processed, which lets PostgreSQL recycle the WAL the slot kept for changes of other tables. A database
     * that is idle writes no more than the heartbeats' own messages, so it commits nothing.
     */
    private void heartbeat(List<ChangeEvent<String, String>> records,
        DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer) throws InterruptedException {
      int last = lastMarker(records);
      if (last < 0) {
        return;
      }
      SourceRecord beat = ((EmbeddedEngineChangeEvent<?, ?, ?>) records.get(last)).sourceRecord();
      long lsn = lsnOf(records.get(last));
      caughtUp.seen(lsn);
      if (lsn - recordedLsn() < WAL_SEGMENT) {
        return;
      }
      try {
        changes.advance(DebeziumPosition.of(beat.sourcePartition(), beat.sourceOffset()));
      } catch (FloeException e) {
        failure = e;
        stopping = true;
        return;
      }
      for (int i = 0; i <= last; i++) {
        committer.markProcessed(records.get(i));
      }
      committer.markBatchFinished();
    }

    /**
     * The index of the heartbeat or logical message of the greatest position (-1: none). A heartbeat repeats
     * the offset of the last change, a message has its own, later one.
     */
    private int lastMarker(List<ChangeEvent<String, String>> records) {
      int last = -1;
      for (int i = 0; i < records.size(); i++) {
        String to = records.get(i).destination();
        if (to != null && (to.startsWith(HEARTBEATS) || to.equals(messages)) && lsnOf(records.get(i)) >= 0
            && (last < 0 || lsnOf(records.get(i)) >= lsnOf(records.get(last)))) {
          last = i;
        }
      }
      return last;
    }

    /** The LSN of a record's offset (-1: none). */
    private static long lsnOf(ChangeEvent<String, String> record) {
      return record instanceof EmbeddedEngineChangeEvent<?, ?, ?> e && e.sourceRecord().sourceOffset() != null
          && e.sourceRecord().sourceOffset().get("lsn") instanceof Number n ? n.longValue() : -1;
    }

    /** The LSN of the position the table recorded last (-1: none). */
    private long recordedLsn() {
      return changes.position().flatMap(DebeziumPosition::parse).map(n -> n.path("offset").path("lsn"))
          .filter(JsonNode::isIntegralNumber).map(JsonNode::longValue).orElse(-1L);
    }

    private Changes.Applied commit(List<String> values, String position) {
      Changes.Applied a;
      try {
        a = changes.apply(values, position);
      } catch (FloeException e) {
        String context = e.context().orElse("");
        if (context.startsWith("change envelope ")) {
          int n = Integer.parseInt(context.substring("change envelope ".length()));
          throw new FloeException(e.sqlState(), e.getMessage() + " (the event at " + eventLsn(values.get(n - 1)) + ")",
              e.detail().orElse(null), e.hint().orElse(null), 0, e);
        }
        throw e;
      }
      total += a.envelopes();
      out.println(a.envelopes() + " event(s) through " + DebeziumPosition.lsnOf(position) + ": " + a.keysChanged()
          + " key(s) changed, " + a.rowsWritten() + " row(s) written, " + a.rowsDeleted() + " deleted"
          + (a.committed() ? "" : " (nothing new)"));
      out.flush();
      return a;
    }

    /**
     * The event's value; for the create that Debezium sends for a row whose primary key changed, an update
     * from the old key instead, which it names in the record's {@code __debezium.oldkey} header (the delete
     * it sends first for the old key is left out: {@link #keyChangeDelete}). The materializer then carries
     * over what the create leaves out, unchanged TOAST values that PostgreSQL did not log (docs/cdc.md).
     */
    private static String withOldKey(ChangeEvent<String, String> record) {
      JsonNode oldKey = null;
      if (record instanceof EmbeddedEngineChangeEvent<?, ?, ?> e && e.sourceRecord().headers() != null) {
        org.apache.kafka.connect.header.Header h = e.sourceRecord().headers().lastWithName("__debezium.oldkey");
        if (h != null && h.value() instanceof org.apache.kafka.connect.data.Struct key) {
          java.util.Map<String, Object> fields = new java.util.LinkedHashMap<>();
          key.schema().fields().forEach(f -> fields.put(f.name(), key.get(f)));
          oldKey = JSON.valueToTree(fields); // bytes as base64 and numbers as numbers, as Debezium's JSON has them
        }
      }
      if (oldKey == null) {
        return record.value();
      }
      try {
        JsonNode key = oldKey;
        com.fasterxml.jackson.databind.node.ObjectNode event =
            (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(record.value());
        com.fasterxml.jackson.databind.node.ObjectNode payload = event.has("payload") && event.has("schema")
            ? (com.fasterxml.jackson.databind.node.ObjectNode) event.get("payload") : event;
        if (!key.isObject() || !"c".equals(payload.path("op").asText())) {
          return record.value();
        }
        payload.put("op", "u");
        payload.set("before", key);
        return JSON.writeValueAsString(event);
      } catch (JsonProcessingException | ClassCastException e) {
        return record.value(); // applied as it came
      }
    }

    /**
     * Whether the record is the delete Debezium sends for the old key of a row whose primary key changed
     * (its {@code __debezium.newkey} header names the new one): the create that follows it, made an update
     * from the old key ({@link #withOldKey}), deletes the old key at the same position.
     */
    private static boolean keyChangeDelete(ChangeEvent<String, String> record) {
      return record instanceof EmbeddedEngineChangeEvent<?, ?, ?> e && e.sourceRecord().headers() != null
          && e.sourceRecord().headers().lastWithName("__debezium.newkey") != null;
    }

    /** {@code lsn:<LSN>} of an event, for an error's message. */
    private static String eventLsn(String value) {
      try {
        JsonNode n = new ObjectMapper().readTree(value);
        JsonNode lsn = n.has("payload") ? n.path("payload").path("source").path("lsn") : n.path("source").path("lsn");
        return lsn.isIntegralNumber() ? "lsn:" + DebeziumPosition.lsn(lsn.longValue()) : "an unknown lsn";
      } catch (JsonProcessingException e) {
        return "an unknown lsn";
      }
    }

    /** The engine's failure as one error: PostgreSQL's SQLSTATE and words when it came from there. */
    private FloeException engineError(Throwable error) {
      SQLException sql = null;
      Throwable root = error;
      for (Throwable t = error; t != null; t = t.getCause()) {
        if (t instanceof SQLException s && sql == null) {
          sql = s;
        }
        root = t;
      }
      String why = sql != null ? sql.getMessage() : root.getMessage() != null ? root.getMessage() : root.toString();
      if (error.getMessage() != null && sql == null && root != error && !error.getMessage().contains(why)) {
        why = error.getMessage() + ": " + why;
      }
      return new FloeException(sql != null && sql.getSQLState() != null ? sql.getSQLState() : SqlState.INTERNAL_ERROR,
          "following PostgreSQL failed: " + PostgresSource.firstLine(why), error);
    }
  }
}
