#pragma once
// What the analyses of the dual-encoder audits (papers 001 and 004) share: defined in
// dual_encoder_audit_analyses.cpp (association, SC-WEAT, markedness, ranking), used there and
// in dual_encoder_audit_confidence.cpp (trait-pair confidence).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "table_builder.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/io/table.h"
#include "vlbias/stats/compare.h"

namespace vlbias::audits_internal {

// Writes the key columns of a group (one per `by` column) into the current row.
void put_key(TableBuilder& t, const std::vector<std::string>& by,
             const std::vector<std::string>& key);

// The image table plus per-image score columns named prefix + label (values: image-major,
// labels.size() per image).
Table with_scores(const Table& images, const std::string& prefix,
                  const std::vector<std::string>& labels, const std::vector<double>& values);

// The groups' summaries of column `value` (no percentiles), with bootstrap intervals of the
// mean when bootstrap > 0.
DescribeReport describe_column(const Table& t, const std::string& value, const GroupingOptions& g,
                               std::size_t bootstrap, std::uint64_t seed);

// Holm and BH adjustments over every p-value of a table (NaN p-values are skipped and stay
// NaN).
void adjust(const std::vector<double>& p, std::vector<double>& holm, std::vector<double>& bh);

}  // namespace vlbias::audits_internal
