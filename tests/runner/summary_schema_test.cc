// summary.json against docs/summary.schema.json, and a batch's summary.json against
// docs/batch-summary.schema.json (its jobs against summary.schema.json), with a validator for the
// JSON Schema keywords that schema uses (type, const, enum, required, properties,
// additionalProperties, items, minimum, maximum, pattern, $ref into $defs); an unknown keyword
// fails the test, so the schema cannot silently outgrow the validator.
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runner/run_stats.h"
#include "runner/summary.h"
#include "tests/testing/status_matchers.h"
#include "vm/vm.h"

namespace flamefleet::runner {
namespace {

using nlohmann::json;

json LoadSchema(const std::string& file = "summary.schema.json") {
  std::ifstream in(std::string(FLAMEFLEET_DOCS_DIR) + "/" + file);
  return json::parse(in);
}

bool HasType(const json& v, const std::string& type) {
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
void Validate(const json& root, const json& schema, const json& v, const std::string& path,
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

std::vector<std::string> Errors(const json& doc, const std::string& file = "summary.schema.json") {
  const json schema = LoadSchema(file);
  std::vector<std::string> errors;
  Validate(schema, schema, doc, "$", errors);
  return errors;
}

JobSummary Job(vm::Dialect dialect, const std::string& source, const StatsOptions& options,
               const std::string& name) {
  vm::AssemblerOptions assembler;
  assembler.dialect = dialect;
  absl::StatusOr<vm::Program> program = vm::Assembler(assembler).AssembleSource("t.masm", source);
  EXPECT_TRUE(program.ok()) << program.status();
  vm::ProgramInputs inputs;
  absl::StatusOr<StatsRun> run = ProfileProgramWithStats(*program, inputs, {}, options);
  EXPECT_TRUE(run.ok()) << run.status();
  return MakeJobSummary({.job = name, .program = &*program, .inputs = &inputs, .run = &*run});
}

json Summary(vm::Dialect dialect, const std::string& source, const StatsOptions& options) {
  vm::AssemblerOptions assembler;
  assembler.dialect = dialect;
  absl::StatusOr<vm::Program> program = vm::Assembler(assembler).AssembleSource("t.masm", source);
  EXPECT_TRUE(program.ok()) << program.status();
  vm::ProgramInputs inputs;
  inputs.stack = {vm::Felt(3)};
  absl::StatusOr<StatsRun> run = ProfileProgramWithStats(*program, inputs, {}, options);
  EXPECT_TRUE(run.ok()) << run.status();
  return json::parse(
      SummaryJson({.job = "t", .program = &*program, .inputs = &inputs, .run = &*run}));
}

TEST(SummarySchemaTest, ASuccessfulRunWithPhasesMatchesTheSchema) {
  StatsOptions options;
  options.marker_prefixes = {"p::"};
  const json doc = Summary(vm::Dialect::kV0_25,
                           R"(proc f add.1 end
                              begin emit.event("p::a") exec.f repeat.2 emit.event("p::b") end
                              drop end)",
                           options);
  EXPECT_EQ(Errors(doc), std::vector<std::string>{});
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["dialect"], "v0.25");
  EXPECT_EQ(doc["final_stack"].size(), 16u);
  EXPECT_EQ(doc["phases"].size(), 2u);
}

TEST(SummarySchemaTest, AFailedRunMatchesTheSchemaAndNamesTheError) {
  const json doc = Summary(vm::Dialect::kV0_16, "begin push.0 assert end", {});
  EXPECT_EQ(Errors(doc), std::vector<std::string>{});
  EXPECT_EQ(doc["status"], "error");
  EXPECT_EQ(doc["error"]["code"], "INVALID_ARGUMENT");
}

TEST(SummarySchemaTest, TheValidatorRejectsWhatTheSchemaForbids) {
  json doc = Summary(vm::Dialect::kV0_16, "begin push.1 drop end", {});
  doc["cycles"] = -1;
  doc["procedures"][0].erase("calls");
  doc["surprise"] = true;
  doc["program_digest"] = "0x12";
  EXPECT_EQ(Errors(doc).size(), 4u);
}

TEST(SummarySchemaTest, ABatchSummaryMatchesTheBatchSchemaAndItsJobsTheJobSchema) {
  StatsOptions options;
  options.marker_prefixes = {"p::"};
  BatchSummaryInput batch;
  batch.batch_id = "3";
  batch.state = "failed";
  batch.jobs.push_back(Job(vm::Dialect::kV0_25,
                           R"(proc f add.1 end
                              begin emit.event("p::a") exec.f emit.event("p::b") drop end)",
                           options, "a"));
  batch.jobs.push_back(Job(vm::Dialect::kV0_16, "begin push.0 assert end", {}, "b"));
  batch.without_summary.push_back({"c", "failed", "c: unknown procedure"});
  batch.without_summary.push_back({"d", "queued", std::nullopt});
  const json doc = json::parse(BatchSummaryJson(batch));
  EXPECT_EQ(Errors(doc, "batch-summary.schema.json"), std::vector<std::string>{});
  for (const json& job : doc["jobs"]) EXPECT_EQ(Errors(job), std::vector<std::string>{});
  EXPECT_EQ(doc["phases"].size(), 2u);

  json bad = doc;
  bad["state"] = "done";
  bad["without_summary"][0].erase("error");
  bad["phases"][0].erase("jobs");
  EXPECT_EQ(Errors(bad, "batch-summary.schema.json").size(), 3u);
}

}  // namespace
}  // namespace flamefleet::runner
