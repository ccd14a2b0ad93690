#include "tinycore/runtime/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "tinycore/helpers.h"

namespace tc::runtime {

std::string cache_dir() {
  if (const char* d = std::getenv("TC_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/tinycore";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/tinycore";
  return "/tmp/tinycore-cache";
}

namespace {
constexpr uint64_t kFnvOffset = 1469598103934665603ull, kFnvPrime = 1099511628211ull;
}  // namespace

uint64_t stable_hash(std::string_view s) {
  uint64_t h = kFnvOffset;
  for (unsigned char c : s) h = (h ^ c) * kFnvPrime;
  return h;
}

std::string cache_path(std::string_view kind, std::string_view key, std::string_view suffix) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(stable_hash(key)));
  return cache_dir() + "/" + std::string(kind) + "/" + name + std::string(suffix);
}

std::optional<std::string> read_cache_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);  // one read of the whole file
  if (!in) return std::nullopt;
  std::streamoff size = in.tellg();
  if (size < 0) return std::nullopt;
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) return std::nullopt;
  return bytes;
}

void write_cache_file(const std::string& path, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // unique per writer: other processes, and other threads of this one building the same kernel
  static std::atomic<uint64_t> writes{0};
  std::string tmp = absl::StrCat(path, ".tmp", getpid(), ".", writes++);
  bool ok = false;
  if (std::ofstream out(tmp, std::ios::binary); out) {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ok = static_cast<bool>(out.flush());
  }
  if (ok)
    std::filesystem::rename(tmp, path, ec);
  else
    std::filesystem::remove(tmp, ec);
}

namespace {
// The checksum of an entry's output: FNV-1a over 8-byte words (then the tail's bytes). Each step
// is a bijection of the running hash, so a change to any one word always changes it, and it is 8
// times faster than the byte-wise hash on entries of tens of megabytes (a data set's bytes).
uint64_t checksum(std::string_view output) {
  uint64_t h = kFnvOffset;
  size_t i = 0;
  for (; i + 8 <= output.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, output.data() + i, 8);
    h = (h ^ word) * kFnvPrime;
  }
  for (; i < output.size(); i++) h = (h ^ static_cast<unsigned char>(output[i])) * kFnvPrime;
  return h;
}

// A pack is a run of records: this header, then the key's bytes, then the output's. A damaged
// header (its own hash no longer matches) or a record cut short is skipped: reading resumes at the
// next magic. A record whose key or output checksum does not match is a miss.
struct RecordHeader {
  char magic[8];
  uint64_t key_hash, key_bytes, output_bytes, checksum, header_hash;
  uint64_t bytes() const { return sizeof(RecordHeader) + key_bytes + output_bytes; }
  uint64_t own_hash() const {
    return stable_hash(
        std::string_view(reinterpret_cast<const char*>(this), offsetof(RecordHeader, header_hash)));
  }
};
constexpr char kMagic[8] = {'t', 'c', 'p', 'a', 'c', 'k', '1', '\n'};

RecordHeader make_header(std::string_view key, std::string_view output) {
  RecordHeader h;
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.key_hash = stable_hash(key);
  h.key_bytes = key.size();
  h.output_bytes = output.size();
  h.checksum = checksum(output);
  h.header_hash = h.own_hash();
  return h;
}

bool intact(const RecordHeader& h) {
  return std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.header_hash == h.own_hash();
}

// An open file, closed when it goes.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

bool read_at(int fd, void* into, size_t bytes, uint64_t offset) {
  auto* at = static_cast<char*>(into);
  while (bytes > 0) {
    ssize_t n = pread(fd, at, bytes, static_cast<off_t>(offset));
    if (n <= 0) return false;
    at += n, bytes -= static_cast<size_t>(n), offset += static_cast<uint64_t>(n);
  }
  return true;
}

struct Location {
  std::string pack;
  uint64_t offset;
};

struct Record {
  std::string key, output;
};

// The record at `at` when it is intact and holds `key` (any key when null). A hit (`used`) is
// recently used: its pack's time is brought up to now when it is over a minute old, so pruning
// keeps it longest.
std::optional<Record> read_record(const Location& at, const std::string* key, bool used) {
  Fd f(open(at.pack.c_str(), O_RDONLY | O_CLOEXEC));
  RecordHeader h;
  struct stat st;
  if (f.fd < 0 || fstat(f.fd, &st) != 0 || !read_at(f.fd, &h, sizeof h, at.offset) || !intact(h) ||
      (key && h.key_bytes != key->size()) ||
      at.offset + h.bytes() > static_cast<uint64_t>(st.st_size))
    return std::nullopt;
  Record r{std::string(h.key_bytes, '\0'), std::string(h.output_bytes, '\0')};
  if (!read_at(f.fd, r.key.data(), r.key.size(), at.offset + sizeof h) || (key && r.key != *key) ||
      !read_at(f.fd, r.output.data(), r.output.size(), at.offset + sizeof h + h.key_bytes) ||
      checksum(r.output) != h.checksum)
    return std::nullopt;
  if (used && st.st_mtime < time(nullptr) - 60) {
    [[maybe_unused]] int touched = futimens(f.fd, nullptr);  // a cache that cannot be marked: fine
  }
  return r;
}

// The folder's modification time (a pack created or removed changes it); 0 when it is missing.
int64_t folder_time(const std::string& folder) {
  struct stat st;
  if (stat(folder.c_str(), &st) != 0) return 0;
  return st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

// What this process knows of one kind's folder: where each key's records are (newest last), and
// how far each pack was read.
struct FolderIndex {
  std::map<std::string, uint64_t> read_to;
  absl::flat_hash_map<uint64_t, std::vector<Location>> records;
  std::optional<std::chrono::steady_clock::time_point> refreshed;
  int64_t folder_time_then = 0;

  // Whether a miss should look again: a pack came or went, or a second passed (another process
  // may have added to its pack). A cold start misses on every kernel: it reads no more than that.
  bool stale(const std::string& folder) const {
    return !refreshed || folder_time(folder) != folder_time_then ||
           std::chrono::steady_clock::now() - *refreshed > std::chrono::seconds(1);
  }

  // Reads the records the packs gained since the last look (new packs, longer ones).
  void refresh(const std::string& folder) {
    folder_time_then = folder_time(folder);
    std::error_code ec;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end;
         it.increment(ec)) {
      const std::string path = it->path().string();
      if (it->path().extension() != ".pack") continue;
      uint64_t& offset = read_to[path];
      std::error_code fe;
      if (it->file_size(fe) <= offset && !fe) continue;  // nothing new
      Fd f(open(path.c_str(), O_RDONLY | O_CLOEXEC));
      struct stat st;
      if (f.fd < 0 || fstat(f.fd, &st) != 0) continue;
      read(path, f.fd, static_cast<uint64_t>(st.st_size), offset);
    }
    refreshed = std::chrono::steady_clock::now();
  }

  // Indexes the pack's records from `offset` up to the last whole one. Where no record starts
  // after one, that one was cut short (what followed was written over its tail): reading resumes
  // at the next magic after its start. An incomplete last record is left for the next look: its
  // writer may be writing it.
  void read(const std::string& path, int fd, uint64_t size, uint64_t& offset) {
    RecordHeader h;
    std::optional<uint64_t> last;  // where the last record indexed starts
    uint64_t searched = 0;         // every magic before this was tried
    while (offset + sizeof h <= size) {
      if (read_at(fd, &h, sizeof h, offset) && intact(h) && h.bytes() <= size - offset) {
        records[h.key_hash].push_back({path, offset});
        last = offset;
        offset += h.bytes();
        continue;
      }
      std::optional<uint64_t> next =
          find_magic(fd, std::max(searched, last ? *last + 1 : offset + 1), size);
      if (!next) return;
      offset = *next;
      searched = offset + 1;
    }
  }

  // Where the magic next starts in the file from `from`, reading it in 1 MiB pieces.
  static std::optional<uint64_t> find_magic(int fd, uint64_t from, uint64_t size) {
    std::string piece;
    for (uint64_t at = from; at + sizeof kMagic <= size; at += piece.size() - (sizeof kMagic - 1)) {
      piece.resize(std::min<uint64_t>(size - at, 1 << 20));
      if (!read_at(fd, piece.data(), piece.size(), at)) return std::nullopt;
      size_t found = std::string_view(piece).find(std::string_view(kMagic, sizeof kMagic));
      if (found != std::string_view::npos) return at + found;
    }
    return std::nullopt;
  }
};

std::mutex index_mu;  // guards indexes
std::map<std::string, FolderIndex>& indexes() {
  static auto* by_folder = new std::map<std::string, FolderIndex>();
  return *by_folder;
}

std::string folder_of(std::string_view kind) { return cache_dir() + "/" + std::string(kind); }

// This process's pack in `folder`: named by its pid and when it first wrote, so no other process
// ever appends to it.
std::string own_pack(const std::string& folder) {
  static const uint64_t started =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return absl::StrCat(folder, "/", getpid(), "-", absl::Hex(started), ".pack");
}
}  // namespace

uint64_t prune_cache(uint64_t max_bytes) {
  namespace fs = std::filesystem;
  struct File {
    fs::path path;
    fs::file_time_type time;
    uint64_t bytes;
  };
  std::vector<File> files;
  uint64_t total = 0, removed = 0;
  const fs::file_time_type stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache_dir(), ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code fe;  // a file another process removes meanwhile is skipped
    if (!it->is_regular_file(fe)) continue;
    File f{it->path(), it->last_write_time(fe), it->file_size(fe)};
    if (fe) continue;
    if (f.path.filename().string().find(".tmp") != std::string::npos && f.time < stale) {
      if (fs::remove(f.path, fe)) removed += f.bytes;
      continue;
    }
    total += f.bytes;
    files.push_back(std::move(f));
  }
  if (total <= max_bytes) return removed;
  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.time < b.time; });
  for (const File& f : files) {
    if (total <= max_bytes / 4 * 3) break;
    std::error_code fe;
    if (fs::remove(f.path, fe)) removed += f.bytes;
    total -= f.bytes;
  }
  return removed;
}

uint64_t cache_limit_bytes() {
  return static_cast<uint64_t>(std::max(0, getenv_int("TC_CACHE_MAX_MB", 2048))) << 20;
}

std::optional<std::string> cache_lookup(std::string_view kind, const std::string& key) {
  if (getenv_int("DISABLE_COMPILER_CACHE")) return std::nullopt;
  const std::string folder = folder_of(kind);
  const uint64_t hash = stable_hash(key);
  // the index first, then again after reading what the packs gained when that may be news
  for (int look = 0; look < 2; look++) {
    std::vector<Location> candidates;
    {
      std::lock_guard<std::mutex> lock(index_mu);
      FolderIndex& index = indexes()[folder];
      if (index.stale(folder))
        index.refresh(folder);
      else if (look == 1)
        break;
      if (auto it = index.records.find(hash); it != index.records.end()) candidates = it->second;
    }
    for (auto at = candidates.rbegin(); at != candidates.rend(); ++at)
      if (std::optional<Record> r = read_record(*at, &key, true)) return std::move(r->output);
  }
  return std::nullopt;
}

void cache_store(std::string_view kind, const std::string& key, const std::string& output) {
  if (getenv_int("DISABLE_COMPILER_CACHE")) return;
  static std::once_flag pruned;
  std::call_once(pruned, [] {
    if (uint64_t limit = cache_limit_bytes()) prune_cache(limit);
  });
  const std::string folder = folder_of(kind), pack = own_pack(folder);
  RecordHeader h = make_header(key, output);
  iovec parts[3] = {{&h, sizeof h},
                    {const_cast<char*>(key.data()), key.size()},
                    {const_cast<char*>(output.data()), output.size()}};
  const size_t bytes = sizeof h + key.size() + output.size();
  static std::mutex write_mu;  // one record at a time, so each knows where it starts
  std::lock_guard<std::mutex> write_lock(write_mu);
  Fd f(open(pack.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (f.fd < 0) {
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    f.fd = open(pack.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  }
  off_t offset = f.fd < 0 ? -1 : lseek(f.fd, 0, SEEK_END);
  if (offset < 0) return;  // a cache that cannot be written is skipped
  if (writev(f.fd, parts, 3) != static_cast<ssize_t>(bytes)) {
    // a record cut short would end the pack for its readers (nothing more to do if this fails)
    [[maybe_unused]] int cut = ftruncate(f.fd, offset);
    return;
  }
  std::lock_guard<std::mutex> lock(index_mu);
  FolderIndex& index = indexes()[folder];
  index.records[h.key_hash].push_back({pack, static_cast<uint64_t>(offset)});
  if (uint64_t& read_to = index.read_to[pack]; read_to == static_cast<uint64_t>(offset))
    read_to += bytes;  // readers of this process need not read it again
}

std::vector<std::pair<std::string, std::string>> cache_entries(std::string_view kind) {
  FolderIndex index;
  index.refresh(folder_of(kind));
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<Location> all;
  for (const auto& [hash, at] : index.records) all.insert(all.end(), at.begin(), at.end());
  std::sort(all.begin(), all.end(), [](const Location& a, const Location& b) {
    return std::tie(a.pack, a.offset) < std::tie(b.pack, b.offset);
  });
  for (const Location& at : all)
    if (std::optional<Record> r = read_record(at, nullptr, false))
      out.emplace_back(std::move(r->key), std::move(r->output));
  return out;
}

std::string cached_compile(std::string_view kind, const std::string& key,
                           const std::function<std::string()>& compile) {
  if (std::optional<std::string> output = cache_lookup(kind, key)) return *output;
  std::string output = compile();
  cache_store(kind, key, output);
  return output;
}

}  // namespace tc::runtime
