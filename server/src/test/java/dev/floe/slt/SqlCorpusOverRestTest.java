package dev.floe.slt;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.RemoteCatalog;
import dev.floe.server.rest.RestServer;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;

/**
 * The engine's SQL corpus run by a Floe whose catalog is another Floe's REST endpoint: each file's database
 * keeps its tables, views and namespaces in a serving Floe of its own (started here, one per file), so every
 * CREATE, commit, transaction block and time travel of the file goes through the REST catalog protocol.
 * {@code ${warehouse}} in a file is the serving Floe's warehouse, where the tables are.
 */
class SqlCorpusOverRestTest extends SqlLogicTest {
  /** The serving side of each file's warehouse: its database and REST endpoint. */
  private static final Map<Path, Served> SERVED = new ConcurrentHashMap<>();

  private record Served(Database db, RestServer server) {}

  /** The serving Floe's warehouse: where the tables of the file's database are. */
  @Override
  Path tablesDirectory(Path warehouse) {
    return warehouse.resolveSibling(warehouse.getFileName() + "-served");
  }

  @Override
  Database open(Path warehouse) {
    Path serving = tablesDirectory(warehouse);
    Served served = SERVED.computeIfAbsent(warehouse, w -> {
      Database db = Floe.open(FloeConfig.builder(serving).fenced(true).build());
      try {
        return new Served(db, RestServer.start(db, RestServer.Config.defaults().withPort(0)));
      } catch (java.io.IOException e) {
        db.close();
        throw new java.io.UncheckedIOException(e);
      }
    });
    return Floe.open(FloeConfig.builder(warehouse).remoteCatalog(RemoteCatalog.at(served.server().uri())
        .with("warehouse", serving.toAbsolutePath().toString())).build());
  }

  @AfterAll
  static void stopServing() {
    for (Served s : SERVED.values()) {
      s.server().close();
      s.db().close();
    }
    SERVED.clear();
  }
}
