// A validator for the JSON Schema keywords that flamefleet's schemas use (type, const, enum,
// required, properties, additionalProperties, items, minimum, maximum, pattern, $ref into
// $defs), shared by the schema tests of summary.json and the fleet's batch summary.json. An
// unknown keyword fails the calling test, so a schema cannot silently outgrow the validator.
//
//   const nlohmann::json schema = testutil::LoadJsonSchema(DOCS_DIR "/summary.schema.json");
//   EXPECT_EQ(testutil::SchemaErrors(schema, doc), std::vector<std::string>{});
#ifndef FLAMEFLEET_TESTS_TESTING_JSON_SCHEMA_H_
#define FLAMEFLEET_TESTS_TESTING_JSON_SCHEMA_H_

#include <algorithm>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace flamefleet::testutil {

inline nlohmann::json LoadJsonSchema(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

namespace schema_internal {

using nlohmann::json;

inline bool HasType(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

// Appends "path: reason" for every violation of `schema` by `v`.
inline void Validate(const json& root, const json& schema, const json& v, const std::string& path,
                     std::vector<std::string>& errors) {
  for (const auto& [key, rule] : schema.items()) {
    if (key == "$schema" || key == "$id" || key == "title" || key == "$defs") continue;
    if (key == "$ref") {
      const std::string ref = rule.get<std::string>();
      ASSERT_EQ(ref.rfind("#/$defs/", 0), 0u) << ref;
      Validate(root, root["$defs"][ref.substr(8)], v, path, errors);
    } else if (key == "type") {
      bool ok = false;
      if (rule.is_array()) {
        for (const json& t : rule) ok = ok || HasType(v, t.get<std::string>());
      } else {
        ok = HasType(v, rule.get<std::string>());
      }
      if (!ok) errors.push_back(path + ": wrong type, want " + rule.dump());
    } else if (key == "const") {
      if (v != rule) errors.push_back(path + ": not " + rule.dump());
    } else if (key == "enum") {
      if (std::find(rule.begin(), rule.end(), v) == rule.end()) {
        errors.push_back(path + ": not one of " + rule.dump());
      }
    } else if (key == "required") {
      if (!v.is_object()) continue;
      for (const json& name : rule) {
        if (!v.contains(name.get<std::string>()))
          errors.push_back(path + ": missing " + name.dump());
      }
    } else if (key == "properties") {
      if (!v.is_object()) continue;
      for (const auto& [name, sub] : rule.items()) {
        if (v.contains(name)) Validate(root, sub, v[name], path + "." + name, errors);
      }
    } else if (key == "additionalProperties") {
      if (!v.is_object() || rule.get<bool>()) continue;
      for (const auto& [name, unused] : v.items()) {
        if (!schema["properties"].contains(name)) errors.push_back(path + ": extra " + name);
      }
    } else if (key == "items") {
      if (!v.is_array()) continue;
      for (size_t i = 0; i < v.size(); ++i) {
        Validate(root, rule, v[i], path + "[" + std::to_string(i) + "]", errors);
      }
    } else if (key == "minimum") {
      if (v.is_number() && v.get<double>() < rule.get<double>()) errors.push_back(path + ": < min");
    } else if (key == "maximum") {
      if (v.is_number() && v.get<double>() > rule.get<double>()) errors.push_back(path + ": > max");
    } else if (key == "pattern") {
      if (v.is_string() &&
          !std::regex_search(v.get<std::string>(), std::regex(rule.get<std::string>()))) {
        errors.push_back(path + ": does not match " + rule.get<std::string>());
      }
    } else {
      ADD_FAILURE() << "the test's validator does not know the schema keyword " << key;
    }
  }
}

}  // namespace schema_internal

// Returns "path: reason" for every violation of `schema` by `doc`.
inline std::vector<std::string> SchemaErrors(const nlohmann::json& schema,
                                             const nlohmann::json& doc) {
  std::vector<std::string> errors;
  schema_internal::Validate(schema, schema, doc, "$", errors);
  return errors;
}

}  // namespace flamefleet::testutil

#endif  // FLAMEFLEET_TESTS_TESTING_JSON_SCHEMA_H_
