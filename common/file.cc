#include "common/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"

namespace flamefleet {
namespace {

// zlib counts in uInt; feed it at most 1 GiB at a time.
constexpr size_t kZlibChunk = size_t{1} << 30;

absl::Status ErrnoError(absl::string_view step, absl::string_view file, int err) {
  return absl::InternalError(absl::StrCat(step, " ", file, ": ", std::strerror(err)));
}

// Writes all of `bytes` to `fd`, retrying on EINTR and short writes. Returns the errno or 0.
int WriteAll(int fd, absl::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid(), ".", ++counter);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("open", tmp, errno);
  auto fail = [&](absl::string_view step, int err) {
    ::unlink(tmp.c_str());
    return ErrnoError(step, tmp, err);
  };
  if (const int err = WriteAll(fd, bytes); err != 0) {
    ::close(fd);
    return fail("write", err);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return fail("fsync", err);
  }
  if (::close(fd) != 0) return fail("close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename", errno);
  // Make the rename itself durable.
  const std::string parent = std::filesystem::path(path).parent_path().string();
  const char* dir = parent.empty() ? "." : parent.c_str();
  const int dir_fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return ErrnoError("open", dir, errno);
  const int rc = ::fsync(dir_fd);
  const int err = errno;
  ::close(dir_fd);
  if (rc != 0) return ErrnoError("fsync", dir, err);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::InternalError(absl::StrCat("read ", path, ": ", std::strerror(errno)));
  }
  auto too_big = [&] {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": the file is larger than the limit of ", max_bytes, " bytes"));
  };
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::InternalError(absl::StrCat("read ", path, ": ", std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a file"));
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return too_big();
  }
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  std::vector<char> buf(1 << 16);
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat("read ", path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    if (static_cast<size_t>(n) > max_bytes - out.size()) {
      ::close(fd);
      return too_big();
    }
    out.append(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::StatusOr<std::string> Gzip(absl::string_view bytes) {
  z_stream zs{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("gzip: deflateInit2 failed");
  }
  std::string out;
  out.resize(deflateBound(&zs, static_cast<uLong>(std::min(bytes.size(), kZlibChunk))) + 64);
  size_t in_pos = 0;
  size_t out_pos = 0;
  int rc = Z_OK;
  do {
    const size_t in_chunk = std::min(bytes.size() - in_pos, kZlibChunk);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + in_pos));
    zs.avail_in = static_cast<uInt>(in_chunk);
    const bool last = in_pos + in_chunk == bytes.size();
    do {
      if (out_pos == out.size()) out.resize(out.size() * 2);
      const size_t room = std::min(out.size() - out_pos, kZlibChunk);
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
      zs.avail_out = static_cast<uInt>(room);
      rc = deflate(&zs, last ? Z_FINISH : Z_NO_FLUSH);
      out_pos += room - zs.avail_out;
      if (rc == Z_STREAM_ERROR) {
        deflateEnd(&zs);
        return absl::InternalError("gzip: deflate failed");
      }
    } while (zs.avail_out == 0 || (last && rc != Z_STREAM_END));
    in_pos += in_chunk;
  } while (in_pos < bytes.size());
  deflateEnd(&zs);
  out.resize(out_pos);
  return out;
}

absl::StatusOr<std::string> Gunzip(absl::string_view bytes, size_t max_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) {
    return absl::InternalError("gzip: inflateInit2 failed");
  }
  std::string out;
  std::vector<char> buf(1 << 16);
  size_t in_pos = 0;
  while (true) {
    if (zs.avail_in == 0 && in_pos < bytes.size()) {
      const size_t chunk = std::min(bytes.size() - in_pos, kZlibChunk);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + in_pos));
      zs.avail_in = static_cast<uInt>(chunk);
      in_pos += chunk;
    }
    const bool input_done = zs.avail_in == 0 && in_pos == bytes.size();
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const size_t produced = buf.size() - zs.avail_out;
    if (produced > max_bytes - out.size()) {
      inflateEnd(&zs);
      return absl::ResourceExhaustedError(absl::StrCat(
          "gzip: the decompressed data is larger than the limit of ", max_bytes, " bytes"));
    }
    out.append(buf.data(), produced);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0 && in_pos == bytes.size()) break;
      inflateReset(&zs);  // another gzip member follows
      continue;
    }
    if (rc == Z_OK || (rc == Z_BUF_ERROR && !input_done)) continue;
    inflateEnd(&zs);
    return absl::InvalidArgumentError(rc == Z_BUF_ERROR ? "truncated gzip stream"
                                                        : "not a gzip stream");
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace flamefleet
