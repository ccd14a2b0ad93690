// Whole-file reads for the dataset readers, with gzip decompressed on the way (as Debian ships
// some data sets), so every reader reports a missing or damaged file the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tc::datasets {

// The bytes of `path` (decompressed when it is gzip; plain files are read as they are). Throws
// tc::Error "<who>: cannot open <path>" for a missing file or a directory, and
// "<who>: <path> is damaged: ..." for a gzip stream that is cut short or corrupt. A gzip file of
// 1 MiB or more is inflated once: its bytes are kept in the disk cache (runtime/disk_cache.h,
// kind "data"), keyed by the file's path, size and modification time.
std::vector<uint8_t> read_file(const std::string& path, std::string_view who);

}  // namespace tc::datasets
