#include "renderer/internal/palette.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace flamefleet::renderer::internal {
namespace {

// Three numbers in [0, 1) derived from a 64-bit FNV-1a hash of the name.
struct Unit3 {
  double a, b, c;
};

Unit3 FnvUnits(absl::string_view name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : name) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  h ^= h >> 29;  // spread the low bits
  auto unit = [](uint64_t bits) { return static_cast<double>(bits & 0xffff) / 65536.0; };
  return {unit(h), unit(h >> 21), unit(h >> 42)};
}

// Prefix-weighted: the first characters dominate, so `foo::bar` and `foo::baz` end up close.
Unit3 PrefixUnits(absl::string_view name) {
  double a = 0, b = 0, weight = 1, norm = 0;
  const size_t n = name.size() < 12 ? name.size() : 12;
  for (size_t i = 0; i < n; ++i) {
    const auto ch = static_cast<unsigned char>(name[i]);
    a += weight * static_cast<double>(ch % 17) / 17.0;
    b += weight * static_cast<double>((ch * 7) % 23) / 23.0;
    norm += weight;
    weight *= 0.6;
  }
  if (norm == 0) return {0, 0, 0};
  return {a / norm, b / norm, (a + b) / (2 * norm)};
}

int Lerp(int lo, int span, double t) { return lo + static_cast<int>(span * t); }

Rgb Hue(Palette palette, Unit3 u) {
  switch (palette) {
    case Palette::kHot:
      return {Lerp(205, 50, u.c), Lerp(0, 230, u.a), Lerp(0, 55, u.b)};
    case Palette::kMem:
      return {0, Lerp(190, 50, u.b), Lerp(0, 210, u.a)};
    case Palette::kIo: {
      const int rg = Lerp(80, 60, u.a);
      return {rg, rg, Lerp(190, 55, u.b)};
    }
    case Palette::kRed: {
      const int gb = Lerp(50, 80, u.a);
      return {Lerp(200, 55, u.a), gb, gb};
    }
    case Palette::kGreen: {
      const int rb = Lerp(50, 60, u.a);
      return {rb, Lerp(200, 55, u.a), rb};
    }
    case Palette::kBlue: {
      const int rg = Lerp(80, 60, u.a);
      return {rg, rg, Lerp(205, 50, u.a)};
    }
    case Palette::kAqua: {
      const int gb = Lerp(165, 55, u.a);
      return {Lerp(50, 60, u.a), gb, gb};
    }
    case Palette::kYellow: {
      const int rg = Lerp(175, 55, u.a);
      return {rg, rg, Lerp(50, 20, u.a)};
    }
    case Palette::kPurple: {
      const int rb = Lerp(190, 65, u.a);
      return {rb, Lerp(80, 60, u.a), rb};
    }
    case Palette::kOrange:
      return {Lerp(190, 65, u.a), Lerp(90, 65, u.a), 0};
    case Palette::kMasm:
      break;
  }
  return {Lerp(205, 50, u.c), Lerp(0, 230, u.a), Lerp(0, 55, u.b)};
}

// Classifies a MASM procedure path into one of the flat hues.
Palette MasmFamily(absl::string_view name) {
  if (absl::StartsWith(name, "$exec::")) return Palette::kHot;
  if (absl::StartsWith(name, "std::")) return Palette::kBlue;
  if (absl::StartsWith(name, "$kernel::") || absl::StartsWith(name, "$sys") ||
      absl::StrContains(name, "syscall")) {
    return Palette::kPurple;
  }
  return Palette::kGreen;
}

}  // namespace

std::string RgbString(Rgb c) { return absl::StrCat("rgb(", c.r, ",", c.g, ",", c.b, ")"); }

Rgb FrameColour(Palette palette, absl::string_view name, bool prefix_hash) {
  if (name == "-") return {200, 200, 200};
  if (name == "--") return {160, 160, 160};
  if (name == "[unknown]" || name == "[hidden]") return {190, 190, 190};
  const Unit3 u = prefix_hash ? PrefixUnits(name) : FnvUnits(name);
  if (palette == Palette::kMasm) return Hue(MasmFamily(name), u);
  return Hue(palette, u);
}

Rgb DiffColour(double delta, double max_abs_delta) {
  if (delta == 0 || max_abs_delta <= 0) return {250, 250, 250};
  const double t = std::fmin(1.0, std::fabs(delta) / max_abs_delta);
  const int fade = 250 - static_cast<int>(std::lround(200 * t));
  return delta > 0 ? Rgb{255, fade, fade} : Rgb{fade, fade, 255};
}

bool BackgroundStops(Palette palette, absl::string_view bg, std::string* top, std::string* bottom) {
  if (bg.empty()) {
    switch (palette) {
      case Palette::kHot:
      case Palette::kMasm:
        bg = "yellow";
        break;
      case Palette::kMem:
        bg = "green";
        break;
      case Palette::kIo:
        bg = "blue";
        break;
      default:
        bg = "grey";
    }
  }
  if (bg == "yellow") {
    *top = "#eeeeee", *bottom = "#eeeeb0";
  } else if (bg == "blue") {
    *top = "#eeeeee", *bottom = "#e0e0ff";
  } else if (bg == "green") {
    *top = "#eef2ee", *bottom = "#e0ffe0";
  } else if (bg == "grey" || bg == "gray") {
    *top = "#f8f8f8", *bottom = "#e8e8e8";
  } else if (bg.size() == 7 && bg[0] == '#' &&
             bg.find_first_not_of("0123456789abcdefABCDEF", 1) == absl::string_view::npos) {
    *top = std::string(bg), *bottom = std::string(bg);
  } else {
    return false;
  }
  return true;
}

}  // namespace flamefleet::renderer::internal
