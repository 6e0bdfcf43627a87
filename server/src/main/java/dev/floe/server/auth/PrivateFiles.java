package dev.floe.server.auth;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

/**
 * The server's secrets (the users file, a TLS private key) are readable by the server's own OS user only;
 * the server refuses to use one that others can read, as PostgreSQL refuses such a key file.
 */
public final class PrivateFiles {
  private static final Set<PosixFilePermission> OTHERS = EnumSet.of(PosixFilePermission.GROUP_READ,
      PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
      PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

  private PrivateFiles() {}

  /**
   * Checks that {@code file} belongs to the user this process runs as and that no one else may read or
   * write it; on a file system without POSIX permissions, nothing is checked.
   *
   * @param what what the file is, for the message ("users file")
   * @throws IOException saying what is wrong and how to fix it
   */
  public static void check(Path file, String what) throws IOException {
    PosixFileAttributes a;
    try {
      a = Files.readAttributes(file, PosixFileAttributes.class);
    } catch (UnsupportedOperationException e) {
      return;
    }
    String me = System.getProperty("user.name");
    if (!a.owner().getName().equals(me)) {
      throw new IOException(what + " \"" + file + "\" is owned by " + a.owner().getName() + ", not by " + me
          + ", the user the server runs as");
    }
    if (a.permissions().stream().anyMatch(OTHERS::contains)) {
      throw new IOException(what + " \"" + file + "\" has group or world access; it must be readable by its owner "
          + "only: chmod 600 " + file);
    }
  }

  /** Makes {@code file} readable and writable by its owner only. */
  public static void restrict(Path file) throws IOException {
    try {
      Files.setPosixFilePermissions(file, EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE));
    } catch (UnsupportedOperationException e) {
      // not a POSIX file system
    }
  }
}
