package dev.floe.server.rest;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import org.apache.iceberg.rest.RESTSerializers;

/** JSON as Iceberg's REST client writes and reads it: kebab-case fields and Iceberg's own serializers. */
final class RestJson {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  static {
    MAPPER.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
    MAPPER.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    MAPPER.setPropertyNamingStrategy(new PropertyNamingStrategies.KebabCaseStrategy());
    RESTSerializers.registerAll(MAPPER);
  }

  private RestJson() {}

  static ObjectMapper mapper() {
    return MAPPER;
  }
}
