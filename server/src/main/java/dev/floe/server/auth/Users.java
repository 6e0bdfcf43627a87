package dev.floe.server.auth;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The users allowed to log in with a password, kept in a file of the warehouse ({@value #FILE_NAME}),
 * one per line: the name, a SCRAM-SHA-256 verifier in PostgreSQL's format
 * ({@code SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey}) and, only for users added for md5 clients,
 * PostgreSQL's md5 hash ({@code md5} + md5(password + name); {@code -} otherwise). Passwords themselves are
 * never stored. A SCRAM verifier does not let whoever reads it log in; an md5 hash does (the md5
 * exchange proves knowledge of the hash, not of the password), which is why it is kept only on request.
 * The file is replaced atomically (written, fsynced, renamed) and readable by its owner only (a server
 * refuses it otherwise); a server reads it at every login, so users added while it runs can log in at once.
 */
public final class Users {
  public static final String FILE_NAME = "floe-users";
  static final int ITERATIONS = 4096;

  /** One user's stored secrets; {@code md5Hash} is null unless the user was added for md5 clients. */
  public record User(String name, String scramVerifier, String md5Hash) {}

  /** What the file holds in place of an md5 hash for a user who has none. */
  private static final String NO_MD5 = "-";

  private final Path file;

  public Users(Path warehouse) {
    this.file = warehouse.resolve(FILE_NAME);
  }

  public Path file() {
    return file;
  }

  public Optional<User> find(String name) throws IOException {
    return Optional.ofNullable(read().get(name));
  }

  public List<String> names() throws IOException {
    return List.copyOf(read().keySet());
  }

  /** Adds a user, or sets the password of an existing one, with a SCRAM verifier only. */
  public synchronized void put(String name, String password) throws IOException {
    put(name, password, false);
  }

  /**
   * Adds a user, or sets the password of an existing one; with {@code md5}, the md5 hash md5 clients need
   * is kept too (whoever reads it can log in as the user).
   */
  public synchronized void put(String name, String password, boolean md5) throws IOException {
    validateName(name);
    if (password.isEmpty()) {
      throw new IllegalArgumentException("the password must not be empty");
    }
    Map<String, User> users = read();
    users.put(name, new User(name, Scram.verifier(password, salt(), ITERATIONS), md5 ? md5Hash(name, password)
        : null));
    write(users);
  }

  /**
   * Checks, when the file exists, that it is the server user's and private to it.
   *
   * @throws IOException naming what is wrong
   */
  public void checkPrivate() throws IOException {
    if (Files.exists(file)) {
      PrivateFiles.check(file, "users file");
    }
  }

  /** Removes a user; false if there was none. */
  public synchronized boolean remove(String name) throws IOException {
    Map<String, User> users = read();
    if (users.remove(name) == null) {
      return false;
    }
    write(users);
    return true;
  }

  private static void validateName(String name) {
    if (name.isEmpty() || name.getBytes(StandardCharsets.UTF_8).length > 63 || name.startsWith("#")
        || !name.equals(name.strip()) || name.codePoints().anyMatch(c -> Character.isISOControl(c))) {
      throw new IllegalArgumentException("invalid user name \"" + name.replaceAll("\\p{Cntrl}", "?") + "\": 1 to "
          + "63 bytes, no control characters, no leading or trailing spaces, not starting with #");
    }
  }

  private Map<String, User> read() throws IOException {
    Map<String, User> users = new LinkedHashMap<>();
    if (!Files.exists(file)) {
      return users;
    }
    int lineNo = 0;
    checkPrivate();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      lineNo++;
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t", -1);
      if (f.length != 3 || !f[1].startsWith("SCRAM-SHA-256$") || !(f[2].startsWith("md5") || f[2].equals(NO_MD5))) {
        throw new IOException(file + " line " + lineNo + " is not a user entry (name, SCRAM verifier, md5 hash "
            + "or -)");
      }
      users.put(f[0], new User(f[0], f[1], f[2].equals(NO_MD5) ? null : f[2]));
    }
    return users;
  }

  private void write(Map<String, User> users) throws IOException {
    StringBuilder b = new StringBuilder("# Floe users: name, SCRAM-SHA-256 verifier, md5 hash or - (managed by floe "
        + "user)\n");
    for (User u : users.values()) {
      b.append(u.name()).append('\t').append(u.scramVerifier()).append('\t')
          .append(u.md5Hash() == null ? NO_MD5 : u.md5Hash()).append('\n');
    }
    Files.createDirectories(file.getParent()); // users may be added before the warehouse is first served
    Path tmp = file.resolveSibling(FILE_NAME + ".tmp");
    Files.deleteIfExists(tmp);
    try {
      Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) {
      Files.createFile(tmp);
    }
    Files.writeString(tmp, b, StandardCharsets.UTF_8);
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException ignored) {
      // not every file system lets a directory be synced
    }
  }

  private static byte[] salt() {
    byte[] s = new byte[16];
    new SecureRandom().nextBytes(s);
    return s;
  }

  /** PostgreSQL's stored md5 hash: {@code "md5" + hex(md5(password + user))}. */
  static String md5Hash(String user, String password) {
    return "md5" + md5Hex((password + user).getBytes(StandardCharsets.UTF_8));
  }

  static String md5Hex(byte[] data) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static String b64(byte[] b) {
    return Base64.getEncoder().encodeToString(b);
  }
}
