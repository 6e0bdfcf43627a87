package dev.floe.server.rest;

import dev.floe.FloeException;
import dev.floe.SqlState;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.rest.responses.ErrorResponse;

/**
 * The one place a failure becomes the REST spec's {@code ErrorModel}: Iceberg's exceptions by their
 * kind, Floe's by SQLSTATE (42P01 is 404 NoSuchTableException, 40001 409 CommitFailedException, 42501 403,
 * 0A000 406 ...). Iceberg's REST client maps the status and type back to the same exceptions. 500
 * CommitStateUnknownException only when the commit's outcome is truly unknown (08007).
 */
final class RestErrors {
  private RestErrors() {}

  /** A failure with its HTTP status and the spec's error type, raised by the server itself. */
  static final class Status extends RuntimeException {
    final int code;
    final String type;

    Status(int code, String type, String message) {
      super(message);
      this.code = code;
      this.type = type;
    }
  }

  static ErrorResponse map(RuntimeException e) {
    if (e instanceof Status s) {
      return error(s.code, s.type, s.getMessage());
    }
    if (e instanceof FloeException f) {
      return floe(f);
    }
    int code;
    if (e instanceof NoSuchTableException || e instanceof NoSuchNamespaceException || e instanceof NoSuchViewException
        || e instanceof org.apache.iceberg.exceptions.NotFoundException) {
      code = 404;
    } else if (e instanceof AlreadyExistsException || e instanceof CommitFailedException
        || e instanceof NamespaceNotEmptyException) {
      code = 409;
    } else if (e instanceof NotAuthorizedException) {
      code = 401;
    } else if (e instanceof ForbiddenException) {
      code = 403;
    } else if (e instanceof CommitStateUnknownException) {
      code = 500;
    } else if (e instanceof ValidationException || e instanceof BadRequestException
        || e instanceof IllegalArgumentException || e instanceof NullPointerException
        || e instanceof java.io.UncheckedIOException && e.getCause() instanceof com.fasterxml.jackson.core.JsonProcessingException) {
      code = 400;
    } else if (e instanceof UnsupportedOperationException) {
      code = 406;
    } else {
      code = 500;
    }
    // IllegalArgumentException by name: Iceberg's client throws it again (not its BadRequestException)
    String type = e instanceof IllegalArgumentException ? "IllegalArgumentException"
        : code == 400 && !(e instanceof ValidationException) ? "BadRequestException"
        : code == 500 && !(e instanceof CommitStateUnknownException) ? "ServerError" : e.getClass().getSimpleName();
    return error(code, type, e.getMessage() == null ? e.toString() : e.getMessage());
  }

  private static ErrorResponse floe(FloeException f) {
    String state = f.sqlState();
    String message = f.getMessage() + f.detail().map(d -> " (" + d + ")").orElse("");
    if (SqlState.UNDEFINED_TABLE.equals(state)) {
      return error(404, "NoSuchTableException", message);
    }
    if (SqlState.INVALID_SCHEMA_NAME.equals(state)) {
      return error(404, "NoSuchNamespaceException", message);
    }
    if (SqlState.DUPLICATE_TABLE.equals(state) || SqlState.DUPLICATE_SCHEMA.equals(state)
        || SqlState.DUPLICATE_OBJECT.equals(state)) {
      return error(409, "AlreadyExistsException", message);
    }
    if (SqlState.SERIALIZATION_FAILURE.equals(state)) {
      return error(409, "CommitFailedException", message);
    }
    if (SqlState.DEPENDENT_OBJECTS_STILL_EXIST.equals(state)) {
      // DROP SCHEMA of a schema with tables, or DROP TABLE of a table others reference
      return error(409, f.getMessage().contains("schema") ? "NamespaceNotEmptyException" : "CommitFailedException",
          message);
    }
    if (SqlState.INSUFFICIENT_PRIVILEGE.equals(state)) {
      return error(403, "ForbiddenException", message);
    }
    if (SqlState.FEATURE_NOT_SUPPORTED.equals(state)) {
      return error(406, "UnsupportedOperationException", message);
    }
    if (SqlState.TRANSACTION_RESOLUTION_UNKNOWN.equals(state)) {
      return error(500, "CommitStateUnknownException", message);
    }
    if (SqlState.READ_ONLY_SQL_TRANSACTION.equals(state)) {
      return error(403, "ForbiddenException", message);
    }
    if (state != null && (state.startsWith("22") || state.startsWith("42"))) {
      return error(400, "BadRequestException", message);
    }
    return error(500, "ServerError", message);
  }

  private static ErrorResponse error(int code, String type, String message) {
    return ErrorResponse.builder().responseCode(code).withType(type).withMessage(message).build();
  }
}
