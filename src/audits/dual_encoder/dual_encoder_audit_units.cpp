// The per-image units of the dual-encoder audits' group means (summary.json; see
// dual_encoder_audit_internal.h).
#include <string>
#include <utility>
#include <vector>

#include "dual_encoder_audit_internal.h"
#include "vlbias/report/summary.h"

namespace vlbias::audits_internal {

void group_units(const Table& images, const std::vector<std::string>& by,
                 const std::vector<std::string>& columns, const std::string& stem,
                 std::vector<std::pair<std::string, Table>>& units) {
  std::vector<const std::vector<double>*> values;
  for (const std::string& c : columns) values.push_back(&images.numeric(c, true));
  std::vector<std::uint32_t> group_of_row(images.rows, 0);
  std::vector<std::string> labels{"all"};
  if (!by.empty()) {
    const Grouping grouping = group_by(images, by);
    group_of_row = grouping.group_of_row;
    labels.clear();
    for (const std::vector<std::string>& key : grouping.keys) {
      std::string label;
      for (const std::string& v : key) label += (label.empty() ? "" : " ") + v;
      labels.push_back(label);
    }
  }
  for (std::uint32_t g = 0; g < labels.size(); ++g) {
    TableBuilder t("units");
    for (std::size_t r = 0; r < images.rows; ++r) {
      if (group_of_row[r] != g) continue;
      t.row();
      t.put("image", static_cast<double>(r));
      for (std::size_t c = 0; c < columns.size(); ++c) t.put(columns[c], (*values[c])[r]);
    }
    units.emplace_back(units_table_name(stem, {labels[g]}), t.build());
  }
}

}  // namespace vlbias::audits_internal
