#include "coordinator/web/internal/html.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace flamefleet::coordinator::web::internal {
namespace {

bool Unreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

std::string PercentEncode(absl::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (Unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(c);
    } else {
      const auto b = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 15]);
    }
  }
  return out;
}

}  // namespace

std::string Html(absl::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string UrlQuery(absl::string_view text) { return PercentEncode(text, false); }

std::string UrlPath(absl::string_view text) { return PercentEncode(text, true); }

std::string Cycles(uint64_t n) {
  std::string digits = absl::StrCat(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string SignedCycles(int64_t n) {
  if (n > 0) return absl::StrCat("+", Cycles(static_cast<uint64_t>(n)));
  if (n < 0) return absl::StrCat("-", Cycles(static_cast<uint64_t>(-(n + 1)) + 1));
  return "0";
}

std::string Time(int64_t unix_ms) {
  if (unix_ms == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

std::string Duration(int64_t ms) {
  if (ms < 0) ms = 0;
  if (ms < 1000) return absl::StrCat(ms, " ms");
  if (ms < 60'000) return absl::StrFormat("%.1f s", static_cast<double>(ms) / 1000.0);
  const int64_t s = ms / 1000;
  if (s < 3600) return absl::StrFormat("%d min %02d s", s / 60, s % 60);
  return absl::StrFormat("%d h %02d min", s / 3600, (s / 60) % 60);
}

std::string PageShell(absl::string_view title, absl::string_view body,
                      const ShellOptions& options) {
  std::string live;
  if (!options.poll_url.empty()) {
    live = absl::StrCat(" data-poll=\"", Html(options.poll_url), "\" data-signature=\"",
                        Html(options.signature), "\" data-poll-ms=\"", options.poll_ms, "\"");
  }
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>",
      Html(title),
      " - flamefleet</title><link rel=\"stylesheet\" href=\"/static/web.css\"></head>\n"
      "<body",
      live, "><nav><a class=\"home\" href=\"/\">flamefleet</a> <span class=\"where\">", Html(title),
      "</span></nav>\n<main>\n", body,
      "</main>\n<script src=\"/static/web.js\"></script></body></html>\n");
}

// The pages' script: fits embedded flamegraphs to their height and polls a JSON endpoint while
// something runs, reloading the page when it changed. Sorting is done by the server (the column
// headers are links), so it works across pages of a large batch. It only ever sends GETs.
const char kWebJs[] = R"JS(// flamefleet web view (read-only: it only sends GET requests).
(function () {
  "use strict";
  function fit(frame) {
    try {
      var doc = frame.contentDocument;
      var svg = doc && doc.documentElement;
      if (!svg || svg.nodeName.toLowerCase() !== "svg") return;
      var h = parseFloat(svg.getAttribute("height")) || svg.getBoundingClientRect().height;
      if (h > 0) frame.style.height = Math.ceil(h + 4) + "px";
    } catch (e) { /* not loaded yet */ }
  }
  document.querySelectorAll("iframe.flamegraph").forEach(function (frame) {
    frame.addEventListener("load", function () { fit(frame); });
    fit(frame);
  });
  var body = document.body;
  var url = body.getAttribute("data-poll");
  if (!url) return;
  var signature = body.getAttribute("data-signature");
  var ms = parseInt(body.getAttribute("data-poll-ms") || "2000", 10);
  function tick() {
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (j) {
        if (j && j.signature !== signature) {
          location.reload();
        } else {
          setTimeout(tick, ms);
        }
      })
      .catch(function () { setTimeout(tick, ms * 5); });
  }
  setTimeout(tick, ms);
})();
)JS";

const char kWebCss[] =
    R"CSS(body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #fafafa; }
nav { background: #2b2b2b; color: #eee; padding: 8px 16px; }
nav a { color: #ffb347; font-weight: bold; text-decoration: none; margin-right: 12px; }
main { padding: 12px 16px; }
h1 { font-size: 20px; margin: 8px 0; } h2 { font-size: 16px; margin: 18px 0 6px; }
table { border-collapse: collapse; background: #fff; margin: 6px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; } th a { color: inherit; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.state-SUCCEEDED { color: #1a7f37; } .state-FAILED { color: #cf222e; font-weight: bold; }
.state-RUNNING, .state-QUEUED { color: #9a6700; } .state-CANCELLED { color: #6e7781; }
.grew { color: #cf222e; } .shrank { color: #0550ae; }
.padded-changed { font-weight: bold; background: #fff8c5; }
.error { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; }
pre { background: #fff; border: 1px solid #ddd; padding: 8px; overflow-x: auto; }
iframe.flamegraph { width: 100%; min-width: 1210px; height: 480px; border: 1px solid #ddd; background: #fff; }
form.filters { margin: 6px 0; } form.filters input, form.filters select { margin-right: 8px; }
.note { color: #57606a; } .pager a { margin-right: 8px; }
.bar { display: inline-block; width: 160px; height: 10px; background: #eee; vertical-align: middle; }
.bar span { display: block; height: 10px; background: #1a7f37; }
)CSS";

}  // namespace flamefleet::coordinator::web::internal
