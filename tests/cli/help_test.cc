// Issue #16 "CLI manners": the help texts of all subcommands follow one style. Walks the whole
// command tree that `flamefleet` registers (cli/all_commands.h), nested subcommands included.
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/all_commands.h"
#include "gtest/gtest.h"

namespace flamefleet::cli {
namespace {

// Appends every subcommand below `app` (depth first) to `out`.
void Walk(CLI::App* app, const std::string& path,
          std::vector<std::pair<std::string, CLI::App*>>* out) {
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    const std::string name = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    out->emplace_back(name, sub);
    Walk(sub, name, out);
  }
}

TEST(HelpTextTest, EverySubcommandHasASentenceCaseOneLineDescription) {
  CLI::App app{"flamefleet"};
  int exit_code = 0;
  AddAllCommands(app, &exit_code);
  std::vector<std::pair<std::string, CLI::App*>> commands;
  Walk(&app, "", &commands);
  // The commands of the and the README's tables, nested ones included.
  std::vector<std::string> names;
  for (const auto& [name, cmd] : commands) names.push_back(name);
  for (const char* expected :
       {"exec", "profile", "render", "diff", "record", "snapshot", "snapshot inspect", "submit",
        "status", "list", "watch", "cancel", "fetch", "aggregate", "health", "run", "top"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  for (const auto& [name, cmd] : commands) {
    const std::string text = cmd->get_description();
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_TRUE(std::isupper(static_cast<unsigned char>(text.front()))) << name << ": " << text;
    EXPECT_NE(text.back(), '.') << name << ": " << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << name << ": " << text;
    EXPECT_EQ(text.find("  "), std::string::npos) << name << ": " << text;
  }
}

}  // namespace
}  // namespace flamefleet::cli
