// Building blocks of the web view's pages (coordinator/web/web_server.h): the one escaping helper
// every string from a batch, a job or an error goes through before it is put into HTML, URL
// encoding for the links, number and time formatting, the page shell, and the static script and
// style sheet the pages load (embedded here: no build step, no CDN).
//
//   std::string row = absl::StrCat("<td>", Html(job.name()), "</td>");
//   std::string href = absl::StrCat("/batches/", UrlPath(id), "/jobs/", UrlPath(job.name()));
//   std::string page = PageShell("batch 7", body, {.poll_url = "/api/batches/7",
//                                                  .signature = sig});
//
// Thread-safety: pure functions and immutable constants.
#ifndef FLAMEFLEET_COORDINATOR_WEB_INTERNAL_HTML_H_
#define FLAMEFLEET_COORDINATOR_WEB_INTERNAL_HTML_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace flamefleet::coordinator::web::internal {

// Returns `text` with & < > " ' replaced by entities: safe in element content and in quoted
// attribute values. Bytes that are not valid UTF-8 pass through (the browser shows U+FFFD).
std::string Html(absl::string_view text);

// Returns `text` percent-encoded for a URL query value (everything but A-Z a-z 0-9 - . _ ~).
std::string UrlQuery(absl::string_view text);

// Returns `text` percent-encoded for a URL path, keeping '/' (job names are relative paths:
// /batches/1/jobs/v0_25/fib.masm).
std::string UrlPath(absl::string_view text);

// Returns `n` with thin groups: 1234567 -> "1,234,567".
std::string Cycles(uint64_t n);

// Returns a signed delta with its sign ("+12", "-3", "0").
std::string SignedCycles(int64_t n);

// Returns a Unix time in ms as "2026-12-02 10:11:12 UTC" ("-" for 0).
std::string Time(int64_t unix_ms);

// Returns a duration in ms as "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min".
std::string Duration(int64_t ms);

// Options of PageShell.
struct ShellOptions {
  // JSON endpoint polled while the page is live (web.js); "" = no live updates. The page is
  // reloaded when the endpoint's "signature" differs from `signature`.
  std::string poll_url;
  std::string signature;
  int poll_ms = 2000;
};

// Returns a whole HTML document: `title` (escaped here), the navigation bar, `body` (already
// HTML), and /static/web.css and /static/web.js.
std::string PageShell(absl::string_view title, absl::string_view body,
                      const ShellOptions& options = {});

// The static files the pages load; served at /static/web.js and /static/web.css.
extern const char kWebJs[];
extern const char kWebCss[];

}  // namespace flamefleet::coordinator::web::internal

#endif  // FLAMEFLEET_COORDINATOR_WEB_INTERNAL_HTML_H_
