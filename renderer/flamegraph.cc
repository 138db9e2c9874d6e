#include "renderer/flamegraph.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "renderer/internal/palette.h"
#include "renderer/internal/svg_script.h"

namespace flamefleet::renderer {
namespace {

using profile::Profile;
using profile::ProfileDiff;
using NodeId = Profile::NodeId;

constexpr int kXPad = 10;

// Appends `v` rounded to one decimal ("12.3"), deterministically and without locale.
void AppendFixed1(std::string* out, double v) {
  long long tenths = std::llround(v * 10);
  if (tenths < 0) {
    out->push_back('-');
    tenths = -tenths;
  }
  absl::StrAppend(out, tenths / 10);
  out->push_back('.');
  out->push_back(static_cast<char>('0' + tenths % 10));
}

// Appends `v` with thousands separators.
void AppendGrouped(std::string* out, uint64_t v) {
  const std::string digits = absl::StrCat(v);
  const size_t lead = digits.size() % 3;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (i + 3 - lead) % 3 == 0) out->push_back(',');
    out->push_back(digits[i]);
  }
}

// Appends a count scaled by `factor`: grouped integer if factor is 1, else up to 3 decimals.
void AppendCount(std::string* out, double count, double factor) {
  if (factor == 1.0) {
    AppendGrouped(out, static_cast<uint64_t>(count));
    return;
  }
  const double v = count * factor;
  const auto milli = static_cast<uint64_t>(std::llround(std::fabs(v) * 1000));
  if (v < 0) out->push_back('-');
  AppendGrouped(out, milli / 1000);
  if (milli % 1000 != 0) {
    char frac[8];
    std::snprintf(frac, sizeof(frac), ".%03u", static_cast<unsigned>(milli % 1000));
    std::string f(frac);
    while (f.back() == '0') f.pop_back();
    out->append(f);
  }
}

void AppendPercent(std::string* out, double part, double whole) {
  const double pct = whole > 0 ? 100.0 * part / whole : 0;
  const long long hundredths = std::llround(pct * 100);
  const long long a = hundredths < 0 ? -hundredths : hundredths;
  if (hundredths < 0) out->push_back('-');
  absl::StrAppend(out, a / 100, ".");
  out->push_back(static_cast<char>('0' + (a % 100) / 10));
  out->push_back(static_cast<char>('0' + a % 10));
  out->push_back('%');
}

// Returns `s` as valid UTF-8 without XML-forbidden control characters or newlines: invalid
// bytes become '?', control characters (and CR/LF/TAB) a space.
std::string CleanText(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c));
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, cp = c & 0x07;
    }
    bool ok = len != 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xc0) == 0x80;
      cp = (cp << 6) | (cc & 0x3f);
    }
    const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= min_cp[len] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) &&
         cp != 0xfffe && cp != 0xffff;
    if (!ok) {
      out.push_back('?');
      ++i;
      continue;
    }
    out.append(s.data() + i, len);
    i += len;
  }
  return out;
}

// Appends `s` (already clean) XML-escaped for text and attribute values.
void AppendEscaped(std::string* out, absl::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&':
        out->append("&amp;");
        break;
      case '<':
        out->append("&lt;");
        break;
      case '>':
        out->append("&gt;");
        break;
      case '"':
        out->append("&quot;");
        break;
      default:
        out->push_back(c);
    }
  }
}

// Returns the label that fits `width_px`: the whole name, a prefix plus "..", or "".
absl::string_view FitLabel(absl::string_view name, double width_px, const RenderOptions& o,
                           std::string* scratch) {
  const double chars_fit = (width_px - 3) / (o.font_size * o.font_width);
  if (chars_fit < 3) return {};
  const auto chars = static_cast<size_t>(chars_fit);
  // Count code points, not bytes.
  size_t cps = 0;
  for (char c : name) cps += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  if (cps <= chars) return name;
  size_t keep = chars - 2, i = 0;
  for (size_t seen = 0; i < name.size(); ++i) {
    if ((static_cast<unsigned char>(name[i]) & 0xc0) != 0x80) {
      if (seen == keep) break;
      ++seen;
    }
  }
  scratch->assign(name.data(), i);
  scratch->append("..");
  return *scratch;
}

// A JavaScript string literal that is also safe inside CDATA.
std::string JsString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '<':
        out += "\\x3c";
        break;
      case '>':
        out += "\\x3e";
        break;
      case ']':
        out += "\\x5d";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += ' ';
        } else {
          out.push_back(c);
        }
    }
  }
  out += "\"";
  return out;
}

// Keeps a font-family value from breaking out of its CSS declaration.
std::string CssFont(absl::string_view font) {
  std::string out;
  for (char c : font) {
    if (c == ';' || c == '{' || c == '}' || c == '<' || c == '>' || c == '&' || c == ']' ||
        static_cast<unsigned char>(c) < 0x20) {
      continue;
    }
    out.push_back(c);
  }
  return out.empty() ? "Verdana" : out;
}

// An XML comment body: no "--", no '<' or '>'.
std::string CommentText(absl::string_view s) {
  std::string out;
  for (char c : CleanText(s)) {
    if (c == '<' || c == '>') continue;
    if (c == '-' && !out.empty() && out.back() == '-') out.push_back(' ');
    out.push_back(c);
  }
  if (!out.empty() && out.back() == '-') out.push_back(' ');
  return out;
}

// How one visible node is drawn, supplied by the plain and the differential renderers.
struct FrameLook {
  std::string fill;       // "rgb(...)"
  const char* css_class;  // nullptr or a class name for the <g>
  std::string details;    // tooltip text inside the parentheses; must not contain '('
};
using DescribeFn = std::function<void(NodeId node, FrameLook* look)>;

struct Geometry {
  double denom;         // counts that map to the full usable width
  double px_per_count;  // usable width / denom
  double min_px;        // frames narrower than this are pruned
};

Geometry ComputeGeometry(const RenderOptions& o, uint64_t total) {
  Geometry g;
  g.denom = static_cast<double>(std::max<uint64_t>(total, o.total));
  const double usable = o.width - 2 * kXPad;
  g.px_per_count = g.denom > 0 ? usable / g.denom : 0;
  g.min_px = o.min_width_percent ? o.min_width / 100.0 * usable : o.min_width;
  return g;
}

void WriteHeader(const RenderOptions& o, int image_height, uint64_t denom, std::string* s) {
  absl::StrAppend(s, "<?xml version=\"1.0\"");
  if (!o.encoding.empty()) {
    s->append(" encoding=\"");
    AppendEscaped(s, CleanText(o.encoding));
    s->append("\"");
  }
  absl::StrAppend(s, " standalone=\"no\"?>\n",
                  "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
                  "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n",
                  "<svg version=\"1.1\" width=\"", o.width, "\" height=\"", image_height,
                  "\" onload=\"init(evt)\" viewBox=\"0 0 ", o.width, " ", image_height,
                  "\" xmlns=\"http://www.w3.org/2000/svg\" "
                  "xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
                  "xmlns:ff=\"https://github.com/flamefleet/flamefleet/svg\">\n",
                  "<!-- Flame graph rendered by flamefleet. -->\n",
                  "<!-- NOTES: ", CommentText(o.notes), " -->\n");
  std::string top, bottom;
  internal::BackgroundStops(o.palette, o.bg_colors, &top, &bottom);
  absl::StrAppend(s,
                  "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" "
                  "x2=\"0\"><stop stop-color=\"",
                  top, "\" offset=\"5%\"/><stop stop-color=\"", bottom,
                  "\" offset=\"95%\"/></linearGradient></defs>\n");
  const std::string font = CssFont(o.font_type);
  absl::StrAppend(s, "<style type=\"text/css\"><![CDATA[\n", "text { font-family: ", font,
                  "; font-size: ", o.font_size, "px; fill: rgb(0,0,0); }\n",
                  "#title { text-anchor: middle; font-size: ", o.font_size + 5, "px; }\n",
                  "#subtitle { text-anchor: middle; fill: rgb(160,160,160); }\n",
                  "#unzoom, #search, #ignorecase { cursor: pointer; opacity: 0.1; }\n",
                  "#unzoom:hover, #search:hover, #ignorecase:hover, .show { opacity: 1; "
                  "}\n",
                  "#unzoom { display: none; } #unzoom.show { display: inline; }\n",
                  "#frames > g:hover > rect { stroke: black; stroke-width: 0.5; cursor: "
                  "pointer; }\n",
                  "#frames > g > text { pointer-events: none; }\n",
                  "#frames > g.new > rect { stroke: rgb(170,0,0); stroke-width: 1.2; "
                  "stroke-dasharray: 4 2; }\n",
                  "#frames > g.gone > rect { fill-opacity: 0.45; stroke: rgb(0,0,150); "
                  "stroke-dasharray: 2 2; }\n",
                  ".hide { display: none; }\n.parent { opacity: 0.5; }\n]]></style>\n");
  absl::StrAppend(s, "<script type=\"text/ecmascript\"><![CDATA[\n", "var W = ", o.width,
                  ", XPAD = ", kXPad, ", FONT_SIZE = ", o.font_size,
                  ", FONT_WIDTH = ", o.font_width, ", INVERTED = ", o.inverted ? "true" : "false",
                  ", TOTAL = ", denom, ";\n", "var NAME_TYPE = ", JsString(CleanText(o.name_type)),
                  ", SEARCH_COLOR = ", JsString(CleanText(o.search_color)), ";",
                  internal::SvgScript(), "]]></script>\n");
  absl::StrAppend(s, "<rect x=\"0\" y=\"0\" width=\"", o.width, "\" height=\"", image_height,
                  "\" fill=\"url(#background)\"/>\n");
  auto text = [&](absl::string_view id, double x, double y, absl::string_view body,
                  absl::string_view cls) {
    absl::StrAppend(s, "<text id=\"", id, "\"");
    if (!cls.empty()) absl::StrAppend(s, " class=\"", cls, "\"");
    s->append(" x=\"");
    AppendFixed1(s, x);
    s->append("\" y=\"");
    AppendFixed1(s, y);
    s->append("\">");
    AppendEscaped(s, CleanText(body));
    s->append("</text>\n");
  };
  const double bottom_y = image_height - (o.font_size * 2 + 10) / 2;
  text("title", o.width / 2.0, o.font_size * 2, o.title, "");
  if (!o.subtitle.empty()) text("subtitle", o.width / 2.0, o.font_size * 4, o.subtitle, "");
  text("details", kXPad, bottom_y, " ", "");
  text("unzoom", kXPad, o.font_size * 2, "Reset Zoom", "");
  text("search", o.width - kXPad - 100, o.font_size * 2, "Search", "");
  text("ignorecase", o.width - kXPad - 16, o.font_size * 2, "ic", "");
  text("matched", o.width - kXPad - 100, bottom_y, " ", "");
}

absl::Status Flush(std::string* buf, std::ostream& out) {
  out.write(buf->data(), static_cast<std::streamsize>(buf->size()));
  buf->clear();
  if (!out) return absl::DataLossError("writing SVG output failed");
  return absl::OkStatus();
}

absl::Status WriteEmpty(const RenderOptions& o, std::ostream& out) {
  const int height = static_cast<int>(o.font_size * 5);
  std::string s;
  WriteHeader(o, height, 0, &s);
  s.append("<g id=\"frames\">\n</g>\n<text x=\"");
  AppendFixed1(&s, o.width / 2.0);
  s.append("\" y=\"");
  AppendFixed1(&s, o.font_size * 4);
  s.append(
      "\" style=\"text-anchor: middle\">ERROR: No valid input "
      "provided</text>\n</svg>\n");
  absl::Status st = Flush(&s, out);
  if (!st.ok()) return st;
  return absl::FailedPreconditionError("no valid input: the profile's total is 0");
}

// Lays out and writes the frames of `tree` whose inclusive widths are `incl`.
// `own_hidden(node)` gives hidden cycles already recorded on the node.
absl::Status RenderTree(const Profile& tree, const std::vector<uint64_t>& incl,
                        const RenderOptions& o, const DescribeFn& describe, bool add_own_hidden,
                        std::ostream& out) {
  const size_t n = tree.num_nodes();
  const Geometry geo = ComputeGeometry(o, incl[Profile::kRoot]);
  if (incl[Profile::kRoot] == 0) return WriteEmpty(o, out);

  // Visibility and compact ids (parents come before children, so one forward pass works).
  std::vector<uint32_t> compact(n, UINT32_MAX);
  std::vector<NodeId> nodes;  // compact id -> node
  compact[Profile::kRoot] = 0;
  nodes.push_back(Profile::kRoot);
  for (size_t i = 1; i < n; ++i) {
    const NodeId p = tree.parent(static_cast<NodeId>(i));
    if (compact[p] == UINT32_MAX) continue;
    if (incl[i] == 0 || static_cast<double>(incl[i]) * geo.px_per_count < geo.min_px) continue;
    compact[i] = static_cast<uint32_t>(nodes.size());
    nodes.push_back(static_cast<NodeId>(i));
  }
  const size_t m = nodes.size();
  // Hidden descendants of visible nodes: whole subtrees below invisible children.
  std::vector<uint64_t> hidden_nodes(m, 0), hidden_cycles(m, 0);
  {
    std::vector<uint64_t> below(n, 0);  // subtree size excluding the node itself
    // hidden() is a hash lookup: skip it for the (usual) profile that has none.
    const bool any_hidden = tree.has_hidden();
    for (size_t i = n - 1; i > 0; --i) {
      if (any_hidden) below[i] += tree.hidden(static_cast<NodeId>(i)).nodes;
      below[tree.parent(static_cast<NodeId>(i))] += below[i] + 1;
    }
    for (size_t i = 1; i < n; ++i) {
      if (compact[i] != UINT32_MAX) continue;
      const uint32_t pc = compact[tree.parent(static_cast<NodeId>(i))];
      if (pc == UINT32_MAX) continue;
      hidden_nodes[pc] += below[i] + 1;
      hidden_cycles[pc] += incl[i];
    }
    for (size_t c = 0; c < m; ++c) {
      const Profile::Hidden h = tree.hidden(nodes[c]);
      hidden_nodes[c] += h.nodes;
      if (add_own_hidden) hidden_cycles[c] += h.cycles;
    }
  }
  // Children lists (CSR) of visible nodes, sorted by name unless flame chart.
  std::vector<uint32_t> first(m + 1, 0), kids(m > 0 ? m - 1 : 0);
  for (size_t c = 1; c < m; ++c) ++first[compact[tree.parent(nodes[c])] + 1];
  for (size_t c = 0; c < m; ++c) first[c + 1] += first[c];
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (size_t c = 1; c < m; ++c)
      kids[fill[compact[tree.parent(nodes[c])]]++] = static_cast<uint32_t>(c);
  }
  std::vector<std::string> clean_names(tree.num_frames());
  std::vector<bool> frame_used(tree.num_frames(), false);
  for (size_t c = 1; c < m; ++c) frame_used[tree.frame(nodes[c])] = true;
  for (size_t f = 0; f < clean_names.size(); ++f) {
    if (frame_used[f])
      clean_names[f] = CleanText(tree.frame_name(static_cast<Profile::FrameId>(f)));
  }
  if (!o.flamechart) {
    std::vector<uint32_t> order;
    for (size_t f = 0; f < clean_names.size(); ++f) {
      if (frame_used[f]) order.push_back(static_cast<uint32_t>(f));
    }
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return clean_names[a] != clean_names[b] ? clean_names[a] < clean_names[b] : a < b;
    });
    std::vector<uint32_t> rank(clean_names.size(), 0);
    for (size_t r = 0; r < order.size(); ++r) rank[order[r]] = static_cast<uint32_t>(r);
    for (size_t c = 0; c < m; ++c) {
      std::sort(kids.begin() + first[c], kids.begin() + first[c + 1], [&](uint32_t a, uint32_t b) {
        return rank[tree.frame(nodes[a])] < rank[tree.frame(nodes[b])];
      });
    }
  }
  // Offsets (in counts) and depths.
  std::vector<uint64_t> x(m, 0);
  std::vector<uint16_t> depth(m, 0);
  int max_depth = 0;
  for (size_t c = 0; c < m; ++c) {  // parents precede children in compact order
    uint64_t at = x[c];
    for (uint32_t k = first[c]; k < first[c + 1]; ++k) {
      const uint32_t kid = kids[k];
      x[kid] = at;
      at += incl[nodes[kid]];
      depth[kid] = static_cast<uint16_t>(std::min<int>(depth[c] + 1, UINT16_MAX));
      max_depth = std::max<int>(max_depth, depth[kid]);
    }
  }

  const double ypad1 = o.font_size * 3 + (o.subtitle.empty() ? 0 : o.font_size * 2);
  const double ypad2 = o.font_size * 2 + 10;
  const int image_height =
      static_cast<int>(std::ceil((max_depth + 1) * o.frame_height + ypad1 + ypad2));
  std::string s;
  s.reserve(1 << 20);
  WriteHeader(o, image_height, static_cast<uint64_t>(geo.denom), &s);
  s.append("<g id=\"frames\">\n");

  // Pre-order DFS so the output order is stable and parents come first.
  std::vector<uint32_t> stack = {0};
  std::string scratch, escaped_label, name_for_root = "all";
  FrameLook look;
  while (!stack.empty()) {
    const uint32_t c = stack.back();
    stack.pop_back();
    for (uint32_t k = first[c + 1]; k > first[c]; --k) stack.push_back(kids[k - 1]);
    const NodeId node = nodes[c];
    const absl::string_view name = c == 0 ? absl::string_view(name_for_root)
                                          : absl::string_view(clean_names[tree.frame(node)]);
    look.css_class = nullptr;
    look.details.clear();
    describe(node, &look);
    if (hidden_nodes[c] != 0) {
      absl::StrAppend(&look.details, "; ");
      AppendGrouped(&look.details, hidden_nodes[c]);
      absl::StrAppend(&look.details, hidden_nodes[c] == 1 ? " hidden frame, " : " hidden frames, ");
      AppendCount(&look.details, static_cast<double>(hidden_cycles[c]), o.factor);
      absl::StrAppend(&look.details, " ", CleanText(o.count_name), " pruned");
    }
    const double fx = kXPad + static_cast<double>(x[c]) * geo.px_per_count;
    const double fw = static_cast<double>(incl[node]) * geo.px_per_count;
    const double y = o.inverted ? ypad1 + depth[c] * o.frame_height
                                : image_height - ypad2 - (depth[c] + 1) * o.frame_height + 1;
    s.append("<g");
    if (look.css_class != nullptr) absl::StrAppend(&s, " class=\"", look.css_class, "\"");
    if (c == 0) s.append(" ff:root=\"1\"");
    absl::StrAppend(&s, " ff:x=\"", x[c], "\" ff:w=\"", incl[node], "\"><title>");
    AppendEscaped(&s, name);
    s.append(" (");
    AppendEscaped(&s, look.details);
    s.append(")</title><rect x=\"");
    AppendFixed1(&s, fx);
    s.append("\" y=\"");
    AppendFixed1(&s, y);
    s.append("\" width=\"");
    AppendFixed1(&s, fw);
    s.append("\" height=\"");
    AppendFixed1(&s, o.frame_height - 1);
    absl::StrAppend(&s, "\" fill=\"", look.fill, "\" rx=\"2\" ry=\"2\"/><text x=\"");
    AppendFixed1(&s, fx + 3);
    s.append("\" y=\"");
    AppendFixed1(&s, y + (o.frame_height - 1) / 2.0 + o.font_size * 0.35);
    s.append("\">");
    AppendEscaped(&s, FitLabel(name, fw, o, &scratch));
    s.append("</text></g>\n");
    if (s.size() > (1 << 20)) {
      absl::Status st = Flush(&s, out);
      if (!st.ok()) return st;
    }
  }
  s.append("</g>\n</svg>\n");
  absl::Status st = Flush(&s, out);
  if (!st.ok()) return st;
  out.flush();
  if (!out) return absl::DataLossError("writing SVG output failed");
  return absl::OkStatus();
}

absl::Status WriteGzip(const std::string& path, absl::string_view contents) {
  gzFile f = gzopen(path.c_str(), "wb9");
  if (f == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < contents.size()) {
    const auto chunk = static_cast<unsigned>(std::min<size_t>(contents.size() - done, 1 << 30));
    const int wrote = gzwrite(f, contents.data() + done, chunk);
    if (wrote <= 0) {
      gzclose(f);
      return absl::DataLossError(absl::StrCat(path, ": gzip write failed"));
    }
    done += static_cast<size_t>(wrote);
  }
  if (gzclose(f) != Z_OK) return absl::DataLossError(absl::StrCat(path, ": gzip close failed"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Palette> ParsePalette(absl::string_view name) {
  static constexpr struct {
    const char* name;
    Palette palette;
  } kNames[] = {
      {"hot", Palette::kHot},       {"mem", Palette::kMem},       {"io", Palette::kIo},
      {"red", Palette::kRed},       {"green", Palette::kGreen},   {"blue", Palette::kBlue},
      {"aqua", Palette::kAqua},     {"yellow", Palette::kYellow}, {"purple", Palette::kPurple},
      {"orange", Palette::kOrange}, {"masm", Palette::kMasm}};
  for (const auto& entry : kNames) {
    if (name == entry.name) return entry.palette;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown palette '", name,
                   "' (want hot, mem, io, red, green, blue, aqua, yellow, "
                   "purple, orange or masm)"));
}

absl::Status ParseMinWidth(absl::string_view text, RenderOptions* options) {
  bool percent = false;
  if (absl::EndsWith(text, "%")) {
    percent = true;
    text.remove_suffix(1);
  }
  double v = 0;
  if (!absl::SimpleAtod(text, &v) || !(v >= 0) || std::isinf(v)) {
    return absl::InvalidArgumentError(absl::StrCat("bad --minwidth '", text, "'"));
  }
  options->min_width = v;
  options->min_width_percent = percent;
  return absl::OkStatus();
}

double MinVisibleFraction(const RenderOptions& o) {
  const double usable = o.width - 2 * kXPad;
  const double f = o.min_width_percent ? o.min_width / 100.0 : o.min_width / usable;
  return f * (1 - 1e-9);  // stay on the safe side of rounding
}

absl::Status ValidateOptions(const RenderOptions& o) {
  if (o.width <= 2 * kXPad || o.width > 1000000) {
    return absl::InvalidArgumentError("--width must be between 21 and 1000000");
  }
  if (o.frame_height < 2 || o.frame_height > 1000) {
    return absl::InvalidArgumentError("--height must be between 2 and 1000");
  }
  if (!(o.font_size > 0) || o.font_size > 1000) {
    return absl::InvalidArgumentError("--fontsize must be in (0, 1000]");
  }
  if (!(o.font_width > 0) || o.font_width > 10) {
    return absl::InvalidArgumentError("--fontwidth must be in (0, 10]");
  }
  if (!(o.min_width >= 0)) return absl::InvalidArgumentError("--minwidth must be >= 0");
  if (!(o.factor > 0) || std::isinf(o.factor)) {
    return absl::InvalidArgumentError("--factor must be > 0");
  }
  std::string top, bottom;
  if (!internal::BackgroundStops(o.palette, o.bg_colors, &top, &bottom)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad --bgcolors '", o.bg_colors, "' (want yellow, blue, green, grey or #rrggbb)"));
  }
  for (char c : o.search_color) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '#' && c != '(' && c != ')' &&
        c != ',' && c != ' ' && c != '.' && c != '%') {
      return absl::InvalidArgumentError("bad search colour");
    }
  }
  return absl::OkStatus();
}

absl::Status RenderSvg(const Profile& profile, const RenderOptions& options, std::ostream& out) {
  absl::Status st = ValidateOptions(options);
  if (!st.ok()) return st;
  if (options.reverse) {
    const Geometry geo = ComputeGeometry(options, profile.total());
    const auto min =
        static_cast<uint64_t>(geo.px_per_count > 0 ? geo.min_px / geo.px_per_count : 0);
    RenderOptions rest = options;
    rest.reverse = false;
    // min is floor()ed: anything dropped here would be pruned by the renderer too.
    return RenderSvg(profile.Reversed(min), rest, out);
  }
  const std::vector<uint64_t> incl = profile.InclusiveCycles();
  const Geometry geo = ComputeGeometry(options, incl[Profile::kRoot]);
  std::vector<std::string> fills(profile.num_frames());
  const std::string count_name = CleanText(options.count_name);
  DescribeFn describe = [&](NodeId node, FrameLook* look) {
    if (node == Profile::kRoot) {
      look->fill = internal::RgbString(internal::FrameColour(options.palette, "all", options.hash));
    } else {
      std::string& fill = fills[profile.frame(node)];
      if (fill.empty()) {
        fill = internal::RgbString(internal::FrameColour(
            options.palette, profile.frame_name(profile.frame(node)), options.hash));
      }
      look->fill = fill;
    }
    AppendCount(&look->details, static_cast<double>(incl[node]), options.factor);
    absl::StrAppend(&look->details, " ", count_name, ", ");
    AppendPercent(&look->details, static_cast<double>(incl[node]), geo.denom);
    const uint64_t self = profile.self(node);
    if (self != 0 && self != incl[node]) {
      look->details.append("; self ");
      AppendCount(&look->details, static_cast<double>(self), options.factor);
    }
  };
  return RenderTree(profile, incl, options, describe, /*add_own_hidden=*/true, out);
}

absl::Status RenderDiffSvg(const ProfileDiff& diff, const RenderOptions& options,
                           std::ostream& out) {
  absl::Status st = ValidateOptions(options);
  if (!st.ok()) return st;
  const Profile& tree = diff.tree();
  const size_t n = tree.num_nodes();
  // Per-side "self" including hidden cycles: inclusive minus children's inclusive.
  std::vector<uint64_t> bself(n), aself(n);
  for (size_t i = 0; i < n; ++i) {
    bself[i] = diff.before_inclusive(static_cast<NodeId>(i));
    aself[i] = diff.after_inclusive(static_cast<NodeId>(i));
  }
  for (size_t i = n - 1; i > 0; --i) {
    const NodeId p = tree.parent(static_cast<NodeId>(i));
    bself[p] -= diff.before_inclusive(static_cast<NodeId>(i));
    aself[p] -= diff.after_inclusive(static_cast<NodeId>(i));
  }
  std::vector<uint64_t> width(n);
  for (size_t i = 0; i < n; ++i) {
    switch (options.diff_width) {
      case DiffWidth::kAfter:
        width[i] = aself[i];
        break;
      case DiffWidth::kBefore:
        width[i] = bself[i];
        break;
      case DiffWidth::kMax:
        width[i] = std::max(aself[i], bself[i]);
        break;
    }
  }
  for (size_t i = n - 1; i > 0; --i) width[tree.parent(static_cast<NodeId>(i))] += width[i];

  const double scale_before =
      options.diff_normalize && diff.before_total() != 0
          ? static_cast<double>(diff.after_total()) / static_cast<double>(diff.before_total())
          : 1.0;
  const double sign = options.negate ? -1.0 : 1.0;
  auto self_delta = [&](size_t i) {
    return sign * (static_cast<double>(diff.after_self(static_cast<NodeId>(i))) -
                   scale_before * static_cast<double>(diff.before_self(static_cast<NodeId>(i))));
  };
  auto incl_delta = [&](size_t i) {
    return sign *
           (static_cast<double>(diff.after_inclusive(static_cast<NodeId>(i))) -
            scale_before * static_cast<double>(diff.before_inclusive(static_cast<NodeId>(i))));
  };
  double max_abs = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = options.diff_inclusive ? incl_delta(i) : self_delta(i);
    if (i == 0 && options.diff_inclusive) continue;  // the root would dominate
    max_abs = std::max(max_abs, std::fabs(d));
  }
  const Geometry geo = ComputeGeometry(options, width[Profile::kRoot]);
  const std::string count_name = CleanText(options.count_name);
  auto signed_count = [&](std::string* out_str, double v) {
    out_str->push_back(v < 0 ? '-' : '+');
    AppendCount(out_str, std::fabs(v), options.factor);
  };
  DescribeFn describe = [&](NodeId node, FrameLook* look) {
    const double d = options.diff_inclusive ? incl_delta(node) : self_delta(node);
    look->fill = internal::RgbString(internal::DiffColour(d, max_abs));
    if (diff.is_new(node)) look->css_class = "new";
    if (diff.is_vanished(node)) look->css_class = "gone";
    std::string& s = look->details;
    s.append("before ");
    AppendCount(&s, scale_before * static_cast<double>(diff.before_inclusive(node)),
                options.factor);
    s.append(", after ");
    AppendCount(&s, static_cast<double>(diff.after_inclusive(node)), options.factor);
    absl::StrAppend(&s, " ", count_name, ", ");
    AppendPercent(&s, static_cast<double>(width[node]), geo.denom);
    s.append("; self ");
    signed_count(&s, self_delta(node));
    s.append(", ");
    if (self_delta(node) >= 0) s.push_back('+');
    AppendPercent(&s, self_delta(node), geo.denom);
    s.append("; incl ");
    signed_count(&s, incl_delta(node));
    s.append(", ");
    if (incl_delta(node) >= 0) s.push_back('+');
    AppendPercent(&s, incl_delta(node), geo.denom);
    if (diff.is_new(node)) s.append("; new");
    if (diff.is_vanished(node)) s.append("; vanished");
  };
  return RenderTree(tree, width, options, describe, /*add_own_hidden=*/false, out);
}

absl::Status WriteFileByExtension(const std::string& path, absl::string_view contents) {
  if (absl::EndsWith(path, ".svgz") || absl::EndsWith(path, ".gz")) {
    return WriteGzip(path, contents);
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (f == nullptr) {
    const int err = errno;
    const std::string msg = absl::StrCat(path, ": cannot create: ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(msg);
    if (err == EACCES) return absl::PermissionDeniedError(msg);
    return absl::InvalidArgumentError(msg);
  }
  if (std::fwrite(contents.data(), 1, contents.size(), f.get()) != contents.size() ||
      std::fflush(f.get()) != 0) {
    return absl::DataLossError(absl::StrCat(path, ": write failed"));
  }
  return absl::OkStatus();
}

absl::Status WriteSvgFile(const Profile& profile, const RenderOptions& options,
                          const std::string& path) {
  std::ostringstream svg;
  absl::Status st = RenderSvg(profile, options, svg);
  if (!st.ok() && !absl::IsFailedPrecondition(st)) return st;
  absl::Status written = WriteFileByExtension(path, svg.str());
  return written.ok() ? st : written;
}

absl::Status WriteDiffSvgFile(const ProfileDiff& diff, const RenderOptions& options,
                              const std::string& path) {
  std::ostringstream svg;
  absl::Status st = RenderDiffSvg(diff, options, svg);
  if (!st.ok() && !absl::IsFailedPrecondition(st)) return st;
  absl::Status written = WriteFileByExtension(path, svg.str());
  return written.ok() ? st : written;
}

}  // namespace flamefleet::renderer
