package dev.floe.exec;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A session's DuckDB connection that knows its open statements, on every path (queries, change queries,
 * the writers' COPY), so that {@link #cancel()} can interrupt whatever runs. (DuckDB 2.0's asynchronous
 * Parquet writer could deadlock when a COPY was interrupted while its writes drained; the engine turns it
 * off, {@code async_threads = 0}, decision 0006.) Whatever DuckDB finishes before it notices, the
 * statement's commit point refuses ({@link dev.floe.catalog.CommitGate}).
 */
final class CancellableConnection {
  private final Connection connection;
  private final Set<Statement> open = ConcurrentHashMap.newKeySet();

  CancellableConnection(Connection duck) {
    this.connection = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
        new Class<?>[] {Connection.class}, (proxy, method, args) -> {
          Object result = invoke(duck, method, args);
          if (result instanceof Statement st) {
            open.add(st);
          }
          return result;
        });
  }

  /** The connection to hand out. */
  Connection connection() {
    return connection;
  }

  /** Interrupts every statement running on the connection. */
  synchronized void cancel() {
    for (Statement st : open) {
      try {
        if (st.isClosed()) {
          open.remove(st);
        } else {
          st.cancel(); // a no-op unless it is executing
        }
      } catch (SQLException ignored) {
        // it finished meanwhile
      }
    }
  }

  /** Forgets statements closed since the last call. */
  void forgetClosed() {
    open.removeIf(st -> {
      try {
        return st.isClosed();
      } catch (SQLException e) {
        return true;
      }
    });
  }

  private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
