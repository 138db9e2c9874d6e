#include "coordinator/web/internal/pages.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "coordinator/web/internal/html.h"
#include "nlohmann/json.hpp"

namespace flamefleet::coordinator::web::internal {
namespace {

// Longest error shown in a job table cell; the job's page shows all of it (the coordinator
// already bounds it by --max-error-bytes).
constexpr size_t kMaxErrorInTable = 400;

bool Ended(v1::BatchState state) {
  return state == v1::BATCH_STATE_SUCCEEDED || state == v1::BATCH_STATE_FAILED ||
         state == v1::BATCH_STATE_CANCELLED;
}

bool HasAggregate(v1::BatchState state) {
  return state == v1::BATCH_STATE_SUCCEEDED || state == v1::BATCH_STATE_FAILED;
}

std::string BatchHref(absl::string_view id) { return absl::StrCat("/batches/", UrlPath(id)); }

std::string JobHref(absl::string_view batch_id, absl::string_view job) {
  return absl::StrCat("/batches/", UrlPath(batch_id), "/jobs/", UrlPath(job));
}

std::string DiffHref(absl::string_view before, absl::string_view after) {
  return absl::StrCat("/diff?before=", UrlQuery(before), "&amp;after=", UrlQuery(after));
}

std::string StateCell(const std::string& name) {
  return absl::StrCat("<td class=\"state-", name, "\">", name, "</td>");
}

std::string Labels(const google::protobuf::Map<std::string, std::string>& labels) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : labels) parts.push_back(absl::StrCat(k, "=", v));
  std::sort(parts.begin(), parts.end());
  return Html(absl::StrJoin(parts, " "));
}

std::string Percent(const profile::CycleDelta& d) {
  const double p = d.percent();
  if (std::isinf(p)) return "new";
  return absl::StrFormat("%+.2f%%", p);
}

std::string DeltaClass(int64_t delta) { return delta > 0 ? " grew" : (delta < 0 ? " shrank" : ""); }

std::string Counts(const v1::Batch& b) {
  return absl::StrCat(b.jobs_succeeded(), " succeeded, ", b.jobs_failed(), " failed, ",
                      b.jobs_running(), " running, ", b.jobs_queued(), " queued, ",
                      b.jobs_cancelled(), " cancelled");
}

int64_t BatchDurationMs(const v1::Batch& b, int64_t now_ms) {
  const int64_t end = b.finished_unix_ms() != 0 ? b.finished_unix_ms() : now_ms;
  return end - b.created_unix_ms();
}

std::string ProgressBar(const v1::Batch& b) {
  const uint32_t done = b.jobs_succeeded() + b.jobs_failed() + b.jobs_cancelled();
  const double pct =
      b.jobs_total() == 0 ? 100.0 : 100.0 * static_cast<double>(done) / b.jobs_total();
  return absl::StrFormat("<span class=\"bar\"><span style=\"width:%.1f%%\"></span></span> %d/%d",
                         pct, done, b.jobs_total());
}

// A table of delta rows (at most `limit`) as `flamefleet diff` prints them.
std::string DeltaTable(const std::vector<profile::CycleDelta>& rows, size_t limit,
                       absl::string_view heading, const std::string& link_batch) {
  std::string out = absl::StrCat("<table class=\"deltas\"><tr><th>", heading,
                                 "</th><th class=\"num\">before</th><th class=\"num\">after</th>"
                                 "<th class=\"num\">delta</th><th class=\"num\">percent</th></tr>");
  for (size_t i = 0; i < rows.size() && i < limit; ++i) {
    const profile::CycleDelta& d = rows[i];
    std::string name = Html(d.name);
    if (!link_batch.empty()) {
      name = absl::StrCat("<a href=\"", JobHref(link_batch, d.name), "\">", name, "</a>");
    }
    absl::StrAppend(&out, "<tr><td>", name, "</td><td class=\"num\">", Cycles(d.before),
                    "</td><td class=\"num\">", Cycles(d.after), "</td><td class=\"num",
                    DeltaClass(d.delta()), "\">", SignedCycles(d.delta()), "</td><td class=\"num",
                    DeltaClass(d.delta()), "\">", Percent(d), "</td></tr>");
  }
  out += "</table>\n";
  return out;
}

std::string DownloadLinks(const std::string& base) {
  return absl::StrCat("<p>Download: <a href=\"", base, "?format=svg\">SVG</a> · <a href=\"", base,
                      "?format=folded\">folded</a> · <a href=\"", base,
                      "?format=pprof\">pprof</a> · <a href=\"", base,
                      "?format=speedscope\">speedscope</a></p>\n");
}

}  // namespace

std::string StateName(v1::BatchState state) {
  return std::string(absl::StripPrefix(v1::BatchState_Name(state), "BATCH_STATE_"));
}

std::string StateName(v1::JobState state) {
  return std::string(absl::StripPrefix(v1::JobState_Name(state), "JOB_STATE_"));
}

std::string ListQuery::QueryString() const {
  std::vector<std::string> parts;
  for (const auto& [k, v] : labels) parts.push_back(absl::StrCat("label=", UrlQuery(k + "=" + v)));
  if (state != v1::BATCH_STATE_UNSPECIFIED) parts.push_back("state=" + StateName(state));
  if (limit != 100) parts.push_back(absl::StrCat("limit=", limit));
  return absl::StrJoin(parts, "&");
}

std::string ListSignature(const std::vector<v1::Batch>& batches) {
  std::string sig;
  for (const v1::Batch& b : batches) absl::StrAppend(&sig, BatchSignature(b), ";");
  return sig;
}

std::string BatchSignature(const v1::Batch& b) {
  return absl::StrCat(b.batch_id(), ":", b.state(), ":", b.jobs_queued(), ",", b.jobs_running(),
                      ",", b.jobs_succeeded(), ",", b.jobs_failed(), ",", b.jobs_cancelled());
}

namespace {

nlohmann::json BatchObject(const v1::Batch& b) {
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [k, v] : b.labels()) labels[k] = v;
  return {{"id", b.batch_id()},
          {"state", StateName(b.state())},
          {"labels", labels},
          {"created_unix_ms", b.created_unix_ms()},
          {"finished_unix_ms", b.finished_unix_ms()},
          {"jobs_total", b.jobs_total()},
          {"jobs_queued", b.jobs_queued()},
          {"jobs_running", b.jobs_running()},
          {"jobs_succeeded", b.jobs_succeeded()},
          {"jobs_failed", b.jobs_failed()},
          {"jobs_cancelled", b.jobs_cancelled()},
          {"aggregate_cycles", b.aggregate_cycles()}};
}

// Invalid UTF-8 from a label must not make the JSON writer throw.
std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string BatchListJson(const std::vector<v1::Batch>& batches) {
  nlohmann::json list = nlohmann::json::array();
  for (const v1::Batch& b : batches) list.push_back(BatchObject(b));
  return Dump({{"signature", ListSignature(batches)}, {"batches", list}});
}

std::string BatchJson(const v1::Batch& batch) {
  return Dump({{"signature", BatchSignature(batch)}, {"batch", BatchObject(batch)}});
}

std::string RenderBatchList(const std::vector<v1::Batch>& batches, const ListQuery& query,
                            int64_t now_ms, int poll_ms) {
  std::string body = "<h1>Batches</h1>\n<form class=\"filters\" method=\"get\" action=\"/\">";
  std::string label_value;
  for (const auto& [k, v] : query.labels) {
    if (!label_value.empty()) label_value += " ";
    absl::StrAppend(&label_value, k, "=", v);
  }
  // One text field per label would need JS; the form takes the first label, links keep all.
  absl::StrAppend(
      &body, "<label>label <input name=\"label\" placeholder=\"KEY=VALUE\" value=\"",
      Html(query.labels.empty() ? "" : query.labels[0].first + "=" + query.labels[0].second),
      "\"></label><label>state <select name=\"state\"><option value=\"\">any</option>");
  for (v1::BatchState s : {v1::BATCH_STATE_RUNNING, v1::BATCH_STATE_SUCCEEDED,
                           v1::BATCH_STATE_FAILED, v1::BATCH_STATE_CANCELLED}) {
    absl::StrAppend(&body, "<option", s == query.state ? " selected" : "", ">", StateName(s),
                    "</option>");
  }
  absl::StrAppend(&body, "</select></label><button type=\"submit\">filter</button></form>\n");
  if (query.labels.size() > 1 || !label_value.empty()) {
    absl::StrAppend(&body, "<p class=\"note\">labels: ", Html(label_value),
                    " · <a href=\"/\">clear filters</a></p>\n");
  }
  if (batches.empty()) {
    body += "<p class=\"note\">No batches match.</p>\n";
  } else {
    body +=
        "<table id=\"batches\"><tr><th>batch</th><th>labels</th><th>state</th><th>progress</th>"
        "<th class=\"num\">succeeded</th><th class=\"num\">failed</th><th class=\"num\">running"
        "</th><th class=\"num\">queued</th><th class=\"num\">cancelled</th><th class=\"num\">"
        "cycles</th><th>started</th><th class=\"num\">duration</th></tr>\n";
    for (const v1::Batch& b : batches) {
      absl::StrAppend(
          &body, "<tr><td><a href=\"", BatchHref(b.batch_id()), "\">", Html(b.batch_id()),
          "</a></td><td>", Labels(b.labels()), "</td>", StateCell(StateName(b.state())), "<td>",
          ProgressBar(b), "</td><td class=\"num\">", b.jobs_succeeded(), "</td><td class=\"num\">",
          b.jobs_failed(), "</td><td class=\"num\">", b.jobs_running(), "</td><td class=\"num\">",
          b.jobs_queued(), "</td><td class=\"num\">", b.jobs_cancelled(), "</td><td class=\"num\">",
          Cycles(b.aggregate_cycles()), "</td><td>", Time(b.created_unix_ms()),
          "</td><td class=\"num\">", Duration(BatchDurationMs(b, now_ms)), "</td></tr>\n");
    }
    body += "</table>\n";
    if (batches.size() == query.limit) {
      absl::StrAppend(&body, "<p class=\"note\">Showing the newest ", query.limit,
                      " (limit=N, at most 500).</p>\n");
    }
  }
  const std::string qs = query.QueryString();
  return PageShell("batches", body,
                   {.poll_url = qs.empty() ? "/api/batches" : "/api/batches?" + qs,
                    .signature = ListSignature(batches),
                    .poll_ms = poll_ms});
}

std::string PaddedLength(uint64_t n) {
  if (n == 0 || (n & (n - 1)) != 0) return Cycles(n);
  return absl::StrCat("2^", std::countr_zero(n));
}

size_t PageCount(size_t jobs, size_t jobs_per_page) {
  if (jobs_per_page == 0) return 1;
  return std::max<size_t>(1, (jobs + jobs_per_page - 1) / jobs_per_page);
}

namespace {

const char* SortName(JobSort sort) {
  switch (sort) {
    case JobSort::kIndex:
      return "index";
    case JobSort::kName:
      return "name";
    case JobSort::kCycles:
      return "cycles";
    case JobSort::kDelta:
      return "delta";
  }
  return "index";
}

// A job table header that sorts by `sort`: descending first for numbers, ascending for names;
// a second click reverses.
std::string SortHeader(const BatchPageData& d, JobSort sort, absl::string_view label,
                       bool numeric) {
  const bool current = d.sort == sort;
  const bool first_desc = numeric;
  const bool desc = current ? !d.descending : first_desc;
  std::string arrow;
  if (current) arrow = d.descending ? " ▼" : " ▲";
  return absl::StrCat("<th", numeric ? " class=\"num\"" : "", "><a id=\"sort-", SortName(sort),
                      "\" href=\"", BatchHref(d.batch.batch_id()), "?sort=", SortName(sort),
                      "&amp;order=", desc ? "desc" : "asc", "\">", label, arrow, "</a></th>");
}

// The job table's "padded" cell: the job's padded trace length, marked (▲ grew, ▼ shrank, with a
// title naming both) when it differs from the previous batch's.
std::string PaddedCell(const BatchPageData& d, const std::string& job) {
  auto it = d.summary.padded.find(job);
  if (it == d.summary.padded.end()) return "<td class=\"num padded\"></td>";
  auto before = d.previous_padded.find(job);
  if (before == d.previous_padded.end() || before->second == it->second) {
    return absl::StrCat("<td class=\"num padded\">", PaddedLength(it->second), "</td>");
  }
  const bool grew = it->second > before->second;
  return absl::StrCat("<td class=\"num padded padded-changed", grew ? " grew" : " shrank",
                      "\" title=\"padded ", PaddedLength(before->second), " → ",
                      PaddedLength(it->second), " since batch ", Html(d.previous_id), "\">",
                      grew ? "▲ " : "▼ ", PaddedLength(it->second), "</td>");
}

// The batch's trace-shape tables: rows per kind, and the procedures with the most chiplet rows.
std::string TraceSection(const BatchPageData& d) {
  const BatchTraceTotals& t = d.summary.trace;
  const std::string href = BatchHref(d.batch.batch_id());
  std::string out = "<h2>Summary: trace shape</h2>\n";
  if (t.jobs == 0) {
    return out + "<p class=\"note\">No trace shape: only v0.25 jobs that finished have one.</p>\n";
  }
  absl::StrAppend(&out, "<p>Rows the prover's traces get, summed over the ", t.jobs,
                  t.jobs == 1 ? " job" : " jobs",
                  " with a trace shape (docs/trace-shape.md): core ", Cycles(t.core_rows),
                  " · padded lengths ", Cycles(t.padded_len), "</p>\n",
                  "<table id=\"trace-shape\"><tr><th>rows</th><th class=\"num\">total</th>"
                  "<th class=\"num\">of no procedure</th></tr>\n");
  for (const TraceKindRows& k : t.kinds) {
    absl::StrAppend(&out, "<tr><td>", Html(k.kind), "</td><td class=\"num\">", Cycles(k.rows),
                    "</td><td class=\"num\">", Cycles(k.overhead), "</td></tr>\n");
  }
  out += "</table>\n";
  if (t.procedures.empty()) return out;
  out +=
      "<table id=\"trace-procedures\"><tr><th>procedure</th><th class=\"num\">chiplets self</th>"
      "<th class=\"num\">chiplets inclusive</th><th class=\"num\">hasher</th>"
      "<th class=\"num\">bitwise</th><th class=\"num\">memory</th><th class=\"num\">ace</th>"
      "<th class=\"num\">range</th></tr>\n";
  for (const TraceProcedure& p : t.procedures) {
    absl::StrAppend(&out, "<tr><td>", Html(p.name), "</td><td class=\"num\">",
                    Cycles(p.chiplets_self), "</td><td class=\"num\">",
                    Cycles(p.chiplets_inclusive), "</td><td class=\"num\">", Cycles(p.hasher),
                    "</td><td class=\"num\">", Cycles(p.bitwise), "</td><td class=\"num\">",
                    Cycles(p.memory), "</td><td class=\"num\">", Cycles(p.ace),
                    "</td><td class=\"num\">", Cycles(p.range), "</td></tr>\n");
  }
  out += "</table>\n";
  absl::StrAppend(&out, "<p class=\"note\">",
                  t.procedures_total > t.procedures.size()
                      ? absl::StrCat("The first ", t.procedures.size(), " of ", t.procedures_total,
                                     " procedures")
                      : std::string("Procedures"),
                  " by chiplets self rows (hasher to range: self rows); all in <a href=\"", href,
                  "/summary.json\">summary.json</a>.</p>\n");
  return out;
}

std::string PagerLinks(const BatchPageData& d, size_t pages) {
  if (pages <= 1) return "";
  std::string out = absl::StrCat("<p class=\"pager\">page ", d.page, " of ", pages, ": ");
  auto link = [&](size_t page, absl::string_view text) {
    absl::StrAppend(&out, "<a href=\"", BatchHref(d.batch.batch_id()), "?sort=", SortName(d.sort),
                    "&amp;order=", d.descending ? "desc" : "asc", "&amp;page=", page, "\">", text,
                    "</a>");
  };
  if (d.page > 1) {
    link(1, "first");
    link(d.page - 1, "previous");
  }
  if (d.page < pages) {
    link(d.page + 1, "next");
    link(pages, "last");
  }
  out += "</p>\n";
  return out;
}

}  // namespace

std::string RenderBatchPage(const BatchPageData& d) {
  const v1::Batch& b = d.batch;
  const std::string href = BatchHref(b.batch_id());
  std::string body =
      absl::StrCat("<h1>Batch ", Html(b.batch_id()), " <span class=\"state-", StateName(b.state()),
                   "\">", StateName(b.state()), "</span></h1>\n<p>");
  if (b.labels_size() > 0) absl::StrAppend(&body, "labels: ", Labels(b.labels()), " · ");
  absl::StrAppend(&body, ProgressBar(b), " · ", Counts(b), " · ", Cycles(b.aggregate_cycles()),
                  " cycles · started ", Time(b.created_unix_ms()), " · ",
                  Duration(BatchDurationMs(b, d.now_ms)), "</p>\n<p>");
  if (d.previous_id.empty()) {
    body += "No earlier ended batch with the same labels to compare with.";
  } else {
    absl::StrAppend(&body, "Previous batch with the same labels: <a href=\"",
                    BatchHref(d.previous_id), "\">", Html(d.previous_id), "</a>");
    if (HasAggregate(b.state())) {
      absl::StrAppend(&body, " · <a id=\"diff-previous\" href=\"",
                      DiffHref(d.previous_id, b.batch_id()), "\">diff against it</a>");
    }
  }
  body += "</p>\n";

  // The job table: one page, in the requested order.
  std::vector<int> order(static_cast<size_t>(b.jobs_size()));
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::optional<profile::CycleDelta>> deltas(order.size());
  for (int i = 0; i < b.jobs_size(); ++i) {
    const v1::JobStatus& job = b.jobs(i);
    auto it = d.previous_jobs.find(job.name());
    if (job.state() == v1::JOB_STATE_SUCCEEDED && it != d.previous_jobs.end()) {
      deltas[static_cast<size_t>(i)] = profile::CycleDelta{job.name(), it->second, job.cycles()};
    }
  }
  auto less = [&](int x, int y) {
    const v1::JobStatus& a = b.jobs(x);
    const v1::JobStatus& c = b.jobs(y);
    switch (d.sort) {
      case JobSort::kIndex:
        return x < y;
      case JobSort::kName:
        return a.name() < c.name();
      case JobSort::kCycles:
        return a.cycles() < c.cycles();
      case JobSort::kDelta: {
        const auto& dx = deltas[static_cast<size_t>(x)];
        const auto& dy = deltas[static_cast<size_t>(y)];
        if (dx.has_value() != dy.has_value()) return !dx.has_value();  // no delta sorts low
        return dx.has_value() && dx->delta() < dy->delta();
      }
    }
    return x < y;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return d.descending ? less(y, x) : less(x, y); });
  const size_t pages = PageCount(order.size(), d.jobs_per_page);
  const size_t page = std::min(d.page, pages);
  const size_t first = (page - 1) * d.jobs_per_page;
  const size_t last = std::min(order.size(), first + d.jobs_per_page);

  absl::StrAppend(&body, "<h2>Jobs</h2>\n", PagerLinks(d, pages),
                  "<table id=\"jobs\"><tr><th class=\"num\">#</th>",
                  SortHeader(d, JobSort::kName, "job", false), "<th>state</th>",
                  SortHeader(d, JobSort::kCycles, "cycles", true),
                  SortHeader(d, JobSort::kDelta, "delta", true),
                  "<th class=\"num\">%</th><th class=\"num\">padded</th>"
                  "<th class=\"num\">attempts</th><th>error / note</th></tr>\n");
  for (size_t r = first; r < last; ++r) {
    const int i = order[r];
    const v1::JobStatus& job = b.jobs(i);
    const auto& delta = deltas[static_cast<size_t>(i)];
    std::string error = job.error();
    if (error.size() > kMaxErrorInTable) {
      error = absl::StrCat(error.substr(0, kMaxErrorInTable), "… (", error.size(),
                           " bytes; see the job's page)");
    }
    std::string note = Html(error);
    if (!job.cached_from().empty()) {
      absl::StrAppend(&note, note.empty() ? "" : " ", "cached from ", Html(job.cached_from()));
    }
    absl::StrAppend(
        &body, "<tr><td class=\"num\">", i, "</td><td><a class=\"job\" href=\"",
        JobHref(b.batch_id(), job.name()), "\">", Html(job.name()), "</a></td>",
        StateCell(StateName(job.state())), "<td class=\"num cycles\">",
        job.state() == v1::JOB_STATE_SUCCEEDED || job.cycles() != 0 ? Cycles(job.cycles()) : "",
        "</td>");
    if (delta.has_value()) {
      absl::StrAppend(&body, "<td class=\"num", DeltaClass(delta->delta()), "\">",
                      SignedCycles(delta->delta()), "</td><td class=\"num",
                      DeltaClass(delta->delta()), "\">", Percent(*delta), "</td>");
    } else {
      body += "<td class=\"num\"></td><td class=\"num\"></td>";
    }
    absl::StrAppend(&body, PaddedCell(d, job.name()), "<td class=\"num\">", job.attempts(),
                    "</td><td class=\"error\">", note, "</td></tr>\n");
  }
  body += "</table>\n";
  absl::StrAppend(&body, PagerLinks(d, pages));
  if (!d.previous_id.empty()) {
    absl::StrAppend(&body, "<p class=\"note\">delta: cycles against batch ", Html(d.previous_id),
                    " (jobs that succeeded in both); padded: the job's padded trace length, ▲/▼ "
                    "where it differs from batch ",
                    Html(d.previous_id), ".</p>\n");
  }

  body += "<h2>Aggregate flamegraph</h2>\n";
  if (HasAggregate(b.state()) && b.jobs_succeeded() > 0) {
    absl::StrAppend(
        &body, "<iframe class=\"flamegraph\" id=\"aggregate\" title=\"aggregate\" src=\"", href,
        "/aggregate?format=svg\"></iframe>\n", DownloadLinks(href + "/aggregate"));
  } else if (!Ended(b.state())) {
    body += "<p class=\"note\">The aggregate is built when the batch ends.</p>\n";
  } else {
    body += "<p class=\"note\">No aggregate: no job succeeded, or the batch was cancelled.</p>\n";
  }

  body += "<h2>Summary: procedures</h2>\n";
  const SummaryTables& s = d.summary;
  if (!s.note.empty()) {
    absl::StrAppend(&body, "<p class=\"note\">", Html(s.note), "</p>\n");
  } else {
    body +=
        "<table id=\"procedures\"><tr><th>procedure</th><th class=\"num\">calls</th>"
        "<th class=\"num\">self</th><th class=\"num\">self %</th><th class=\"num\">inclusive</th>"
        "<th class=\"num\">incl %</th></tr>\n";
    for (const SummaryProcedure& p : s.procedures) {
      absl::StrAppend(&body, "<tr><td>", Html(p.name), "</td><td class=\"num\">", Cycles(p.calls),
                      "</td><td class=\"num\">", Cycles(p.self), "</td><td class=\"num\">",
                      absl::StrFormat("%.2f%%", 100 * p.self_share), "</td><td class=\"num\">",
                      Cycles(p.inclusive), "</td><td class=\"num\">",
                      absl::StrFormat("%.2f%%", 100 * p.inclusive_share), "</td></tr>\n");
    }
    body += "</table>\n";
    if (s.procedures_total > s.procedures.size()) {
      absl::StrAppend(&body, "<p class=\"note\">The first ", s.procedures.size(), " of ",
                      s.procedures_total, " procedures by inclusive cycles; all in <a href=\"",
                      href, "/summary.json\">summary.json</a>.</p>\n");
    }
    body += "<h2>Summary: phases</h2>\n";
    if (s.phases.empty()) {
      body += "<p class=\"note\">No phases (submit with --phase or --marker).</p>\n";
    } else {
      body +=
          "<table id=\"phases\"><tr><th>phase</th><th class=\"num\">jobs</th><th class=\"num\">"
          "count</th><th class=\"num\">total</th><th class=\"num\">min</th><th class=\"num\">max"
          "</th><th>open</th></tr>\n";
      for (const SummaryPhase& p : s.phases) {
        absl::StrAppend(&body, "<tr><td>", Html(p.name), "</td><td class=\"num\">", p.jobs,
                        "</td><td class=\"num\">", Cycles(p.count), "</td><td class=\"num\">",
                        Cycles(p.total), "</td><td class=\"num\">", Cycles(p.min),
                        "</td><td class=\"num\">", Cycles(p.max), "</td><td>",
                        p.open ? "[open]" : "", "</td></tr>\n");
      }
      body += "</table>\n";
      if (s.phases_total > s.phases.size()) {
        absl::StrAppend(&body, "<p class=\"note\">The first ", s.phases.size(), " of ",
                        s.phases_total, " phases.</p>\n");
      }
    }
    absl::StrAppend(&body, TraceSection(d), "<p><a href=\"", href,
                    "/summary.json\">summary.json</a></p>\n");
  }
  ShellOptions shell;
  if (!Ended(b.state())) {
    shell.poll_url = absl::StrCat("/api", href);
    shell.signature = BatchSignature(b);
    shell.poll_ms = d.poll_ms;
  }
  return PageShell(absl::StrCat("batch ", b.batch_id()), body, shell);
}

namespace {

// The job page's trace shape: its rows per trace and both heights (docs/trace-shape.md).
std::string JobTraceSection(const JobPageData& d) {
  const JobTraceShape& t = *d.trace;
  std::string out = "<h2>Trace shape</h2>\n<table id=\"trace-shape\">";
  auto row = [&out](absl::string_view name, const std::string& value) {
    absl::StrAppend(&out, "<tr><td>", name, "</td><td class=\"num\">", value, "</td></tr>\n");
  };
  row("core rows", Cycles(t.core_rows));
  row("range-checker rows", Cycles(t.range_rows));
  row("hasher rows", absl::StrCat(Cycles(t.hasher_rows), " (", Cycles(t.hasher_requests),
                                  " requests, ", Cycles(t.hasher_states), " states)"));
  row("bitwise rows", Cycles(t.bitwise_rows));
  row("memory rows", Cycles(t.memory_rows));
  row("ace rows", Cycles(t.ace_rows));
  row("kernel ROM rows", Cycles(t.kernel_rom_rows));
  row("chiplets rows", Cycles(t.chiplets_rows));
  row("core height", PaddedLength(t.core_height));
  row("chiplets height", PaddedLength(t.chiplets_height));
  std::string padded = absl::StrCat("<span id=\"padded\">", PaddedLength(t.padded_len),
                                    "</span> (set by ", Html(t.bound), ")");
  if (d.previous_padded.has_value() && *d.previous_padded != t.padded_len) {
    const bool grew = t.padded_len > *d.previous_padded;
    padded = absl::StrCat("<span class=\"padded-changed", grew ? " grew" : " shrank",
                          "\" title=\"padded ", PaddedLength(*d.previous_padded), " → ",
                          PaddedLength(t.padded_len), " since batch ", Html(d.previous_id), "\">",
                          grew ? "▲ " : "▼ ", "</span>", padded, " · ",
                          PaddedLength(*d.previous_padded), " in batch <a href=\"",
                          JobHref(d.previous_id, d.job.name()), "\">", Html(d.previous_id), "</a>");
  }
  row("padded length", padded);
  out += "</table>\n";
  return out;
}

}  // namespace

std::string RenderJobPage(const JobPageData& d) {
  const v1::JobStatus& job = d.job;
  const std::string href = JobHref(d.batch_id, job.name());
  std::string body = absl::StrCat(
      "<h1>", Html(job.name()), " <span class=\"state-", StateName(job.state()), "\">",
      StateName(job.state()), "</span></h1>\n<p>batch <a href=\"", BatchHref(d.batch_id), "\">",
      Html(d.batch_id), "</a> · ", Cycles(job.cycles()), " cycles · attempts ", job.attempts());
  if (d.previous_cycles.has_value() && job.state() == v1::JOB_STATE_SUCCEEDED) {
    const profile::CycleDelta delta{job.name(), *d.previous_cycles, job.cycles()};
    absl::StrAppend(&body, " · <span class=\"", DeltaClass(delta.delta()), "\">",
                    SignedCycles(delta.delta()), " (", Percent(delta), ")</span> against batch ",
                    "<a href=\"", JobHref(d.previous_id, job.name()), "\">", Html(d.previous_id),
                    "</a>");
  }
  if (!job.cached_from().empty()) {
    absl::StrAppend(&body, " · cached from ", Html(job.cached_from()));
  }
  body += "</p>\n";
  if (!job.error().empty()) {
    absl::StrAppend(&body, "<h2>Error</h2>\n<pre class=\"error\" id=\"error\">", Html(job.error()),
                    "</pre>\n");
  }
  if (job.stack_size() > 0) {
    std::vector<std::string> values;
    for (uint64_t v : job.stack()) values.push_back(absl::StrCat(v));
    absl::StrAppend(&body, "<h2>Final stack (top first)</h2>\n<pre id=\"stack\">",
                    absl::StrJoin(values, " "), "</pre>\n");
  }
  if (d.trace.has_value()) body += JobTraceSection(d);
  if (job.state() == v1::JOB_STATE_SUCCEEDED && job.cycles() > 0) {
    absl::StrAppend(&body,
                    "<h2>Flamegraph</h2>\n<iframe class=\"flamegraph\" id=\"job-flamegraph\" "
                    "title=\"flamegraph\" src=\"",
                    href, "?format=svg\"></iframe>\n", DownloadLinks(href));
  } else if (job.state() == v1::JOB_STATE_QUEUED || job.state() == v1::JOB_STATE_RUNNING) {
    body += "<p class=\"note\">The flamegraph appears when the job has run.</p>\n";
  } else {
    body += "<p class=\"note\">No profile: the job did not succeed.</p>\n";
  }
  ShellOptions shell;
  if (!Ended(d.batch_state)) {
    shell.poll_url = absl::StrCat("/api", BatchHref(d.batch_id));
    shell.signature = d.batch_signature;
    shell.poll_ms = 2000;
  }
  return PageShell(job.name(), body, shell);
}

std::string RenderDiffPage(const DiffPageData& d) {
  std::string body = absl::StrCat("<h1>Diff: batch <a href=\"", BatchHref(d.before_id), "\">",
                                  Html(d.before_id), "</a> → <a href=\"", BatchHref(d.after_id),
                                  "\">", Html(d.after_id), "</a></h1>\n");
  // The same tables, in the same order, as `flamefleet diff BEFORE AFTER` (cli/suite_diff.cc).
  std::vector<profile::CycleDelta> grew;
  size_t shrank = 0;
  for (const profile::CycleDelta& job : d.jobs) {
    if (job.delta() > 0) grew.push_back(job);
    if (job.delta() < 0) ++shrank;
  }
  absl::StrAppend(&body, "<p id=\"diff-counts\">jobs: ", d.jobs.size(), " on both sides (",
                  grew.size(), " grew, ", shrank, " shrank, ", d.jobs.size() - grew.size() - shrank,
                  " unchanged), ", d.added.size(), " added, ", d.removed.size(), " removed</p>\n");
  if (!grew.empty()) {
    absl::StrAppend(&body, "<h2>Jobs that grew most (top ", std::min(d.top, grew.size()),
                    ")</h2>\n", DeltaTable(grew, d.top, "job", d.after_id));
  }
  if (!d.added.empty()) {
    absl::StrAppend(&body, "<h2>Added jobs (only in AFTER)</h2>\n",
                    DeltaTable(d.added, d.added.size(), "job", d.after_id));
  }
  if (!d.removed.empty()) {
    absl::StrAppend(&body, "<h2>Removed jobs (only in BEFORE)</h2>\n",
                    DeltaTable(d.removed, d.removed.size(), "job", d.before_id));
  }
  std::vector<profile::CycleDelta> frames;
  for (const profile::CycleDelta& f : d.frames) {
    if (f.delta() > 0) frames.push_back(f);
  }
  if (!frames.empty()) {
    absl::StrAppend(&body, "<h2>Frames whose self cycles grew most (aggregate, by name; top ",
                    std::min(d.top, frames.size()), ")</h2>\n",
                    DeltaTable(frames, d.top, "frame", ""));
  }
  absl::StrAppend(&body, "<h2>Total</h2>\n",
                  DeltaTable({{"all jobs", d.before_total, d.after_total}}, 1, "aggregate", ""));
  const std::string svg = absl::StrCat("/diff?before=", UrlQuery(d.before_id),
                                       "&amp;after=", UrlQuery(d.after_id), "&amp;format=svg");
  body += "<h2>Differential flamegraph</h2>\n";
  if (d.has_svg) {
    absl::StrAppend(&body,
                    "<p class=\"note\">red = grew, blue = shrank (width: the larger side).</p>\n"
                    "<iframe class=\"flamegraph\" id=\"diff-flamegraph\" title=\"differential "
                    "flamegraph\" src=\"",
                    svg, "\"></iframe>\n<p><a href=\"", svg, "\">SVG</a></p>\n");
  } else {
    body += "<p class=\"note\">No differential graph: a side has no cycles.</p>\n";
  }
  return PageShell(absl::StrCat("diff ", d.before_id, " → ", d.after_id), body);
}

std::string RenderLoginPage(absl::string_view message) {
  std::string body = "<h1>Sign in</h1>\n";
  if (!message.empty()) absl::StrAppend(&body, "<p class=\"state-FAILED\">", Html(message), "</p>");
  body +=
      "<p>This coordinator needs the fleet's bearer token (the file of --auth-token-file).</p>\n"
      "<form method=\"post\" action=\"/login\"><label>token <input type=\"password\" "
      "name=\"token\" autocomplete=\"current-password\" autofocus></label> "
      "<button type=\"submit\">sign in</button></form>\n";
  return PageShell("sign in", body);
}

std::string RenderErrorPage(int status, absl::string_view message) {
  const char* reason = status == 400   ? "Bad Request"
                       : status == 401 ? "Unauthorized"
                       : status == 404 ? "Not Found"
                       : status == 405 ? "Method Not Allowed"
                       : status == 409 ? "Conflict"
                       : status == 413 ? "Payload Too Large"
                       : status == 503 ? "Service Unavailable"
                                       : "Error";
  return PageShell(absl::StrCat(status, " ", reason),
                   absl::StrCat("<h1>", status, " ", reason, "</h1>\n<p class=\"error\">",
                                Html(message), "</p>\n<p><a href=\"/\">all batches</a></p>\n"));
}

}  // namespace flamefleet::coordinator::web::internal
