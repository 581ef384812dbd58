// The exemplar image grids of an lvlm-counterfactual report (lvlm_audit_internal.h's
// lvlm_exemplars; the grids themselves: exemplars.h): each group's distinct images, read from
// the generations in a pass of their own, with the highest score among each image's answers.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exemplars.h"
#include "lvlm_audit_internal.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/record_stream.h"

namespace vlbias::audits_internal {

Json lvlm_exemplars(const AuditCommonSpec& spec, const LvlmAuditSpec& l,
                    const std::vector<std::filesystem::path>& inputs,
                    std::vector<std::string>& notes) {
  const std::size_t ng = l.group.size();
  const bool scored = !l.scores.empty();
  std::vector<std::string> columns = l.group;
  columns.push_back(l.image);
  if (scored) columns.push_back(l.scores.front());
  // Per group (its values): each image's index into `images`, and the images in first-seen order.
  struct GroupImages {
    std::map<std::string, std::uint32_t> index;
    std::vector<std::uint32_t> rows;
  };
  std::map<std::vector<std::string>, GroupImages> groups;
  ExemplarImages images;
  std::size_t no_group = 0, no_image = 0;
  for (const std::filesystem::path& file : inputs) {
    for_each_record(file.string(), columns, [&](const Record& rec) {
      std::vector<std::string> g;
      for (std::size_t i = 0; i < ng; ++i) {
        if (rec.missing(i)) {
          ++no_group;
          return;
        }
        g.emplace_back(rec.text(i));
      }
      if (rec.missing(ng)) {
        ++no_image;
        return;
      }
      const double s = scored ? rec.number(ng + 1) : std::numeric_limits<double>::quiet_NaN();
      GroupImages& group = groups[g];
      const auto [it, fresh] = group.index.try_emplace(
          std::string(rec.text(ng)), static_cast<std::uint32_t>(images.path.size()));
      if (fresh) {
        images.path.push_back(it->first);
        images.file.push_back(exemplar_file(spec.report_images, file, it->first));
        images.score.push_back(s);
        group.rows.push_back(it->second);
      } else if (std::isfinite(s) && !(images.score[it->second] >= s)) {
        images.score[it->second] = s;  // the highest of the image's answers
      }
    });
  }
  if (no_group + no_image > 0) {
    notes.push_back(fmt::format(
        "report.images: {} rows without a group value and {} without an image path ({}) are "
        "not in the exemplar grids",
        no_group, no_image, l.image));
  }
  std::vector<ExemplarCell> cells;
  for (auto& [values, group] : groups) {
    ExemplarCell c;
    for (std::size_t i = 0; i < ng; ++i) c.labels.emplace_back(l.group[i], values[i]);
    c.rows = std::move(group.rows);
    cells.push_back(std::move(c));
  }
  const ExemplarScore score{"max_" + (scored ? l.scores.front() : std::string()),
                            scored ? l.scores.front() : std::string(),
                            fmt::format("the highest {} among the image's answers",
                                        scored ? l.scores.front() : std::string()),
                            true};
  return exemplars_json(cells, images, spec.report_images,
                        derive_seed(spec.seed, kLvlmSeedExemplars), scored ? &score : nullptr,
                        notes);
}

}  // namespace vlbias::audits_internal
