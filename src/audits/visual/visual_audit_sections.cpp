// The sections of the visual-stereotypes audit (paper 000, ViSAGe; visual_audit_internal.h):
// the visual stereotypes used, likelihood / theta / offensiveness from annotations, salience
// from captions, and the stereotypical pull from image embeddings, each also by region.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "table_builder.h"
#include "visual_audit_internal.h"
#include "vlbias/report/summary.h"
#include "vlbias/report/visual_results.h"

namespace vlbias::audits_internal {

namespace {

const std::string kUnmapped = "(no region)";

std::string region_of(const std::map<std::string, std::string>& regions, const std::string& id) {
  const auto it = regions.find(id);
  return it == regions.end() ? kUnmapped : it->second;
}

double finite_or_nan(double x) {
  return std::isfinite(x) ? x : stats::kNaN;
}

void put_visual_interval(TableBuilder& t, const std::string& name, const stats::Interval& ci) {
  t.put(name + "_ci_lower", finite_or_nan(ci.lower));
  t.put(name + "_ci_upper", finite_or_nan(ci.upper));
}

// Mean of the finite values (NaN when none).
struct Mean {
  double sum = 0;
  std::size_t n = 0;
  void add(double x) {
    if (std::isfinite(x)) {
      sum += x;
      ++n;
    }
  }
  double value() const { return n > 0 ? sum / static_cast<double>(n) : stats::kNaN; }
};

using LikelihoodsByRegion = std::map<std::string, std::vector<const IdentityLikelihood*>>;

// The likelihood of every (identity, attribute) shown.
Table likelihood_attributes(const Annotations& ann, const LikelihoodReport& rep,
                            const std::map<std::string, std::string>& regions) {
  TableBuilder attrs("likelihood_attributes");
  for (const AttributeLikelihood& a : rep.attributes) {
    const std::string& id = ann.identities[a.identity];
    attrs.row();
    attrs.put("identity", id);
    attrs.put("region", region_of(regions, id));
    attrs.put("attribute", ann.attributes[a.attribute]);
    attrs.put("role", to_string(a.role));
    attrs.put("k", static_cast<double>(a.k));
    attrs.put("n", static_cast<double>(a.n));
    attrs.put("images", static_cast<double>(a.images));
    attrs.put("likelihood", a.likelihood);
  }
  return attrs.build();
}

// Each identity's likelihoods, theta and offensiveness, as entries and as rows of `ids`;
// collects the included identities by region, and those without a visual stereotype in SeeGULL.
std::vector<VisualLikelihoodIdentity> likelihood_identities(
    const Annotations& ann, const LikelihoodReport& rep,
    const std::map<std::string, std::string>& regions, const LikelihoodOptions& o,
    TableBuilder& ids, LikelihoodsByRegion& by_region, std::vector<std::string>& not_in_seegull) {
  std::vector<VisualLikelihoodIdentity> out;
  for (const IdentityLikelihood& x : rep.identities) {
    const std::string& id = ann.identities[x.identity];
    const std::string region = region_of(regions, id);
    if (x.visual_stereotypes == 0) not_in_seegull.push_back(id);
    if (x.included) by_region[region].push_back(&x);
    ids.row();
    ids.put("identity", id);
    ids.put("region", region);
    ids.put("included", x.included ? "yes" : "no");
    ids.put("visual_stereotypes", static_cast<double>(x.visual_stereotypes));
    ids.put("shown_stereotypes", static_cast<double>(x.shown_stereotypes));
    ids.put("shown_random", static_cast<double>(x.shown_random));
    ids.put("images", static_cast<double>(x.images));
    ids.put("present_stereotypes", static_cast<double>(x.present_stereotypes));
    ids.put("l_stereo", x.l_stereo);
    put_visual_interval(ids, "l_stereo", x.ci_l_stereo);
    ids.put("l_random", x.l_random);
    put_visual_interval(ids, "l_random", x.ci_l_random);
    ids.put("theta", finite_or_nan(x.theta));
    ids.put("theta_status", to_string(x.status));
    put_visual_interval(ids, "theta", x.ci_theta);
    ids.put("theta_ci_upper_infinite", std::isinf(x.ci_theta.upper) ? "yes" : "no");
    ids.put("offensiveness", x.offensiveness);
    put_visual_interval(ids, "offensiveness", x.ci_offensiveness);
    ids.put("mean_offensiveness", x.mean_offensiveness);
    VisualLikelihoodIdentity& e = out.emplace_back();
    e.identity = id;
    e.region = region;
    e.included = x.included;
    e.visual_stereotypes = static_cast<double>(x.visual_stereotypes);
    e.shown_stereotypes = static_cast<double>(x.shown_stereotypes);
    e.shown_random = static_cast<double>(x.shown_random);
    e.images = static_cast<double>(x.images);
    e.present_stereotypes = static_cast<double>(x.present_stereotypes);
    e.l_stereo = x.l_stereo;
    e.l_random = x.l_random;
    e.theta = x.theta;
    e.theta_status = to_string(x.status);
    e.offensiveness = x.offensiveness;
    e.mean_offensiveness = x.mean_offensiveness;
    if (o.bootstrap > 0) {
      e.ci = VisualLikelihoodIntervals{visual_interval(x.ci_l_stereo),
                                       visual_interval(x.ci_l_random), visual_interval(x.ci_theta),
                                       visual_interval(x.ci_offensiveness)};
    }
  }
  return out;
}

// By region: means over included identities, and the pooled ratio within the region.
std::vector<VisualLikelihoodRegion> likelihood_regions(const LikelihoodsByRegion& by_region,
                                                       TableBuilder& reg) {
  std::vector<VisualLikelihoodRegion> out;
  for (const auto& [region, list] : by_region) {
    Mean ls, lr, off, theta;
    std::size_t inf = 0, undef = 0;
    double sum_s = 0, sum_r = 0;
    for (const IdentityLikelihood* x : list) {
      ls.add(x->l_stereo);
      lr.add(x->l_random);
      off.add(x->offensiveness);
      theta.add(x->theta);
      inf += x->status == ThetaStatus::Infinite ? 1 : 0;
      undef += x->status == ThetaStatus::Undefined ? 1 : 0;
      if (std::isfinite(x->l_stereo) && std::isfinite(x->l_random)) {
        sum_s += x->l_stereo;
        sum_r += x->l_random;
      }
    }
    const double ratio = sum_r > 0 ? sum_s / sum_r : stats::kNaN;
    reg.row();
    reg.put("region", region);
    reg.put("identities", static_cast<double>(list.size()));
    reg.put("mean_l_stereo", ls.value());
    reg.put("mean_l_random", lr.value());
    reg.put("pooled_ratio", ratio);
    reg.put("mean_finite_theta", theta.value());
    reg.put("infinite", static_cast<double>(inf));
    reg.put("undefined", static_cast<double>(undef));
    reg.put("mean_offensiveness", off.value());
    out.push_back({region, static_cast<double>(list.size()), ls.value(), lr.value(), ratio,
                   theta.value(), static_cast<double>(inf), static_cast<double>(undef),
                   off.value()});
  }
  return out;
}

}  // namespace

AnalysisOutput stereotypes_section(const VisualAttributes& visual, const VisualStereotypes& st,
                                   const std::map<std::string, std::string>& regions,
                                   std::size_t min_stereotypes) {
  AnalysisOutput out;
  TableBuilder table("visual_stereotypes");
  for (const auto& [id, list] : st.by_identity) {
    for (const Stereotype& s : list) {
      table.row();
      table.put("identity", id);
      table.put("region", region_of(regions, id));
      table.put("attribute", s.attribute);
      table.put("offensiveness", s.offensiveness);
    }
  }
  const auto count = [](std::size_t n) { return static_cast<double>(n); };
  VisualStereotypesResult section;
  section.attribute_rows = count(visual.rows);
  section.attributes_distinct = count(visual.distinct);
  section.attributes_repeated = count(visual.repeated);
  section.rating_columns = visual.rating_columns;
  section.attributes_visual = count(visual.attributes.size());
  section.seegull_rows = count(st.seegull_rows);
  section.stereotype_rows = count(st.stereotype_rows);
  section.visual_stereotypes = count(st.visual_pairs);
  section.attributes_used = count(st.attributes_used);
  section.identities = count(st.by_identity.size());
  section.identities_with_one = count(st.by_identity.size() - st.identities_with_at_least(2));
  section.identities_with_more_than_one = count(st.identities_with_at_least(2));
  section.identities_with_at_least_min = count(st.identities_with_at_least(min_stereotypes));
  section.offensiveness_from_merged_column = count(st.offensiveness_from_merged);
  out.json = to_json(section);
  if (st.offensiveness_from_merged > 0) {
    out.notes.push_back(
        fmt::format("{} visual stereotypes have no Annotation1..3 offensiveness; their merged "
                    "'mean offensiveness_score' was used",
                    st.offensiveness_from_merged));
  }
  out.tables.emplace_back("visual_stereotypes", table.build());
  return out;
}

AnalysisOutput likelihood_section(const Annotations& ann, const LikelihoodReport& rep,
                                  const std::map<std::string, std::string>& regions,
                                  const LikelihoodOptions& o) {
  AnalysisOutput out;
  TableBuilder ids("likelihood_identities");
  LikelihoodsByRegion by_region;
  std::vector<std::string> not_in_seegull;
  VisualLikelihoodResult section;
  section.identities = likelihood_identities(ann, rep, regions, o, ids, by_region, not_in_seegull);
  TableBuilder reg("likelihood_regions");
  section.regions = likelihood_regions(by_region, reg);
  const PooledLikelihood& p = rep.pooled;
  const auto count = [](std::size_t n) { return static_cast<double>(n); };
  VisualLikelihoodPooled& pooled = section.pooled.emplace();
  pooled.identities = count(p.identities);
  pooled.finite = count(p.finite);
  pooled.infinite = count(p.infinite);
  pooled.undefined = count(p.undefined);
  pooled.ratio = p.ratio;
  pooled.mean_finite_theta = p.mean_finite_theta;
  pooled.median_theta = p.median_theta;
  pooled.median_theta_infinite = std::isinf(p.median_theta);
  if (o.bootstrap > 0) pooled.ci_ratio = visual_interval(p.ci_ratio);
  section.definition =
      "L(a,id) = k/n over judgements of a on id's images; theta = L(stereo)/L(random); "
      "O = L(stereo) x mean offensiveness of present stereotypes (ViSAGe 4.1)";
  section.aggregation = to_string(ann.aggregation);
  section.none_as_random = o.none_as_random;
  section.min_stereotypes = count(o.min_stereotypes);
  section.annotations = {
      count(ann.rows),           count(ann.empty_rows),        count(ann.runs),
      count(ann.duplicate_runs), count(ann.duplicate_rows),    count(ann.judgements.size()),
      count(ann.images.size()),  count(ann.identities.size()), count(ann.attributes.size())};
  out.json = to_json(section);
  if (ann.empty_rows > 0) {
    out.notes.push_back(
        fmt::format("{} annotation rows with neither image nor attribute were "
                    "skipped",
                    ann.empty_rows));
  }
  if (ann.duplicate_runs > 0) {
    out.notes.push_back(fmt::format(
        "{} annotation runs ({} rows) repeat an earlier run of the same task and image exactly "
        "and were dropped as export duplicates",
        ann.duplicate_runs, ann.duplicate_rows));
  }
  if (!not_in_seegull.empty()) {
    out.notes.push_back(fmt::format(
        "{} annotated identities have no visual stereotype in SeeGULL (check their names): {}",
        not_in_seegull.size(), fmt::join(not_in_seegull, ", ")));
  }
  if (p.infinite > 0) {
    out.notes.push_back(fmt::format(
        "{} identities have L(random) = 0 < L(stereo): theta is infinite (written null, "
        "theta_status infinite)",
        p.infinite));
  }
  out.tables.emplace_back("likelihood_attributes", likelihood_attributes(ann, rep, regions));
  out.tables.emplace_back("likelihood_identities", ids.build());
  out.tables.emplace_back("likelihood_regions", reg.build());
  return out;
}

AnalysisOutput salience_section(const Table& captions, const VisualAttributes& visual,
                                const VisualStereotypes& st, const Annotations* ann,
                                const LikelihoodReport* lik,
                                const std::map<std::string, std::string>& regions,
                                const CaptionOptions& o) {
  const SalienceReport rep = caption_salience(captions, visual, st, o);
  // L(a, id) from the annotations, when given (for the top stereotypes).
  std::map<std::pair<std::string, std::string>, double> likelihood;
  if (ann != nullptr && lik != nullptr) {
    for (const AttributeLikelihood& a : lik->attributes) {
      likelihood[{ann->identities[a.identity], ann->attributes[a.attribute]}] = a.likelihood;
    }
  }
  AnalysisOutput out;
  TableBuilder table("salience");
  VisualSalienceResult section;
  std::size_t top_total = 0, top_shown = 0, top_present = 0;
  std::size_t e = 0;
  for (std::size_t i = 0; i < rep.identities.size(); ++i) {
    const std::string& id = rep.identities[i];
    VisualSalienceIdentity& detail = section.identities_detail.emplace_back();
    detail.identity = id;
    detail.region = region_of(regions, id);
    detail.captions = static_cast<double>(rep.captions_per_identity[i]);
    std::vector<VisualSalienceTop>& top = detail.top_stereotypes;
    for (; e < rep.entries.size() && rep.entries[e].identity == id; ++e) {
      const SalienceEntry& x = rep.entries[e];
      const auto l = likelihood.find({id, x.attribute});
      table.row();
      table.put("identity", id);
      table.put("region", region_of(regions, id));
      table.put("attribute", x.attribute);
      table.put("stereotype", x.stereotype ? "yes" : "no");
      table.put("rank", static_cast<double>(x.rank));
      table.put("count", static_cast<double>(x.count));
      table.put("captions", static_cast<double>(x.captions));
      table.put("tf", x.tf);
      table.put("idf", x.idf);
      table.put("salience", x.salience);
      table.put("likelihood", l == likelihood.end() ? stats::kNaN : l->second);
      if (x.stereotype && top.size() < o.top) {
        VisualSalienceTop& t = top.emplace_back();
        t.attribute = x.attribute;
        t.rank = static_cast<double>(x.rank);
        t.salience = x.salience;
        t.count = static_cast<double>(x.count);
        ++top_total;
        if (l != likelihood.end()) {
          t.likelihood = l->second;
          ++top_shown;
          top_present += l->second > 0 ? 1 : 0;
        }
      }
    }
  }
  section.definition =
      "S(a,id) = tf(a,id) x idf(a): tf = (c + smoothing) / (sum c + smoothing x V), "
      "idf = ln((1 + N) / (1 + df)) + 1 over identities (ViSAGe 3.2)";
  section.smoothing = o.smoothing;
  section.top = static_cast<double>(o.top);
  section.captions = static_cast<double>(rep.captions);
  section.identities = static_cast<double>(rep.identities.size());
  section.vocabulary = static_cast<double>(rep.vocabulary);
  section.matches = static_cast<double>(rep.entries.size());
  section.top_stereotypes = static_cast<double>(top_total);
  if (ann != nullptr) {
    section.annotated = VisualSalienceAnnotated{
        static_cast<double>(top_shown), static_cast<double>(top_present),
        top_shown > 0 ? static_cast<double>(top_present) / top_shown : stats::kNaN};
  }
  out.json = to_json(section);
  out.tables.emplace_back("salience", table.build());
  return out;
}

namespace {

using PullsByRegion = std::map<std::string, std::vector<const IdentityPull*>>;

// Each identity's similarities, pull and permutation test, as entries and as rows of `ids`;
// collects the identities with a pull by region, and those without one.
std::vector<VisualPullIdentity> pull_identities(const PullReport& rep,
                                                const std::map<std::string, std::string>& regions,
                                                TableBuilder& ids, PullsByRegion& by_region,
                                                std::vector<std::string>& incomplete) {
  std::vector<VisualPullIdentity> out;
  for (const IdentityPull& x : rep.identities) {
    const std::string region = region_of(regions, x.identity);
    if (std::isnan(x.pull)) {
      incomplete.push_back(x.identity);
    } else {
      by_region[region].push_back(&x);
    }
    ids.row();
    ids.put("identity", x.identity);
    ids.put("region", region);
    ids.put("n_default", static_cast<double>(x.n_default));
    ids.put("n_stereotypical", static_cast<double>(x.n_stereo));
    ids.put("n_non_stereotypical", static_cast<double>(x.n_nonstereo));
    ids.put("s_d_s", x.s_d_s);
    ids.put("s_d_ns", x.s_d_ns);
    ids.put("s_s_ns", x.s_s_ns);
    ids.put("mean_similarity", x.mean_similarity);
    ids.put("pull", x.pull);
    ids.put("s_d_d", x.s_d_d);
    ids.put("s_s_s", x.s_s_s);
    ids.put("s_ns_ns", x.s_ns_ns);
    ids.put("p_value", x.test.p_value);
    ids.put("p_holm", x.p_holm);
    ids.put("p_bh", x.p_bh);
    VisualPullIdentity& e = out.emplace_back();
    e.identity = x.identity;
    e.region = region;
    e.n_default = static_cast<double>(x.n_default);
    e.n_stereotypical = static_cast<double>(x.n_stereo);
    e.n_non_stereotypical = static_cast<double>(x.n_nonstereo);
    e.s_d_s = x.s_d_s;
    e.s_d_ns = x.s_d_ns;
    e.s_s_ns = x.s_s_ns;
    e.mean_similarity = x.mean_similarity;
    e.pull = x.pull;
    e.s_d_d = x.s_d_d;
    e.s_s_s = x.s_s_s;
    e.s_ns_ns = x.s_ns_ns;
    e.test = {x.test.p_value, x.p_holm,
              x.p_bh,         stats::to_string(x.test.alternative),
              x.test.method,  static_cast<double>(x.test.resamples),
              x.test.seed};
  }
  return out;
}

// By region: means over the identities with a pull, and how many pull toward the stereotypes.
std::vector<VisualPullRegion> pull_regions(const PullsByRegion& by_region, TableBuilder& reg) {
  std::vector<VisualPullRegion> out;
  for (const auto& [region, list] : by_region) {
    Mean ds, dns, sns, mean, pull;
    std::size_t positive = 0, significant = 0;
    for (const IdentityPull* x : list) {
      ds.add(x->s_d_s);
      dns.add(x->s_d_ns);
      sns.add(x->s_s_ns);
      mean.add(x->mean_similarity);
      pull.add(x->pull);
      positive += x->pull > 0 ? 1 : 0;
      significant += x->p_holm <= 0.05 ? 1 : 0;
    }
    reg.row();
    reg.put("region", region);
    reg.put("identities", static_cast<double>(list.size()));
    reg.put("positive_pull", static_cast<double>(positive));
    reg.put("significant_holm_05", static_cast<double>(significant));
    reg.put("mean_s_d_s", ds.value());
    reg.put("mean_s_d_ns", dns.value());
    reg.put("mean_s_s_ns", sns.value());
    reg.put("mean_similarity", mean.value());
    reg.put("mean_pull", pull.value());
    out.push_back({region, static_cast<double>(list.size()), static_cast<double>(positive),
                   static_cast<double>(significant), ds.value(), dns.value(), sns.value(),
                   mean.value(), pull.value()});
  }
  return out;
}

}  // namespace

AnalysisOutput pull_section(const PullReport& rep,
                            const std::map<std::string, std::string>& regions,
                            const PullOptions& o) {
  AnalysisOutput out;
  TableBuilder ids("pull_identities");
  PullsByRegion by_region;
  std::vector<std::string> incomplete;
  VisualPullResult section;
  section.per_identity = pull_identities(rep, regions, ids, by_region, incomplete);
  TableBuilder reg("pull_regions");
  section.regions = pull_regions(by_region, reg);
  section.definition =
      "S(X,Y) = mean pairwise cosine of image embeddings; pull = S(d,s) - S(d,ns) "
      "(ViSAGe 5); permutation test of s/ns labels";
  section.identities = static_cast<double>(rep.identities.size());
  section.tested = static_cast<double>(rep.tested);
  section.positive_pull = static_cast<double>(rep.positive);
  section.permutations = static_cast<double>(o.permutations);
  section.alternative = stats::to_string(o.alternative);
  out.json = to_json(section);
  if (!incomplete.empty()) {
    out.notes.push_back(fmt::format(
        "{} identities lack a default, stereotypical or non-stereotypical image and have no "
        "pull: {}",
        incomplete.size(), fmt::join(incomplete, ", ")));
  }
  out.tables.emplace_back("pull_identities", ids.build());
  out.tables.emplace_back("pull_regions", reg.build());
  // Each identity's s/ns images with m_j: the units of its pull (summary.json).
  for (const IdentityPull& x : rep.identities) {
    if (x.m.empty()) continue;
    TableBuilder u("units");
    for (std::size_t j = 0; j < x.m.size(); ++j) {
      u.row();
      u.put("row", static_cast<double>(x.rows[j]));
      u.put("set", x.labels[j] == 0 ? "s" : "ns");
      u.put("m", x.m[j]);
    }
    out.units.emplace_back(units_table_name(kVisualPullSection, {x.identity}), u.build());
  }
  return out;
}

}  // namespace vlbias::audits_internal
