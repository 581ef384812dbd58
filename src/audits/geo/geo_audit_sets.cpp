// The generated sets of the geo-diversity audit (geo_audit_internal.h; the rules:
// include/vlbias/audits/geo_audit.h): generated rows matched to the real labels, balanced
// per (object, region) when the spec asks, then pooled per region for the region and country
// forms and drawn to the real object mix for the object form.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "geo_audit_internal.h"

namespace vlbias::audits_internal {

namespace {

// Rows per [form][object][region] (region index unused for the object form: 0).
using Candidates = std::vector<std::vector<std::vector<std::vector<std::uint32_t>>>>;

// Matching generated rows to the real labels: the candidates of each cell, with the counts in
// `matching` and a note on generated labels that have no real images.
Candidates match_to_real(const RealData& real, const GeneratedData& gen,
                         std::vector<std::string>& notes, Json& matching) {
  const std::size_t nr = real.regions->names.size(), no = real.objects->names.size();
  std::set<std::string> unknown_objects, unknown_regions;
  std::vector<std::uint32_t> obj(gen.features.rows, Labels::kNone),
      reg(gen.features.rows, Labels::kNone);
  std::size_t unmatched = 0;
  Candidates groups(3, std::vector<std::vector<std::vector<std::uint32_t>>>(
                           no, std::vector<std::vector<std::uint32_t>>(nr)));
  for (std::size_t i = 0; i < gen.features.rows; ++i) {
    obj[i] = real.objects->find(gen.object[i]);
    if (obj[i] == Labels::kNone) unknown_objects.insert(gen.object[i]);
    if (gen.form[i] != Form::Object) {
      reg[i] = real.regions->find(gen.region[i]);
      if (reg[i] == Labels::kNone) unknown_regions.insert(gen.region[i]);
    }
    const bool ok =
        obj[i] != Labels::kNone && (gen.form[i] == Form::Object || reg[i] != Labels::kNone);
    if (!ok) {
      ++unmatched;
      continue;
    }
    groups[static_cast<int>(gen.form[i])][obj[i]][gen.form[i] == Form::Object ? 0 : reg[i]]
        .push_back(static_cast<std::uint32_t>(i));
  }
  matching = Json{{"matched", gen.features.rows - unmatched}, {"left_out", unmatched}};
  if (!unknown_objects.empty()) {
    matching["objects_not_in_real"] =
        std::vector<std::string>(unknown_objects.begin(), unknown_objects.end());
    notes.push_back(fmt::format(
        "generated objects with no real images (left out of the real-referenced indicators; "
        "add aliases.object if they are spelled differently): {}",
        first_few(unknown_objects)));
  }
  if (!unknown_regions.empty()) {
    matching["regions_not_in_real"] =
        std::vector<std::string>(unknown_regions.begin(), unknown_regions.end());
    notes.push_back(fmt::format(
        "generated regions with no real images (left out of the real-referenced indicators; add "
        "aliases.region if they are spelled differently): {}",
        first_few(unknown_regions)));
  }
  return groups;
}

// Balanced sampling of the generated candidates: generated_per_cell of each group.
void balance_candidates(const AuditCommonSpec& spec, const GeoAuditSpec& g, std::size_t no,
                        std::size_t nr, Candidates& groups, std::vector<std::string>& notes) {
  std::size_t cell = 0, short_groups = 0, nonempty = 0;
  for (const Form f : kForms) {
    const int fi = static_cast<int>(f);
    for (std::size_t o = 0; o < no; ++o) {
      for (std::size_t r = 0; r < (f == Form::Object ? 1 : nr); ++r) {
        auto& rows = groups[fi][o][r];
        const std::uint64_t s = cell_seed(spec.seed, kSeedGeneratedSampling, cell++);
        if (rows.empty()) continue;
        ++nonempty;
        short_groups += rows.size() < g.generated_per_cell ? 1 : 0;
        rows = sample_rows(rows, g.generated_per_cell, s);
      }
    }
  }
  if (short_groups > 0) {
    notes.push_back(fmt::format(
        "sampling.generated_per_cell: {} of {} generated groups have fewer than {} images and "
        "keep all of them",
        short_groups, nonempty, g.generated_per_cell));
  }
}

// Object form: object-mix matched samples, per region and per (object, region) cell.
// real_count[object][region]: the real images of each cell.
void object_form_sets(const AuditCommonSpec& spec, const GeoAuditSpec& geo, std::size_t nr,
                      const std::vector<std::vector<std::size_t>>& real_count,
                      const Candidates& groups, GeneratedSets& sets,
                      std::vector<std::string>& notes) {
  const std::size_t no = real_count.size();
  const int fo = static_cast<int>(Form::Object);
  std::vector<std::vector<std::uint32_t>> pools(no);
  for (std::size_t o = 0; o < no; ++o) {
    pools[o] = groups[fo][o][0];
    if (!pools[o].empty()) sets.form_present[fo] = true;
  }
  if (!sets.form_present[fo]) return;
  std::size_t scaled = 0;
  for (std::size_t r = 0; r < nr; ++r) {
    std::vector<std::size_t> target(no);
    for (std::size_t o = 0; o < no; ++o) target[o] = real_count[o][r];
    const MatchedSample m =
        object_mix_sample(target, pools, cell_seed(spec.seed, kSeedObjectMix, r));
    scaled += m.scale < 1.0 ? 1 : 0;
    sets.region[fo][r] = m.rows;
    for (std::size_t o = 0; o < no; ++o) {
      if (real_count[o][r] == 0 || pools[o].empty()) continue;
      sets.cell[fo][o][r] = sample_rows(pools[o], real_count[o][r],
                                        cell_seed(spec.seed, kSeedObjectMix, nr + r * no + o));
    }
  }
  sets.sampled[fo] = geo.generated_per_cell > 0
                         ? "object-mix matched, from the balanced per-object pool"
                         : "object-mix matched sample of the {object} generations";
  if (scaled > 0) {
    notes.push_back(fmt::format(
        "object form: in {} region(s) some object has fewer {{object}} generations than real "
        "images; the matched samples were scaled down to keep the real object mix",
        scaled));
  }
}

}  // namespace

GeneratedSets compose_sets(const AuditCommonSpec& spec, const GeoAuditSpec& g, const RealData& real,
                           const GeneratedData& gen, std::vector<std::string>& notes,
                           Json& matching) {
  const std::size_t nr = real.regions->names.size(), no = real.objects->names.size();
  // Real counts per (object, region).
  std::vector<std::vector<std::size_t>> real_count(no, std::vector<std::size_t>(nr, 0));
  for (std::size_t i = 0; i < real.features.rows; ++i)
    ++real_count[real.object_id[i]][real.region_id[i]];

  Candidates groups = match_to_real(real, gen, notes, matching);
  if (g.generated_per_cell > 0) balance_candidates(spec, g, no, nr, groups, notes);

  // Region and country forms: every (balanced) candidate of the cell, pooled per region.
  GeneratedSets sets;
  sets.region.assign(3, std::vector<std::vector<std::uint32_t>>(nr));
  sets.cell.assign(3, std::vector<std::vector<std::vector<std::uint32_t>>>(
                          no, std::vector<std::vector<std::uint32_t>>(nr)));
  for (const Form f : {Form::ObjectRegion, Form::ObjectCountry}) {
    const int fi = static_cast<int>(f);
    for (std::size_t o = 0; o < no; ++o) {
      for (std::size_t r = 0; r < nr; ++r) {
        const auto& rows = groups[fi][o][r];
        if (rows.empty()) continue;
        sets.form_present[fi] = true;
        sets.cell[fi][o][r] = rows;
        sets.region[fi][r].insert(sets.region[fi][r].end(), rows.begin(), rows.end());
      }
    }
    for (auto& rows : sets.region[fi]) std::sort(rows.begin(), rows.end());
    sets.sampled[fi] = g.generated_per_cell > 0 ? "balanced per (object, region)"
                                                : "every generation of the region";
  }
  object_form_sets(spec, g, nr, real_count, groups, sets, notes);
  return sets;
}

}  // namespace vlbias::audits_internal
