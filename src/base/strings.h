#pragma once
// Small string helpers shared by config, cli and app. Any thread.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::base {

// Levenshtein distance, used for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" if none is close enough to be a useful suggestion.
std::string closest_match(std::string_view word, const std::vector<std::string_view>& candidates);

bool starts_with(std::string_view s, std::string_view prefix);

}  // namespace sluice::base
