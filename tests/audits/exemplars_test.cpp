// The report's exemplar grids (src/audits/exemplars.h): each cell's seeded sample and its
// lowest- or highest-scored images against the Python port of the random streams
// (tools/make_exemplar_fixtures.py) and a hand-worked ordering; the size budget; images that
// cannot be read.
#include "exemplars.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace vlbias::audits_internal {
namespace {
namespace in_exemplars_test {

namespace fs = std::filesystem;

const fs::path kImages = fs::path(VLBIAS_SOURCE_DIR) / "examples/geo_diversity_images/generated";

struct Fixture {
  std::vector<ExemplarCell> cells;
  ExemplarImages images;
  nlohmann::json cases;
};

// The fixture's cells and scores; image i is a real JPEG of the geo example (cycled).
Fixture load_fixture() {
  std::ifstream in(fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/audits/exemplars.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  Fixture f;
  for (std::size_t i = 0; i < j["cells"].size(); ++i) {
    ExemplarCell c;
    c.labels = {{"cell", std::to_string(i)}};
    for (const auto& r : j["cells"][i]) c.rows.push_back(r.get<std::uint32_t>());
    f.cells.push_back(std::move(c));
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kImages)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (std::size_t i = 0; i < j["scores"].size(); ++i) {
    const auto& s = j["scores"][i];
    f.images.score.push_back(s.is_null() ? std::numeric_limits<double>::quiet_NaN()
                                         : s.get<double>());
    f.images.file.push_back(files[i % files.size()]);
    f.images.path.push_back(f.images.file.back().filename().string());
  }
  f.cases = j["cases"];
  return f;
}

std::vector<std::uint32_t> picked(const std::vector<std::pair<std::uint32_t, std::string>>& p,
                                  const std::string& why) {
  std::vector<std::uint32_t> rows;
  for (const auto& [row, reason] : p) {
    if (reason.find(why) != std::string::npos) rows.push_back(row);
  }
  return rows;
}

TEST(Exemplars, TheLowestAndHighestScoresFollowAHandWorkedOrdering) {
  const Fixture f = load_fixture();
  // Cell 1 holds rows 1 2 5 6 9 10 13 14 with scores .10 .33 .45 .33 .60 .28 (none) .33: the
  // lowest three are 1 (.10), 10 (.28), then 2 (.33, before the tied 6 and 14); the highest
  // three 9 (.60), 5 (.45), 2 (.33). Row 13 has no score and is never picked.
  EXPECT_EQ(extreme_scored(f.cells[1].rows, f.images.score, 3, false),
            (std::vector<std::uint32_t>{1, 10, 2}));
  EXPECT_EQ(extreme_scored(f.cells[1].rows, f.images.score, 3, true),
            (std::vector<std::uint32_t>{9, 5, 2}));
  // Cell 0: rows 3 and 8 tie at .91 (3 first), then 12 (.77); the lowest are 15, 7, 19.
  EXPECT_EQ(extreme_scored(f.cells[0].rows, f.images.score, 3, true),
            (std::vector<std::uint32_t>{3, 8, 12}));
  EXPECT_EQ(extreme_scored(f.cells[0].rows, f.images.score, 3, false),
            (std::vector<std::uint32_t>{15, 7, 19}));
  // Cell 2: one of its two rows is scored; asking for more gives what there is.
  EXPECT_EQ(extreme_scored(f.cells[2].rows, f.images.score, 12, false),
            (std::vector<std::uint32_t>{17}));
}

TEST(Exemplars, TheSampleAndTheScoredPicksMatchThePythonReference) {
  const Fixture f = load_fixture();
  ASSERT_EQ(f.cases.size(), 9u);
  for (const auto& c : f.cases) {
    const std::uint64_t seed = c["seed"].get<std::uint64_t>();
    const std::size_t n = c["n"].get<std::size_t>();
    SCOPED_TRACE(testing::Message() << "seed " << seed << ", n " << n);
    for (const bool highest : {false, true}) {
      const ExemplarScore score{"s", "score", "a test score", highest};
      const auto picks = pick_exemplars(f.cells, f.images, {n, 1000, {}}, seed, &score);
      ASSERT_EQ(picks.size(), f.cells.size());
      for (std::size_t i = 0; i < f.cells.size(); ++i) {
        SCOPED_TRACE(testing::Message() << "cell " << i << (highest ? ", highest" : ", lowest"));
        EXPECT_EQ(picked(picks[i], "random sample"),
                  c["sample"][i].get<std::vector<std::uint32_t>>());
        const std::vector<std::uint32_t> want =
            c[highest ? "highest" : "lowest"][i].get<std::vector<std::uint32_t>>();
        EXPECT_EQ(extreme_scored(f.cells[i].rows, f.images.score, n, highest), want);
        // The grid lists its sample first, so the scored picks are compared as a set.
        std::vector<std::uint32_t> got =
            picked(picks[i], highest ? "highest score" : "lowest score");
        std::vector<std::uint32_t> want_set = want;
        std::sort(got.begin(), got.end());
        std::sort(want_set.begin(), want_set.end());
        EXPECT_EQ(got, want_set);
        // Each image once: the sample first, then the scored picks not drawn.
        std::vector<std::uint32_t> rows;
        for (const auto& [row, why] : picks[i]) rows.push_back(row);
        std::vector<std::uint32_t> unique = rows;
        std::sort(unique.begin(), unique.end());
        EXPECT_EQ(std::unique(unique.begin(), unique.end()), unique.end());
      }
    }
  }
}

TEST(Exemplars, TheSameSeedDrawsTheSameGridAndAnotherSeedAnother) {
  const Fixture f = load_fixture();
  const ReportImagesSpec r{3, 1'000'000, {}};
  std::vector<std::string> notes;
  const Json a = exemplars_json(f.cells, f.images, r, 7, nullptr, notes);
  const Json b = exemplars_json(f.cells, f.images, r, 7, nullptr, notes);
  const Json c = exemplars_json(f.cells, f.images, r, 8, nullptr, notes);
  EXPECT_EQ(a.dump(), b.dump()) << "the thumbnails too are deterministic";
  EXPECT_NE(a["cells"].dump(), c["cells"].dump());
  EXPECT_TRUE(notes.empty());
  EXPECT_FALSE(a.contains("score"));
  EXPECT_EQ(a["labels"], Json::array({"cell"}));
  std::size_t shown = 0;
  for (const auto& cell : a["cells"]) {
    for (const auto& im : cell["images"]) {
      shown += im["status"] == "shown";
      EXPECT_EQ(im["thumbnail"].get<std::string>().rfind("data:image/jpeg;base64,", 0), 0u);
    }
  }
  EXPECT_EQ(shown, 3u + 3u + 2u);
}

TEST(Exemplars, TheThumbnailsStayWithinTheBudgetAndTheRestAreCounted) {
  const Fixture f = load_fixture();
  const ExemplarScore score{"s", "score", "a test score", false};
  std::vector<std::string> notes;
  const Json all = exemplars_json(f.cells, f.images, {3, 1'000'000, {}}, 7, &score, notes);
  const std::size_t total = all["bytes"].get<std::size_t>();
  ASSERT_GT(total, 0u);
  for (const std::size_t budget : {std::size_t{1}, total / 3, total - 1, total}) {
    SCOPED_TRACE(budget);
    notes.clear();
    const Json x = exemplars_json(f.cells, f.images, {3, budget, {}}, 7, &score, notes);
    EXPECT_LE(x["bytes"].get<std::size_t>(), budget);
    std::size_t over = 0, bytes = 0;
    for (const auto& cell : x["cells"]) {
      for (const auto& im : cell["images"]) {
        if (im["status"] == "shown") {
          bytes += im["thumbnail"].get<std::string>().size();
        } else {
          EXPECT_EQ(im["status"], "over budget");
          ++over;
        }
      }
    }
    EXPECT_EQ(bytes, x["bytes"].get<std::size_t>());
    EXPECT_EQ(over, x["left_out_for_budget"].get<std::size_t>());
    EXPECT_EQ(over > 0, budget < total);
    EXPECT_EQ(notes.size(), over > 0 ? 1u : 0u);
  }
}

TEST(Exemplars, AnImageThatCannotBeReadIsListedWithWhyNotThrown) {
  Fixture f = load_fixture();
  f.images.file[17] = kImages / "no_such_image.jpg";
  f.images.path[17] = "no_such_image.jpg";
  f.images.path[18] = "";
  std::vector<std::string> notes;
  const Json x = exemplars_json(f.cells, f.images, {2, 1'000'000, {}}, 7, nullptr, notes);
  const auto& cell = x["cells"][2];  // rows 17 and 18: both drawn
  ASSERT_EQ(cell["images"].size(), 2u);
  std::map<std::string, std::string> status;
  for (const auto& im : cell["images"]) {
    status[im["path"].get<std::string>()] = im["status"].get<std::string>();
    EXPECT_FALSE(im.contains("thumbnail"));
  }
  EXPECT_EQ(status["no_such_image.jpg"], "missing");
  EXPECT_EQ(status[""], "no path");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("exemplar image no_such_image.jpg could not be read"), std::string::npos)
      << notes[0];
}

}  // namespace in_exemplars_test
}  // namespace
}  // namespace vlbias::audits_internal
