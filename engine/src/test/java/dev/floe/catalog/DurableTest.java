package dev.floe.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A unit of work's file registrations: what it does not commit is not the next unit's. */
class DurableTest {
  @TempDir
  Path dir;

  private Path file(String name) throws Exception {
    return Files.writeString(dir.resolve(name), name);
  }

  @Test
  void registrationsLeftByAFailedUnitAreDroppedWithItsScope() throws Exception {
    try (var failed = Durable.scope()) {
      Durable.later(file("a.parquet"));
    }
    try (var next = Durable.scope()) {
      Durable.later(file("b.parquet"));
      assertEquals(1, Durable.now().size(), "only the unit's own file is made durable and digested");
      assertEquals(0, Durable.now().size());
    }
  }

  @Test
  void anInnerScopeKeepsTheOuterOnesRegistrations() throws Exception {
    try (var statement = Durable.scope()) {
      Durable.later(file("c.parquet"));
      try (var commit = Durable.scope()) {
        Durable.later(file("d.parquet"));
      }
      assertEquals(2, Durable.now().size());
    }
  }

  @Test
  void workWithoutAScopeIsNotPartOfTheNextScope() throws Exception {
    Durable.later(file("e.parquet")); // e.g. a background thread's write that failed before its commit
    try (var unit = Durable.scope()) {
      assertEquals(0, Durable.now().size());
    }
  }

  @Test
  void takenRegistrationsAreAdoptedByTheCommittingThread() throws Exception {
    Durable.Registrations[] taken = new Durable.Registrations[1];
    Path f = file("f.parquet");
    Thread helper = new Thread(() -> {
      Durable.later(f);
      taken[0] = Durable.take();
    });
    helper.start();
    helper.join();
    try (var unit = Durable.scope()) {
      Durable.adopt(taken[0]);
      assertEquals(1, Durable.now().size());
    }
  }
}
