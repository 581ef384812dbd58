#pragma once
// What the pieces of the geo-diversity audit (kind geo-diversity, paper 002, DIG-In) share.
// How sets are composed and resampled: include/vlbias/audits/geo_audit.h.
//   geo_audit.cpp               the runner: inputs, indicators, results.json
//   geo_audit_inputs.cpp        the real and the generated images and their labels
//   geo_audit_sets.cpp          the generated set of each (form, region) and (form, object,
//                               region) cell
//   geo_audit_indicators.cpp    the Region and Object-Region indicators (PRDC), region gaps
//   geo_audit_consistency.cpp   the Consistency indicator (CLIPScore)
//   geo_audit_distribution.cpp  FID, KID and Vendi per region
//   geo_audit_filtered.cpp      refused and filtered generations per region (outcomes.csv)
// and the report's exemplar grids per (region, object) (geo_audit.cpp, exemplars.h).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "audit_yaml.h"
#include "scores_by_group.h"
#include "vlbias/audits/geo_audit.h"
#include "vlbias/core/matrix.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/sample.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/json_output.h"

namespace vlbias::audits_internal {

// The prompt forms, in the order every output lists them.
enum class Form : int { Object = 0, ObjectRegion = 1, ObjectCountry = 2 };
inline constexpr Form kForms[] = {Form::Object, Form::ObjectRegion, Form::ObjectCountry};

const char* form_name(Form f);      // "object-region"
const char* form_template(Form f);  // "{object} in {region}"

// Stream numbers for derive_seed(spec.seed, ...): one per procedure, so turning an
// analysis or a sampling option on or off never changes another's draws.
enum GeoSeed : std::uint64_t {
  kSeedRealSampling = 21,
  kSeedGeneratedSampling = 22,
  kSeedObjectMix = 23,
  kSeedRegionBootstrap = 24,
  kSeedObjectRegionBootstrap = 25,
  kSeedConsistencyBootstrap = 26,
  kSeedKid = 27,
  kSeedDistributionBootstrap = 28,
  kSeedFidInf = 29,
  kSeedExemplars = 30,
};

inline std::uint64_t cell_seed(std::uint64_t seed, GeoSeed stream, std::uint64_t cell) {
  return derive_seed(derive_seed(seed, stream), cell);
}

// Sorted distinct labels and their index.
struct Labels {
  std::vector<std::string> names;
  std::map<std::string, std::uint32_t> index;

  explicit Labels(const std::vector<std::string>& values) {
    const std::set<std::string> s(values.begin(), values.end());
    names.assign(s.begin(), s.end());
    for (std::uint32_t i = 0; i < names.size(); ++i) index[names[i]] = i;
  }
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::uint32_t find(const std::string& v) const {
    const auto it = index.find(v);
    return it == index.end() ? kNone : it->second;
  }
};

// `v` after the spec's aliases (the first matching `from`), else `v`.
std::string aliased(const std::vector<std::pair<std::string, std::string>>& aliases,
                    const std::string& v);

// The first 8 values, quoted, for a note ("'a', 'b', ... (12 in all)").
std::string first_few(const std::set<std::string>& s);

// ------------------------------------------------------------------------------ inputs

struct RealData {
  Matrix features;                                         // the kept rows
  std::vector<std::uint32_t> region_id;                    // per kept row, into regions
  std::vector<std::uint32_t> object_id;                    // per kept row, into objects
  std::vector<std::vector<std::uint32_t>> rows_of_region;  // kept rows per region index
  std::unique_ptr<Labels> regions, objects;
  std::size_t rows_read = 0, missing_labels = 0;
  std::size_t duplicate_groups = 0, duplicate_rows = 0, duplicates_removed = 0;
  std::size_t balanced_out = 0;
};

struct GeneratedData {
  Matrix features;
  Matrix clip;  // rows = features.rows when any source has clip, else empty
  std::vector<std::uint8_t> has_clip;
  std::vector<Form> form;
  std::vector<std::string> region;      // aliased ("" = none)
  std::vector<std::string> object;      // aliased
  std::vector<std::string> raw_object;  // as in the table (the prompt's text)
  std::vector<std::string> country;
  // The image path column (features_model.column) as written, and resolved against the table's
  // folder; "" where the table has no such column (report exemplars only).
  std::vector<std::string> image_path;
  std::vector<std::filesystem::path> image_file;
  std::size_t rows_read = 0, missing_object = 0, missing_region = 0;
  std::vector<std::size_t> per_form = std::vector<std::size_t>(3, 0);
};

// The real images with both labels (duplicates and balancing as the spec says).
RealData load_real(const AuditCommonSpec& spec, const GeoAuditSpec& g,
                   std::vector<std::string>& notes);
// Every generated source's usable rows, concatenated; `dim` is the real features' width.
GeneratedData load_generated(const GeoAuditSpec& g, std::size_t dim,
                             std::vector<std::string>& notes);

// ------------------------------------------------------------------- generated sets

// The generated rows of each (form, region) and (form, object, region) cell, as
// geo_audit.h describes.
struct GeneratedSets {
  // [form][region]: rows of the region indicator's generated set
  std::vector<std::vector<std::vector<std::uint32_t>>> region;
  // [form][object][region]
  std::vector<std::vector<std::vector<std::vector<std::uint32_t>>>> cell;
  std::vector<bool> form_present = std::vector<bool>(3, false);
  std::vector<std::string> sampled = std::vector<std::string>(3);  // how, per form
};

// `matching` receives the counts of generated rows matched to the real labels.
GeneratedSets compose_sets(const AuditCommonSpec& spec, const GeoAuditSpec& g, const RealData& real,
                           const GeneratedData& gen, std::vector<std::string>& notes,
                           Json& matching);

// ------------------------------------------------------------------------ indicators

// {"lower", "upper"} of an interval.
Json bounds_json(const stats::Interval& ci);

// A gap between two regions in one form and metric.
struct GapRow {
  std::string form, metric, a, b;
  double value_a = 0.0, value_b = 0.0;
  Gap gap;
};

// The gaps as a section and its table, with Holm and BH over the table.
AnalysisOutput gap_section(std::vector<GapRow> rows, const std::string& table_name);

struct RegionOutputs {
  AnalysisOutput section, gaps;
};
RegionOutputs region_analysis(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                              const RealData& real, const GeneratedData& gen,
                              const GeneratedSets& sets, std::vector<std::string>& notes);
AnalysisOutput object_region_analysis(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                                      const RealData& real, const GeneratedData& gen,
                                      const GeneratedSets& sets, std::vector<std::string>& notes);

struct ConsistencyOutputs {
  AnalysisOutput section, gaps;
  std::vector<double> row_scores;  // CLIPScore per generated row, NaN where not scored
};
ConsistencyOutputs consistency_analysis(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                                        const GeneratedData& gen, const GeneratedSets& sets,
                                        std::vector<std::string>& notes);

// Per region: how many of the requested generations the endpoint refused or filtered, with
// Wilson intervals and a chi-square test of equal rates (the sources' `outcomes` tables).
AnalysisOutput filtered_analysis(const GeoAuditSpec& g);

// The spec's scores (scores_by_group.h) joined to the generated images (their
// features_model.column, "path" by default) and grouped by region (rows without a region are
// left out); InputError as read_scores and check_score_groups, and when no generated table has
// the image column.
struct GeoScores {
  ScoresData data;
  std::vector<ScoreGrouping> groupings;
};
GeoScores read_geo_scores(const GeoAuditSpec& g, const GeneratedData& gen);

AnalysisOutput distribution_analysis(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                                     const RealData& real, const GeneratedData& gen,
                                     const GeneratedSets& sets);

// The root keys of a geo-diversity spec (geo_audit_yaml.cpp): the common keys into `spec`
// (audit_yaml.h), the kind's own into `g`, and the keys the kind allows at the root.
void parse_geo_root(Context& ctx, const YAML::Node& root, AuditCommonSpec& spec, GeoAuditSpec& g);

}  // namespace vlbias::audits_internal
