#pragma once
// Levenshtein distance between two byte strings, for "did you mean" suggestions (spec kinds,
// command names): a few short words, so the plain O(|a| |b|) dynamic programme.
#include <cstddef>
#include <string_view>

namespace vlbias {

// The number of single-byte insertions, deletions and substitutions that turn a into b.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace vlbias
