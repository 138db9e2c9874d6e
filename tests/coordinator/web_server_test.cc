// The web view over HTTP: a WebServer on an OS-chosen loopback port in front of a real
// BatchManager (in-memory store, in-process renderer), requested with cpp-httplib's client.
// Covers auth (token header, login cookie), 404s for unknown batches, jobs and traversal
// attempts, 400s for bad query parameters, escaping of job names, labels and errors, deltas
// against the previous batch with the same labels, sorting, pagination, downloads and the diff.
#include "coordinator/web/web_server.h"

#include <httplib.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "coordinator/clock.h"
#include "coordinator/job_store.h"
#include "coordinator/render_client.h"
#include "coordinator/scheduler.h"
#include "coordinator/web/internal/html.h"
#include "coordinator/web/internal/pages.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "profile/profile_proto.h"
#include "runner/run_stats.h"
#include "runner/summary.h"
#include "tests/testing/profile_helpers.h"
#include "tests/testing/status_matchers.h"
#include "vm/vm.h"

namespace flamefleet::coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testutil::FromFolded;

constexpr char kToken[] = "s3cret-token";
constexpr char kScriptName[] = "evil/<script>alert(1)</script>.masm";
constexpr char kScriptError[] = "<script>alert(2)</script> at evil.masm:3:7: unknown instruction";

v1::SubmitBatchRequest Request(const std::vector<std::string>& names,
                               const std::map<std::string, std::string>& labels) {
  v1::SubmitBatchRequest request;
  int i = 0;
  for (const std::string& name : names) {
    v1::JobSpec* job = request.add_jobs();
    job->set_name(name);
    job->set_source(absl::StrCat("begin push.", i++, " drop end"));
  }
  for (const auto& [k, v] : labels) (*request.mutable_labels())[k] = v;
  request.mutable_options()->set_no_cache(true);
  return request;
}

class WebServerTest : public ::testing::Test {
 protected:
  WebServerTest() {
    scheduler_ = std::make_unique<JobScheduler>(&clock_, SchedulerOptions{});
    manager_ = std::make_unique<BatchManager>(&store_, scheduler_.get(), &render_, &clock_,
                                              BatchManagerOptions{.sweep_interval = {}});
    EXPECT_OK(manager_->Recover());
  }
  ~WebServerTest() override {
    if (web_) web_->Shutdown();
    manager_->Shutdown();
  }

  void Serve(WebServerOptions options = {}) {
    ASSERT_OK_AND_ASSIGN(web_, WebServer::Start(manager_.get(), std::move(options)));
    client_ = std::make_unique<httplib::Client>("127.0.0.1", web_->port());
  }

  // Runs a batch: every job succeeds with "$main;<name> <cycles[i]>", except the names in
  // `failing`, which fail with kScriptError. Returns its id.
  std::string RunBatch(const std::vector<std::string>& names, const std::vector<uint64_t>& cycles,
                       const std::map<std::string, std::string>& labels = {{"suite", "nightly"}},
                       const std::vector<std::string>& failing = {}) {
    absl::StatusOr<std::string> id = manager_->SubmitBatch(Request(names, labels));
    EXPECT_OK(id);
    while (true) {
      absl::StatusOr<std::optional<v1::Task>> task =
          manager_->LeaseTask("w1", absl::ZeroDuration(), {});
      EXPECT_OK(task);
      if (!task.ok() || !task->has_value()) break;
      const v1::Task& t = **task;
      v1::TaskHeader header;
      header.set_task_id(t.task_id());
      header.set_lease_id(t.lease_id());
      std::string bytes;
      if (std::find(failing.begin(), failing.end(), t.job().name()) != failing.end()) {
        header.set_succeeded(false);
        header.set_error(kScriptError);
      } else {
        uint64_t index = 0;
        EXPECT_TRUE(absl::SimpleAtoi(t.task_id().substr(t.task_id().rfind('/') + 1), &index));
        const std::string folded = absl::StrCat("$main;", t.job().name(), " ", cycles[index], "\n");
        bytes = profile::SerializeProfile(FromFolded(folded));
        header.set_succeeded(true);
        header.set_cycles(cycles[index]);
        header.add_stack(42);
      }
      header.set_profile_bytes(bytes.size());
      EXPECT_OK(manager_->CompleteTask(header, bytes));
    }
    return id.ok() ? *id : "";
  }

  // Runs a batch of v0.25 programs (name, source) with labels {suite: traced}: each job runs
  // here as a worker runs it (runner::ProfileProgramWithStats with the trace shape) and
  // completes with its profile and summary. Returns the batch id and each job's padded length.
  std::pair<std::string, std::map<std::string, uint64_t>> RunTracedBatch(
      const std::vector<std::pair<std::string, std::string>>& jobs) {
    v1::SubmitBatchRequest request;
    for (const auto& [name, source] : jobs) {
      v1::JobSpec* job = request.add_jobs();
      job->set_name(name);
      job->set_source(source);
      job->set_dialect("v0.25");
    }
    (*request.mutable_labels())["suite"] = "traced";
    request.mutable_options()->set_no_cache(true);
    absl::StatusOr<std::string> id = manager_->SubmitBatch(request);
    EXPECT_OK(id);
    std::map<std::string, uint64_t> padded;
    while (true) {
      absl::StatusOr<std::optional<v1::Task>> task =
          manager_->LeaseTask("w1", absl::ZeroDuration(), {});
      EXPECT_OK(task);
      if (!task.ok() || !task->has_value()) break;
      const v1::Task& t = **task;
      vm::AssemblerOptions options;
      options.dialect = vm::Dialect::kV0_25;
      absl::StatusOr<vm::Program> program =
          vm::Assembler(options).AssembleSource(t.job().name(), t.job().source());
      EXPECT_OK(program);
      if (!program.ok()) break;
      const vm::ProgramInputs inputs;
      runner::StatsOptions stats;
      stats.trace_shape = true;
      absl::StatusOr<runner::StatsRun> run =
          runner::ProfileProgramWithStats(*program, inputs, {}, stats);
      EXPECT_OK(run);
      if (!run.ok()) break;
      const runner::JobSummary summary = runner::MakeJobSummary(
          {.job = t.job().name(), .program = &*program, .inputs = &inputs, .run = &*run});
      EXPECT_TRUE(summary.stats.trace_shape.has_value());
      if (summary.stats.trace_shape.has_value()) {
        padded[t.job().name()] = summary.stats.trace_shape->totals.padded_len;
      }
      const std::string bytes = profile::SerializeProfile(run->profile);
      v1::TaskHeader header;
      header.set_task_id(t.task_id());
      header.set_lease_id(t.lease_id());
      header.set_succeeded(true);
      header.set_cycles(run->result.cycles);
      header.set_profile_bytes(bytes.size());
      EXPECT_OK(manager_->CompleteTask(header, bytes,
                                       runner::JobSummaryToProto(summary).SerializeAsString()));
    }
    return {id.ok() ? *id : "", padded};
  }

  httplib::Result Get(const std::string& path, const httplib::Headers& headers = {}) {
    return client_->Get(path.c_str(), headers);
  }

  FakeClock clock_;
  InMemoryJobStore store_;
  InProcessRenderClient render_;
  std::unique_ptr<JobScheduler> scheduler_;
  std::unique_ptr<BatchManager> manager_;
  std::unique_ptr<WebServer> web_;
  std::unique_ptr<httplib::Client> client_;
};

TEST(WebHtmlTest, EscapingAndUrlEncodingLeaveNoMarkupOrDelimiters) {
  EXPECT_EQ(web::internal::Html("<a href=\"x\" onclick='y'>&amp;</a>"),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
  EXPECT_EQ(web::internal::Html("plain v0_25/fib.masm"), "plain v0_25/fib.masm");
  EXPECT_EQ(web::internal::UrlPath("a b/<c>?#%.masm"), "a%20b/%3Cc%3E%3F%23%25.masm");
  EXPECT_EQ(web::internal::UrlQuery("k=v&x/y"), "k%3Dv%26x%2Fy");
  EXPECT_EQ(web::internal::Cycles(1234567), "1,234,567");
  EXPECT_EQ(web::internal::SignedCycles(-1000), "-1,000");
  EXPECT_EQ(web::internal::SignedCycles(INT64_MIN), "-9,223,372,036,854,775,808");
  EXPECT_EQ(web::internal::Duration(61'000), "1 min 01 s");
}

TEST_F(WebServerTest, ListsBatchesNewestFirstFilteredLikeList) {
  Serve();
  const std::string a = RunBatch({"a.masm"}, {10});
  const std::string b = RunBatch({"a.masm"}, {10}, {{"suite", "weekly"}});
  const std::string c =
      RunBatch({"a.masm", "b.masm"}, {10, 20}, {{"suite", "nightly"}}, {"b.masm"});
  auto res = Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/html; charset=utf-8");
  const std::string& body = res->body;
  const size_t pos_a = body.find("href=\"/batches/" + a + "\"");
  const size_t pos_b = body.find("href=\"/batches/" + b + "\"");
  const size_t pos_c = body.find("href=\"/batches/" + c + "\"");
  ASSERT_NE(pos_a, std::string::npos);
  ASSERT_NE(pos_b, std::string::npos);
  ASSERT_NE(pos_c, std::string::npos);
  EXPECT_LT(pos_c, pos_b);
  EXPECT_LT(pos_b, pos_a);

  res = Get("/?label=suite%3Dnightly");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr("href=\"/batches/" + a + "\""));
  EXPECT_THAT(res->body, Not(HasSubstr("href=\"/batches/" + b + "\"")));
  res = Get("/?label=suite%3Dnightly&state=failed");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr("href=\"/batches/" + c + "\""));
  EXPECT_THAT(res->body, Not(HasSubstr("href=\"/batches/" + a + "\"")));

  // The JSON the page polls: the same list.
  res = Get("/api/batches?state=SUCCEEDED");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const nlohmann::json j = nlohmann::json::parse(res->body);
  ASSERT_EQ(j["batches"].size(), 2u);
  EXPECT_EQ(j["batches"][0]["id"], b);
  EXPECT_EQ(j["batches"][1]["id"], a);
  EXPECT_TRUE(j["signature"].is_string());
}

TEST_F(WebServerTest, BadQueryParametersAre400NamingThem) {
  Serve();
  struct Case {
    std::string path;
    std::string message;
  } const cases[] = {
      {"/?state=DONE", "state: &quot;DONE&quot; is not RUNNING"},
      {"/?limit=0", "limit"},
      {"/?limit=501", "limit"},
      {"/?limit=12x", "limit"},
      {"/?label=nokey", "label: expects KEY=VALUE"},
      {"/?colour=red", "unknown query parameter &quot;colour&quot;"},
      {"/?state=FAILED&state=RUNNING", "given twice"},
      {"/?label=" + std::string(5000, 'x'), "the limit is 4096"},
      {"/diff?before=1", "diff needs ?before=BATCH&amp;after=BATCH"},
  };
  for (const Case& c : cases) {
    auto res = Get(c.path);
    ASSERT_TRUE(res) << c.path;
    EXPECT_EQ(res->status, 400) << c.path;
    EXPECT_THAT(res->body, HasSubstr(c.message)) << c.path;
  }
  const std::string id = RunBatch({"a.masm"}, {10});
  for (const std::string& path :
       {"/batches/" + id + "?sort=size", "/batches/" + id + "?order=up",
        "/batches/" + id + "?page=2", "/batches/" + id + "/aggregate?format=png",
        "/batches/" + id + "/aggregate", "/diff?before=" + id + "&after=" + id + "&top=0"}) {
    auto res = Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 400) << path;
  }
}

TEST_F(WebServerTest, UnknownBatchesJobsAndTraversalAre404) {
  Serve();
  const std::string id = RunBatch({"dir/a.masm"}, {10});
  for (const std::string& path : {
           std::string("/batches/99"),
           std::string("/batches/99/jobs/a.masm"),
           "/batches/" + id + "/jobs/..%2F..%2Fetc",
           "/batches/" + id + "/jobs/../../etc/passwd",
           "/batches/" + id + "/jobs/dir/../dir/a.masm",
           "/batches/" + id + "/jobs/%2Fetc%2Fpasswd",
           "/batches/" + id + "/jobs/nope.masm",
           "/batches/" + id + "/jobs/nope.masm?format=svg",
           std::string("/batches/..%2F..%2Fetc"),
           std::string("/batches/1%00"),
           std::string("/api/batches/99"),
           "/batches/" + id + "/elsewhere",
           std::string("/etc/passwd"),
           std::string("/static/../etc/passwd"),
       }) {
    auto res = Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_THAT(res->body, Not(HasSubstr("root:"))) << path;
  }
  auto ok = Get("/batches/" + id + "/jobs/dir/a.masm");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  // Read-only: nothing but GET (and the login form).
  auto post = client_->Post(("/batches/" + id).c_str(), "", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
}

TEST_F(WebServerTest, JobNamesLabelsAndErrorsAreShownAsText) {
  Serve();
  const std::string id =
      RunBatch({"ok.masm", kScriptName}, {10, 0}, {{"team", "<b onmouseover=x>"}}, {kScriptName});
  auto res = Get("/batches/" + id);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_THAT(res->body, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(res->body, Not(HasSubstr("<b onmouseover")));
  EXPECT_THAT(res->body, HasSubstr("evil/&lt;script&gt;alert(1)&lt;/script&gt;.masm"));
  EXPECT_THAT(res->body, HasSubstr("&lt;script&gt;alert(2)&lt;/script&gt; at evil.masm:3:7"));
  EXPECT_THAT(res->body, HasSubstr("team=&lt;b onmouseover=x&gt;"));
  // The only script a page loads is /static/web.js, and the policy runs nothing else.
  EXPECT_THAT(res->get_header_value("Content-Security-Policy"), HasSubstr("script-src 'self'"));

  res = Get("/batches/" + id + "/jobs/evil/%3Cscript%3Ealert(1)%3C/script%3E.masm");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_THAT(res->body, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(res->body, HasSubstr("<pre class=\"error\" id=\"error\">&lt;script&gt;alert(2)"));
  EXPECT_THAT(res->body, HasSubstr("FAILED"));

  res = Get("/?label=team%3D%3Cb%20onmouseover%3Dx%3E");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr("href=\"/batches/" + id + "\""));
  EXPECT_THAT(res->body, Not(HasSubstr("<b onmouseover")));
  // An error page quotes what was asked for, escaped.
  res = Get("/batches/" + id + "/jobs/%3Cimg%20src=x%3E");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_THAT(res->body, HasSubstr("&lt;img src=x&gt;"));
  EXPECT_THAT(res->body, Not(HasSubstr("<img")));
}

TEST_F(WebServerTest, TokenIsRequiredAsBearerHeaderOrLoginCookie) {
  WebServerOptions options;
  options.security.token = kToken;
  Serve(options);
  const std::string id = RunBatch({"a.masm"}, {10});
  for (const std::string& path : {std::string("/"), "/batches/" + id, std::string("/api/batches"),
                                  "/batches/" + id + "/aggregate?format=svg",
                                  "/batches/" + id + "/jobs/a.masm", std::string("/nope")}) {
    auto res = Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 401) << path;
    EXPECT_THAT(res->body, Not(HasSubstr("a.masm"))) << path;
    res = Get(path, {{"Authorization", "Bearer wrong"}});
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 401) << path;
  }
  auto res = Get("/", {{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("href=\"/batches/" + id + "\""));
  // The unauthenticated page is the login form; the static files are public (no data).
  res = Get("/");
  EXPECT_THAT(res->body, HasSubstr("action=\"/login\""));
  EXPECT_EQ(Get("/static/web.js")->status, 200);

  auto login = client_->Post("/login", "token=wrong", "application/x-www-form-urlencoded");
  ASSERT_TRUE(login);
  EXPECT_EQ(login->status, 401);
  EXPECT_FALSE(login->has_header("Set-Cookie"));
  login =
      client_->Post("/login", std::string("token=") + kToken, "application/x-www-form-urlencoded");
  ASSERT_TRUE(login);
  EXPECT_EQ(login->status, 303);
  const std::string cookie = login->get_header_value("Set-Cookie");
  EXPECT_THAT(cookie, HasSubstr("; Secure"));
  EXPECT_THAT(cookie, HasSubstr("; HttpOnly"));
  EXPECT_THAT(cookie, HasSubstr("; SameSite=Strict"));
  EXPECT_THAT(cookie, Not(HasSubstr(kToken)));
  const std::string pair = cookie.substr(0, cookie.find(';'));
  res = Get("/batches/" + id, {{"Cookie", "other=1; " + pair}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = Get("/batches/" + id, {{"Cookie", pair + "0"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
}

TEST_F(WebServerTest, BatchPageShowsDeltasAgainstThePreviousBatchWithTheSameLabels) {
  Serve();
  const std::string first = RunBatch({"a.masm", "b.masm", "c.masm"}, {100, 200, 300});
  RunBatch({"a.masm"}, {5}, {{"suite", "other"}});  // other labels: not the predecessor
  const std::string second = RunBatch({"a.masm", "b.masm", "c.masm"}, {150, 180, 300});
  auto res = Get("/batches/" + second);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const std::string& body = res->body;
  EXPECT_THAT(body, HasSubstr("href=\"/diff?before=" + first + "&amp;after=" + second + "\""));
  EXPECT_THAT(body, HasSubstr("+50</td>"));
  EXPECT_THAT(body, HasSubstr("+50.00%"));
  EXPECT_THAT(body, HasSubstr("-20</td>"));
  EXPECT_THAT(body, HasSubstr("id=\"aggregate\""));
  EXPECT_THAT(body, HasSubstr("src=\"/batches/" + second + "/aggregate?format=svg\""));
  // No predecessor for the first one.
  EXPECT_THAT(Get("/batches/" + first)->body, HasSubstr("No earlier ended batch"));

  // Sorted by delta, descending: a (+50), c (0), b (-20).
  res = Get("/batches/" + second + "?sort=delta&order=desc");
  ASSERT_TRUE(res);
  const size_t a = res->body.find(">a.masm</a>");
  const size_t b = res->body.find(">b.masm</a>");
  const size_t c = res->body.find(">c.masm</a>");
  EXPECT_LT(a, c);
  EXPECT_LT(c, b);
  // By cycles, ascending: b (180), a (150)... no: a 150 < b 180 < c 300.
  res = Get("/batches/" + second + "?sort=cycles&order=asc");
  ASSERT_TRUE(res);
  EXPECT_LT(res->body.find(">a.masm</a>"), res->body.find(">b.masm</a>"));
  EXPECT_LT(res->body.find(">b.masm</a>"), res->body.find(">c.masm</a>"));

  // The job page: its delta and the link to the same job in the previous batch.
  res = Get("/batches/" + second + "/jobs/a.masm");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr("+50 (+50.00%)"));
  EXPECT_THAT(res->body, HasSubstr("href=\"/batches/" + first + "/jobs/a.masm\""));
  EXPECT_THAT(res->body, HasSubstr("<pre id=\"stack\">42</pre>"));
  EXPECT_THAT(res->body, HasSubstr("/batches/" + second + "/jobs/a.masm?format=pprof"));
}

// Issue #18: the batch page shows the batch's trace-shape tables and each job's padded trace
// length; a job whose padded length grew since the previous batch with the same labels is marked,
// with a title naming both lengths and that batch; the job page shows its trace shape.
TEST_F(WebServerTest, TraceShapeTablesAndAPaddedLengthThatGrewIsMarked) {
  Serve();
  const std::string hash = "proc hash\n  padw padw padw hperm dropw dropw dropw\nend\n";
  const std::string once = hash + "begin\n  exec.hash\nend\n";
  const std::string many = hash + "begin\n  repeat.60 exec.hash push.1 drop end\nend\n";
  const auto [first, before] = RunTracedBatch({{"h.masm", once}, {"same.masm", once}});
  const auto [second, after] = RunTracedBatch({{"h.masm", many}, {"same.masm", once}});
  ASSERT_EQ(before.size(), 2u);
  ASSERT_EQ(after.size(), 2u);
  ASSERT_GT(after.at("h.masm"), before.at("h.masm"));
  using web::internal::PaddedLength;

  auto res = Get("/batches/" + second);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const std::string& body = res->body;
  EXPECT_THAT(body, HasSubstr("<th class=\"num\">padded</th>"));
  EXPECT_THAT(body, HasSubstr("id=\"trace-shape\""));
  EXPECT_THAT(body, HasSubstr("id=\"trace-procedures\""));
  EXPECT_THAT(body, HasSubstr("<td>$exec::hash</td>"));
  EXPECT_THAT(body,
              HasSubstr(absl::StrCat("title=\"padded ", PaddedLength(before.at("h.masm")), " → ",
                                     PaddedLength(after.at("h.masm")), " since batch ", first,
                                     "\">▲ ", PaddedLength(after.at("h.masm")), "</td>")));
  // same.masm kept its padded length: shown, not marked.
  size_t marks = 0;
  for (size_t at = body.find("padded-changed"); at != std::string::npos;
       at = body.find("padded-changed", at + 1)) {
    ++marks;
  }
  EXPECT_EQ(marks, 1u) << body;
  EXPECT_THAT(body, HasSubstr(absl::StrCat("<td class=\"num padded\">",
                                           PaddedLength(after.at("same.masm")), "</td>")));
  // The first batch has nothing to compare with.
  res = Get("/batches/" + first);
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, Not(HasSubstr("padded-changed")));
  EXPECT_THAT(res->body, HasSubstr("id=\"trace-shape\""));

  // The job page: its trace shape, and the change against the previous batch.
  res = Get("/batches/" + second + "/jobs/h.masm");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("<h2>Trace shape</h2>"));
  EXPECT_THAT(res->body, HasSubstr(absl::StrCat("<span id=\"padded\">",
                                                PaddedLength(after.at("h.masm")), "</span>")));
  EXPECT_THAT(res->body,
              HasSubstr(absl::StrCat("padded ", PaddedLength(before.at("h.masm")), " → ",
                                     PaddedLength(after.at("h.masm")), " since batch ", first)));
  res = Get("/batches/" + second + "/jobs/same.masm");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr("<h2>Trace shape</h2>"));
  EXPECT_THAT(res->body, Not(HasSubstr("padded-changed")));

  // A batch without v0.25 jobs that finished has no trace shape, and says so.
  const std::string plain = RunBatch({"x.masm"}, {10});
  EXPECT_THAT(Get("/batches/" + plain)->body, Not(HasSubstr("id=\"trace-shape\"")));
}

TEST_F(WebServerTest, JobTableIsPaginated) {
  WebServerOptions options;
  options.jobs_per_page = 2;
  Serve(options);
  const std::string id =
      RunBatch({"j0.masm", "j1.masm", "j2.masm", "j3.masm", "j4.masm"}, {1, 2, 3, 4, 5});
  auto res = Get("/batches/" + id + "?page=3");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr(">j4.masm</a>"));
  EXPECT_THAT(res->body, Not(HasSubstr(">j0.masm</a>")));
  EXPECT_THAT(res->body, HasSubstr("page 3 of 3"));
  EXPECT_EQ(Get("/batches/" + id + "?page=4")->status, 400);
  // Sorting applies before the page is cut: the largest first.
  res = Get("/batches/" + id + "?sort=cycles&order=desc&page=1");
  EXPECT_THAT(res->body, HasSubstr(">j4.masm</a>"));
  EXPECT_THAT(res->body, HasSubstr(">j3.masm</a>"));
  EXPECT_THAT(res->body, Not(HasSubstr(">j2.masm</a>")));
}

TEST_F(WebServerTest, DownloadsAreTheCoordinatorsArtifacts) {
  Serve();
  const std::string id = RunBatch({"a.masm", "b.masm"}, {10, 20});
  auto svg = Get("/batches/" + id + "/aggregate?format=svg");
  ASSERT_TRUE(svg);
  EXPECT_EQ(svg->status, 200);
  EXPECT_EQ(svg->get_header_value("Content-Type"), "image/svg+xml");
  EXPECT_THAT(svg->body, HasSubstr("<svg"));
  auto folded = Get("/batches/" + id + "/aggregate?format=folded");
  ASSERT_TRUE(folded);
  EXPECT_EQ(folded->body, *manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_FOLDED));
  EXPECT_THAT(folded->get_header_value("Content-Disposition"), HasSubstr("aggregate.folded"));
  auto pprof = Get("/batches/" + id + "/jobs/b.masm?format=pprof");
  ASSERT_TRUE(pprof);
  EXPECT_EQ(pprof->status, 200);
  ASSERT_GE(pprof->body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(pprof->body[0]), 0x1f);  // gzip
  EXPECT_THAT(pprof->get_header_value("Content-Disposition"), HasSubstr("b.masm.pb.gz"));
  auto speedscope = Get("/batches/" + id + "/jobs/a.masm?format=speedscope");
  ASSERT_TRUE(speedscope);
  EXPECT_EQ(nlohmann::json::parse(speedscope->body)["profiles"].size(), 1u);
  auto job_svg = Get("/batches/" + id + "/jobs/a.masm?format=svg");
  ASSERT_TRUE(job_svg);
  EXPECT_THAT(job_svg->body, HasSubstr("a.masm"));
  auto summary = Get("/batches/" + id + "/summary.json");
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->status, 200);
  EXPECT_EQ(nlohmann::json::parse(summary->body)["schema"], "flamefleet.batch-summary/1");

  // A running batch has no aggregate yet: 409, and the page says when it comes.
  ASSERT_OK_AND_ASSIGN(std::string running,
                       manager_->SubmitBatch(Request({"x.masm"}, {{"suite", "nightly"}})));
  EXPECT_EQ(Get("/batches/" + running + "/aggregate?format=svg")->status, 409);
  auto page = Get("/batches/" + running);
  EXPECT_THAT(page->body, HasSubstr("The aggregate is built when the batch ends"));
  EXPECT_THAT(page->body, HasSubstr("data-poll=\"/api/batches/" + running + "\""));
  EXPECT_EQ(Get("/diff?before=" + id + "&after=" + running)->status, 409);
}

TEST_F(WebServerTest, DiffReportsWhatTheCliDiffReports) {
  Serve();
  const std::string before = RunBatch({"a.masm", "b.masm", "gone.masm"}, {100, 200, 7});
  const std::string after = RunBatch({"a.masm", "b.masm", "new.masm"}, {130, 150, 9});
  auto res = Get("/diff?before=" + before + "&after=" + after);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const std::string& body = res->body;
  EXPECT_THAT(body, HasSubstr("jobs: 2 on both sides (1 grew, 1 shrank, 0 unchanged), 1 added, "
                              "1 removed"));
  EXPECT_THAT(body, HasSubstr("Jobs that grew most (top 1)"));
  EXPECT_THAT(body, HasSubstr(">a.masm</a></td><td class=\"num\">100</td><td class=\"num\">130"
                              "</td><td class=\"num grew\">+30</td><td class=\"num grew\">"
                              "+30.00%</td>"));
  EXPECT_THAT(body, HasSubstr(">new.masm</a></td><td class=\"num\">0</td><td class=\"num\">9"));
  EXPECT_THAT(body, HasSubstr(">gone.masm</a></td><td class=\"num\">7</td><td class=\"num\">0"));
  EXPECT_THAT(body, HasSubstr("<td>all jobs</td><td class=\"num\">307</td><td class=\"num\">289"));
  auto svg = Get("/diff?before=" + before + "&after=" + after + "&format=svg");
  ASSERT_TRUE(svg);
  EXPECT_EQ(svg->status, 200);
  EXPECT_EQ(svg->get_header_value("Content-Type"), "image/svg+xml");
  EXPECT_THAT(svg->body, HasSubstr("Differential Flame Graph"));
  EXPECT_EQ(Get("/diff?before=" + before + "&after=99")->status, 404);
  EXPECT_EQ(Get("/diff?before=..%2Fx&after=" + after)->status, 404);
}

TEST_F(WebServerTest, OptionsOutOfRangeAreRefused) {
  WebServerOptions options;
  options.jobs_per_page = 0;
  EXPECT_THAT(
      WebServer::Start(manager_.get(), options),
      testutil::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--http-jobs-per-page")));
  options.jobs_per_page = 10;
  options.listen = "nonsense";
  EXPECT_THAT(WebServer::Start(manager_.get(), options),
              testutil::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--http-listen")));
  // A port in use is refused, not shared.
  Serve();
  options.listen = absl::StrCat("127.0.0.1:", web_->port());
  EXPECT_THAT(WebServer::Start(manager_.get(), options),
              testutil::StatusIs(absl::StatusCode::kUnavailable, HasSubstr("cannot listen")));
}

std::string ReadTestFile(const std::string& name) {
  std::ifstream in(std::string(FLAMEFLEET_TLS_TESTDATA) + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(WebServerTest, WithACertificateThePortServesHttpsOnly) {
  WebServerOptions options;
  options.security.cert_chain_pem = ReadTestFile("server.pem");
  options.security.private_key_pem = ReadTestFile("server.key");
  ASSERT_FALSE(options.security.cert_chain_pem.empty());
  Serve(options);
  EXPECT_TRUE(web_->https());
  httplib::SSLClient tls("127.0.0.1", web_->port());
  tls.set_ca_cert_path((std::string(FLAMEFLEET_TLS_TESTDATA) + "/ca.pem").c_str());
  tls.enable_server_certificate_verification(true);
  auto res = tls.Get("/");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  // Plain HTTP on the same port gets no page.
  auto plain = Get("/");
  EXPECT_TRUE(!plain || plain->status != 200);
}

TEST_F(WebServerTest, WithClientAuthOnlyClientsWithACertificateOfTheCaGetPages) {
  const std::string dir = FLAMEFLEET_TLS_TESTDATA;
  WebServerOptions options;
  options.security.cert_chain_pem = ReadTestFile("server.pem");
  options.security.private_key_pem = ReadTestFile("server.key");
  options.security.ca_pem = ReadTestFile("ca.pem");
  options.security.client_auth = true;
  Serve(options);
  httplib::SSLClient with_cert("127.0.0.1", web_->port(), dir + "/client.pem", dir + "/client.key");
  with_cert.set_ca_cert_path((dir + "/ca.pem").c_str());
  with_cert.enable_server_certificate_verification(true);
  auto res = with_cert.Get("/");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  httplib::SSLClient without("127.0.0.1", web_->port());
  without.set_ca_cert_path((dir + "/ca.pem").c_str());
  without.enable_server_certificate_verification(true);
  EXPECT_FALSE(without.Get("/"));
  // A certificate of another CA is refused too.
  httplib::SSLClient other("127.0.0.1", web_->port(), dir + "/other.pem", dir + "/other.key");
  other.set_ca_cert_path((dir + "/ca.pem").c_str());
  other.enable_server_certificate_verification(true);
  EXPECT_FALSE(other.Get("/"));
}

}  // namespace
}  // namespace flamefleet::coordinator
