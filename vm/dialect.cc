#include "vm/dialect.h"

#include <array>
#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace flamefleet::vm {
namespace {

struct Entry {
  Dialect dialect;
  absl::string_view name;
  const DialectSpec& (*spec)();
};

constexpr Entry kDialects[] = {
#define FLAMEFLEET_VM_DIALECT_ENTRY(e, name, ns) {Dialect::k##e, name, &ns::Spec},
    FLAMEFLEET_VM_DIALECTS(FLAMEFLEET_VM_DIALECT_ENTRY)
#undef FLAMEFLEET_VM_DIALECT_ENTRY
};

constexpr std::array<Dialect, std::size(kDialects)> kAll = [] {
  std::array<Dialect, std::size(kDialects)> all{};
  for (size_t i = 0; i < std::size(kDialects); ++i) all[i] = kDialects[i].dialect;
  return all;
}();

constexpr bool DenseAndInOrder() {
  for (size_t i = 0; i < std::size(kDialects); ++i) {
    if (static_cast<size_t>(kDialects[i].dialect) != i) return false;
  }
  return true;
}
static_assert(DenseAndInOrder(), "kDialects is indexed by Dialect");

const Entry& EntryOf(Dialect dialect) { return kDialects[static_cast<size_t>(dialect)]; }

}  // namespace

const DialectSpec& GetDialectSpec(Dialect dialect) { return EntryOf(dialect).spec(); }

absl::string_view DialectName(Dialect dialect) { return EntryOf(dialect).name; }

std::span<const Dialect> AllDialects() { return kAll; }

absl::string_view DialectNamesForHelp() {
  static const std::string* names = [] {
    auto* out = new std::string;
    for (const Entry& e : kDialects) absl::StrAppend(out, out->empty() ? "" : ", ", e.name);
    return out;
  }();
  return *names;
}

absl::StatusOr<Dialect> ParseDialect(absl::string_view name) {
  absl::string_view bare = name;
  absl::ConsumePrefix(&bare, "v");
  for (const Entry& e : kDialects) {
    absl::string_view known(e.name.data(), e.name.size());
    absl::ConsumePrefix(&known, "v");
    if (bare == known) return e.dialect;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dialect '", name, "': expected one of ", DialectNamesForHelp()));
}

}  // namespace flamefleet::vm
