// Miden projects and workspaces as suites (issue #15): cli/project.h's manifest parser and its
// validation (each error message), and BuildSubmitRequest's job names, libraries and inputs for
// the fixtures in tests/testdata/projects/.
#include "cli/project.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/batch_client.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_files.h"

namespace flamefleet::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testutil::StatusIs;
using testutil::WriteFile;

const fs::path kProjects = FLAMEFLEET_PROJECTS;

std::vector<std::string> JobNames(const v1::SubmitBatchRequest& req) {
  std::vector<std::string> names;
  for (const v1::JobSpec& job : req.jobs()) names.push_back(job.name());
  return names;
}

const v1::JobSpec* Job(const v1::SubmitBatchRequest& req, const std::string& name) {
  for (const v1::JobSpec& job : req.jobs()) {
    if (job.name() == name) return &job;
  }
  return nullptr;
}

// A fresh directory per test case.
fs::path TempProject(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) / "project_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Restores an environment variable when it goes out of scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    had_ = std::getenv(name) != nullptr;
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(ProjectTest, PackageBinsAreJobsWithTheLibAndTheirInputs) {
  ASSERT_OK_AND_ASSIGN(v1::SubmitBatchRequest req,
                       BuildSubmitRequest({(kProjects / "package").string()}, {}, {}));
  EXPECT_THAT(JobNames(req), ElementsAre("square", "sum"));
  for (const v1::JobSpec& job : req.jobs()) EXPECT_EQ(job.dialect(), "v0.25") << job.name();
  // The lib's namespace is the package name; its root module travels as mod.masm.
  ASSERT_EQ(req.libraries().libraries_size(), 1);
  const v1::Library& lib = req.libraries().libraries(0);
  EXPECT_EQ(lib.namespace_(), "counter");
  ASSERT_EQ(lib.files_size(), 2);
  EXPECT_EQ(lib.files(0).path(), "math.masm");
  EXPECT_EQ(lib.files(1).path(), "mod.masm");
  EXPECT_THAT(lib.files(1).source(), HasSubstr("pub mod math"));
  // square.toml beside the bin wins over the project's inputs.toml, which sum gets.
  const v1::JobSpec* square = Job(req, "square");
  const v1::JobSpec* sum = Job(req, "sum");
  ASSERT_TRUE(square != nullptr && sum != nullptr);
  EXPECT_THAT(square->inputs(), HasSubstr("stack = [7]"));
  EXPECT_EQ(square->inputs_format(), v1::INPUTS_FORMAT_TOML);
  EXPECT_THAT(sum->inputs(), HasSubstr("stack = [3, 4]"));
  EXPECT_THAT(sum->source(), HasSubstr("exec.math::sum_of_squares"));
}

TEST(ProjectTest, WorkspaceJobsAreMemberSlashBinWithTransitiveLibraries) {
  ASSERT_OK_AND_ASSIGN(Project project, LoadProject(kProjects / "workspace"));
  EXPECT_TRUE(project.workspace);
  ASSERT_EQ(project.bins.size(), 3u);
  EXPECT_EQ(project.bins[0].job_name, "app/loop");
  EXPECT_EQ(project.bins[1].job_name, "app/main");
  EXPECT_EQ(project.bins[2].job_name, "mid/probe");
  // app depends on mid by path, mid on base through [workspace.dependencies].
  EXPECT_THAT(project.bins[1].libraries, ElementsAre("ws::base", "ws::mid"));
  EXPECT_THAT(project.bins[2].libraries, ElementsAre("ws::base", "ws::mid"));
  EXPECT_EQ(project.bins[0].inputs, kProjects / "workspace/app/bins/loop.toml");
  EXPECT_EQ(project.bins[1].inputs, kProjects / "workspace/inputs.toml");
  EXPECT_TRUE(project.bins[1].kernel.empty());

  ASSERT_OK_AND_ASSIGN(v1::SubmitBatchRequest req,
                       BuildSubmitRequest({(kProjects / "workspace").string()}, {}, {}));
  EXPECT_THAT(JobNames(req), ElementsAre("app/loop", "app/main", "mid/probe"));
  ASSERT_EQ(req.libraries().libraries_size(), 2);
  EXPECT_EQ(req.libraries().libraries(0).namespace_(), "ws::base");
  EXPECT_EQ(req.libraries().libraries(1).namespace_(), "ws::mid");
  ASSERT_EQ(req.libraries().libraries(1).files_size(), 1);
  EXPECT_EQ(req.libraries().libraries(1).files(0).path(), "mod.masm");
}

TEST(ProjectTest, KernelPackageIsTheKernelOfItsBinsJobs) {
  ASSERT_OK_AND_ASSIGN(Project project, LoadProject(kProjects / "kernel"));
  ASSERT_EQ(project.bins.size(), 1u);
  EXPECT_EQ(project.bins[0].job_name, "user");
  EXPECT_EQ(project.bins[0].kernel, kProjects / "kernel/kern/mod.masm");
  EXPECT_EQ(project.bins[0].kernel_package, "kern");
  EXPECT_TRUE(project.libraries.empty());  // a kernel is not a library of the batch
  ASSERT_OK_AND_ASSIGN(v1::SubmitBatchRequest req,
                       BuildSubmitRequest({(kProjects / "kernel").string()}, {}, {}));
  ASSERT_EQ(req.jobs_size(), 1);
  ASSERT_TRUE(req.jobs(0).has_kernel());
  EXPECT_EQ(req.jobs(0).kernel().path(), "kern/mod.masm");
  EXPECT_THAT(req.jobs(0).kernel().source(), HasSubstr("pub proc mul_inc"));
  EXPECT_EQ(req.libraries().libraries_size(), 0);
}

TEST(ProjectTest, AKernelsSubmodulesTravelBesideIt) {
  ASSERT_OK_AND_ASSIGN(v1::SubmitBatchRequest req,
                       BuildSubmitRequest({(kProjects / "kernel-modules").string()}, {}, {}));
  ASSERT_EQ(req.jobs_size(), 1);
  const v1::JobSpec& job = req.jobs(0);
  EXPECT_EQ(job.name(), "app");
  EXPECT_EQ(job.kernel().path(), "kern/mod.masm");
  // The declared submodules, breadth first, named by their paths in the project.
  ASSERT_EQ(job.kernel_modules_size(), 2);
  EXPECT_EQ(job.kernel_modules(0).path(), "kern/math.masm");
  EXPECT_THAT(job.kernel_modules(0).source(), HasSubstr("pub proc triple"));
  EXPECT_EQ(job.kernel_modules(1).path(), "kern/checks/mod.masm");
  EXPECT_THAT(job.kernel_modules(1).source(), HasSubstr("pub proc nonzero"));
}

TEST(ProjectTest, KernelFlagGivesEveryProgramJobTheKernelButNotItsFilesAsJobs) {
  const fs::path suite = kProjects.parent_path() / "kernel_suite";
  ASSERT_OK_AND_ASSIGN(
      v1::SubmitBatchRequest req,
      BuildSubmitRequest({suite.string()}, {}, {}, {}, (suite / "kernel/mod.masm").string()));
  ASSERT_EQ(req.jobs_size(), 2);  // a.masm and b.masm; not kernel/mod.masm or kernel/util.masm
  for (const v1::JobSpec& job : req.jobs()) {
    SCOPED_TRACE(job.name());
    EXPECT_EQ(job.kernel().path(), "kernel/mod.masm");
    ASSERT_EQ(job.kernel_modules_size(), 1);
    EXPECT_EQ(job.kernel_modules(0).path(), "kernel/util.masm");
  }
  EXPECT_EQ(req.jobs(0).name(), "a.masm");
  EXPECT_EQ(req.jobs(1).name(), "b.masm");

  // A missing submodule is an error at its `mod` line, before anything is sent.
  const fs::path dir = fs::path(testing::TempDir()) / "project_test" / "kernel_flag_missing";
  fs::remove_all(dir);
  WriteFile(dir / "k/mod.masm", "mod gone\npub proc f\n    add\nend\n");
  WriteFile(dir / "p.masm", "begin\n    syscall.f\nend\n");
  absl::StatusOr<v1::SubmitBatchRequest> bad =
      BuildSubmitRequest({(dir / "p.masm").string()}, {}, {}, {}, (dir / "k/mod.masm").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("k/mod.masm:1:"));
  EXPECT_THAT(bad.status().message(), HasSubstr("module '$kernel::gone' not found"));
}

// `linkage = "static"` is an edge from the dependent package: its bins (JobSpec.static_libraries)
// or its lib (Library.static_links) copy the dependency's procedures in; nobody else does.
TEST(ProjectTest, StaticLinkageIsTheDependentsChoice) {
  ASSERT_OK_AND_ASSIGN(v1::SubmitBatchRequest req,
                       BuildSubmitRequest({(kProjects / "static").string()}, {}, {}));
  ASSERT_EQ(req.jobs_size(), 1);
  EXPECT_THAT(req.jobs(0).static_libraries(), ElementsAre("app::util"));
  ASSERT_EQ(req.libraries().libraries_size(), 1);
  EXPECT_EQ(req.libraries().libraries(0).static_links_size(), 0);

  // The workspace: mid links base statically (through [workspace.dependencies]); app links mid
  // dynamically, so app's own calls into base (reached through mid) stay dynamic.
  ASSERT_OK_AND_ASSIGN(v1::SubmitBatchRequest ws,
                       BuildSubmitRequest({(kProjects / "workspace").string()}, {}, {}));
  for (const v1::Library& lib : ws.libraries().libraries()) {
    SCOPED_TRACE(lib.namespace_());
    if (lib.namespace_() == "ws::mid") {
      EXPECT_THAT(lib.static_links(), ElementsAre("ws::base"));
    } else {
      EXPECT_EQ(lib.static_links_size(), 0);
    }
  }
  for (const v1::JobSpec& job : ws.jobs()) {
    SCOPED_TRACE(job.name());
    if (job.name() == "mid/probe") {
      EXPECT_THAT(job.static_libraries(), ElementsAre("ws::base"));
    } else {
      EXPECT_EQ(job.static_libraries_size(), 0);
    }
  }
}

TEST(ProjectTest, EachManifestErrorNamesFileKeyAndPosition) {
  const std::string pkg = "[package]\nname = \"p\"\nversion = \"0.1.0\"\n";
  const std::string bin = "[[bin]]\nname = \"main\"\npath = \"main.masm\"\n";
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> files;  // relative path -> text
    std::string error;
  };
  const std::vector<Case> cases = {
      {"syntax", {{"miden-project.toml", "[package\n"}}, "miden-project.toml:1:"},
      {"unknown_top",
       {{"miden-project.toml", "colour = 1\n" + pkg + bin}},
       "miden-project.toml:1:10: unknown key 'colour'"},
      {"unknown_package_key",
       {{"miden-project.toml", pkg + "nmae = \"x\"\n" + bin}},
       "miden-project.toml:4:8: unknown key 'package.nmae'"},
      {"unknown_bin_key",
       {{"miden-project.toml", pkg + bin + "main = true\n"}},
       "unknown key 'bin[0].main'"},
      {"missing_name",
       {{"miden-project.toml", "[package]\nversion = \"1.0.0\"\n" + bin}},
       "miden-project.toml:1:1: package.name: missing required field"},
      {"missing_version",
       {{"miden-project.toml", "[package]\nname = \"p\"\n" + bin}},
       "package.version: missing required field"},
      {"missing_package", {{"miden-project.toml", bin}}, "package: missing [package] table"},
      {"missing_bin_path",
       {{"miden-project.toml", pkg + "[[bin]]\nname = \"x\"\n"}},
       "bin[0].path: missing required field"},
      {"missing_lib_path",
       {{"miden-project.toml", pkg + "[lib]\nnamespace = \"p\"\n" + bin}},
       "lib.path: missing required field"},
      {"wrong_type",
       {{"miden-project.toml", "[package]\nname = 3\nversion = \"1\"\n" + bin}},
       "miden-project.toml:2:8: package.name: expected a string"},
      {"leaves_dir",
       {{"miden-project.toml", pkg + "[lib]\npath = \"../outside/mod.masm\"\n" + bin}},
       "lib.path: '../outside/mod.masm' leaves the project directory"},
      {"absolute",
       {{"miden-project.toml", pkg + "[[bin]]\npath = \"/etc/passwd.masm\"\n"}},
       "bin[0].path: '/etc/passwd.masm' is absolute"},
      {"missing_file", {{"miden-project.toml", pkg + bin}}, "main.masm: no such file"},
      {"not_masm",
       {{"miden-project.toml", pkg + "[[bin]]\npath = \"main.rs\"\n"}, {"main.rs", "fn main"}},
       "bin[0].path: 'main.rs' is not a MASM module (.masm)"},
      {"duplicate_bin",
       {{"miden-project.toml", pkg + bin + "[[bin]]\nname = \"main\"\npath = \"b.masm\"\n"},
        {"main.masm", "begin end\n"},
        {"b.masm", "begin end\n"}},
       "bin[1].name: two [[bin]] targets are both named 'main'"},
      {"git_dep",
       {{"miden-project.toml", pkg + bin + "[dependencies]\nx = { git = \"https://x\" }\n"},
        {"main.masm", "begin end\n"}},
       "dependencies.x: git dependencies are not supported"},
      {"registry_dep",
       {{"miden-project.toml", pkg + bin + "[dependencies]\nx = \"=1.0.0\"\n"},
        {"main.masm", "begin end\n"}},
       "dependencies.x: registry dependencies are not supported"},
      {"masp_dep",
       {{"miden-project.toml", pkg + bin + "[dependencies]\nx = { path = \"x.masp\" }\n"},
        {"main.masm", "begin end\n"}},
       "dependencies.x.path: x.masp: a compiled Miden package (.masp) cannot be run"},
      {"workspace_outside",
       {{"miden-project.toml", pkg + bin + "[dependencies]\nx.workspace = true\n"},
        {"main.masm", "begin end\n"}},
       "dependencies.x: workspace = true, but this package is not a workspace member"},
      {"bad_linkage",
       {{"miden-project.toml",
         pkg + bin + "[dependencies]\nx = { path = \"x\", linkage = \"lazy\" }\n"}},
       "dependencies.x.linkage: unknown linkage 'lazy'"},
      {"bad_kind",
       {{"miden-project.toml", pkg + "[lib]\npath = \"mod.masm\"\nkind = \"driver\"\n" + bin},
        {"mod.masm", "pub proc f add end\n"}},
       "lib.kind: 'driver' is not a library kind"},
      {"bad_namespace",
       {{"miden-project.toml",
         "[package]\nname = \"my-lib\"\nversion = \"1\"\n[lib]\npath = "
         "\"mod.masm\"\n" +
             bin},
        {"mod.masm", "pub proc f add end\n"},
        {"main.masm", "begin end\n"}},
       "lib.namespace: 'my-lib' is not a MASM namespace"},
      {"no_bins",
       {{"miden-project.toml", pkg + "[lib]\npath = \"mod.masm\"\n"},
        {"mod.masm", "pub proc f add end\n"}},
       "no [[bin]] targets: a library-only project has nothing to run"},
      {"cycle",
       {{"miden-project.toml", "[workspace]\nmembers = [\"a\", \"b\"]\n"},
        {"a/miden-project.toml",
         "[package]\nname = \"a\"\nversion = \"1\"\n[dependencies]\nb = { path = \"../b\" }\n" +
             bin},
        {"a/main.masm", "begin end\n"},
        {"b/miden-project.toml",
         "[package]\nname = \"b\"\nversion = \"1\"\n[lib]\npath = \"mod.masm\"\n"
         "[dependencies]\na = { path = \"../a\" }\n"},
        {"b/mod.masm", "pub proc f add end\n"}},
       "dependency cycle: a -> b -> a"},
      {"member_missing",
       {{"miden-project.toml", "[workspace]\nmembers = [\"gone\"]\n"}},
       "miden-project.toml:2:12: workspace.members: "},
      {"member_leaves",
       {{"miden-project.toml", "[workspace]\nmembers = [\"../up\"]\n"}},
       "workspace.members: '../up' leaves the project directory"},
      {"not_in_workspace_deps",
       {{"miden-project.toml", "[workspace]\nmembers = [\"a\"]\n"},
        {"a/miden-project.toml",
         "[package]\nname = \"a\"\nversion = \"1\"\n[dependencies]\nz.workspace = true\n" + bin},
        {"a/main.masm", "begin end\n"}},
       "dependencies.z: 'z' is not in [workspace.dependencies]"},
      {"workspace_version_missing",
       {{"miden-project.toml", "[workspace]\nmembers = [\"a\"]\n"},
        {"a/miden-project.toml", "[package]\nname = \"a\"\nversion.workspace = true\n" + bin},
        {"a/main.masm", "begin end\n"}},
       "package.version: inherits the workspace version, but the workspace manifest has no"},
      {"workspace_dep_inherits",
       {{"miden-project.toml",
         "[workspace]\nmembers = []\n[workspace.dependencies]\nx = { workspace = true }\n"}},
       "workspace.dependencies.x.workspace: cannot use the 'workspace' option"},
  };
  for (const Case& c : cases) {
    const fs::path dir = TempProject(c.name);
    for (const auto& [path, text] : c.files) WriteFile(dir / path, text);
    EXPECT_THAT(LoadProject(dir), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)))
        << c.name;
  }
}

TEST(ProjectTest, BoundsAreEnforced) {
  const fs::path dir = TempProject("bounds");
  std::string manifest = "[package]\nname = \"p\"\nversion = \"1\"\n";
  for (size_t i = 0; i <= kMaxProjectBins; ++i) {
    absl::StrAppend(&manifest, "[[bin]]\nname = \"b", i, "\"\npath = \"b", i, ".masm\"\n");
  }
  WriteFile(dir / "miden-project.toml", manifest);
  EXPECT_THAT(LoadProject(dir),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat(kMaxProjectBins + 1,
                                              " [[bin]] targets, more than the limit of 64"))));
  std::string members = "[workspace]\nmembers = [";
  for (size_t i = 0; i <= kMaxProjectMembers; ++i) absl::StrAppend(&members, "\"m", i, "\", ");
  WriteFile(dir / "miden-project.toml", members + "]\n");
  EXPECT_THAT(LoadProject(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("members, more than the limit of 64")));
  std::string deps = "[package]\nname = \"p\"\nversion = \"1\"\n[dependencies]\n";
  for (size_t i = 0; i <= kMaxProjectDependencies; ++i)
    absl::StrAppend(&deps, "d", i, " = \"1\"\n");
  WriteFile(dir / "miden-project.toml", deps);
  EXPECT_THAT(LoadProject(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("dependencies, more than the limit of 64")));
}

TEST(ProjectTest, SymlinksOutOfTheProjectAreRefused) {
  const fs::path dir = TempProject("symlink");
  const fs::path outside = TempProject("symlink_outside");
  WriteFile(outside / "secret.masm", "begin push.1 end\n");
  WriteFile(dir / "miden-project.toml",
            "[package]\nname = \"p\"\nversion = \"1\"\n[[bin]]\npath = \"main.masm\"\n");
  fs::create_symlink(outside / "secret.masm", dir / "main.masm");
  EXPECT_THAT(LoadProject(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("outside the project directory")));
  // A member directory that is a link out.
  const fs::path ws = TempProject("symlink_ws");
  WriteFile(outside / "m/miden-project.toml",
            "[package]\nname = \"m\"\nversion = \"1\"\n[[bin]]\npath = \"main.masm\"\n");
  WriteFile(outside / "m/main.masm", "begin end\n");
  WriteFile(ws / "miden-project.toml", "[workspace]\nmembers = [\"m\"]\n");
  fs::create_directory_symlink(outside / "m", ws / "m");
  EXPECT_THAT(LoadProject(ws),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workspace.members: " + (ws / "m").string() + " is a symlink")));
}

TEST(ProjectTest, CoreDependencyNeedsNoPathAndIsFoundLikeTheCoreLibrary) {
  const fs::path dir = TempProject("core");
  WriteFile(dir / "miden-project.toml",
            "[package]\nname = \"p\"\nversion = \"1\"\n[[bin]]\npath = \"main.masm\"\n"
            "[dependencies]\nmiden-core = \"0.25.7\"\n");
  WriteFile(dir / "main.masm", "begin push.1 drop end\n");
  const fs::path core = TempProject("core_lib");
  WriteFile(core / "mod.masm", "pub mod sys\n");
  WriteFile(core / "sys.masm", "pub proc nop nop end\n");
  {
    ScopedEnv env("MIDEN_CORE_LIB", core.c_str());
    ASSERT_OK_AND_ASSIGN(v1::SubmitBatchRequest req, BuildSubmitRequest({dir.string()}, {}, {}));
    EXPECT_THAT(JobNames(req), ElementsAre("p"));  // an unnamed bin is named after the package
    ASSERT_EQ(req.libraries().libraries_size(), 1);
    EXPECT_EQ(req.libraries().libraries(0).namespace_(), "miden::core");
    EXPECT_EQ(req.libraries().libraries(0).files_size(), 2);
  }
  {
    // --lib miden::core=DIR wins; nothing is looked up.
    ScopedEnv env("MIDEN_CORE_LIB", "/nonexistent-core-lib");
    ASSERT_OK_AND_ASSIGN(
        v1::SubmitBatchRequest req,
        BuildSubmitRequest({dir.string()}, {absl::StrCat("miden::core=", core.string())}, {}));
    EXPECT_EQ(req.libraries().libraries_size(), 1);
    EXPECT_THAT(BuildSubmitRequest({dir.string()}, {}, {}),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("a project depends on miden-core, the core library: "
                                   "MIDEN_CORE_LIB=/nonexistent-core-lib is not a directory")));
  }
}

TEST(ProjectTest, MaspAndMdsnapAreRefusedSayingWhatIsAccepted) {
  EXPECT_THAT(BuildSubmitRequest({"lib.masp"}, {}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("lib.masp: a compiled Miden package (.masp) cannot be run")));
  EXPECT_THAT(BuildSubmitRequest({"lib.MASP"}, {}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("MASM sources instead")));
  EXPECT_THAT(BuildSubmitRequest({}, {}, {}, {"trace.mdsnap"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("a miden-debug snapshot (.mdsnap) cannot be replayed")));
  EXPECT_THAT(CheckAcceptedInput("run.mdsnap"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("flamefleet record")));
  EXPECT_TRUE(CheckAcceptedInput("prog.masm").ok());
  EXPECT_TRUE(CheckAcceptedInput("").ok());
}

}  // namespace
}  // namespace flamefleet::cli
