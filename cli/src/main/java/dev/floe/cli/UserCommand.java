package dev.floe.cli;

import dev.floe.server.auth.Users;
import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code floe user add|remove|list}: the users who may log in to {@code floe serve} with a password
 * ({@code --auth scram-sha-256}, {@code md5} or {@code password}). Works while the server runs: it reads
 * the users file at every login.
 */
@Command(name = "user", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = {"Manage the users who log in to floe serve with a password.",
        "add NAME reads the password from the terminal (asked twice) or, when input is not a terminal, "
            + "from the first line of standard input. Only a salted SCRAM-SHA-256 verifier is stored, in the "
            + "warehouse's " + Users.FILE_NAME + " file (and, with --md5, the md5 hash md5-only clients need)."})
final class UserCommand implements Callable<Integer> {
  @ParentCommand
  Main main;

  @Spec
  CommandSpec spec;

  @Mixin
  WarehouseOption warehouse;

  @Parameters(index = "0", paramLabel = "ACTION", description = "add, remove or list")
  String action;

  @Parameters(index = "1", arity = "0..1", paramLabel = "NAME", description = "the user name")
  String name;

  @picocli.CommandLine.Option(names = "--md5", description = "Also keep PostgreSQL's md5 hash, for clients that "
      + "cannot do SCRAM under --auth md5. Whoever reads that hash can log in as the user (docs/security.md); "
      + "without it, --auth md5 logs this user in with SCRAM, as PostgreSQL does.")
  boolean md5;

  @Override
  public Integer call() throws IOException {
    Environment env = main.environment();
    Path directory = warehouse.resolve(env);
    Users users = new Users(directory);
    switch (action) {
      case "list" -> {
        for (String n : users.names()) {
          env.out().println(n);
        }
        return Main.EXIT_OK;
      }
      case "add" -> {
        requireName();
        String password = readPassword(env);
        try {
          users.put(name, password, md5);
        } catch (IllegalArgumentException e) {
          env.err().println("floe: " + e.getMessage());
          return Main.EXIT_ERROR;
        }
        env.out().println("user \"" + name + "\" can log in to " + directory);
        return Main.EXIT_OK;
      }
      case "remove" -> {
        requireName();
        if (!users.remove(name)) {
          env.err().println("floe: no user \"" + name + "\" in " + users.file());
          return Main.EXIT_ERROR;
        }
        env.out().println("user \"" + name + "\" removed");
        return Main.EXIT_OK;
      }
      default -> throw new ParameterException(spec.commandLine(), "unknown action \"" + action
          + "\": use add, remove or list");
    }
  }

  private void requireName() {
    if (name == null || name.isEmpty()) {
      throw new ParameterException(spec.commandLine(), action + " needs a user NAME");
    }
  }

  private String readPassword(Environment env) throws IOException {
    Console console = System.console();
    if (env.interactive() && console != null) {
      char[] first = console.readPassword("Password for %s: ", name);
      char[] again = console.readPassword("Again: ");
      if (first == null || again == null || !Arrays.equals(first, again)) {
        throw new ParameterException(spec.commandLine(), "the passwords do not match");
      }
      return new String(first);
    }
    String line = new BufferedReader(new InputStreamReader(env.in(), StandardCharsets.UTF_8)).readLine();
    if (line == null || line.isEmpty()) {
      throw new ParameterException(spec.commandLine(), "no password on standard input");
    }
    return line;
  }
}
