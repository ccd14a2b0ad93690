// A run folder's files are replaced whole: written to a temporary file beside them, then renamed
// over them, so a run killed while writing leaves the old contents or the new, never a part.
#pragma once

#include <functional>
#include <string>

namespace tc::train {

// `write` fills the temporary file whose path it is given; then it replaces `path`.
void replace_file(const std::string& path, const std::function<void(const std::string&)>& write);

// Replaces `path` with `text`.
void replace_file(const std::string& path, const std::string& text);

}  // namespace tc::train
