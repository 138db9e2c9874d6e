// Small string helpers shared by every component (header-only, no dependencies beyond abseil).
//
//   GroupThousands(6999968);  // "6,999,968"
#ifndef FLAMEFLEET_COMMON_STRINGS_H_
#define FLAMEFLEET_COMMON_STRINGS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace flamefleet {

// Returns `n` in decimal with a comma between groups of three digits, for counts in messages
// ("4,194,304 operations"). Thread-safe.
inline std::string GroupThousands(uint64_t n) {
  const std::string digits = absl::StrCat(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_STRINGS_H_
