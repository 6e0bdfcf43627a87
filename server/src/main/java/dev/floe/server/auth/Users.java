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
 * ({@code SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey}) and PostgreSQL's md5 hash
 * ({@code md5} + md5(password + name)). Passwords themselves are never stored. The file is replaced
 * atomically (written, fsynced, renamed) and readable by its owner only; a server reads it at every
 * login, so users added while it runs can log in at once.
 */
public final class Users {
  public static final String FILE_NAME = "floe-users";
  static final int ITERATIONS = 4096;

  /** One user's stored secrets. */
  public record User(String name, String scramVerifier, String md5Hash) {}

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

  /** Adds a user, or sets the password of an existing one. */
  public synchronized void put(String name, String password) throws IOException {
    validateName(name);
    if (password.isEmpty()) {
      throw new IllegalArgumentException("the password must not be empty");
    }
    Map<String, User> users = read();
    users.put(name, new User(name, Scram.verifier(password, salt(), ITERATIONS), md5Hash(name, password)));
    write(users);
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
    if (name.isEmpty() || name.length() > 63 || name.chars().anyMatch(c -> c == '\t' || c == '\n' || c == '\r'
        || c == 0)) {
      throw new IllegalArgumentException("invalid user name \"" + name + "\": 1 to 63 characters, no tabs or "
          + "line breaks");
    }
  }

  private Map<String, User> read() throws IOException {
    Map<String, User> users = new LinkedHashMap<>();
    if (!Files.exists(file)) {
      return users;
    }
    int lineNo = 0;
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      lineNo++;
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t", -1);
      if (f.length != 3 || !f[1].startsWith("SCRAM-SHA-256$") || !f[2].startsWith("md5")) {
        throw new IOException(file + " line " + lineNo + " is not a user entry (name, SCRAM verifier, md5 hash)");
      }
      users.put(f[0], new User(f[0], f[1], f[2]));
    }
    return users;
  }

  private void write(Map<String, User> users) throws IOException {
    StringBuilder b = new StringBuilder("# Floe users: name, SCRAM-SHA-256 verifier, md5 hash (managed by floe user)\n");
    for (User u : users.values()) {
      b.append(u.name()).append('\t').append(u.scramVerifier()).append('\t').append(u.md5Hash()).append('\n');
    }
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
