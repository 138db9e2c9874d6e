#include "coordinator/artifacts.h"

#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "profile/folded.h"
#include "profile/profile_proto.h"

namespace flamefleet::coordinator {

v1::RenderOptions BatchRenderOptions(const BatchRecord& batch, size_t jobs, uint64_t cycles) {
  v1::RenderOptions options;
  options.set_title(batch.options.title().empty() ? absl::StrCat("flamefleet batch ", batch.id)
                                                  : batch.options.title());
  options.set_subtitle(absl::StrCat(jobs, " jobs, ", cycles, " cycles"));
  options.set_count_name("cycles");
  return options;
}

v1::RenderOptions JobRenderOptions(const std::string& job_name) {
  v1::RenderOptions options;
  options.set_title(job_name);
  options.set_count_name("cycles");
  return options;
}

Artifacts::Artifacts(JobStore* store, RenderClient* render,
                     absl::Duration aggregate_render_deadline)
    : store_(store), render_(render), aggregate_render_deadline_(aggregate_render_deadline) {}

absl::Status Artifacts::MergeStoredProfiles(
    const std::vector<std::pair<std::string, std::string>>& profiles, ProfileMerger* merger) const {
  for (const auto& [task_id, digest] : profiles) {
    absl::StatusOr<std::string> bytes = store_->GetArtifact(digest);
    if (!bytes.ok()) {
      return absl::Status(bytes.status().code(),
                          absl::StrCat(task_id, ": ", bytes.status().message()));
    }
    FLAMEFLEET_RETURN_IF_ERROR(merger->AddSerialized(task_id, *bytes));
  }
  return absl::OkStatus();
}

absl::Status Artifacts::StoreAggregate(const std::string& batch_id,
                                       const profile::Profile& aggregate) {
  std::ostringstream folded;
  absl::Status status = profile::WriteFolded(aggregate, folded);
  absl::StatusOr<std::string> profile_digest =
      store_->PutArtifact(profile::SerializeProfile(aggregate));
  absl::StatusOr<std::string> folded_digest =
      status.ok() ? store_->PutArtifact(folded.str()) : absl::StatusOr<std::string>(status);
  if (!profile_digest.ok()) status = profile_digest.status();
  if (!folded_digest.ok()) status = folded_digest.status();
  if (status.ok()) {
    status = store_->IndexArtifact(batch_id, "", v1::ARTIFACT_FORMAT_PROFILE, *profile_digest);
  }
  if (status.ok()) {
    status = store_->IndexArtifact(batch_id, "", v1::ARTIFACT_FORMAT_FOLDED, *folded_digest);
  }
  return status;
}

absl::Status Artifacts::StoreByJobAggregate(const std::string& batch_id,
                                            const profile::Profile& by_job) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::string digest,
                              store_->PutArtifact(profile::SerializeProfile(by_job)));
  return store_->IndexArtifact(batch_id, kByJobArtifactKey, v1::ARTIFACT_FORMAT_PROFILE, digest);
}

absl::StatusOr<std::string> Artifacts::FetchByJob(const std::string& batch_id,
                                                  v1::ArtifactFormat format,
                                                  const std::vector<StoredJobProfile>& jobs,
                                                  const v1::RenderOptions& render_options) {
  absl::StatusOr<std::string> digest = store_->FindArtifact(batch_id, kByJobArtifactKey, format);
  if (digest.ok()) return store_->GetArtifact(*digest);
  if (!absl::IsNotFound(digest.status())) return digest.status();
  absl::StatusOr<std::string> profile_digest =
      store_->FindArtifact(batch_id, kByJobArtifactKey, v1::ARTIFACT_FORMAT_PROFILE);
  if (absl::IsNotFound(profile_digest.status())) {
    // A batch that ended before by-job aggregates were stored: build it now, each job once.
    std::vector<std::pair<std::string, std::string>> profiles;
    absl::flat_hash_map<std::string, std::string> names;
    for (const StoredJobProfile& job : jobs) {
      profiles.emplace_back(job.task_id, job.digest);
      names[job.task_id] = job.job_name;
    }
    ProfileMerger merger;
    merger.KeepByJob(std::move(names));
    FLAMEFLEET_RETURN_IF_ERROR(MergeStoredProfiles(profiles, &merger));
    FLAMEFLEET_RETURN_IF_ERROR(StoreByJobAggregate(batch_id, merger.by_job()));
    profile_digest = store_->FindArtifact(batch_id, kByJobArtifactKey, v1::ARTIFACT_FORMAT_PROFILE);
  }
  if (!profile_digest.ok()) return profile_digest.status();
  return Derive(batch_id, kByJobArtifactKey, format, *profile_digest, render_options);
}

void Artifacts::RenderAggregateSvg(const BatchRecord& batch, const profile::Profile& aggregate,
                                   size_t jobs) {
  // The batch has ended already: a hung or stopped renderer delays nothing but
  // this call, for at most the deadline.
  absl::StatusOr<std::string> svg = render_->RenderSvgWithin(
      aggregate, BatchRenderOptions(batch, jobs, aggregate.total()), aggregate_render_deadline_);
  absl::StatusOr<std::string> svg_digest =
      svg.ok() ? store_->PutArtifact(*svg) : absl::StatusOr<std::string>(svg.status());
  absl::Status indexed =
      svg_digest.ok() ? store_->IndexArtifact(batch.id, "", v1::ARTIFACT_FORMAT_SVG, *svg_digest)
                      : svg_digest.status();
  if (!indexed.ok()) {
    // Not fatal: FetchArtifact renders it again on demand.
    LOG(WARNING) << "batch " << batch.id << ": aggregate SVG not rendered yet: " << indexed;
  }
}

absl::StatusOr<std::string> Artifacts::Fetch(const std::string& batch_id,
                                             const std::string& job_name, v1::ArtifactFormat format,
                                             std::string profile_digest,
                                             const v1::RenderOptions& render_options) {
  absl::StatusOr<std::string> digest = store_->FindArtifact(batch_id, job_name, format);
  if (digest.ok()) return store_->GetArtifact(*digest);
  if (!absl::IsNotFound(digest.status())) return digest.status();
  if (profile_digest.empty()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(
        profile_digest, store_->FindArtifact(batch_id, job_name, v1::ARTIFACT_FORMAT_PROFILE));
  }
  return Derive(batch_id, job_name, format, profile_digest, render_options);
}

absl::StatusOr<std::string> Artifacts::Derive(const std::string& batch_id,
                                              const std::string& job_name,
                                              v1::ArtifactFormat format,
                                              const std::string& profile_digest,
                                              const v1::RenderOptions& render_options) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::string bytes, store_->GetArtifact(profile_digest));
  std::string data;
  if (format == v1::ARTIFACT_FORMAT_PROFILE) {
    data = std::move(bytes);
  } else {
    FLAMEFLEET_ASSIGN_OR_RETURN(profile::Profile profile, profile::ParseProfile(bytes));
    if (format == v1::ARTIFACT_FORMAT_FOLDED) {
      std::ostringstream folded;
      FLAMEFLEET_RETURN_IF_ERROR(profile::WriteFolded(profile, folded));
      data = std::move(folded).str();
    } else if (format == v1::ARTIFACT_FORMAT_SVG) {
      if (profile.total() == 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            job_name.empty() || job_name == kByJobArtifactKey ? "the aggregate"
                                                              : "job \"" + job_name + "\"",
            " has no cycles to draw"));
      }
      FLAMEFLEET_ASSIGN_OR_RETURN(data, render_->RenderSvg(profile, render_options));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("format: unknown artifact format ", format));
    }
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(std::string digest, store_->PutArtifact(data));
  FLAMEFLEET_RETURN_IF_ERROR(store_->IndexArtifact(batch_id, job_name, format, digest));
  return data;
}

absl::StatusOr<AggregateResult> Artifacts::Aggregate(
    const v1::AggregateRequest& request, std::vector<std::string> batch_ids,
    const std::vector<std::pair<std::string, std::string>>& profiles) const {
  AggregateResult result;
  result.batch_ids = std::move(batch_ids);
  // Each job once, from its stored result (as the batch aggregates are built).
  ProfileMerger merger;
  FLAMEFLEET_RETURN_IF_ERROR(MergeStoredProfiles(profiles, &merger));
  const profile::Profile& aggregate = merger.aggregate();
  result.jobs = static_cast<uint32_t>(profiles.size());
  result.cycles = aggregate.total();
  switch (request.format()) {
    case v1::ARTIFACT_FORMAT_PROFILE:
      result.data = profile::SerializeProfile(aggregate);
      break;
    case v1::ARTIFACT_FORMAT_FOLDED: {
      std::ostringstream folded;
      FLAMEFLEET_RETURN_IF_ERROR(profile::WriteFolded(aggregate, folded));
      result.data = std::move(folded).str();
      break;
    }
    default: {
      if (aggregate.total() == 0) {
        return absl::FailedPreconditionError("the matching batches have no cycles to draw");
      }
      v1::RenderOptions options;
      options.set_title(request.title().empty() ? "flamefleet aggregate" : request.title());
      options.set_subtitle(absl::StrCat(result.batch_ids.size(), " batches, ", result.jobs,
                                        " jobs, ", result.cycles, " cycles"));
      options.set_count_name("cycles");
      FLAMEFLEET_ASSIGN_OR_RETURN(result.data, render_->RenderSvg(aggregate, options));
      break;
    }
  }
  return result;
}

}  // namespace flamefleet::coordinator
