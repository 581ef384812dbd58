// The label distribution per prompt (analyses.distribution), and the image resampling behind
// every interval of the audit (representation_audit_internal.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "representation_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/representation_results.h"
#include "vlbias/stats/intervals.h"
#include "vlbias/stats/multinomial_intervals.h"

namespace vlbias::audits_internal {

std::string listed_names(const std::vector<std::string>& names, const char* separator) {
  constexpr std::size_t kShown = 20;
  if (names.size() <= kShown) return fmt::format("{}", fmt::join(names, separator));
  const std::vector<std::string> first(names.begin(), names.begin() + kShown);
  return fmt::format("{}{}and {} more", fmt::join(first, separator), separator,
                     names.size() - kShown);
}

std::vector<std::vector<std::uint32_t>> resample_prompt(const RepresentationData& d, std::size_t p,
                                                        std::size_t replicates,
                                                        std::uint64_t seed) {
  const std::size_t m = d.prompts[p].images.size();
  // Images with equal counts in every attribute are interchangeable (most show one face): each
  // replicate counts how often each distinct kind of image was drawn and adds its counts that
  // many times, instead of adding every drawn image's counts. The draws are the same.
  std::size_t total = 0;
  for (const RepresentationAttribute& a : d.attributes) total += a.classes.size() + 1;
  std::map<std::vector<std::uint32_t>, std::uint32_t> kinds;
  std::vector<std::uint32_t> kind_of(m);
  std::vector<std::uint32_t> key(total);
  for (std::size_t i = 0; i < m; ++i) {
    std::size_t at = 0;
    for (std::size_t a = 0; a < d.attributes.size(); ++a) {
      const std::size_t width = d.attributes[a].classes.size() + 1;
      for (std::size_t k = 0; k < width; ++k) key[at++] = d.counts[a][p][i * width + k];
    }
    kind_of[i] = kinds.emplace(key, static_cast<std::uint32_t>(kinds.size())).first->second;
  }
  std::vector<std::vector<std::uint32_t>> kind_counts(kinds.size());
  for (const auto& [counts, k] : kinds) kind_counts[k] = counts;
  std::vector<std::vector<std::uint32_t>> out(d.attributes.size());
  for (std::size_t a = 0; a < d.attributes.size(); ++a)
    out[a].assign(replicates * (d.attributes[a].classes.size() + 1), 0);
  std::vector<std::uint32_t> drawn(kinds.size());
  for (std::size_t b = 0; b < replicates; ++b) {
    Rng rng(derive_seed(seed, p), b);
    std::fill(drawn.begin(), drawn.end(), 0);
    for (std::size_t j = 0; j < m; ++j) ++drawn[kind_of[rng.uniform_index(m)]];
    for (std::size_t k = 0; k < drawn.size(); ++k) {
      if (drawn[k] == 0) continue;
      std::size_t at = 0;
      for (std::size_t a = 0; a < d.attributes.size(); ++a) {
        const std::size_t width = d.attributes[a].classes.size() + 1;
        std::uint32_t* sum = out[a].data() + b * width;
        for (std::size_t c = 0; c < width; ++c) sum[c] += drawn[k] * kind_counts[k][at++];
      }
    }
  }
  return out;
}

namespace {

// Per image of prompt p: whether it has any label row, over every attribute.
std::vector<bool> labelled_images(const RepresentationData& d, std::size_t p) {
  std::vector<bool> any(d.prompts[p].images.size(), false);
  for (std::size_t a = 0; a < d.attributes.size(); ++a) {
    const std::size_t width = d.attributes[a].classes.size() + 1;
    const std::vector<std::uint32_t>& c = d.counts[a][p];
    for (std::size_t j = 0; j < c.size(); ++j) {
      if (c[j] > 0) any[j / width] = true;
    }
  }
  return any;
}

std::vector<ShareInterval> share_intervals(const std::vector<stats::Interval>& v) {
  std::vector<ShareInterval> out;
  for (const stats::Interval& i : v) out.push_back({i.lower, i.upper});
  return out;
}

}  // namespace

AnalysisOutput representation_distribution(const AuditCommonSpec& spec,
                                           const RepresentationAuditSpec& r,
                                           const RepresentationData& d) {
  AnalysisOutput out;
  TableBuilder shares_table("representation_shares"), prompts_table("representation_prompts");
  DistributionSection section;
  section.interval = r.distribution.interval;
  section.ci = r.distribution.ci;
  section.unit = d.whole_images ? "image" : "face";
  section.labeller = d.labeller;
  std::vector<std::string> empty_prompts, small_prompts;
  // Images with a label row, per prompt (over every attribute): the same for each attribute.
  std::vector<double> with_rows_of(d.prompts.size());
  for (std::size_t p = 0; p < d.prompts.size(); ++p) {
    const std::vector<bool> labelled = labelled_images(d, p);
    with_rows_of[p] = static_cast<double>(std::count(labelled.begin(), labelled.end(), true));
  }
  for (std::size_t a = 0; a < d.attributes.size(); ++a) {
    const RepresentationAttribute& attr = d.attributes[a];
    const std::size_t k = attr.classes.size();
    DistributionAttribute& section_attr = section.attributes.emplace_back();
    section_attr.attribute = attr.name;
    section_attr.classes = attr.classes;
    for (const auto& [label, count] : attr.other_labels) {
      section_attr.other_labels.emplace_back(label, static_cast<double>(count));
    }
    for (std::size_t p = 0; p < d.prompts.size(); ++p) {
      const RepresentationPrompt& pr = d.prompts[p];
      const std::vector<std::uint64_t> all = prompt_counts(d, a, p);
      const std::vector<std::uint64_t> counts(all.begin(), all.begin() + static_cast<long>(k));
      std::uint64_t n = 0;
      for (const std::uint64_t c : counts) n += c;
      const double observations = static_cast<double>(n + all[k]);
      const double images = static_cast<double>(pr.images.size());
      const double with_rows = with_rows_of[p];
      double several = 0;
      for (const std::uint32_t f : d.faces[p]) several += f >= 2;
      DistributionPrompt& j = section_attr.prompts.emplace_back();
      j.prompt = pr.prompt;
      j.group = pr.group;
      j.key = pr.key;
      j.images = images;
      j.labelled_images = with_rows;
      if (!d.whole_images) j.no_face_rate = 1 - with_rows / images;
      if (!d.whole_images && with_rows != 0) j.several_faces_rate = several / with_rows;
      j.n = static_cast<double>(n);
      j.other = static_cast<double>(all[k]);
      if (observations > 0) j.other_rate = static_cast<double>(all[k]) / observations;
      for (const std::uint64_t c : counts) j.counts.push_back(static_cast<double>(c));
      j.small = n < spec.min_group_size;
      std::vector<stats::Interval> wilson(k), simultaneous(k);
      if (n > 0) {
        j.shares.emplace();
        for (std::size_t c = 0; c < k; ++c) {
          j.shares->push_back(static_cast<double>(counts[c]) / static_cast<double>(n));
          wilson[c] = stats::wilson_interval(counts[c], n, r.distribution.ci);
        }
        simultaneous = r.distribution.interval == "goodman"
                           ? stats::goodman_intervals(counts, r.distribution.ci)
                           : stats::sison_glaz_intervals(counts, r.distribution.ci);
        j.wilson = share_intervals(wilson);
        j.simultaneous = share_intervals(simultaneous);
        if (n < spec.min_group_size) small_prompts.push_back(attr.name + ": " + pr.prompt);
      } else {
        empty_prompts.push_back(attr.name + ": " + pr.prompt);
      }
      for (std::size_t c = 0; c < k; ++c) {
        shares_table.row();
        shares_table.put("attribute", attr.name);
        shares_table.put("prompt", pr.prompt);
        shares_table.put("group", pr.group);
        shares_table.put("class", attr.classes[c]);
        shares_table.put("count", static_cast<double>(counts[c]));
        shares_table.put("n", static_cast<double>(n));
        shares_table.put("share", n > 0 ? static_cast<double>(counts[c]) / n : stats::kNaN);
        shares_table.put("wilson_lower", wilson[c].lower);
        shares_table.put("wilson_upper", wilson[c].upper);
        shares_table.put("simultaneous_lower", simultaneous[c].lower);
        shares_table.put("simultaneous_upper", simultaneous[c].upper);
      }
      prompts_table.row();
      prompts_table.put("attribute", attr.name);
      prompts_table.put("prompt", pr.prompt);
      prompts_table.put("group", pr.group);
      prompts_table.put("images", images);
      prompts_table.put("labelled_images", with_rows);
      prompts_table.put("n", static_cast<double>(n));
      prompts_table.put("other", static_cast<double>(all[k]));
      prompts_table.put("no_face_rate",
                        std::isfinite(j.no_face_rate) ? j.no_face_rate : stats::kNaN);
      prompts_table.put("several_faces_rate",
                        std::isfinite(j.several_faces_rate) ? j.several_faces_rate : stats::kNaN);
    }
  }
  out.json = to_json(section);
  out.pilot.distribution = std::move(section);
  if (!empty_prompts.empty()) {
    out.notes.push_back(fmt::format(
        "distribution: {} prompt{} had no observation labelled with a class (their shares, "
        "measures and tests are undefined, never 0): {}",
        empty_prompts.size(), empty_prompts.size() == 1 ? "" : "s",
        listed_names(empty_prompts, "; ")));
  }
  if (!small_prompts.empty()) {
    out.notes.push_back(fmt::format(
        "distribution: {} prompt{} had fewer than min_group_size = {} labelled observations: {}",
        small_prompts.size(), small_prompts.size() == 1 ? "" : "s", spec.min_group_size,
        listed_names(small_prompts, "; ")));
  }
  out.tables.emplace_back("representation_shares", shares_table.build());
  out.tables.emplace_back("representation_prompts", prompts_table.build());
  return out;
}

}  // namespace vlbias::audits_internal
