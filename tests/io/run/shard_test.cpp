// --shard parsing (I/N, Slurm arrays, Kubernetes indexed Jobs) and the membership rules.
// Key shards are checked against Python's hashlib (int.from_bytes(sha256(k)[:8], "big") % n).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/io/run/shard.h"

namespace vlbias {
namespace {
namespace in_shard_test {

using ::testing::HasSubstr;

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string usage_error(const std::string& text, const EnvLookup& env) {
  try {
    parse_shard(text, env);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "--shard " << text << " was accepted";
  return "";
}

TEST(Shard, IOfNNamesShardIOfN) {
  const Shard s = parse_shard("2/4", env_of({}));
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 4u);
  EXPECT_FALSE(s.whole());
  EXPECT_TRUE(parse_shard("0/1", env_of({})).whole());
}

TEST(Shard, MalformedOrOutOfRangeShardsAreUsageErrors) {
  for (const std::string bad :
       {"4/4", "1/0", "-1/4", "1/", "/4", "a/b", "1 /4", "1/4/", "2", "0/100001", "1/+4", ""}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(usage_error(bad, env_of({})), HasSubstr("--shard"));
  }
}

TEST(Shard, AutoReadsTheSlurmArrayTask) {
  const auto env = env_of({{"SLURM_ARRAY_TASK_ID", "7"},
                           {"SLURM_ARRAY_TASK_COUNT", "4"},
                           {"SLURM_ARRAY_TASK_MIN", "4"},
                           {"SLURM_ARRAY_TASK_MAX", "7"}});
  const Shard s = parse_shard("auto", env);
  EXPECT_EQ(s.index, 3u);
  EXPECT_EQ(s.count, 4u);
  EXPECT_THAT(s.source, HasSubstr("SLURM_ARRAY_TASK_ID=7"));
  // auto/N: the task id is the shard number.
  const Shard by_id = parse_shard("auto/8", env);
  EXPECT_EQ(by_id.index, 7u);
  EXPECT_EQ(by_id.count, 8u);
  EXPECT_THAT(usage_error("auto/4", env), HasSubstr("out of range"));
}

TEST(Shard, ATaskSubmittedAgainAloneKeepsItsShardWithAutoN) {
  // sbatch --array=2: one task, id 2.
  const auto env = env_of({{"SLURM_ARRAY_TASK_ID", "2"},
                           {"SLURM_ARRAY_TASK_COUNT", "1"},
                           {"SLURM_ARRAY_TASK_MIN", "2"},
                           {"SLURM_ARRAY_TASK_MAX", "2"}});
  const Shard s = parse_shard("auto/4", env);
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 4u);
  // Plain auto would make it the whole job ("0 of 1") and write over shard 0: refused.
  EXPECT_THAT(usage_error("auto", env), HasSubstr("give --shard auto/N"));
  // Task 0 of a one-task array is a whole job, as asked.
  EXPECT_TRUE(parse_shard("auto", env_of({{"SLURM_ARRAY_TASK_ID", "0"},
                                          {"SLURM_ARRAY_TASK_COUNT", "1"},
                                          {"SLURM_ARRAY_TASK_MIN", "0"},
                                          {"SLURM_ARRAY_TASK_MAX", "0"}}))
                  .whole());
}

TEST(Shard, AutoNumbersAStepArrayByItsPlace) {
  const auto env = env_of({{"SLURM_ARRAY_TASK_ID", "6"},
                           {"SLURM_ARRAY_TASK_COUNT", "4"},
                           {"SLURM_ARRAY_TASK_MIN", "0"},
                           {"SLURM_ARRAY_TASK_MAX", "6"},
                           {"SLURM_ARRAY_TASK_STEP", "2"}});
  EXPECT_EQ(parse_shard("auto", env).index, 3u);
}

TEST(Shard, AutoRefusesAnArrayThatIsNotARange) {
  // --array=0,2,7: three tasks, no step numbers them 0..2.
  const auto env = env_of({{"SLURM_ARRAY_TASK_ID", "2"},
                           {"SLURM_ARRAY_TASK_COUNT", "3"},
                           {"SLURM_ARRAY_TASK_MIN", "0"},
                           {"SLURM_ARRAY_TASK_MAX", "7"}});
  EXPECT_THAT(usage_error("auto", env), HasSubstr("is not a range; submit it as --array=0-2"));
}

TEST(Shard, AutoReadsAKubernetesIndexedJob) {
  EXPECT_EQ(parse_shard("auto/8", env_of({{"JOB_COMPLETION_INDEX", "5"}})).index, 5u);
  const Shard s =
      parse_shard("auto", env_of({{"JOB_COMPLETION_INDEX", "1"}, {"VLBIAS_SHARD_COUNT", "3"}}));
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.count, 3u);
  EXPECT_THAT(usage_error("auto", env_of({{"JOB_COMPLETION_INDEX", "1"}})),
              HasSubstr("VLBIAS_SHARD_COUNT"));
  EXPECT_THAT(usage_error("auto/2", env_of({{"JOB_COMPLETION_INDEX", "2"}})),
              HasSubstr("out of range"));
}

TEST(Shard, AutoOutsideAJobArrayNamesTheVariables) {
  const std::string what = usage_error("auto", env_of({}));
  EXPECT_THAT(what, HasSubstr("SLURM_ARRAY_TASK_ID"));
  EXPECT_THAT(what, HasSubstr("JOB_COMPLETION_INDEX"));
  EXPECT_THAT(usage_error("auto", env_of({{"SLURM_ARRAY_TASK_ID", "x"}})),
              HasSubstr("is not a whole number"));
}

TEST(Shard, KeyShardsMatchPythonsHashlib) {
  struct Case {
    std::string key;
    std::size_t count, shard;
  };
  const std::vector<Case> cases = {{"", 4, 0},
                                   {"", 1001, 421},
                                   {"a", 4, 2},
                                   {"a", 7, 4},
                                   {"0", 7, 3},
                                   {"17", 4, 3},
                                   {"17", 1001, 32},
                                   {"img/0001.jpg|Describe the person.|3", 7, 2},
                                   {"img/0001.jpg|Describe the person.|3", 1001, 177},
                                   {std::string(1000, 'x'), 1001, 870}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key.substr(0, 40) + " of " + std::to_string(c.count));
    EXPECT_EQ(shard_of_key(c.key, c.count), c.shard);
  }
}

TEST(Shard, KeysSpreadEvenlyOverShards) {
  std::vector<std::size_t> counts(8, 0);
  for (std::size_t i = 0; i < 8000; ++i) ++counts[shard_of_key(std::to_string(i), 8)];
  for (const std::size_t c : counts) {
    EXPECT_NEAR(static_cast<double>(c), 1000.0, 4 * 30.0);  // sd = sqrt(8000 * 1/8 * 7/8) ~ 30
  }
}

TEST(Shard, ChunksGoRoundRobin) {
  EXPECT_EQ(shard_of_chunk(0, 4), 0u);
  EXPECT_EQ(shard_of_chunk(5, 4), 1u);
  EXPECT_EQ(shard_of_chunk(5, 1), 0u);
}

TEST(Shard, JsonRoundTripsAndRefusesOutOfRange) {
  const Shard s{3, 5, "--shard 3/5"};
  const Shard back = shard_from_json(shard_json(s, kChunkScheme), "shard.json");
  EXPECT_EQ(back.index, 3u);
  EXPECT_EQ(back.count, 5u);
  EXPECT_EQ(back.source, "--shard 3/5");
  EXPECT_THROW(shard_from_json(Json{{"index", 5}, {"count", 5}}, "x"), InputError);
  EXPECT_THROW(shard_from_json(Json{{"index", -1}, {"count", 5}}, "x"), InputError);
  EXPECT_THROW(shard_from_json(Json("3/5"), "x"), InputError);
}

TEST(Shard, OutPathsTakeTheShardIndex) {
  EXPECT_EQ(expand_shard_path("shards/{shard}/emb.npy", Shard{12, 16, ""}).string(),
            "shards/12/emb.npy");
  EXPECT_EQ(expand_shard_path("s{shard}_{shard}.npy", Shard{1, 2, ""}).string(), "s1_1.npy");
  EXPECT_EQ(expand_shard_path("plain.npy", Shard{1, 2, ""}).string(), "plain.npy");
}

}  // namespace in_shard_test
}  // namespace
}  // namespace vlbias
