// Small text helpers shared by the loaders: case-insensitive comparison and "did you mean".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace yirage::devices {

std::string to_lower(std::string_view s);

/// Case-insensitive equality.
bool iequals(std::string_view a, std::string_view b);

/// Levenshtein distance between the lowercased forms of `a` and `b`.
int edit_distance(std::string_view a, std::string_view b);

/// The option closest to `word`, if it is close enough to be a likely typo (at most a third
/// of the word's length in edits, and at least 1); otherwise empty. Ties go to the option
/// listed first.
std::string closest(std::string_view word, const std::vector<std::string>& options);

/// "; did you mean 'x'?" when `closest` finds a suggestion, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& options);

/// "a, b or c"
std::string join_choices(const std::vector<std::string>& options);

}  // namespace yirage::devices

namespace yirage::devices {

/// Where `text` stops being printable UTF-8 text: the byte offset of the first malformed
/// UTF-8 sequence or control character (C0 other than tab, newline and carriage return;
/// DEL; C1), with what it is in `what`; or npos when the whole text is fine.
std::size_t first_unprintable(std::string_view text, std::string* what);

}  // namespace yirage::devices
