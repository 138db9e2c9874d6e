#include "bench/folded_gen.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace flamefleet::bench {
namespace {

// splitmix64: small, fast and identical on every platform (unlike std distributions).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Unit() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
  uint64_t Below(uint64_t n) { return Next() % n; }
  // Geometric count of failures before a success with mean `mean`.
  int Geometric(double mean) {
    const double p = 1.0 / (mean + 1.0);
    return static_cast<int>(std::floor(std::log(1.0 - Unit()) / std::log(1.0 - p)));
  }
  double Normal() {
    const double u = 1.0 - Unit(), v = Unit();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }

 private:
  uint64_t state_;
};

constexpr const char* kSyllables[] = {
    "ab", "ac", "ad", "al", "an", "ar", "as", "at", "ba", "be", "bi", "bo", "ca",
    "ce", "ci", "co", "da", "de", "di", "do", "el", "em", "en", "er", "es", "fa",
    "fe", "fi", "ga", "ge", "ha", "he", "hi", "il", "im", "in", "ir", "is", "ka",
    "ke", "la", "le", "li", "lo", "ma", "me", "mi", "mo", "na", "ne", "ni", "no",
    "or", "pa", "pe", "po", "ra", "re", "ri", "ro", "sa", "se", "si", "ta", "te"};

std::string Word(Rng& rng, int syllables) {
  std::string w;
  for (int i = 0; i < syllables; ++i) w += kSyllables[rng.Below(std::size(kSyllables))];
  return w;
}

// MASM-flavoured names: user program, standard library, kernel, other libraries, helpers.
std::vector<std::string> MakeNames(Rng& rng, uint32_t count) {
  absl::flat_hash_set<std::string> seen;
  std::vector<std::string> names;
  names.reserve(count);
  while (names.size() < count) {
    const double kind = rng.Unit();
    std::string name;
    if (kind < 0.30) {
      name = absl::StrCat("$exec::", Word(rng, 2), "::", Word(rng, 3), "_", Word(rng, 2));
    } else if (kind < 0.65) {
      name = absl::StrCat("std::", Word(rng, 2), "::", Word(rng, 2), "::", Word(rng, 2), "_",
                          Word(rng, 2));
    } else if (kind < 0.77) {
      name = absl::StrCat("$kernel::", Word(rng, 3), "_", Word(rng, 2));
    } else if (kind < 0.92) {
      name = absl::StrCat("miden::", Word(rng, 2), "::", Word(rng, 3), "_", Word(rng, 2));
    } else {
      name = absl::StrCat(Word(rng, 3), "_", Word(rng, 2), "_", rng.Below(100));
    }
    if (seen.insert(name).second) names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

void GenerateFolded(const FoldedGenOptions& options,
                    const std::function<void(absl::string_view)>& sink) {
  Rng rng(options.seed);
  const uint32_t pool = std::max<uint32_t>(options.names, 400);
  const std::vector<std::string> names = MakeNames(rng, pool);
  constexpr int kRoots = 24, kMinDepth = 5, kMaxDepth = 40, kHot = 300;
  auto new_frame = [&]() -> uint32_t {
    if (rng.Unit() < 0.3) {  // Zipf-like hot set: index ~ 1/u, capped
      const auto r = static_cast<uint32_t>(1.0 / (rng.Unit() + 1.0 / kHot)) - 1;
      return std::min<uint32_t>(r, kHot - 1);
    }
    return static_cast<uint32_t>(kHot + rng.Below(pool - kHot));
  };

  // All stacks so far, flattened (frames) with offsets, so mutations can copy any of them.
  std::vector<uint32_t> frames;
  std::vector<uint64_t> starts = {0};
  absl::flat_hash_set<uint64_t> seen;
  std::vector<uint32_t> stack;
  std::string out;
  out.reserve(1 << 21);
  const uint64_t wanted = options.lines + options.skip;
  uint64_t made = 0, attempts = 0;
  while (made < wanted) {
    ++attempts;
    stack.clear();
    if (made < kRoots || attempts > 50 * (made + 1)) {
      const int depth = kMinDepth + static_cast<int>(rng.Below(kMaxDepth - kMinDepth + 1));
      for (int d = 0; d < depth; ++d) stack.push_back(new_frame());
    } else {
      const uint64_t from = rng.Below(made);
      stack.assign(frames.begin() + static_cast<int64_t>(starts[from]),
                   frames.begin() + static_cast<int64_t>(starts[from + 1]));
      const int pop = std::min<int>(rng.Geometric(2.2), static_cast<int>(stack.size()));
      stack.resize(stack.size() - static_cast<size_t>(pop));
      const int push = rng.Geometric(2.2);
      for (int i = 0; i < push && stack.size() < kMaxDepth; ++i) stack.push_back(new_frame());
      while (stack.size() < kMinDepth) stack.push_back(new_frame());
    }
    uint64_t h = 1469598103934665603ull;
    for (uint32_t f : stack) h = (h ^ f) * 1099511628211ull;
    h ^= stack.size() * 0x9e3779b97f4a7c15ull;
    if (!seen.insert(h).second) continue;
    frames.insert(frames.end(), stack.begin(), stack.end());
    starts.push_back(frames.size());
    ++made;
    // Pareto(alpha 1.3, min 1) counts.
    double count = std::floor(std::pow(1.0 - rng.Unit(), -1.0 / 1.3));
    if (options.noise_sigma > 0) {
      count = std::max(1.0, std::round(count * std::exp(options.noise_sigma * rng.Normal())));
    }
    if (made <= options.skip) continue;
    for (size_t i = 0; i < stack.size(); ++i) {
      if (i != 0) out.push_back(';');
      out += names[stack[i]];
    }
    absl::StrAppend(&out, " ", static_cast<uint64_t>(std::min(count, 1e15)), "\n");
    if (out.size() >= (1 << 20)) {
      sink(out);
      out.clear();
    }
  }
  if (!out.empty()) sink(out);
}

}  // namespace flamefleet::bench
