#include "cli/project.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/program_flags.h"
#include "cli/safe_paths.h"
#include "common/status_macros.h"
#include "common/toml.h"

namespace flamefleet::cli {
namespace {

namespace fs = std::filesystem;

// A dependency as one manifest declares it.
struct DependencyDecl {
  std::string name;
  std::string key;  // "dependencies.foo" or "workspace.dependencies.foo"
  std::string at;   // "FILE:LINE:COL: "
  bool workspace = false;
  bool git = false;
  bool has_path = false;
  std::string path;     // as written, relative to the declaring manifest's directory
  fs::path base;        // that directory
  std::string linkage;  // "static", "dynamic" or "" (not written: dynamic, the default)
};

struct BinDecl {
  std::string name;  // empty: the package name
  std::string path;
  std::string key;  // "bin[2]"
  std::string at;
};

// One miden-project.toml, checked for shape (keys and types) but not yet resolved.
struct Manifest {
  fs::path file;
  fs::path dir;
  bool is_workspace = false;
  // A package manifest.
  std::string name;
  std::string version;
  bool version_inherited = false;
  std::string at_package;  // position of [package] (or the file, when absent)
  std::string at_version;
  bool has_lib = false;
  std::string lib_path;
  std::string lib_namespace;
  std::string lib_kind;
  std::string at_lib_path;
  std::string at_lib_kind;
  std::string at_lib_namespace;
  std::vector<BinDecl> bins;
  std::vector<DependencyDecl> dependencies;
  // A workspace manifest.
  std::vector<std::pair<std::string, std::string>> members;  // (path as written, position)
  std::vector<DependencyDecl> workspace_dependencies;
  bool has_workspace_version = false;
};

std::string At(const fs::path& file, const toml::node& node) {
  const toml::source_position& pos = node.source().begin;
  if (!pos) return absl::StrCat(file.string(), ": ");
  return absl::StrCat(file.string(), ":", pos.line, ":", pos.column, ": ");
}

absl::Status Invalid(absl::string_view at, absl::string_view key, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(at, key, ": ", what));
}

// Refuses a key of `table` that is not in `allowed`.
absl::Status CheckKeys(const fs::path& file, const toml::table& table, absl::string_view prefix,
                       std::initializer_list<absl::string_view> allowed) {
  for (const auto& [key, value] : table) {
    const std::string name(key.str());
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    return absl::InvalidArgumentError(absl::StrCat(At(file, value), "unknown key '", prefix, name,
                                                   "' (expected one of ",
                                                   absl::StrJoin(allowed, ", "), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> String(const fs::path& file, const toml::node& node,
                                   absl::string_view key) {
  const auto* s = node.as_string();
  if (s == nullptr) return Invalid(At(file, node), key, "expected a string");
  return std::string(s->get());
}

absl::StatusOr<bool> Bool(const fs::path& file, const toml::node& node, absl::string_view key) {
  const auto* b = node.as_boolean();
  if (b == nullptr) return Invalid(At(file, node), key, "expected true or false");
  return b->get();
}

const toml::table* Table(const toml::node& node) { return node.as_table(); }

// `x = "v"` or `x.workspace = true`: returns whether it inherits, and the string otherwise.
absl::Status InheritableString(const fs::path& file, const toml::node& node, absl::string_view key,
                               std::string* value, bool* inherited) {
  if (const toml::table* t = Table(node)) {
    FLAMEFLEET_RETURN_IF_ERROR(CheckKeys(file, *t, absl::StrCat(key, "."), {"workspace"}));
    const toml::node* w = t->get("workspace");
    if (w == nullptr) return Invalid(At(file, node), key, "expected a string or workspace = true");
    FLAMEFLEET_ASSIGN_OR_RETURN(bool on, Bool(file, *w, absl::StrCat(key, ".workspace")));
    if (!on) return Invalid(At(file, *w), absl::StrCat(key, ".workspace"), "must be true if set");
    *inherited = true;
    return absl::OkStatus();
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(*value, String(file, node, key));
  *inherited = false;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DependencyDecl>> ParseDependencies(const fs::path& file,
                                                              const toml::node& node,
                                                              absl::string_view prefix,
                                                              bool workspace_level) {
  const toml::table* table = Table(node);
  if (table == nullptr) return Invalid(At(file, node), prefix, "expected a table of dependencies");
  if (table->size() > kMaxProjectDependencies) {
    return Invalid(At(file, node), prefix,
                   absl::StrCat(table->size(), " dependencies, more than the limit of ",
                                kMaxProjectDependencies));
  }
  std::vector<DependencyDecl> out;
  for (const auto& [name, value] : *table) {
    DependencyDecl dep;
    dep.name = std::string(name.str());
    dep.key = absl::StrCat(prefix, ".", dep.name);
    dep.at = At(file, value);
    dep.base = file.parent_path();
    if (value.is_string()) {
      // A version requirement: resolved by a package registry, unless it is the core library.
      out.push_back(std::move(dep));
      continue;
    }
    const toml::table* spec = Table(value);
    if (spec == nullptr) {
      return Invalid(dep.at, dep.key,
                     "expected a version string or a table such as { path = ... }");
    }
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckKeys(file, *spec, absl::StrCat(dep.key, "."),
                  {"version", "digest", "workspace", "path", "git", "branch", "rev", "linkage"}));
    for (const char* text_key : {"version", "digest", "git", "branch", "rev"}) {
      if (const toml::node* v = spec->get(text_key)) {
        FLAMEFLEET_RETURN_IF_ERROR(String(file, *v, absl::StrCat(dep.key, ".", text_key)).status());
      }
    }
    if (const toml::node* l = spec->get("linkage")) {
      FLAMEFLEET_ASSIGN_OR_RETURN(std::string linkage,
                                  String(file, *l, absl::StrCat(dep.key, ".linkage")));
      if (linkage != "static" && linkage != "dynamic" && linkage != "default") {
        return Invalid(
            At(file, *l), absl::StrCat(dep.key, ".linkage"),
            absl::StrCat("unknown linkage '", linkage, "': expected either 'dynamic' or 'static'"));
      }
      dep.linkage = linkage == "static" ? "static" : "dynamic";
    }
    if (const toml::node* w = spec->get("workspace")) {
      FLAMEFLEET_ASSIGN_OR_RETURN(dep.workspace,
                                  Bool(file, *w, absl::StrCat(dep.key, ".workspace")));
      if (dep.workspace && workspace_level) {
        return Invalid(At(file, *w), absl::StrCat(dep.key, ".workspace"),
                       "cannot use the 'workspace' option in a workspace-level dependency");
      }
    }
    dep.git = spec->contains("git");
    if (const toml::node* p = spec->get("path")) {
      FLAMEFLEET_ASSIGN_OR_RETURN(dep.path, String(file, *p, absl::StrCat(dep.key, ".path")));
      dep.has_path = true;
      dep.at = At(file, *p);
    }
    out.push_back(std::move(dep));
  }
  return out;
}

absl::StatusOr<Manifest> ParseManifest(const fs::path& file, const std::string& text) {
  toml::parse_result parsed = toml::parse(text, file.string());
  if (!parsed) {
    const auto& err = parsed.error();
    return absl::InvalidArgumentError(absl::StrCat(file.string(), ":", err.source().begin.line, ":",
                                                   err.source().begin.column, ": ",
                                                   std::string(err.description())));
  }
  const toml::table& top = parsed.table();
  Manifest m;
  m.file = file;
  m.dir = file.parent_path();
  m.at_package = absl::StrCat(file.string(), ": ");
  if (const toml::node* ws = top.get("workspace")) {
    m.is_workspace = true;
    FLAMEFLEET_RETURN_IF_ERROR(CheckKeys(file, top, "", {"workspace", "profile"}));
    const toml::table* t = Table(*ws);
    if (t == nullptr) return Invalid(At(file, *ws), "workspace", "expected a table");
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckKeys(file, *t, "workspace.", {"members", "package", "dependencies", "lints"}));
    if (const toml::node* members = t->get("members")) {
      const toml::array* list = members->as_array();
      if (list == nullptr) {
        return Invalid(At(file, *members), "workspace.members", "expected an array of paths");
      }
      if (list->size() > kMaxProjectMembers) {
        return Invalid(
            At(file, *members), "workspace.members",
            absl::StrCat(list->size(), " members, more than the limit of ", kMaxProjectMembers));
      }
      for (const toml::node& member : *list) {
        FLAMEFLEET_ASSIGN_OR_RETURN(std::string path, String(file, member, "workspace.members"));
        m.members.emplace_back(std::move(path), At(file, member));
      }
    }
    if (const toml::node* package = t->get("package")) {
      const toml::table* p = Table(*package);
      if (p == nullptr) return Invalid(At(file, *package), "workspace.package", "expected a table");
      FLAMEFLEET_RETURN_IF_ERROR(
          CheckKeys(file, *p, "workspace.package.", {"version", "description", "metadata"}));
      for (const char* key : {"version", "description"}) {
        if (const toml::node* v = p->get(key)) {
          FLAMEFLEET_RETURN_IF_ERROR(
              String(file, *v, absl::StrCat("workspace.package.", key)).status());
        }
      }
      m.has_workspace_version = p->contains("version");
    }
    if (const toml::node* deps = t->get("dependencies")) {
      FLAMEFLEET_ASSIGN_OR_RETURN(
          m.workspace_dependencies,
          ParseDependencies(file, *deps, "workspace.dependencies", /*workspace_level=*/true));
    }
    return m;
  }

  FLAMEFLEET_RETURN_IF_ERROR(
      CheckKeys(file, top, "", {"package", "lib", "bin", "dependencies", "lints", "profile"}));
  const toml::node* package = top.get("package");
  if (package == nullptr) {
    return Invalid(absl::StrCat(file.string(), ": "), "package",
                   "missing [package] table (a miden-project.toml has [package] or [workspace])");
  }
  const toml::table* p = Table(*package);
  if (p == nullptr) return Invalid(At(file, *package), "package", "expected a table");
  m.at_package = At(file, *package);
  FLAMEFLEET_RETURN_IF_ERROR(
      CheckKeys(file, *p, "package.", {"name", "version", "description", "metadata"}));
  const toml::node* name = p->get("name");
  if (name == nullptr) return Invalid(m.at_package, "package.name", "missing required field");
  FLAMEFLEET_ASSIGN_OR_RETURN(m.name, String(file, *name, "package.name"));
  if (m.name.empty() || absl::StrContains(m.name, "/") || absl::StrContains(m.name, "::") ||
      std::any_of(m.name.begin(), m.name.end(),
                  [](char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); })) {
    return Invalid(At(file, *name), "package.name",
                   absl::StrCat("'", m.name, "' is not a valid package name"));
  }
  const toml::node* version = p->get("version");
  if (version == nullptr) return Invalid(m.at_package, "package.version", "missing required field");
  m.at_version = At(file, *version);
  FLAMEFLEET_RETURN_IF_ERROR(
      InheritableString(file, *version, "package.version", &m.version, &m.version_inherited));
  if (const toml::node* d = p->get("description")) {
    std::string ignored;
    bool inherited = false;
    FLAMEFLEET_RETURN_IF_ERROR(
        InheritableString(file, *d, "package.description", &ignored, &inherited));
  }
  if (const toml::node* lib = top.get("lib")) {
    const toml::table* l = Table(*lib);
    if (l == nullptr) return Invalid(At(file, *lib), "lib", "expected a table");
    FLAMEFLEET_RETURN_IF_ERROR(CheckKeys(file, *l, "lib.", {"kind", "namespace", "path"}));
    m.has_lib = true;
    const toml::node* path = l->get("path");
    if (path == nullptr) return Invalid(At(file, *lib), "lib.path", "missing required field");
    FLAMEFLEET_ASSIGN_OR_RETURN(m.lib_path, String(file, *path, "lib.path"));
    m.at_lib_path = At(file, *path);
    if (const toml::node* kind = l->get("kind")) {
      FLAMEFLEET_ASSIGN_OR_RETURN(m.lib_kind, String(file, *kind, "lib.kind"));
      m.at_lib_kind = At(file, *kind);
    }
    if (const toml::node* ns = l->get("namespace")) {
      FLAMEFLEET_ASSIGN_OR_RETURN(m.lib_namespace, String(file, *ns, "lib.namespace"));
      m.at_lib_namespace = At(file, *ns);
    }
  }
  if (const toml::node* bins = top.get("bin")) {
    const toml::array* list = bins->as_array();
    if (list == nullptr) return Invalid(At(file, *bins), "bin", "expected [[bin]] tables");
    if (list->size() > kMaxProjectBins) {
      return Invalid(
          At(file, *bins), "bin",
          absl::StrCat(list->size(), " [[bin]] targets, more than the limit of ", kMaxProjectBins));
    }
    for (size_t i = 0; i < list->size(); ++i) {
      const toml::node& node = *list->get(i);
      BinDecl bin;
      bin.key = absl::StrCat("bin[", i, "]");
      bin.at = At(file, node);
      const toml::table* b = Table(node);
      if (b == nullptr) return Invalid(bin.at, bin.key, "expected a table");
      FLAMEFLEET_RETURN_IF_ERROR(CheckKeys(file, *b, absl::StrCat(bin.key, "."), {"name", "path"}));
      if (const toml::node* n = b->get("name")) {
        FLAMEFLEET_ASSIGN_OR_RETURN(bin.name, String(file, *n, absl::StrCat(bin.key, ".name")));
        bin.at = At(file, *n);
      }
      const toml::node* path = b->get("path");
      if (path == nullptr)
        return Invalid(bin.at, absl::StrCat(bin.key, ".path"), "missing required field");
      FLAMEFLEET_ASSIGN_OR_RETURN(bin.path, String(file, *path, absl::StrCat(bin.key, ".path")));
      m.bins.push_back(std::move(bin));
    }
  }
  if (const toml::node* deps = top.get("dependencies")) {
    FLAMEFLEET_ASSIGN_OR_RETURN(
        m.dependencies, ParseDependencies(file, *deps, "dependencies", /*workspace_level=*/false));
  }
  return m;
}

// A package as loaded: its manifest, its resolved lib and its dependency edges.
struct Package {
  Manifest manifest;
  std::string member;  // the job-name prefix in a workspace ("" for a single package)
  bool in_workspace = false;
  bool core = false;                                 // depends on miden-core
  bool core_static = false;                          // ... with linkage = "static"
  std::set<size_t> static_deps;                      // deps with linkage = "static"
  std::vector<std::pair<size_t, std::string>> deps;  // (package index, "AT KEY")
  // The lib: empty lib_root when the package has none.
  fs::path lib_root;
  bool kernel = false;
  std::string ns;
};

class Loader {
 public:
  explicit Loader(fs::path root) : root_(std::move(root)) {}

  absl::StatusOr<Project> Load() {
    FLAMEFLEET_ASSIGN_OR_RETURN(Manifest top, ReadManifest(root_, ""));
    Project project;
    project.root = root_;
    std::vector<size_t> runnable;
    if (top.is_workspace) {
      project.workspace = true;
      workspace_ = std::make_unique<Manifest>(std::move(top));
      std::vector<std::pair<fs::path, std::string>> members;  // (dir, name)
      for (const auto& [path, at] : workspace_->members) {
        FLAMEFLEET_ASSIGN_OR_RETURN(fs::path dir,
                                    Inside(root_, path, at, "workspace.members", /*dir=*/true));
        std::string name = dir.lexically_relative(root_).generic_string();
        if (name == ".") {
          return Invalid(at, "workspace.members", "the workspace root cannot be its own member");
        }
        member_names_[dir.string()] = name;
        members.emplace_back(dir, std::move(at));
      }
      absl::flat_hash_map<std::string, std::string> seen;  // package name -> member
      for (const auto& [dir, at] : members) {
        FLAMEFLEET_ASSIGN_OR_RETURN(size_t index, LoadPackage(dir, at, "workspace.members"));
        const std::string& name = packages_[index].manifest.name;
        if (auto [it, fresh] = seen.emplace(name, packages_[index].member); !fresh) {
          return Invalid(at, "workspace.members",
                         absl::StrCat("members '", it->second, "' and '", packages_[index].member,
                                      "' are both package '", name, "'"));
        }
        runnable.push_back(index);
      }
    } else {
      FLAMEFLEET_ASSIGN_OR_RETURN(size_t index, LoadPackage(root_, "", ""));
      runnable.push_back(index);
    }
    FLAMEFLEET_RETURN_IF_ERROR(CheckCycles());
    absl::flat_hash_map<std::string, size_t> by_namespace;
    for (size_t i = 0; i < packages_.size(); ++i) {
      const Package& p = packages_[i];
      if (p.core) project.uses_core_library = true;
      if (p.lib_root.empty() || p.kernel) continue;
      if (auto [it, fresh] = by_namespace.emplace(p.ns, i); !fresh) {
        return Invalid(p.manifest.at_lib_namespace.empty() ? p.manifest.at_lib_path
                                                           : p.manifest.at_lib_namespace,
                       "lib.namespace",
                       absl::StrCat("namespace '", p.ns, "' is also the lib of package '",
                                    packages_[it->second].manifest.name, "' (",
                                    packages_[it->second].manifest.file.string(), ")"));
      }
      FLAMEFLEET_ASSIGN_OR_RETURN(ProjectLibrary lib, LibraryFiles(p));
      project.libraries.push_back(std::move(lib));
    }
    std::sort(project.libraries.begin(), project.libraries.end(),
              [](const ProjectLibrary& a, const ProjectLibrary& b) { return a.ns < b.ns; });
    absl::flat_hash_map<std::string, std::string> job_names;  // job name -> position
    for (size_t index : runnable) {
      FLAMEFLEET_RETURN_IF_ERROR(AddBins(index, &project, &job_names));
    }
    if (project.bins.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          (root_ / kProjectManifest).string(), ": no [[bin]] targets",
          project.workspace ? " in any workspace member" : "",
          ": a library-only project has nothing to run (add [[bin]] name = ..., path = ...)"));
    }
    std::sort(project.bins.begin(), project.bins.end(),
              [](const ProjectBin& a, const ProjectBin& b) { return a.job_name < b.job_name; });
    return project;
  }

 private:
  // Reads DIR/miden-project.toml; `at` and `key` name the reference that led here (for errors).
  absl::StatusOr<Manifest> ReadManifest(const fs::path& dir, absl::string_view at) {
    const fs::path file = dir / kProjectManifest;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(file, ec))) {
      return absl::InvalidArgumentError(absl::StrCat(
          at, file.string(), ": no such file (a project directory holds ", kProjectManifest, ")"));
    }
    FLAMEFLEET_RETURN_IF_ERROR(CheckInsideDirectory(file, root_, "project directory"));
    const uintmax_t size = fs::file_size(file, ec);
    if (ec || size > kMaxProjectManifestBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          file.string(), ": ",
          ec ? ec.message()
             : absl::StrCat(size, " bytes, more than the limit of ", kMaxProjectManifestBytes)));
    }
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in && !in.eof())
      return absl::InvalidArgumentError(absl::StrCat("cannot read ", file.string()));
    return ParseManifest(file, text.str());
  }

  // Resolves `written` (relative to `base`) to a path inside the project directory that exists
  // (a directory if `dir`, else a file), following no symlink out of it.
  absl::StatusOr<fs::path> Inside(const fs::path& base, const std::string& written,
                                  absl::string_view at, absl::string_view key, bool dir) {
    if (written.empty()) return Invalid(at, key, "empty path");
    if (fs::path(written).is_absolute()) {
      return Invalid(at, key,
                     absl::StrCat("'", written, "' is absolute; paths are relative to ",
                                  "the manifest's directory"));
    }
    const fs::path full = (base / written).lexically_normal();
    const fs::path rel = full.lexically_relative(root_);
    if (rel.empty() || *rel.begin() == "..") {
      return Invalid(at, key,
                     absl::StrCat("'", written, "' leaves the project directory ", root_.string(),
                                  " (flamefleet reads no file outside the directory given)"));
    }
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(full, ec))) {
      return Invalid(at, key, absl::StrCat(full.string(), ": no such file or directory"));
    }
    absl::Status inside = CheckInsideDirectory(full, root_, "project directory");
    if (!inside.ok()) return Invalid(at, key, inside.message());
    const fs::path trimmed = full.filename().empty() ? full.parent_path() : full;
    if (dir != fs::is_directory(trimmed, ec)) {
      return Invalid(at, key,
                     absl::StrCat(trimmed.string(), dir ? ": not a directory" : ": not a file"));
    }
    return trimmed;
  }

  absl::StatusOr<size_t> LoadPackage(const fs::path& dir, absl::string_view at,
                                     absl::string_view key) {
    if (auto it = by_dir_.find(dir.string()); it != by_dir_.end()) return it->second;
    if (packages_.size() >= kMaxProjectPackages) {
      return Invalid(at, key,
                     absl::StrCat("more than the limit of ", kMaxProjectPackages, " packages"));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(Manifest m, ReadManifest(dir, at));
    if (m.is_workspace) {
      return Invalid(
          at, key, absl::StrCat(m.file.string(), " is a workspace; depend on one of its members"));
    }
    const size_t index = packages_.size();
    by_dir_[dir.string()] = index;
    Package p;
    p.manifest = std::move(m);
    if (auto it = member_names_.find(dir.string()); it != member_names_.end()) {
      p.member = it->second;
      p.in_workspace = true;
    }
    packages_.push_back(std::move(p));
    // `packages_` may grow below: work on copies, and write back by index.
    const Manifest manifest = packages_[index].manifest;
    const bool in_workspace = packages_[index].in_workspace;
    if (manifest.version_inherited && (!in_workspace || !workspace_->has_workspace_version)) {
      return Invalid(manifest.at_version, "package.version",
                     in_workspace ? "inherits the workspace version, but the workspace manifest "
                                    "has no [workspace.package] version"
                                  : "version.workspace = true, but this package is not a "
                                    "workspace member");
    }
    FLAMEFLEET_RETURN_IF_ERROR(ResolveLib(index));
    for (const DependencyDecl& declared : manifest.dependencies) {
      DependencyDecl dep = declared;
      if (dep.workspace) {
        if (!in_workspace) {
          return Invalid(dep.at, dep.key,
                         "workspace = true, but this package is not a workspace member");
        }
        auto found = std::find_if(workspace_->workspace_dependencies.begin(),
                                  workspace_->workspace_dependencies.end(),
                                  [&](const DependencyDecl& d) { return d.name == dep.name; });
        if (found == workspace_->workspace_dependencies.end()) {
          return Invalid(dep.at, dep.key,
                         absl::StrCat("'", dep.name, "' is not in [workspace.dependencies] of ",
                                      workspace_->file.string()));
        }
        // The member's own `linkage`, if it writes one, wins over the workspace's.
        const std::string own_linkage = dep.linkage;
        dep = *found;
        if (!own_linkage.empty()) dep.linkage = own_linkage;
      }
      const bool is_static = dep.linkage == "static";
      const std::string where = absl::StrCat(dep.at, dep.key);
      if (dep.git) {
        return Invalid(dep.at, dep.key,
                       "git dependencies are not supported (flamefleet reads only the files of "
                       "the directory given); vendor it and use path = ...");
      }
      if (!dep.has_path) {
        if (dep.name == kCorePackage) {
          packages_[index].core = true;
          packages_[index].core_static = packages_[index].core_static || is_static;
          continue;
        }
        return Invalid(dep.at, dep.key,
                       absl::StrCat("registry dependencies are not supported: give it a path = "
                                    "inside the project (only '",
                                    kCorePackage, "', the core library, needs none)"));
      }
      if (absl::Status kind = CheckAcceptedInput(dep.path); !kind.ok()) {
        return Invalid(dep.at, absl::StrCat(dep.key, ".path"), kind.message());
      }
      FLAMEFLEET_ASSIGN_OR_RETURN(
          fs::path dep_dir,
          Inside(dep.base, dep.path, dep.at, absl::StrCat(dep.key, ".path"), /*dir=*/true));
      FLAMEFLEET_ASSIGN_OR_RETURN(size_t dep_index,
                                  LoadPackage(dep_dir, dep.at, absl::StrCat(dep.key, ".path")));
      packages_[index].deps.emplace_back(dep_index, where);
      if (is_static) packages_[index].static_deps.insert(dep_index);
    }
    return index;
  }

  // The namespaces package `p` links statically: the libs of its `linkage = "static"`
  // dependencies (not kernels), and the core library's when it links that statically. Sorted.
  std::vector<std::string> StaticLinks(const Package& p) const {
    std::set<std::string> out;
    for (size_t dep : p.static_deps) {
      const Package& q = packages_[dep];
      if (!q.lib_root.empty() && !q.kernel) out.insert(q.ns);
    }
    if (p.core_static) out.insert(kCoreNamespace);
    return std::vector<std::string>(out.begin(), out.end());
  }

  absl::Status ResolveLib(size_t index) {
    Package& p = packages_[index];
    const Manifest& m = p.manifest;
    fs::path root;
    if (m.has_lib) {
      FLAMEFLEET_ASSIGN_OR_RETURN(root, Inside(m.dir, m.lib_path, m.at_lib_path, "lib.path",
                                               /*dir=*/false));
      if (root.extension() != ".masm") {
        return Invalid(m.at_lib_path, "lib.path",
                       absl::StrCat("'", m.lib_path,
                                    "' is not a MASM module (.masm); flamefleet assembles MASM "
                                    "sources only"));
      }
    } else if (m.bins.empty()) {
      // The default target: a library whose root module is mod.masm beside the manifest.
      std::error_code ec;
      if (!fs::is_regular_file(m.dir / "mod.masm", ec)) return absl::OkStatus();
      FLAMEFLEET_RETURN_IF_ERROR(
          CheckInsideDirectory(m.dir / "mod.masm", root_, "project directory"));
      root = m.dir / "mod.masm";
    } else {
      return absl::OkStatus();
    }
    const std::string& kind = m.lib_kind;
    if (kind == "kernel") {
      p.kernel = true;
    } else if (!kind.empty() && kind != "library" && kind != "lib" && kind != "account-component" &&
               kind != "note" && kind != "note-script" && kind != "tx-script") {
      return Invalid(m.at_lib_kind, "lib.kind",
                     absl::StrCat("'", kind,
                                  "' is not a library kind (library, kernel, account-component, "
                                  "note, tx-script)"));
    }
    p.ns = m.lib_namespace.empty() ? m.name : m.lib_namespace;
    if (!p.kernel) {
      for (absl::string_view part : absl::StrSplit(p.ns, "::")) {
        const bool ok = !part.empty() && !absl::ascii_isdigit(part.front()) &&
                        std::all_of(part.begin(), part.end(), [](char c) {
                          return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
                        });
        if (!ok) {
          return Invalid(
              m.at_lib_namespace.empty() ? m.at_lib_path : m.at_lib_namespace, "lib.namespace",
              absl::StrCat("'", p.ns,
                           "' is not a MASM namespace (identifiers of letters, digits and '_' "
                           "joined by ::)",
                           m.lib_namespace.empty() ? "; the package name is the default, so set "
                                                     "lib.namespace"
                                                   : ""));
        }
      }
      if (p.ns == kCoreNamespace) {
        return Invalid(m.at_lib_namespace.empty() ? m.at_lib_path : m.at_lib_namespace,
                       "lib.namespace",
                       absl::StrCat("'", kCoreNamespace, "' is the core library's; depend on ",
                                    kCorePackage, " instead"));
      }
    }
    p.lib_root = root;
    return absl::OkStatus();
  }

  // The lib's files: every .masm under the root module's directory but the bin roots of the
  // package and nested packages, the root module renamed to mod.masm (flamefleet's namespace
  // root; upstream names it by lib.path).
  absl::StatusOr<ProjectLibrary> LibraryFiles(const Package& p) {
    ProjectLibrary lib;
    lib.ns = p.ns;
    lib.package = p.manifest.name;
    lib.static_links = StaticLinks(p);
    lib.manifest = p.manifest.file;
    const fs::path dir = p.lib_root.parent_path();
    std::set<std::string> skip;
    for (const BinDecl& bin : p.manifest.bins) {
      skip.insert((p.manifest.dir / bin.path).lexically_normal().string());
    }
    lib.files.emplace_back("mod.masm", p.lib_root);
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      const fs::path& path = it->path();
      std::error_code ec2;
      if (it->is_directory(ec2)) {
        if (fs::exists(path / kProjectManifest, ec2)) it.disable_recursion_pending();
        continue;
      }
      if (path.extension() != ".masm" || path == p.lib_root || skip.count(path.string()) > 0) {
        continue;
      }
      const std::string rel = path.lexically_relative(dir).generic_string();
      if (rel == "mod.masm") {
        return Invalid(p.manifest.at_lib_path, "lib.path",
                       absl::StrCat("the root module is ", p.lib_root.filename().string(), ", but ",
                                    path.string(),
                                    " also exists; flamefleet maps the root module to mod.masm, "
                                    "so rename one of them"));
      }
      FLAMEFLEET_RETURN_IF_ERROR(CheckInsideDirectory(path, root_, "project directory"));
      lib.files.emplace_back(rel, path);
    }
    if (ec) return absl::InvalidArgumentError(absl::StrCat(dir.string(), ": ", ec.message()));
    std::sort(lib.files.begin(), lib.files.end());
    return lib;
  }

  absl::Status CheckCycles() {
    std::vector<int> state(packages_.size(), 0);  // 0 new, 1 on the path, 2 done
    std::vector<std::string> chain;
    std::function<absl::Status(size_t)> visit = [&](size_t i) -> absl::Status {
      state[i] = 1;
      chain.push_back(packages_[i].manifest.name);
      for (const auto& [dep, where] : packages_[i].deps) {
        if (state[dep] == 1) {
          chain.push_back(packages_[dep].manifest.name);
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": dependency cycle: ", absl::StrJoin(chain, " -> ")));
        }
        if (state[dep] == 0) FLAMEFLEET_RETURN_IF_ERROR(visit(dep));
      }
      chain.pop_back();
      state[i] = 2;
      return absl::OkStatus();
    };
    for (size_t i = 0; i < packages_.size(); ++i) {
      if (state[i] == 0) FLAMEFLEET_RETURN_IF_ERROR(visit(i));
    }
    return absl::OkStatus();
  }

  absl::Status AddBins(size_t index, Project* project,
                       absl::flat_hash_map<std::string, std::string>* job_names) {
    const Package& p = packages_[index];
    const Manifest& m = p.manifest;
    // Everything the package reaches: its own lib and its transitive dependencies'.
    std::set<std::string> libraries;
    std::vector<size_t> kernels;
    std::vector<bool> seen(packages_.size(), false);
    std::vector<size_t> stack = {index};
    bool core = false;
    while (!stack.empty()) {
      const size_t i = stack.back();
      stack.pop_back();
      if (seen[i]) continue;
      seen[i] = true;
      const Package& q = packages_[i];
      core = core || q.core;
      if (!q.lib_root.empty()) {
        if (q.kernel) {
          kernels.push_back(i);
        } else {
          libraries.insert(q.ns);
        }
      }
      for (const auto& [dep, where] : q.deps) stack.push_back(dep);
    }
    if (core) libraries.insert(kCoreNamespace);
    if (kernels.size() > 1) {
      return Invalid(
          m.at_package, "dependencies",
          absl::StrCat("package '", m.name, "' reaches two kernels, '",
                       packages_[kernels[0]].manifest.name, "' and '",
                       packages_[kernels[1]].manifest.name, "'; a program runs with one kernel"));
    }
    absl::flat_hash_map<std::string, std::string> names;  // bin name -> position
    for (const BinDecl& bin : m.bins) {
      const std::string name = bin.name.empty() ? m.name : bin.name;
      if (name.empty() || absl::StrContains(name, "/") || absl::StrContains(name, "\\") ||
          name == "." || name == "..") {
        return Invalid(bin.at, absl::StrCat(bin.key, ".name"),
                       absl::StrCat("'", name, "' is not a valid bin name"));
      }
      if (auto [it, fresh] = names.emplace(name, bin.at); !fresh) {
        return Invalid(bin.at, absl::StrCat(bin.key, ".name"),
                       absl::StrCat("two [[bin]] targets are both named '", name,
                                    "' (the first at ", it->second, ")"));
      }
      FLAMEFLEET_ASSIGN_OR_RETURN(
          fs::path file,
          Inside(m.dir, bin.path, bin.at, absl::StrCat(bin.key, ".path"), /*dir=*/false));
      if (file.extension() != ".masm") {
        return Invalid(bin.at, absl::StrCat(bin.key, ".path"),
                       absl::StrCat("'", bin.path,
                                    "' is not a MASM module (.masm); flamefleet assembles MASM "
                                    "sources only"));
      }
      if (file == p.lib_root) {
        return Invalid(bin.at, absl::StrCat(bin.key, ".path"),
                       absl::StrCat("'", bin.path, "' is also the lib's root module"));
      }
      ProjectBin out;
      out.job_name = p.member.empty() ? name : absl::StrCat(p.member, "/", name);
      if (auto [it, fresh] = job_names->emplace(out.job_name, bin.at); !fresh) {
        return Invalid(bin.at, absl::StrCat(bin.key, ".name"),
                       absl::StrCat("job '", out.job_name, "' is also ", it->second));
      }
      out.file = file;
      FLAMEFLEET_ASSIGN_OR_RETURN(out.inputs, FindInputs(file, m.dir));
      if (!kernels.empty()) {
        out.kernel = packages_[kernels[0]].lib_root;
        out.kernel_package = packages_[kernels[0]].manifest.name;
      }
      out.libraries.assign(libraries.begin(), libraries.end());
      out.static_libraries = StaticLinks(p);
      project->bins.push_back(std::move(out));
    }
    return absl::OkStatus();
  }

  // NAME.inputs / NAME.toml beside the bin, else inputs.toml beside it, at its package root or
  // at the project root.
  absl::StatusOr<fs::path> FindInputs(const fs::path& bin, const fs::path& package_dir) {
    std::vector<fs::path> candidates;
    if (std::string named = DefaultInputsPath(bin.string()); !named.empty()) {
      candidates.push_back(named);
    }
    candidates.push_back(bin.parent_path() / "inputs.toml");
    candidates.push_back(package_dir / "inputs.toml");
    candidates.push_back(root_ / "inputs.toml");
    for (const fs::path& c : candidates) {
      std::error_code ec;
      if (!fs::exists(fs::symlink_status(c, ec))) continue;
      FLAMEFLEET_RETURN_IF_ERROR(CheckInsideDirectory(c, root_, "project directory"));
      return c;
    }
    return fs::path();
  }

  const fs::path root_;
  std::unique_ptr<Manifest> workspace_;  // the workspace manifest, if the root is one
  absl::flat_hash_map<std::string, std::string> member_names_;  // member dir -> job prefix
  absl::flat_hash_map<std::string, size_t> by_dir_;             // package dir -> index
  std::vector<Package> packages_;
};

}  // namespace

bool IsProjectDirectory(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::exists(fs::symlink_status(dir / kProjectManifest, ec));
}

absl::StatusOr<Project> LoadProject(const fs::path& dir) {
  const fs::path root = fs::absolute(dir).lexically_normal();
  const fs::path trimmed = root.filename().empty() ? root.parent_path() : root;
  return Loader(trimmed).Load();
}

absl::Status CheckAcceptedInput(absl::string_view path) {
  const std::string lower = absl::AsciiStrToLower(path);
  if (absl::EndsWith(lower, ".masp")) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": a compiled Miden package (.masp) cannot be run: its binary format changes with every "
        "VM release. Give flamefleet MASM sources instead: .masm files, a directory of them, or "
        "the project directory (with miden-project.toml) the package was built from"));
  }
  if (absl::EndsWith(lower, ".mdsnap")) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": a miden-debug snapshot (.mdsnap) cannot be replayed: its binary format changes with "
        "every VM release. Record a flamefleet snapshot with `flamefleet record PROGRAM -o "
        "FILE` and pass it with --replay, or give the MASM sources (.masm files or a project "
        "directory)"));
  }
  return absl::OkStatus();
}

}  // namespace flamefleet::cli
