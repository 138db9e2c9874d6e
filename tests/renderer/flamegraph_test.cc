#include "renderer/flamegraph.h"

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/diff.h"
#include "profile/folded.h"
#include "profile/profile.h"
#include "tests/testing/profile_helpers.h"

namespace flamefleet::renderer {
namespace {

using profile::FoldedReader;
using profile::Profile;
using profile::ProfileDiff;
using ::testing::HasSubstr;
using ::testing::Not;
using testutil::FromFolded;

std::string Render(const Profile& p, const RenderOptions& o = {}) {
  std::ostringstream out;
  const absl::Status st = RenderSvg(p, o, out);
  EXPECT_TRUE(st.ok()) << st;
  return out.str();
}

int Count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

const char kSample[] =
    "$exec::$main;std::math::u64::wrapping_add 30\n"
    "$exec::$main;$exec::helper;std::crypto::hashes::rpo 60\n"
    "$exec::$main 10\n";

TEST(FlamegraphTest, WritesInteractiveSvgStructure) {
  const std::string svg = Render(FromFolded(kSample));
  EXPECT_THAT(svg, HasSubstr("<?xml version=\"1.0\" standalone=\"no\"?>"));
  EXPECT_THAT(svg, HasSubstr("<svg version=\"1.1\" width=\"1200\""));
  EXPECT_THAT(svg, HasSubstr("onload=\"init(evt)\""));
  EXPECT_THAT(svg, HasSubstr("<text id=\"title\""));
  EXPECT_THAT(svg, HasSubstr(">Flame Graph</text>"));
  for (const char* id : {"details", "unzoom", "search", "ignorecase", "matched", "frames"}) {
    EXPECT_THAT(svg, HasSubstr(std::string("id=\"") + id + "\"")) << id;
  }
  EXPECT_THAT(svg, HasSubstr("function zoomTo("));
  EXPECT_THAT(svg, HasSubstr("Matched: "));
  // all + main + add + helper + rpo.
  EXPECT_EQ(Count(svg, "<g ff:") + Count(svg, "<g class="), 5);
  EXPECT_THAT(svg, HasSubstr("<title>all (100 samples, 100.00%)</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>$exec::$main (100 samples, 100.00%; self 10)</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>std::crypto::hashes::rpo (60 samples, 60.00%)</title>"));
  EXPECT_THAT(svg, HasSubstr("ff:x=\"0\" ff:w=\"100\""));
  EXPECT_THAT(svg, HasSubstr("</svg>\n"));
}

TEST(FlamegraphTest, OutputIsByteIdentical) {
  std::string text;
  for (int i = 0; i < 500; ++i) {
    text += "r;m" + std::to_string(i % 17) + ";l" + std::to_string(i % 31) + " " +
            std::to_string(i + 1) + "\n";
  }
  const std::string a = Render(FromFolded(text));
  const std::string b = Render(FromFolded(text));
  EXPECT_EQ(a, b);
  // Input order does not matter for a merged flame graph.
  std::string reversed_lines;
  std::istringstream lines(text);
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) all.push_back(line);
  for (auto it = all.rbegin(); it != all.rend(); ++it) reversed_lines += *it + "\n";
  EXPECT_EQ(Render(FromFolded(reversed_lines)), a);
}

TEST(FlamegraphTest, EscapesXmlInNamesAndOptions) {
  RenderOptions o;
  o.title = "a <title> & \"quotes\"";
  o.notes = "notes -- with <angle> brackets";
  o.count_name = "c<y>cles";
  const std::string svg = Render(FromFolded("main;operator<<&\"x\" 5\nbad\xff\x01name 1\n"), o);
  EXPECT_THAT(svg, HasSubstr("operator&lt;&lt;&amp;&quot;x&quot;"));
  EXPECT_THAT(svg, HasSubstr("a &lt;title&gt; &amp; &quot;quotes&quot;"));
  EXPECT_THAT(svg, HasSubstr("c&lt;y&gt;cles"));
  EXPECT_THAT(svg, HasSubstr("bad? name"));
  EXPECT_THAT(svg, Not(HasSubstr("<angle>")));
  EXPECT_THAT(svg, Not(HasSubstr("notes -- with")));
  EXPECT_THAT(svg, Not(HasSubstr("<<")));
}

TEST(FlamegraphTest, OptionsChangeOutput) {
  const Profile p = FromFolded(kSample);
  RenderOptions o;
  o.width = 800;
  o.frame_height = 20;
  o.font_type = "monospace";
  o.font_size = 10;
  o.count_name = "cycles";
  o.name_type = "Proc:";
  o.subtitle = "nightly";
  o.factor = 0.5;
  const std::string svg = Render(p, o);
  EXPECT_THAT(svg, HasSubstr("width=\"800\""));
  EXPECT_THAT(svg, HasSubstr("height=\"19.0\""));
  EXPECT_THAT(svg, HasSubstr("font-family: monospace"));
  EXPECT_THAT(svg, HasSubstr("id=\"subtitle\""));
  EXPECT_THAT(svg, HasSubstr("NAME_TYPE = \"Proc:\""));
  EXPECT_THAT(svg, HasSubstr("(30 cycles, 60.00%)"));  // 60 * factor 0.5
}

TEST(FlamegraphTest, InvertedPutsRootOnTop) {
  const Profile p = FromFolded(kSample);
  RenderOptions o;
  const std::string normal = Render(p, o);
  o.inverted = true;
  const std::string icicle = Render(p, o);
  std::smatch m;
  const std::regex root_y(
      "ff:root=\"1\"[^>]*><title>[^<]*</title><rect x=\"[0-9.]+\" "
      "y=\"([0-9.]+)\"");
  ASSERT_TRUE(std::regex_search(normal, m, root_y));
  const double normal_y = std::stod(m[1]);
  ASSERT_TRUE(std::regex_search(icicle, m, root_y));
  EXPECT_LT(std::stod(m[1]), normal_y);
  EXPECT_THAT(icicle, HasSubstr("INVERTED = true"));
}

TEST(FlamegraphTest, MinWidthPrunesAndReportsHiddenFrames) {
  std::string text = "main;big 100000\n";
  for (int i = 0; i < 50; ++i) text += "main;small" + std::to_string(i) + ";leaf 1\n";
  const Profile p = FromFolded(text);
  const std::string svg = Render(p);
  EXPECT_THAT(svg, Not(HasSubstr("small7")));
  EXPECT_THAT(svg, HasSubstr("100 hidden frames, 50 samples pruned"));
  RenderOptions o;
  ASSERT_TRUE(ParseMinWidth("0", &o).ok());
  EXPECT_THAT(Render(p, o), HasSubstr("small7"));
  ASSERT_TRUE(ParseMinWidth("50%", &o).ok());
  EXPECT_TRUE(o.min_width_percent);
  EXPECT_THAT(Render(p, o), Not(HasSubstr("leaf")));
  EXPECT_FALSE(ParseMinWidth("x%", &o).ok());
}

TEST(FlamegraphTest, PrunedProfileStillShowsHiddenCounts) {
  const Profile p = FromFolded("main;big 100\nmain;small;x 1\n").Pruned(10);
  RenderOptions o;
  ASSERT_TRUE(ParseMinWidth("0", &o).ok());
  EXPECT_THAT(Render(p, o), HasSubstr("2 hidden frames, 1 samples pruned"));
}

TEST(FlamegraphTest, TotalOverrideNarrowsFrames) {
  const Profile p = FromFolded(kSample);
  RenderOptions o;
  o.total = 200;
  EXPECT_THAT(Render(p, o), HasSubstr("<title>all (100 samples, 50.00%)</title>"));
  o.total = 10;  // smaller than the real total: ignored
  EXPECT_THAT(Render(p, o), HasSubstr("<title>all (100 samples, 100.00%)</title>"));
}

TEST(FlamegraphTest, ReverseAndFlameChartChangeLayout) {
  const Profile p = FromFolded("a;x 3\nb;x 4\n");
  RenderOptions o;
  o.reverse = true;
  const std::string svg = Render(p, o);
  EXPECT_THAT(svg, HasSubstr("<title>x (7 samples, 100.00%)</title>"));
  Profile chart(Profile::ChildMatching::kAdjacent);
  FoldedReader reader(&chart);
  ASSERT_TRUE(reader.ReadString("z 1\na 1\nz 1\n").ok());
  o = RenderOptions();
  o.flamechart = true;
  const std::string fc = Render(chart, o);
  EXPECT_EQ(Count(fc, "<title>z ("), 2);
  EXPECT_LT(fc.find("<title>z ("), fc.find("<title>a ("));
}

TEST(FlamegraphTest, PalettesAreDeterministicAndDistinct) {
  const Profile p = FromFolded("$exec::main;std::mem::copy;$kernel::syscall_x 5\n");
  RenderOptions o;
  ASSERT_TRUE(ParsePalette("masm").ok());
  o.palette = *ParsePalette("masm");
  const std::string masm = Render(p, o);
  EXPECT_EQ(masm, Render(p, o));
  o.palette = Palette::kBlue;
  EXPECT_NE(masm, Render(p, o));
  o.hash = true;
  EXPECT_NE(masm, Render(p, o));
  EXPECT_FALSE(ParsePalette("rainbow").ok());
  o.bg_colors = "#123456";
  EXPECT_THAT(Render(p, o), HasSubstr("stop-color=\"#123456\""));
  o.bg_colors = "plaid";
  std::ostringstream out;
  EXPECT_TRUE(absl::IsInvalidArgument(RenderSvg(p, o, out)));
}

TEST(FlamegraphTest, EmptyProfileIsFailedPreconditionWithErrorSvg) {
  Profile p;
  std::ostringstream out;
  EXPECT_TRUE(absl::IsFailedPrecondition(RenderSvg(p, RenderOptions(), out)));
  EXPECT_THAT(out.str(), HasSubstr("ERROR: No valid input provided"));
}

TEST(FlamegraphTest, SvgzRoundTrips) {
  const Profile p = FromFolded(kSample);
  const std::string path = ::testing::TempDir() + "/renderer_test.svgz";
  ASSERT_TRUE(WriteSvgFile(p, RenderOptions(), path).ok());
  gzFile f = gzopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string data;
  char buf[4096];
  for (int n; (n = gzread(f, buf, sizeof(buf))) > 0;) data.append(buf, static_cast<size_t>(n));
  gzclose(f);
  EXPECT_EQ(data, Render(p));
  std::ifstream raw(path, std::ios::binary);
  char magic[2];
  raw.read(magic, 2);
  EXPECT_EQ(static_cast<unsigned char>(magic[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(magic[1]), 0x8b);
  std::remove(path.c_str());
  const std::string plain = ::testing::TempDir() + "/renderer_test.svg";
  ASSERT_TRUE(WriteSvgFile(p, RenderOptions(), plain).ok());
  std::ifstream in(plain, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), Render(p));
  std::remove(plain.c_str());
}

TEST(FlamegraphTest, DiffColoursGrowthRedShrinkBlueAndMarksNewAndVanished) {
  const Profile before = FromFolded("main;same 50\nmain;shrink 40\nmain;gone 10\n");
  const Profile after = FromFolded("main;same 50\nmain;shrink 10\nmain;grow 30\n");
  const ProfileDiff d = ProfileDiff::Compute(before, after);
  std::ostringstream out;
  RenderOptions o;
  ASSERT_TRUE(RenderDiffSvg(d, o, out).ok());
  const std::string svg = out.str();
  auto frame_of = [&](const std::string& name) {
    const size_t at = svg.find("<title>" + name + " (");
    EXPECT_NE(at, std::string::npos) << name;
    const size_t g = svg.rfind("<g", at);
    return svg.substr(g, svg.find("</g>", at) - g);
  };
  EXPECT_THAT(frame_of("grow"), HasSubstr("class=\"new\""));
  EXPECT_THAT(frame_of("grow"),
              HasSubstr("fill=\"rgb(255,50,50)\""));  // max delta: saturated
  EXPECT_THAT(frame_of("grow"), HasSubstr("self +30"));
  EXPECT_THAT(frame_of("gone"), HasSubstr("class=\"gone\""));
  EXPECT_THAT(frame_of("gone"), HasSubstr("vanished"));
  EXPECT_THAT(frame_of("shrink"), HasSubstr("fill=\"rgb(50,50,255)\""));
  EXPECT_THAT(frame_of("shrink"), HasSubstr("before 40, after 10"));
  EXPECT_THAT(frame_of("same"), HasSubstr("fill=\"rgb(250,250,250)\""));
  EXPECT_THAT(frame_of("main"), HasSubstr("incl -10"));
  // Negate swaps the hues.
  o.negate = true;
  std::ostringstream neg;
  ASSERT_TRUE(RenderDiffSvg(d, o, neg).ok());
  EXPECT_THAT(neg.str(), HasSubstr("fill=\"rgb(50,50,255)\" rx"));
  // Width from "after" only: the vanished frame disappears.
  o = RenderOptions();
  o.diff_width = DiffWidth::kAfter;
  std::ostringstream after_only;
  ASSERT_TRUE(RenderDiffSvg(d, o, after_only).ok());
  EXPECT_THAT(after_only.str(), Not(HasSubstr("<title>gone")));
}

}  // namespace
}  // namespace flamefleet::renderer
