package dev.floe.exec;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A session's DuckDB connection that knows its open statements, on every path (queries, change queries,
 * the writers' COPY), so that {@link #cancel()} can interrupt whatever runs. Except a {@code COPY ... TO}
 * a file: DuckDB 2.0 can deadlock when one is interrupted while its asynchronous writes drain (the
 * statement and a worker thread wait on each other forever), so a COPY runs to its end and the
 * statement is stopped at its commit point instead ({@link dev.floe.catalog.CommitGate}), its files
 * deleted.
 */
final class CancellableConnection {
  private final Connection connection;
  private final Set<Statement> open = ConcurrentHashMap.newKeySet();

  CancellableConnection(Connection duck) {
    this.connection = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
        new Class<?>[] {Connection.class}, (proxy, method, args) -> {
          Object result = invoke(duck, method, args);
          if (result instanceof PreparedStatement ps && args != null && args.length > 0
              && args[0] instanceof String sql) {
            if (!writesFiles(sql)) {
              open.add(ps);
            }
            return ps;
          }
          if (result instanceof Statement st) {
            open.add(st);
            return tracked(st);
          }
          return result;
        });
  }

  /** The connection to hand out. */
  Connection connection() {
    return connection;
  }

  /** Interrupts every statement running on the connection, but a COPY to a file. */
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

  private Statement tracked(Statement st) {
    return (Statement) Proxy.newProxyInstance(Statement.class.getClassLoader(), new Class<?>[] {Statement.class},
        (proxy, method, args) -> {
          if (method.getName().startsWith("execute") && args != null && args.length > 0
              && args[0] instanceof String sql && writesFiles(sql)) {
            synchronized (this) {
              open.remove(st); // from now on out of cancel()'s reach
            }
          }
          return invoke(st, method, args);
        });
  }

  private static boolean writesFiles(String sql) {
    return sql.stripLeading().toUpperCase(Locale.ROOT).startsWith("COPY");
  }

  private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
