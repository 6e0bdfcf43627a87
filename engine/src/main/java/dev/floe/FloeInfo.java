package dev.floe;

/** What Floe tells clients about itself. */
public final class FloeInfo {
  /** Floe's version. */
  public static final String VERSION = "0.1.0";

  /**
   * The PostgreSQL version whose SQL and protocol Floe follows, reported as {@code server_version} and by
   * {@code version()}; drivers choose their features by it.
   */
  public static final String PG_VERSION = "15.0";

  /** {@link #PG_VERSION} as {@code server_version_num}. */
  public static final String PG_VERSION_NUM = "150000";

  private FloeInfo() {}
}
