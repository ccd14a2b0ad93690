#pragma once
// The on-disk cache shared by the compilers, saved kernels and data sets. Entries of one kind live
// in pack files under cache_dir()/<kind>/: each process appends the entries it makes to a pack of
// its own (creating a file costs ext4 up to a millisecond of CPU: with a file for each of the
// MNIST step's 350 entries, 0.06-0.34 s of its 1 s cold first step), and finds entries through
// an index of every pack's records, read once and refreshed on a miss. BEAM's searches are kept
// as files of their own (cache_path, read_cache_file, write_cache_file).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tc::runtime {

// Where the disk cache lives: TC_CACHE_DIR, else $XDG_CACHE_HOME/tinycore, else
// ~/.cache/tinycore.
std::string cache_dir();

// FNV-1a: a hash that is the same in every build and run, for file names.
uint64_t stable_hash(std::string_view s);

// cache_dir()/<kind>/<hex hash of key><suffix>.
std::string cache_path(std::string_view kind, std::string_view key, std::string_view suffix);

// The file's bytes, or nullopt when it is missing or unreadable.
std::optional<std::string> read_cache_file(const std::string& path);

// Writes to a temporary file and renames it over `path`, so a crash mid-write never leaves a
// damaged entry; a cache that cannot be written is silently skipped.
void write_cache_file(const std::string& path, std::string_view bytes);

// The entry for `key` (see cached_compile), or nullopt when there is none (or it is damaged, or
// DISABLE_COMPILER_CACHE=1); and storing one, appended to this process's pack (a later entry for
// the same key stands in for an earlier one).
std::optional<std::string> cache_lookup(std::string_view kind, const std::string& key);
void cache_store(std::string_view kind, const std::string& key, const std::string& output);

// Every intact entry of `kind` in the packs under cache_dir(), as (key, output), oldest first
// within each pack.
std::vector<std::pair<std::string, std::string>> cache_entries(std::string_view kind);

// Keeps the cache small: when the files under cache_dir() take more than `max_bytes`, the least
// recently used (oldest modification time: a hit refreshes its pack's) are removed until they
// take 3/4 of it; a writer's temporary file left for an hour (its process died) goes too. Another
// process may remove or write entries meanwhile: what it removed is skipped. Returns the bytes
// removed.
uint64_t prune_cache(uint64_t max_bytes);

// The cache's size limit: TC_CACHE_MAX_MB megabytes (default 2048; 0: no limit). cache_store
// prunes to it once per process, before its first write.
uint64_t cache_limit_bytes();

// A compiler's output for `key` (everything the output depends on: source, target, compiler
// version, options): read from cache_dir()/<kind>/ when an intact entry for this exact key is
// there, else made by `compile` and stored. An entry holds its key and a checksum of the
// output, so a hash collision or a damaged file is a miss. DISABLE_COMPILER_CACHE=1 skips the
// disk.
std::string cached_compile(std::string_view kind, const std::string& key,
                           const std::function<std::string()>& compile);

}  // namespace tc::runtime
