#include "coordinator/web/web_server.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "coordinator/web/internal/html.h"
#include "coordinator/web/internal/pages.h"
#include "nlohmann/json.hpp"
#include "profile/cycle_delta.h"
#include "profile/diff.h"
#include "profile/export.h"
#include "profile/profile_proto.h"
#include "renderer/flamegraph.h"
#include "renderer/profile_file.h"
#include "runner/batch_summary.h"
#include "runner/summary.h"
#include "vm/vm.h"

namespace flamefleet::coordinator {
namespace {

// Query parameters: at most this many, each value at most this long (a label is KEY=VALUE,
// each bounded by the coordinator's --max-name-bytes, 1024 by default).
constexpr size_t kMaxParams = 32;
constexpr size_t kMaxParamBytes = 4096;
// Longest batch id accepted in a path or query (ids are sequential numbers).
constexpr size_t kMaxBatchIdBytes = 64;
// Rows of `diff`'s "grew most" tables: the default and the ceiling of ?top=N.
constexpr size_t kDefaultDiffTop = 10;
constexpr size_t kMaxDiffTop = 1000;
// Ended batches whose summary tables are kept (they never change once the batch ended).
constexpr size_t kSummaryCacheEntries = 64;

constexpr char kCookieName[] = "flamefleet_session";

constexpr char kHtmlPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self'; "
    "frame-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'self'";
// The renderer's SVGs carry their own inline script and style (zoom, search, tooltips).
constexpr char kSvgPolicy[] =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "frame-ancestors 'self'";

// An HTTP error: status and a message for the user (it may quote what they sent: escaped).
struct HttpError {
  int status;
  std::string message;
};

int HttpStatusFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 413;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return 503;
    default:
      return 500;
  }
}

HttpError FromStatus(const absl::Status& status) {
  return {HttpStatusFor(status), std::string(status.message())};
}

// Hex SHA-256 of the token, salted with a fixed context: the session cookie's value. It proves
// knowledge of the token without storing the token itself in the browser.
std::string SessionValue(const std::string& token) {
  const std::string input = absl::StrCat("flamefleet-web-session\n", token);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(input.data(), input.size(), digest, &size, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

// Returns the value of cookie `name` in a Cookie header, or "".
std::string CookieValue(absl::string_view header, absl::string_view name) {
  for (absl::string_view part : absl::StrSplit(header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, name) && absl::ConsumePrefix(&part, "=")) {
      return std::string(part);
    }
  }
  return "";
}

// True if `id` can be a batch id (letters, digits, '-', '_'; ids are numbers): anything else is
// a 404 without asking the manager.
bool PlausibleBatchId(absl::string_view id) {
  if (id.empty() || id.size() > kMaxBatchIdBytes) return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '-' || c == '_'; });
}

// True if `name` can be a job name: what SubmitBatch accepts (a relative path, no "." or ".."
// component, no empty component, no NUL).
bool PlausibleJobName(absl::string_view name) {
  if (name.empty() || name.front() == '/' || name.find('\0') != absl::string_view::npos) {
    return false;
  }
  for (absl::string_view part : absl::StrSplit(name, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

// The request's query, checked against the parameters a route takes.
class Query {
 public:
  explicit Query(const httplib::Request& req) : req_(req) {}

  // 400 for too many parameters, an unknown one, a repeated one that is not `repeatable`, or a
  // value over kMaxParamBytes.
  std::optional<HttpError> Check(std::initializer_list<const char*> allowed,
                                 absl::string_view repeatable = "") const {
    if (req_.params.size() > kMaxParams) {
      return HttpError{400, absl::StrCat("too many query parameters (at most ", kMaxParams, ")")};
    }
    absl::flat_hash_set<std::string> seen;
    for (const auto& param : req_.params) {
      const std::string& key = param.first;  // a plain reference: clang 14 cannot capture a binding
      const std::string& value = param.second;
      if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; }) ==
          allowed.end()) {
        return HttpError{400,
                         absl::StrCat("unknown query parameter \"", key,
                                      "\" (this page takes: ", absl::StrJoin(allowed, ", "), ")")};
      }
      if (!seen.insert(key).second && key != repeatable) {
        return HttpError{400, absl::StrCat("query parameter \"", key, "\" given twice")};
      }
      if (value.size() > kMaxParamBytes) {
        return HttpError{400, absl::StrCat("query parameter \"", key, "\": ", value.size(),
                                           " bytes, the limit is ", kMaxParamBytes)};
      }
    }
    return std::nullopt;
  }

  std::string Get(const char* key) const {
    return req_.has_param(key) ? req_.get_param_value(key) : "";
  }
  bool Has(const char* key) const { return req_.has_param(key); }
  std::vector<std::string> All(const char* key) const {
    std::vector<std::string> out;
    auto range = req_.params.equal_range(key);
    for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
    return out;
  }

  // Parses `key` as an integer in [min, max]; `fallback` if absent. 400 naming it otherwise.
  absl::StatusOr<uint64_t> Number(const char* key, uint64_t fallback, uint64_t min,
                                  uint64_t max) const {
    if (!Has(key)) return fallback;
    uint64_t n = 0;
    const std::string v = Get(key);
    if (!absl::SimpleAtoi(v, &n) || n < min || n > max) {
      return absl::InvalidArgumentError(absl::StrCat("query parameter \"", key, "\": \"", v,
                                                     "\" is not a number from ", min, " to ", max));
    }
    return n;
  }

 private:
  const httplib::Request& req_;
};

// The export formats of ?format=.
std::optional<profile::ProfileFormat> ParseFormat(absl::string_view name) {
  absl::StatusOr<profile::ProfileFormat> f = profile::ParseProfileFormat(name);
  if (!f.ok()) return std::nullopt;
  return *f;
}

const char* ContentType(profile::ProfileFormat format) {
  switch (format) {
    case profile::ProfileFormat::kSvg:
      return "image/svg+xml";
    case profile::ProfileFormat::kFolded:
      return "text/plain; charset=utf-8";
    case profile::ProfileFormat::kPprof:
      return "application/gzip";
    case profile::ProfileFormat::kSpeedscope:
      return "application/json";
  }
  return "application/octet-stream";
}

// A download's file name: the job's base name (or "aggregate") with the format's suffix, reduced
// to characters that need no quoting in a header.
std::string DownloadName(absl::string_view base, profile::ProfileFormat format) {
  std::string name(
      base.substr(base.rfind('/') == absl::string_view::npos ? 0 : base.rfind('/') + 1));
  for (char& c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return absl::StrCat(name, profile::ProfileFormatSuffix(format));
}

bool HasAggregate(v1::BatchState state) {
  return state == v1::BATCH_STATE_SUCCEEDED || state == v1::BATCH_STATE_FAILED;
}

// A batch summary from FetchArtifact(SUMMARY) as summary.json (as `flamefleet fetch` writes it).
absl::StatusOr<std::string> SummaryJsonFromArtifact(const std::string& batch_id,
                                                    const std::string& bytes) {
  return runner::BatchSummaryJsonFromWire(batch_id, bytes);
}

// The tables of a batch's summary.json, at most `rows` rows each.
web::internal::SummaryTables TablesFromSummaryJson(const std::string& json, size_t rows) {
  web::internal::SummaryTables tables;
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    tables.note = "The batch summary could not be read.";
    return tables;
  }
  auto u64 = [](const nlohmann::json& o, const char* key) -> uint64_t {
    auto it = o.find(key);
    return it != o.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
  };
  auto dbl = [](const nlohmann::json& o, const char* key) -> double {
    auto it = o.find(key);
    return it != o.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  auto str = [](const nlohmann::json& o, const char* key) -> std::string {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : "";
  };
  if (auto p = j.find("procedures"); p != j.end() && p->is_array()) {
    tables.procedures_total = p->size();
    for (size_t i = 0; i < p->size() && i < rows; ++i) {
      const nlohmann::json& row = (*p)[i];
      tables.procedures.push_back({str(row, "name"), u64(row, "calls"), u64(row, "self"),
                                   u64(row, "inclusive"), dbl(row, "self_share"),
                                   dbl(row, "inclusive_share")});
    }
  }
  if (auto p = j.find("phases"); p != j.end() && p->is_array()) {
    tables.phases_total = p->size();
    for (size_t i = 0; i < p->size() && i < rows; ++i) {
      const nlohmann::json& row = (*p)[i];
      auto open = row.find("open");
      tables.phases.push_back({str(row, "name"), u64(row, "jobs"), u64(row, "count"),
                               u64(row, "total"), u64(row, "min"), u64(row, "max"),
                               open != row.end() && open->is_boolean() && open->get<bool>()});
    }
  }
  // The trace shape: the batch's trace_totals, the procedures' trace rows, each job's padded
  // length.
  web::internal::BatchTraceTotals& trace = tables.trace;
  if (auto t = j.find("trace_totals"); t != j.end() && t->is_object()) {
    trace.jobs = u64(*t, "jobs");
    trace.core_rows = u64(*t, "core_rows");
    trace.padded_len = u64(*t, "padded_len");
    const auto by_kind = t->find("rows");
    const auto overhead = t->find("overhead");
    for (const char* kind : {"hasher", "bitwise", "memory", "ace", "range", "chiplets"}) {
      trace.kinds.push_back(
          {kind, by_kind != t->end() && by_kind->is_object() ? u64(*by_kind, kind) : 0,
           overhead != t->end() && overhead->is_object() ? u64(*overhead, kind) : 0});
    }
  }
  if (auto p = j.find("procedures"); trace.jobs > 0 && p != j.end() && p->is_array()) {
    std::vector<web::internal::TraceProcedure> procs;
    for (const nlohmann::json& row : *p) {
      auto t = row.find("trace");
      if (t == row.end() || !t->is_object()) continue;
      auto self = t->find("self");
      auto incl = t->find("inclusive");
      if (self == t->end() || !self->is_object() || incl == t->end() || !incl->is_object()) {
        continue;
      }
      procs.push_back({str(row, "name"), u64(*self, "chiplets"), u64(*incl, "chiplets"),
                       u64(*self, "hasher"), u64(*self, "bitwise"), u64(*self, "memory"),
                       u64(*self, "ace"), u64(*self, "range")});
    }
    trace.procedures_total = procs.size();
    const size_t shown = std::min(rows, procs.size());
    std::partial_sort(
        procs.begin(), procs.begin() + static_cast<std::ptrdiff_t>(shown), procs.end(),
        [](const web::internal::TraceProcedure& a, const web::internal::TraceProcedure& b) {
          if (a.chiplets_self != b.chiplets_self) {
            return a.chiplets_self > b.chiplets_self;
          }
          return a.name < b.name;
        });
    procs.resize(shown);
    trace.procedures = std::move(procs);
  }
  if (auto jobs = j.find("jobs"); jobs != j.end() && jobs->is_array()) {
    for (const nlohmann::json& job : *jobs) {
      if (!job.is_object()) continue;
      auto shape = job.find("trace_shape");
      if (shape == job.end() || !shape->is_object()) continue;
      tables.padded[str(job, "job")] = u64(*shape, "padded_len");
    }
  }
  if (tables.procedures.empty() && tables.phases.empty()) {
    tables.note = "No job of this batch has a summary yet.";
  }
  return tables;
}

// The trace shape of a job summary (FetchArtifact SUMMARY of one job), or none.
std::optional<web::internal::JobTraceShape> JobTrace(const absl::StatusOr<std::string>& bytes) {
  if (!bytes.ok()) return std::nullopt;
  absl::StatusOr<runner::JobSummary> summary = runner::DecodeJobSummary(*bytes);
  if (!summary.ok() || !summary->stats.trace_shape.has_value()) return std::nullopt;
  const vm::TraceShape& t = summary->stats.trace_shape->totals;
  return web::internal::JobTraceShape{.core_rows = t.core_rows,
                                      .range_rows = t.range_rows,
                                      .hasher_rows = t.hasher_rows,
                                      .hasher_requests = t.hasher_requests,
                                      .hasher_states = t.hasher_states,
                                      .bitwise_rows = t.bitwise_rows,
                                      .memory_rows = t.memory_rows,
                                      .ace_rows = t.ace_rows,
                                      .kernel_rom_rows = t.kernel_rom_rows,
                                      .chiplets_rows = t.chiplets_rows,
                                      .core_height = t.core_height,
                                      .chiplets_height = t.chiplets_height,
                                      .padded_len = t.padded_len,
                                      .bound = std::string(vm::TraceBoundName(t.bound))};
}

bool ConfigureTls(const Security& security, SSL_CTX& ctx) {
  auto read_certs = [](const std::string& pem) {
    std::vector<X509*> certs;
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) certs.push_back(cert);
    BIO_free(bio);
    ERR_clear_error();  // the end of the input reads as an error
    return certs;
  };
  std::vector<X509*> chain = read_certs(security.cert_chain_pem);
  if (chain.empty()) return false;
  bool ok = SSL_CTX_use_certificate(&ctx, chain[0]) == 1;
  X509_free(chain[0]);
  for (size_t i = 1; i < chain.size(); ++i) {
    // The context takes ownership of extra chain certificates.
    if (!ok || SSL_CTX_add_extra_chain_cert(&ctx, chain[i]) != 1) {
      X509_free(chain[i]);
      ok = false;
    }
  }
  BIO* bio = BIO_new_mem_buf(security.private_key_pem.data(),
                             static_cast<int>(security.private_key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ok = ok && key != nullptr && SSL_CTX_use_PrivateKey(&ctx, key) == 1 &&
       SSL_CTX_check_private_key(&ctx) == 1;
  EVP_PKEY_free(key);
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  if (ok && security.client_auth) {
    X509_STORE* store = SSL_CTX_get_cert_store(&ctx);
    std::vector<X509*> cas = read_certs(security.ca_pem);
    ok = !cas.empty();
    for (X509* ca : cas) {
      ok = ok && X509_STORE_add_cert(store, ca) == 1;
      X509_free(ca);
    }
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return ok;
}

}  // namespace

class WebServer::Impl {
 public:
  Impl(BatchManager* manager, WebServerOptions options)
      : manager_(manager),
        options_(std::move(options)),
        session_(options_.security.token.empty() ? "" : SessionValue(options_.security.token)) {}

  absl::StatusOr<int> Bind() {
    if (options_.security.server_tls()) {
      server_ = std::make_unique<httplib::SSLServer>(
          [this](SSL_CTX& ctx) { return ConfigureTls(options_.security, ctx); });
    } else {
      server_ = std::make_unique<httplib::Server>();
    }
    if (!server_->is_valid()) {
      return absl::InvalidArgumentError(
          "--http-listen: the TLS certificate or key cannot be used for HTTPS");
    }
    const size_t colon = options_.listen.rfind(':');
    int port = -1;
    if (colon == std::string::npos || !absl::SimpleAtoi(options_.listen.substr(colon + 1), &port) ||
        port < 0 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("--http-listen: \"", options_.listen,
                                                     "\" is not HOST:PORT (e.g. 127.0.0.1:0)"));
    }
    std::string host = options_.listen.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    if (host.empty()) host = "0.0.0.0";
    const int threads = options_.threads;
    server_->new_task_queue = [threads] {
      return new httplib::ThreadPool(static_cast<size_t>(threads));
    };
    // Only SO_REUSEADDR: like the gRPC ports, this one is never shared (no SO_REUSEPORT).
    server_->set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    server_->set_payload_max_length(options_.max_body_bytes);
    server_->set_pre_routing_handler(
        [this](const httplib::Request& req, httplib::Response& res) { return PreRoute(req, res); });
    server_->Get(".*",
                 [this](const httplib::Request& req, httplib::Response& res) { Route(req, res); });
    server_->Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.path == "/login") {
        Login(req, res);
      } else {
        Error(res, {405, "this page is read-only: only GET requests"});
      }
    });
    server_->set_error_handler([this](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) Error(res, {res.status, "no such page"});
    });
    server_->set_exception_handler(
        [this](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
          LOG(ERROR) << "web: " << req.method << " " << req.path << ": exception";
          Error(res, {500, "internal error"});
        });
    if (port == 0) {
      port = server_->bind_to_any_port(host);
    } else if (!server_->bind_to_port(host, port)) {
      port = -1;
    }
    if (port <= 0) {
      return absl::UnavailableError(absl::StrCat("--http-listen ", options_.listen,
                                                 ": cannot listen (address already in use?)"));
    }
    thread_ = std::thread([this] {
      server_->listen_after_bind();
      loop_ended_ = true;
    });
    // httplib's stop() does nothing until the accept loop runs: wait for it, so that a Shutdown
    // right after Start cannot miss it (the port already accepts connections meanwhile).
    while (!server_->is_running() && !loop_ended_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (loop_ended_) {
      thread_.join();
      return absl::UnavailableError(
          absl::StrCat("--http-listen ", options_.listen, ": the server stopped at once"));
    }
    return port;
  }

  void Shutdown() {
    absl::MutexLock lock(&shutdown_mu_);
    if (server_ != nullptr) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  bool https() const { return options_.security.server_tls(); }

 private:
  // Security headers on every answer; authentication for everything but /login and /static/.
  httplib::Server::HandlerResponse PreRoute(const httplib::Request& req, httplib::Response& res) {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Cache-Control", "no-store");
    res.set_header("X-Frame-Options", "SAMEORIGIN");
    if (session_.empty() || req.path == "/login" || req.path == "/favicon.ico" ||
        absl::StartsWith(req.path, "/static/")) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    if (Authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("WWW-Authenticate", "Bearer realm=\"flamefleet\"");
    if (absl::StartsWith(req.path, "/api/") || req.has_param("format") ||
        absl::EndsWith(req.path, ".json")) {
      res.status = 401;
      res.set_content("missing or invalid bearer token\n", "text/plain; charset=utf-8");
    } else {
      SendHtml(res, 401, web::internal::RenderLoginPage(""));
    }
    return httplib::Server::HandlerResponse::Handled;
  }

  bool Authorized(const httplib::Request& req) const {
    const std::string header = req.get_header_value("Authorization");
    absl::string_view auth = header;
    if (absl::ConsumePrefix(&auth, "Bearer ") &&
        flamefleet::internal::ConstantTimeEquals(auth, options_.security.token)) {
      return true;
    }
    const std::string cookie = CookieValue(req.get_header_value("Cookie"), kCookieName);
    return !cookie.empty() && flamefleet::internal::ConstantTimeEquals(cookie, session_);
  }

  void Login(const httplib::Request& req, httplib::Response& res) {
    if (session_.empty()) {
      res.status = 303;
      res.set_header("Location", "/");
      return;
    }
    const std::string token = req.has_param("token") ? req.get_param_value("token") : "";
    if (!flamefleet::internal::ConstantTimeEquals(token, options_.security.token)) {
      SendHtml(res, 401, web::internal::RenderLoginPage("Wrong token."));
      return;
    }
    res.status = 303;
    res.set_header("Set-Cookie", absl::StrCat(kCookieName, "=", session_,
                                              "; Path=/; Secure; HttpOnly; SameSite=Strict"));
    res.set_header("Location", "/");
  }

  void SendHtml(httplib::Response& res, int status, const std::string& body) {
    res.status = status;
    res.set_header("Content-Security-Policy", kHtmlPolicy);
    res.set_content(body, "text/html; charset=utf-8");
  }

  void Error(httplib::Response& res, const HttpError& error) {
    SendHtml(res, error.status, web::internal::RenderErrorPage(error.status, error.message));
  }

  void Route(const httplib::Request& req, httplib::Response& res) {
    const absl::string_view path = req.path;
    std::optional<HttpError> error;
    if (path == "/") {
      error = ListPage(req, res, /*json=*/false);
    } else if (path == "/api/batches") {
      error = ListPage(req, res, /*json=*/true);
    } else if (path == "/diff") {
      error = DiffPage(req, res);
    } else if (path == "/login") {
      if (session_.empty()) {
        res.status = 303;
        res.set_header("Location", "/");
      } else {
        SendHtml(res, 200, web::internal::RenderLoginPage(""));
      }
    } else if (path == "/favicon.ico") {
      res.status = 204;  // no icon (browsers ask for one)
    } else if (path == "/static/web.js") {
      res.set_content(web::internal::kWebJs, "text/javascript; charset=utf-8");
    } else if (path == "/static/web.css") {
      res.set_content(web::internal::kWebCss, "text/css; charset=utf-8");
    } else if (absl::StartsWith(path, "/api/batches/")) {
      error = BatchApi(req, res, path.substr(strlen("/api/batches/")));
    } else if (absl::StartsWith(path, "/batches/")) {
      error = BatchRoutes(req, res, path.substr(strlen("/batches/")));
    } else {
      error = HttpError{404, "no such page"};
    }
    if (error.has_value()) {
      if (absl::StartsWith(path, "/api/") || req.has_param("format")) {
        res.status = error->status;
        res.set_content(error->message + "\n", "text/plain; charset=utf-8");
      } else {
        Error(res, *error);
      }
    }
  }

  // GET / and GET /api/batches.
  std::optional<HttpError> ListPage(const httplib::Request& req, httplib::Response& res,
                                    bool json) {
    Query q(req);
    if (auto e = q.Check({"label", "state", "limit"}, "label")) return e;
    web::internal::ListQuery query;
    v1::ListBatchesRequest request;
    for (const std::string& label : q.All("label")) {
      if (label.empty()) continue;  // the form's empty field
      const size_t eq = label.find('=');
      if (eq == std::string::npos || eq == 0) {
        return HttpError{400, absl::StrCat("label: expects KEY=VALUE, got \"", label, "\"")};
      }
      query.labels.emplace_back(label.substr(0, eq), label.substr(eq + 1));
      (*request.mutable_labels())[label.substr(0, eq)] = label.substr(eq + 1);
    }
    if (const std::string state = q.Get("state"); !state.empty()) {
      bool found = false;
      for (v1::BatchState s : {v1::BATCH_STATE_RUNNING, v1::BATCH_STATE_SUCCEEDED,
                               v1::BATCH_STATE_FAILED, v1::BATCH_STATE_CANCELLED}) {
        if (absl::AsciiStrToUpper(state) == web::internal::StateName(s)) {
          query.state = s;
          found = true;
        }
      }
      if (!found) {
        return HttpError{400, absl::StrCat("state: \"", state,
                                           "\" is not RUNNING, SUCCEEDED, FAILED or CANCELLED")};
      }
      request.set_state(query.state);
    }
    absl::StatusOr<uint64_t> limit = q.Number("limit", 100, 1, kMaxListedBatches);
    if (!limit.ok()) return FromStatus(limit.status());
    query.limit = static_cast<uint32_t>(*limit);
    request.set_limit(query.limit);
    const std::vector<v1::Batch> batches = manager_->ListBatches(request);
    if (json) {
      res.set_content(web::internal::BatchListJson(batches), "application/json");
    } else {
      SendHtml(res, 200,
               web::internal::RenderBatchList(batches, query, absl::ToUnixMillis(absl::Now()),
                                              PollMs()));
    }
    return std::nullopt;
  }

  int PollMs() const {
    return static_cast<int>(
        std::max<int64_t>(100, absl::ToInt64Milliseconds(options_.poll_interval)));
  }

  // GET /api/batches/ID.
  std::optional<HttpError> BatchApi(const httplib::Request& req, httplib::Response& res,
                                    absl::string_view id) {
    if (auto e = Query(req).Check({})) return e;
    if (!PlausibleBatchId(id)) return HttpError{404, "no such batch"};
    absl::StatusOr<v1::Batch> batch = manager_->GetBatch(id, /*with_jobs=*/false);
    if (!batch.ok()) return FromStatus(batch.status());
    res.set_content(web::internal::BatchJson(*batch), "application/json");
    return std::nullopt;
  }

  // /batches/ID, /batches/ID/aggregate, /batches/ID/summary.json, /batches/ID/jobs/NAME.
  std::optional<HttpError> BatchRoutes(const httplib::Request& req, httplib::Response& res,
                                       absl::string_view rest) {
    const size_t slash = rest.find('/');
    const std::string id(rest.substr(0, slash));
    if (!PlausibleBatchId(id)) return HttpError{404, "no such batch"};
    if (slash == absl::string_view::npos) return BatchPage(req, res, id);
    absl::string_view sub = rest.substr(slash + 1);
    if (sub == "aggregate") return Artifact(req, res, id, "");
    if (sub == "summary.json") {
      if (auto e = Query(req).Check({})) return e;
      absl::StatusOr<std::string> json = SummaryJson(id);
      if (!json.ok()) return FromStatus(json.status());
      res.set_content(*json, "application/json");
      return std::nullopt;
    }
    if (absl::ConsumePrefix(&sub, "jobs/")) {
      if (!PlausibleJobName(sub)) {
        return HttpError{404, absl::StrCat("no job \"", sub, "\" in batch ", id)};
      }
      if (req.has_param("format")) return Artifact(req, res, id, std::string(sub));
      return JobPage(req, res, id, std::string(sub));
    }
    return HttpError{404, "no such page"};
  }

  absl::StatusOr<std::string> SummaryJson(const std::string& id) {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::string bytes,
                                manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_SUMMARY));
    return SummaryJsonFromArtifact(id, bytes);
  }

  web::internal::SummaryTables Summary(const v1::Batch& batch) {
    const bool ended = batch.state() != v1::BATCH_STATE_RUNNING;
    if (ended) {
      absl::MutexLock lock(&cache_mu_);
      auto it = summary_cache_.find(batch.batch_id());
      if (it != summary_cache_.end()) return it->second;
    }
    web::internal::SummaryTables tables;
    absl::StatusOr<std::string> json = SummaryJson(batch.batch_id());
    if (!json.ok()) {
      tables.note = absl::StrCat("No batch summary: ", json.status().message());
      return tables;
    }
    tables = TablesFromSummaryJson(*json, options_.summary_rows);
    if (ended) {
      absl::MutexLock lock(&cache_mu_);
      if (summary_cache_.size() >= kSummaryCacheEntries) summary_cache_.clear();
      summary_cache_.emplace(batch.batch_id(), tables);
    }
    return tables;
  }

  // The succeeded jobs' cycles of batch `id` ("" = none).
  std::map<std::string, uint64_t> SucceededCycles(const std::string& id) {
    std::map<std::string, uint64_t> out;
    if (id.empty()) return out;
    absl::StatusOr<v1::Batch> batch = manager_->GetBatch(id, /*with_jobs=*/true);
    if (!batch.ok()) return out;  // removed by retention meanwhile: no deltas
    for (const v1::JobStatus& job : batch->jobs()) {
      if (job.state() == v1::JOB_STATE_SUCCEEDED) out[job.name()] = job.cycles();
    }
    return out;
  }

  std::optional<HttpError> BatchPage(const httplib::Request& req, httplib::Response& res,
                                     const std::string& id) {
    Query q(req);
    if (auto e = q.Check({"sort", "order", "page"})) return e;
    web::internal::BatchPageData data;
    const std::string sort = q.Get("sort");
    if (sort.empty() || sort == "index") {
      data.sort = web::internal::JobSort::kIndex;
    } else if (sort == "name") {
      data.sort = web::internal::JobSort::kName;
    } else if (sort == "cycles") {
      data.sort = web::internal::JobSort::kCycles;
    } else if (sort == "delta") {
      data.sort = web::internal::JobSort::kDelta;
    } else {
      return HttpError{400,
                       absl::StrCat("sort: \"", sort, "\" is not index, name, cycles or delta")};
    }
    const std::string order = q.Get("order");
    if (!order.empty() && order != "asc" && order != "desc") {
      return HttpError{400, absl::StrCat("order: \"", order, "\" is not asc or desc")};
    }
    data.descending = order == "desc";
    absl::StatusOr<v1::Batch> batch = manager_->GetBatch(id, /*with_jobs=*/true);
    if (!batch.ok()) return FromStatus(batch.status());
    data.batch = *std::move(batch);
    data.jobs_per_page = options_.jobs_per_page;
    const size_t pages = web::internal::PageCount(data.batch.jobs_size(), data.jobs_per_page);
    absl::StatusOr<uint64_t> page = q.Number("page", 1, 1, pages);
    if (!page.ok()) return FromStatus(page.status());
    data.page = *page;
    absl::StatusOr<std::string> previous = manager_->PreviousBatch(id);
    if (previous.ok()) data.previous_id = *previous;
    data.previous_jobs = SucceededCycles(data.previous_id);
    if (!data.previous_id.empty()) {
      absl::StatusOr<v1::Batch> before = manager_->GetBatch(data.previous_id, /*with_jobs=*/false);
      // Removed by retention meanwhile: no padded marks.
      if (before.ok()) data.previous_padded = Summary(*before).padded;
    }
    data.summary = Summary(data.batch);
    data.now_ms = absl::ToUnixMillis(absl::Now());
    data.poll_ms = PollMs();
    SendHtml(res, 200, web::internal::RenderBatchPage(data));
    return std::nullopt;
  }

  std::optional<HttpError> JobPage(const httplib::Request& req, httplib::Response& res,
                                   const std::string& id, const std::string& name) {
    if (auto e = Query(req).Check({"format"})) return e;
    absl::StatusOr<v1::Batch> batch = manager_->GetBatch(id, /*with_jobs=*/true);
    if (!batch.ok()) return FromStatus(batch.status());
    web::internal::JobPageData data;
    data.batch_id = id;
    data.batch_state = batch->state();
    data.batch_signature = web::internal::BatchSignature(*batch);
    const v1::JobStatus* job = nullptr;
    for (const v1::JobStatus& j : batch->jobs()) {
      if (j.name() == name) job = &j;
    }
    if (job == nullptr) return HttpError{404, absl::StrCat("no job \"", name, "\" in batch ", id)};
    data.job = *job;
    // Jobs without a summary (or with one of another dialect) have no trace shape.
    data.trace = JobTrace(manager_->FetchArtifact(id, name, v1::ARTIFACT_FORMAT_SUMMARY));
    absl::StatusOr<std::string> previous = manager_->PreviousBatch(id);
    if (previous.ok() && !previous->empty()) {
      data.previous_id = *previous;
      std::map<std::string, uint64_t> cycles = SucceededCycles(*previous);
      if (auto it = cycles.find(name); it != cycles.end()) data.previous_cycles = it->second;
      if (data.trace.has_value()) {
        std::optional<web::internal::JobTraceShape> before =
            JobTrace(manager_->FetchArtifact(*previous, name, v1::ARTIFACT_FORMAT_SUMMARY));
        if (before.has_value()) data.previous_padded = before->padded_len;
      }
    }
    SendHtml(res, 200, web::internal::RenderJobPage(data));
    return std::nullopt;
  }

  // ?format=svg|folded|pprof|speedscope of the aggregate (`job` "") or a job.
  std::optional<HttpError> Artifact(const httplib::Request& req, httplib::Response& res,
                                    const std::string& id, const std::string& job) {
    Query q(req);
    if (auto e = q.Check({"format"})) return e;
    const std::string name = q.Get("format");
    std::optional<profile::ProfileFormat> format = ParseFormat(name);
    if (!format.has_value()) {
      return HttpError{
          400, absl::StrCat("format: \"", name, "\" is not svg, folded, pprof or speedscope")};
    }
    std::string bytes;
    if (*format == profile::ProfileFormat::kSvg || *format == profile::ProfileFormat::kFolded) {
      absl::StatusOr<std::string> data = manager_->FetchArtifact(
          id, job,
          *format == profile::ProfileFormat::kSvg ? v1::ARTIFACT_FORMAT_SVG
                                                  : v1::ARTIFACT_FORMAT_FOLDED);
      if (!data.ok()) return FromStatus(data.status());
      bytes = *std::move(data);
    } else {
      absl::StatusOr<std::string> data =
          manager_->FetchArtifact(id, job, v1::ARTIFACT_FORMAT_PROFILE);
      if (!data.ok()) return FromStatus(data.status());
      absl::StatusOr<profile::Profile> parsed = profile::ParseProfile(*data);
      if (!parsed.ok()) return FromStatus(parsed.status());
      renderer::RenderOptions options;
      options.title = job.empty() ? absl::StrCat("batch ", id) : job;
      absl::StatusOr<std::string> encoded = renderer::EncodeProfile(
          *parsed, {*format, *format == profile::ProfileFormat::kPprof}, options);
      if (!encoded.ok()) return FromStatus(encoded.status());
      bytes = *std::move(encoded);
    }
    if (*format == profile::ProfileFormat::kSvg) {
      res.set_header("Content-Security-Policy", kSvgPolicy);
    } else {
      res.set_header("Content-Disposition",
                     absl::StrCat("attachment; filename=\"",
                                  DownloadName(job.empty() ? "aggregate" : job, *format), "\""));
    }
    res.set_content(std::move(bytes), ContentType(*format));
    return std::nullopt;
  }

  // One side of a diff: the batch's succeeded jobs and its aggregate (cli/suite_diff LoadBatch).
  struct Side {
    std::map<std::string, uint64_t> jobs;
    profile::Profile aggregate;
  };

  absl::StatusOr<Side> LoadSide(const char* field, const std::string& id) {
    if (!PlausibleBatchId(id)) {
      return absl::NotFoundError(absl::StrCat(field, ": no batch \"", id, "\""));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(v1::Batch batch, manager_->GetBatch(id, /*with_jobs=*/true));
    if (!HasAggregate(batch.state())) {
      return absl::FailedPreconditionError(absl::StrCat(
          field, ": batch ", id, " is ",
          absl::AsciiStrToLower(web::internal::StateName(batch.state())),
          batch.state() == v1::BATCH_STATE_RUNNING ? " (a diff needs both batches ended)"
                                                   : " (it has no aggregate)"));
    }
    Side side;
    for (const v1::JobStatus& job : batch.jobs()) {
      if (job.state() == v1::JOB_STATE_SUCCEEDED) side.jobs[job.name()] = job.cycles();
    }
    if (batch.jobs_succeeded() > 0) {
      FLAMEFLEET_ASSIGN_OR_RETURN(std::string bytes,
                                  manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_PROFILE));
      FLAMEFLEET_ASSIGN_OR_RETURN(side.aggregate, profile::ParseProfile(bytes));
    }
    return side;
  }

  std::optional<HttpError> DiffPage(const httplib::Request& req, httplib::Response& res) {
    Query q(req);
    if (auto e = q.Check({"before", "after", "top", "format"})) return e;
    if (!q.Has("before") || !q.Has("after")) {
      return HttpError{400, "diff needs ?before=BATCH&after=BATCH"};
    }
    const std::string format = q.Get("format");
    if (q.Has("format") && format != "svg") {
      return HttpError{400, absl::StrCat("format: \"", format, "\" is not svg")};
    }
    absl::StatusOr<uint64_t> top = q.Number("top", kDefaultDiffTop, 1, kMaxDiffTop);
    if (!top.ok()) return FromStatus(top.status());
    web::internal::DiffPageData data;
    data.before_id = q.Get("before");
    data.after_id = q.Get("after");
    data.top = *top;
    absl::StatusOr<Side> before = LoadSide("before", data.before_id);
    if (!before.ok()) return FromStatus(before.status());
    absl::StatusOr<Side> after = LoadSide("after", data.after_id);
    if (!after.ok()) return FromStatus(after.status());
    if (q.Has("format")) {
      if (before->aggregate.total() == 0 || after->aggregate.total() == 0) {
        return HttpError{409, "no differential graph: a side has no cycles"};
      }
      const profile::ProfileDiff diff =
          profile::ProfileDiff::Compute(before->aggregate, after->aggregate);
      renderer::RenderOptions options;  // `flamefleet diff`'s defaults
      options.title = "Differential Flame Graph";
      options.subtitle = absl::StrCat("batch ", data.before_id, " -> batch ", data.after_id);
      std::ostringstream svg;
      if (absl::Status st = renderer::RenderDiffSvg(diff, options, svg); !st.ok()) {
        return FromStatus(st);
      }
      res.set_header("Content-Security-Policy", kSvgPolicy);
      res.set_content(std::move(svg).str(), "image/svg+xml");
      return std::nullopt;
    }
    profile::MatchCycles(before->jobs, after->jobs, &data.jobs, &data.added, &data.removed);
    data.frames = profile::FrameDeltas(profile::SelfCyclesByName(before->aggregate),
                                       profile::SelfCyclesByName(after->aggregate));
    data.before_total = before->aggregate.total();
    data.after_total = after->aggregate.total();
    data.has_svg = data.before_total != 0 && data.after_total != 0;
    SendHtml(res, 200, web::internal::RenderDiffPage(data));
    return std::nullopt;
  }

  BatchManager* const manager_;
  const WebServerOptions options_;
  const std::string session_;  // "" = no token: every page is open
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> loop_ended_{false};  // listen_after_bind returned
  absl::Mutex shutdown_mu_;
  absl::Mutex cache_mu_;
  std::map<std::string, web::internal::SummaryTables> summary_cache_ ABSL_GUARDED_BY(cache_mu_);
};

absl::StatusOr<std::unique_ptr<WebServer>> WebServer::Start(BatchManager* manager,
                                                            WebServerOptions options) {
  if (options.jobs_per_page < 1 || options.jobs_per_page > kMaxJobsPerPage) {
    return absl::InvalidArgumentError(absl::StrCat("--http-jobs-per-page: ", options.jobs_per_page,
                                                   " is not from 1 to ", kMaxJobsPerPage));
  }
  if (options.summary_rows < 1 || options.summary_rows > kMaxSummaryRows) {
    return absl::InvalidArgumentError(absl::StrCat("--http-summary-rows: ", options.summary_rows,
                                                   " is not from 1 to ", kMaxSummaryRows));
  }
  if (options.threads < 1 || options.threads > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("http threads: ", options.threads, " is not from 1 to 1024"));
  }
  auto impl = std::make_unique<Impl>(manager, std::move(options));
  FLAMEFLEET_ASSIGN_OR_RETURN(int port, impl->Bind());
  return std::unique_ptr<WebServer>(new WebServer(std::move(impl), port));
}

WebServer::WebServer(std::unique_ptr<Impl> impl, int port) : impl_(std::move(impl)), port_(port) {}

WebServer::~WebServer() { Shutdown(); }

bool WebServer::https() const { return impl_->https(); }

void WebServer::Shutdown() { impl_->Shutdown(); }

}  // namespace flamefleet::coordinator
