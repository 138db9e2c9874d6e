#include "coordinator/artifacts.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "coordinator/job_store.h"
#include "coordinator/profile_merger.h"
#include "coordinator/render_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/profile_proto.h"
#include "tests/testing/profile_helpers.h"
#include "tests/testing/status_matchers.h"

namespace flamefleet::coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testutil::FromFolded;
using testutil::StatusIs;
using testutil::ToFolded;

// A renderer that is down; counts its calls.
class DownRenderClient : public RenderClient {
 public:
  absl::StatusOr<std::string> RenderSvg(const profile::Profile& /*profile*/,
                                        const v1::RenderOptions& /*options*/) override {
    ++calls;
    return absl::UnavailableError("renderer down");
  }
  int calls = 0;
};

class ArtifactsTest : public ::testing::Test {
 protected:
  // Stores the profile of `folded` and returns its digest.
  std::string StoreProfile(const std::string& folded) {
    absl::StatusOr<std::string> digest =
        store_.PutArtifact(profile::SerializeProfile(FromFolded(folded)));
    EXPECT_OK(digest);
    return digest.value_or("");
  }

  InMemoryJobStore store_;
  InProcessRenderClient render_;
  Artifacts artifacts_{&store_, &render_, absl::Seconds(5)};
};

TEST_F(ArtifactsTest, MergeStoredProfilesAddsEachTaskOnce) {
  const std::string a = StoreProfile("$main;a 10\n");
  const std::string b = StoreProfile("$main;b 5\n");
  ProfileMerger merger;
  ASSERT_OK(artifacts_.MergeStoredProfiles({{"1/0", a}, {"1/1", b}, {"1/0", a}}, &merger));
  EXPECT_EQ(merger.count(), 2u);
  EXPECT_EQ(ToFolded(merger.aggregate()), "$main;a 10\n$main;b 5\n");
}

TEST_F(ArtifactsTest, FetchByJobBuildsTheByJobAggregateOnceWhenNoneWasStored) {
  // A batch that ended before by-job aggregates were stored: the first fetch builds it from
  // the jobs (each task once), stores its profile and the derived artifact.
  const std::string a = StoreProfile("$main;a 10\n");
  const std::string b = StoreProfile("$main;b 5\n");
  const std::vector<StoredJobProfile> jobs = {
      {"6/0", "a.masm", a}, {"6/1", "b.masm", b}, {"6/0", "a.masm", a}};
  ASSERT_OK_AND_ASSIGN(std::string folded,
                       artifacts_.FetchByJob("6", v1::ARTIFACT_FORMAT_FOLDED, jobs, {}));
  EXPECT_EQ(folded, "a.masm;$main;a 10\nb.masm;$main;b 5\n");
  EXPECT_OK(store_.FindArtifact("6", kByJobArtifactKey, v1::ARTIFACT_FORMAT_PROFILE));
  EXPECT_OK(store_.FindArtifact("6", kByJobArtifactKey, v1::ARTIFACT_FORMAT_FOLDED));
  // The merged aggregate is not touched.
  EXPECT_THAT(store_.FindArtifact("6", "", v1::ARTIFACT_FORMAT_PROFILE),
              StatusIs(absl::StatusCode::kNotFound));
  // Stored: later fetches need no job profiles.
  ASSERT_OK_AND_ASSIGN(std::string again,
                       artifacts_.FetchByJob("6", v1::ARTIFACT_FORMAT_FOLDED, {}, {}));
  EXPECT_EQ(again, folded);
  v1::RenderOptions options;
  options.set_title("by job");
  ASSERT_OK_AND_ASSIGN(std::string svg,
                       artifacts_.FetchByJob("6", v1::ARTIFACT_FORMAT_SVG, {}, options));
  EXPECT_THAT(svg, HasSubstr("a.masm"));
}

TEST_F(ArtifactsTest, MergeStoredProfilesNamesTheTaskOfAMissingProfile) {
  ProfileMerger merger;
  EXPECT_THAT(artifacts_.MergeStoredProfiles({{"4/2", std::string(64, 'f')}}, &merger),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("4/2: ")));
}

TEST_F(ArtifactsTest, StoreAggregateIndexesProfileAndFolded) {
  ASSERT_OK(artifacts_.StoreAggregate("3", FromFolded("$main;a 2\n$main 1\n")));
  ASSERT_OK_AND_ASSIGN(std::string folded_digest,
                       store_.FindArtifact("3", "", v1::ARTIFACT_FORMAT_FOLDED));
  ASSERT_OK_AND_ASSIGN(std::string folded, store_.GetArtifact(folded_digest));
  EXPECT_EQ(folded, "$main 1\n$main;a 2\n");
  ASSERT_OK_AND_ASSIGN(std::string profile_digest,
                       store_.FindArtifact("3", "", v1::ARTIFACT_FORMAT_PROFILE));
  ASSERT_OK_AND_ASSIGN(std::string bytes, store_.GetArtifact(profile_digest));
  ASSERT_OK_AND_ASSIGN(profile::Profile stored, profile::ParseProfile(bytes));
  EXPECT_EQ(stored.total(), 3u);
  EXPECT_THAT(store_.FindArtifact("3", "", v1::ARTIFACT_FORMAT_SVG),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(ArtifactsTest, RenderAggregateSvgStoresTheTitledSvg) {
  BatchRecord batch;
  batch.id = "5";
  batch.options.set_title("nightly run");
  artifacts_.RenderAggregateSvg(batch, FromFolded("$main 4\n"), 2);
  ASSERT_OK_AND_ASSIGN(std::string digest, store_.FindArtifact("5", "", v1::ARTIFACT_FORMAT_SVG));
  ASSERT_OK_AND_ASSIGN(std::string svg, store_.GetArtifact(digest));
  EXPECT_THAT(svg, HasSubstr("nightly run"));
  EXPECT_THAT(svg, HasSubstr("2 jobs, 4 cycles"));
}

TEST_F(ArtifactsTest, RenderFailureIsNotStoredAndFetchRendersLater) {
  DownRenderClient down;
  Artifacts artifacts(&store_, &down, absl::Milliseconds(10));
  BatchRecord batch;
  batch.id = "6";
  ASSERT_OK(artifacts.StoreAggregate("6", FromFolded("$main 4\n")));
  artifacts.RenderAggregateSvg(batch, FromFolded("$main 4\n"), 1);
  EXPECT_EQ(down.calls, 1);
  EXPECT_THAT(store_.FindArtifact("6", "", v1::ARTIFACT_FORMAT_SVG),
              StatusIs(absl::StatusCode::kNotFound));
  // Still down: the fetch fails with the renderer's error and stores nothing.
  EXPECT_THAT(
      artifacts.Fetch("6", "", v1::ARTIFACT_FORMAT_SVG, "", BatchRenderOptions(batch, 1, 4)),
      StatusIs(absl::StatusCode::kUnavailable, "renderer down"));
  // Back up: rendered from the stored aggregate profile, then stored.
  ASSERT_OK_AND_ASSIGN(std::string svg, artifacts_.Fetch("6", "", v1::ARTIFACT_FORMAT_SVG, "",
                                                         BatchRenderOptions(batch, 1, 4)));
  EXPECT_THAT(svg, HasSubstr("flamefleet batch 6"));
  EXPECT_OK(store_.FindArtifact("6", "", v1::ARTIFACT_FORMAT_SVG));
}

TEST_F(ArtifactsTest, FetchDerivesJobFoldedOnceAndThenServesTheStoredOne) {
  const std::string digest = StoreProfile("$main;f 6\n");
  ASSERT_OK(store_.IndexArtifact("2", "a.masm", v1::ARTIFACT_FORMAT_PROFILE, digest));
  ASSERT_OK_AND_ASSIGN(std::string folded,
                       artifacts_.Fetch("2", "a.masm", v1::ARTIFACT_FORMAT_FOLDED, digest,
                                        JobRenderOptions("a.masm")));
  EXPECT_EQ(folded, "$main;f 6\n");
  ASSERT_OK_AND_ASSIGN(std::string folded_digest,
                       store_.FindArtifact("2", "a.masm", v1::ARTIFACT_FORMAT_FOLDED));
  // The stored artifact is what later fetches return, whatever profile they name.
  ASSERT_OK_AND_ASSIGN(std::string changed, store_.PutArtifact("changed"));
  ASSERT_OK(store_.IndexArtifact("2", "a.masm", v1::ARTIFACT_FORMAT_FOLDED, changed));
  ASSERT_OK_AND_ASSIGN(std::string again,
                       artifacts_.Fetch("2", "a.masm", v1::ARTIFACT_FORMAT_FOLDED, digest, {}));
  EXPECT_EQ(again, "changed");
  EXPECT_NE(folded_digest, *store_.FindArtifact("2", "a.masm", v1::ARTIFACT_FORMAT_FOLDED));
  // PROFILE is the stored bytes themselves.
  ASSERT_OK_AND_ASSIGN(std::string bytes,
                       artifacts_.Fetch("2", "a.masm", v1::ARTIFACT_FORMAT_PROFILE, digest, {}));
  EXPECT_EQ(bytes, *store_.GetArtifact(digest));
}

TEST_F(ArtifactsTest, FetchRefusesToDrawAnEmptyProfile) {
  const std::string digest = StoreProfile("");
  EXPECT_THAT(
      artifacts_.Fetch("2", "e.masm", v1::ARTIFACT_FORMAT_SVG, digest, {}),
      StatusIs(absl::StatusCode::kFailedPrecondition, "job \"e.masm\" has no cycles to draw"));
  ASSERT_OK(store_.IndexArtifact("2", "", v1::ARTIFACT_FORMAT_PROFILE, digest));
  EXPECT_THAT(
      artifacts_.Fetch("2", "", v1::ARTIFACT_FORMAT_SVG, "", {}),
      StatusIs(absl::StatusCode::kFailedPrecondition, "the aggregate has no cycles to draw"));
  EXPECT_THAT(artifacts_.Fetch("2", "e.masm", static_cast<v1::ArtifactFormat>(9), digest, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, "format: unknown artifact format 9"));
  EXPECT_THAT(artifacts_.Fetch("3", "", v1::ARTIFACT_FORMAT_FOLDED, "", {}),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(ArtifactsTest, AggregateEncodesTheMergedProfileInTheRequestedFormat) {
  const std::vector<std::pair<std::string, std::string>> profiles = {
      {"1/0", StoreProfile("$main;a 10\n")}, {"2/0", StoreProfile("$main;a 5\n$main 1\n")}};
  v1::AggregateRequest request;
  request.set_format(v1::ARTIFACT_FORMAT_FOLDED);
  ASSERT_OK_AND_ASSIGN(AggregateResult folded, artifacts_.Aggregate(request, {"1", "2"}, profiles));
  EXPECT_THAT(folded.batch_ids, ::testing::ElementsAre("1", "2"));
  EXPECT_EQ(folded.jobs, 2u);
  EXPECT_EQ(folded.cycles, 16u);
  EXPECT_EQ(folded.data, "$main 1\n$main;a 15\n");
  request.set_format(v1::ARTIFACT_FORMAT_PROFILE);
  ASSERT_OK_AND_ASSIGN(AggregateResult bytes, artifacts_.Aggregate(request, {"1", "2"}, profiles));
  ASSERT_OK_AND_ASSIGN(profile::Profile parsed, profile::ParseProfile(bytes.data));
  EXPECT_EQ(ToFolded(parsed), folded.data);
  request.set_format(v1::ARTIFACT_FORMAT_SVG);
  request.set_title("all nightlies");
  ASSERT_OK_AND_ASSIGN(AggregateResult svg, artifacts_.Aggregate(request, {"1", "2"}, profiles));
  EXPECT_THAT(svg.data, HasSubstr("all nightlies"));
  EXPECT_THAT(svg.data, HasSubstr("2 batches, 2 jobs, 16 cycles"));
  EXPECT_THAT(svg.data, Not(HasSubstr("flamefleet aggregate")));
  EXPECT_THAT(artifacts_.Aggregate(request, {"1"}, {}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "the matching batches have no cycles to draw"));
}

TEST(RenderOptionsTest, BatchAndJobSvgsAreTitledAndCountCycles) {
  BatchRecord batch;
  batch.id = "9";
  v1::RenderOptions options = BatchRenderOptions(batch, 3, 120);
  EXPECT_EQ(options.title(), "flamefleet batch 9");
  EXPECT_EQ(options.subtitle(), "3 jobs, 120 cycles");
  EXPECT_EQ(options.count_name(), "cycles");
  batch.options.set_title("mine");
  EXPECT_EQ(BatchRenderOptions(batch, 3, 120).title(), "mine");
  EXPECT_EQ(JobRenderOptions("a.masm").title(), "a.masm");
  EXPECT_EQ(JobRenderOptions("a.masm").count_name(), "cycles");
}

}  // namespace
}  // namespace flamefleet::coordinator
