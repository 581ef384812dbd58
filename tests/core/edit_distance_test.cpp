// Levenshtein distance against hand-worked cases (the textbook kitten -> sitting among them).
#include "vlbias/core/edit_distance.h"

#include <gtest/gtest.h>

#include <string>

namespace vlbias {
namespace {
namespace in_edit_distance_test {

TEST(EditDistance, MatchesHandWorkedCases) {
  struct Case {
    std::string a, b;
    std::size_t distance;
  };
  const Case cases[] = {
      {"", "", 0},
      {"", "abc", 3},
      {"abc", "", 3},
      {"kitten", "sitting", 3},
      {"flaw", "lawn", 2},
      {"audit", "autid", 2},
      {"geo-diversity", "geo-diversty", 1},
      {"skew", "skw", 1},
      {"same", "same", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.a + " -> " + c.b);
    EXPECT_EQ(edit_distance(c.a, c.b), c.distance);
    EXPECT_EQ(edit_distance(c.b, c.a), c.distance);  // symmetric
  }
}

}  // namespace in_edit_distance_test
}  // namespace
}  // namespace vlbias
