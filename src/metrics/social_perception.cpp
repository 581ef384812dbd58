// Image-text association metrics over a prompt manifest: cos / Delta cos per image
// and dimension, markedness (paper 001) and trait-pair confidence (paper 004).
#include "vlbias/metrics/social_perception.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"

namespace vlbias {

namespace {

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

PromptRole parse_role(const std::string& role, const std::string& word, const Table& table,
                      std::size_t row) {
  if (role.empty()) return word.empty() ? PromptRole::Neutral : PromptRole::Attribute;
  if (role == "attribute") return PromptRole::Attribute;
  if (role == "neutral") return PromptRole::Neutral;
  if (role == "group") return PromptRole::Group;
  VLBIAS_FAIL(InputError, "{} line {}: role '{}' is not one of attribute, neutral, group",
              table.source, table.line_of_row[row], role);
}

// Mean over `rows` of prompt_image_cos rows, per image, in double.
void add_rows(MatrixView cos, const std::vector<std::size_t>& rows, std::vector<double>& acc) {
  for (std::size_t r : rows) {
    const float* c = cos.row(r);
    for (std::size_t i = 0; i < cos.cols; ++i) acc[i] += c[i];
  }
}

}  // namespace

// ------------------------------------------------------------ prompt manifest

std::size_t PromptManifest::dimension_index(std::string_view label) const {
  for (std::size_t d = 0; d < dimensions.size(); ++d) {
    if (dimensions[d].label == label) return d;
  }
  std::vector<std::string> labels;
  for (const Dimension& d : dimensions) labels.push_back(d.label);
  VLBIAS_FAIL(InputError, "no dimension '{}' in the prompt manifest; it has: {}", label,
              fmt::join(labels, ", "));
}

PromptManifest parse_prompt_manifest(const Table& manifest) {
  for (const char* required : {"text", "word", "dimension", "valence", "template"}) {
    VLBIAS_CHECK(manifest.find(required).has_value(), InputError,
                 "prompt manifest {} has no column '{}'; a manifest needs text, word, dimension, "
                 "valence and template (see `vlbias prompts`)",
                 manifest.source, required);
  }
  VLBIAS_CHECK(manifest.rows > 0, InputError, "prompt manifest {} has no rows", manifest.source);
  const Column& text = manifest.column("text");
  const Column& word = manifest.column("word");
  const Column& dimension = manifest.column("dimension");
  const Column& valence = manifest.column("valence");
  const Column& templ = manifest.column("template");
  const std::optional<std::size_t> role_col = manifest.find("role");

  PromptManifest m;
  m.rows = manifest.rows;
  m.texts.resize(m.rows);
  m.words.resize(m.rows);
  m.roles.resize(m.rows);
  m.template_of_row.resize(m.rows);
  std::map<std::string, std::size_t> template_index;
  std::map<std::pair<std::string, std::string>, std::size_t> dimension_of_key;
  for (std::size_t r = 0; r < m.rows; ++r) {
    const std::size_t line = manifest.line_of_row[r];
    m.texts[r] = text.text(r);
    VLBIAS_CHECK(!m.texts[r].empty(), InputError, "{} line {}: the prompt text is empty",
                 manifest.source, line);
    m.words[r] = word.text(r);
    const std::string role_text = role_col ? manifest.columns[*role_col].text(r) : std::string();
    m.roles[r] = parse_role(role_text, m.words[r], manifest, r);
    const std::string t = templ.text(r);
    auto [it, inserted] = template_index.emplace(t, m.templates.size());
    if (inserted) {
      m.templates.push_back(t);
      m.neutral_of_template.push_back(PromptManifest::kNone);
    }
    m.template_of_row[r] = it->second;
    const std::string dim = dimension.text(r);
    const std::string val = valence.text(r);
    switch (m.roles[r]) {
      case PromptRole::Neutral: {
        std::size_t& slot = m.neutral_of_template[it->second];
        VLBIAS_CHECK(slot == PromptManifest::kNone, InputError,
                     "{} line {}: a second neutral prompt for template '{}' (the first is on line "
                     "{})",
                     manifest.source, line, t, manifest.line_of_row[slot]);
        slot = r;
        break;
      }
      case PromptRole::Attribute: {
        VLBIAS_CHECK(!dim.empty(), InputError,
                     "{} line {}: attribute prompt '{}' has an empty dimension", manifest.source,
                     line, m.texts[r]);
        VLBIAS_CHECK(val.empty() || val == "+" || val == "-", InputError,
                     "{} line {}: valence '{}' is not '+', '-' or empty", manifest.source, line,
                     val);
        auto [d, added] = dimension_of_key.emplace(std::pair{dim, val}, m.dimensions.size());
        if (added) m.dimensions.push_back({"", dim, val, {}});
        m.dimensions[d->second].rows.push_back(r);
        break;
      }
      case PromptRole::Group:
        VLBIAS_CHECK(!m.words[r].empty(), InputError,
                     "{} line {}: group-naming prompt '{}' has an empty word", manifest.source,
                     line, m.texts[r]);
        m.group_prompts.push_back({dim, m.words[r], r, it->second});
        break;
    }
  }
  // A dimension name with one valence keeps its name ("warmth"); with two, each pole
  // is its own dimension ("agency+", "agency-"), as the paper's eight dimensions.
  std::map<std::string, std::size_t> valences_of_name;
  for (const auto& d : m.dimensions) ++valences_of_name[d.dimension];
  for (auto& d : m.dimensions) {
    d.label = valences_of_name[d.dimension] > 1 ? d.dimension + d.valence : d.dimension;
  }
  return m;
}

void check_prompt_rows(MatrixView prompt_image_cos, const PromptManifest& manifest,
                       std::string_view prompts_name) {
  VLBIAS_CHECK(prompt_image_cos.rows == manifest.rows, InputError,
               "{} has {} prompt embeddings but the manifest has {} rows; row i of the "
               "embeddings must be the prompt on manifest row i",
               prompts_name, prompt_image_cos.rows, manifest.rows);
}

Matrix prompt_image_cosines(MatrixView prompts, MatrixView images, const PromptManifest& manifest,
                            std::string_view prompts_name, std::string_view images_name) {
  check_prompt_rows(prompts, manifest, prompts_name);
  VLBIAS_CHECK(prompts.cols == images.cols, InputError,
               "dimension mismatch: {} holds {}-d prompt embeddings but {} holds {}-d image "
               "embeddings; both must come from the same model",
               prompts_name, prompts.cols, images_name, images.cols);
  const auto check_rows = [](MatrixView m, std::string_view name) {
    const std::vector<double> norms = row_norms(m);
    for (std::size_t i = 0; i < norms.size(); ++i) {
      VLBIAS_CHECK(norms[i] > 0.0, InputError,
                   "row {} of {} is all zeros, so its cosine similarity is undefined", i, name);
    }
  };
  check_rows(prompts, prompts_name);
  check_rows(images, images_name);
  return cosine_matrix(prompts, images);
}

// ------------------------------------------------------------------ associate

ImageDimensionScores associate(MatrixView cos, const PromptManifest& manifest, bool require_delta) {
  VLBIAS_CHECK(cos.rows == manifest.rows, InternalError,
               "associate: {} cosine rows for {} manifest rows", cos.rows, manifest.rows);
  VLBIAS_CHECK(!manifest.dimensions.empty(), InputError,
               "the prompt manifest has no attribute prompts, so there is no dimension to score");
  ImageDimensionScores out;
  out.images = cos.cols;
  const std::size_t dims = manifest.dimensions.size();
  for (const auto& d : manifest.dimensions) out.dimensions.push_back(d.label);

  // Delta cos needs the neutral prompt of every template a dimension uses.
  out.has_delta = true;
  for (const auto& d : manifest.dimensions) {
    for (std::size_t r : d.rows) {
      const std::size_t t = manifest.template_of_row[r];
      if (manifest.neutral_of_template[t] != PromptManifest::kNone) continue;
      VLBIAS_CHECK(!require_delta, InputError,
                   "dimension '{}' uses template '{}', which has no neutral prompt, so Delta cos "
                   "(cosine minus the neutral prompt's) is undefined; add a neutral row (empty "
                   "word) for it",
                   d.label, manifest.templates[t]);
      out.has_delta = false;
    }
  }

  out.cos.assign(out.images * dims, 0.0);
  if (out.has_delta) out.delta_cos.assign(out.images * dims, 0.0);
  std::vector<double> acc(out.images), neutral(out.images);
  for (std::size_t d = 0; d < dims; ++d) {
    const auto& rows = manifest.dimensions[d].rows;
    std::fill(acc.begin(), acc.end(), 0.0);
    add_rows(cos, rows, acc);
    const double k = static_cast<double>(rows.size());
    // Hausladen et al. Eq. 1: cos(i, D) = mean over words and templates of cosines.
    for (std::size_t i = 0; i < out.images; ++i) out.cos[i * dims + d] = acc[i] / k;
    if (!out.has_delta) continue;
    // Eq. 2: Delta cos(i, D) = mean over d, t of [cos(i, text(d,t)) - cos(i, neutral_t)],
    // i.e. the cos mean minus the mean of each prompt's own template's neutral cosine.
    std::fill(neutral.begin(), neutral.end(), 0.0);
    for (std::size_t r : rows) {
      const float* c = cos.row(manifest.neutral_of_template[manifest.template_of_row[r]]);
      for (std::size_t i = 0; i < out.images; ++i) neutral[i] += c[i];
    }
    for (std::size_t i = 0; i < out.images; ++i) {
      out.delta_cos[i * dims + d] = (acc[i] - neutral[i]) / k;
    }
  }
  return out;
}

// ----------------------------------------------------------------- markedness

MarkednessReport markedness(MatrixView cos, const PromptManifest& manifest, const Table& table,
                            const MarkednessOptions& options) {
  VLBIAS_CHECK(cos.rows == manifest.rows, InternalError,
               "markedness: {} cosine rows for {} manifest rows", cos.rows, manifest.rows);
  VLBIAS_CHECK(table.rows == cos.cols, InputError,
               "image table {} has {} rows but there are {} image embeddings", table.source,
               table.rows, cos.cols);
  VLBIAS_CHECK(!options.attributes.empty(), UsageError,
               "markedness needs at least one attribute column (e.g. race)");
  VLBIAS_CHECK(!manifest.group_prompts.empty(), InputError,
               "the prompt manifest has no group-naming prompts (role 'group'), which markedness "
               "compares with the neutral prompt; write them with `vlbias prompts "
               "social-perception`");
  MarkednessReport report;
  report.templates = manifest.templates;
  const std::size_t n_templates = manifest.templates.size();
  std::size_t task = 0;
  for (const std::string& attribute : options.attributes) {
    const Grouping grouping = group_by(table, {attribute});
    report.rows_missing_key += grouping.rows_with_missing_key;
    for (std::size_t g = 0; g < grouping.size(); ++g, ++task) {
      MarkednessGroup out;
      out.attribute = attribute;
      out.level = grouping.keys[g][0];
      out.n = grouping.sizes[g];
      out.small = out.n < options.min_group_size;
      out.percent_by_template.assign(n_templates, stats::kNaN);
      // The group prompt per template: prefer prompts whose dimension is this
      // attribute, then any prompt with the same word.
      const std::string level = lower_ascii(out.level);
      std::vector<std::size_t> group_row(n_templates, PromptManifest::kNone);
      for (int pass = 0; pass < 2; ++pass) {
        for (const auto& gp : manifest.group_prompts) {
          if (lower_ascii(gp.word) != level) continue;
          if (pass == 0 && gp.attribute != attribute) continue;
          if (group_row[gp.template_index] == PromptManifest::kNone) {
            group_row[gp.template_index] = gp.row;
            out.word = gp.word;
          }
        }
        if (!out.word.empty()) break;
      }
      std::vector<std::size_t> templates;  // those with both a neutral and a group prompt
      for (std::size_t t = 0; t < n_templates; ++t) {
        if (group_row[t] != PromptManifest::kNone &&
            manifest.neutral_of_template[t] != PromptManifest::kNone) {
          templates.push_back(t);
        }
      }
      if (templates.empty()) {
        out.note = out.word.empty()
                       ? fmt::format("no group-naming prompt has the word '{}'", out.level)
                       : fmt::format("no template has both a neutral and a '{}' prompt", out.word);
        report.groups.push_back(std::move(out));
        continue;
      }
      std::vector<double> indicator;  // 100 when marked, 0 otherwise, per image
      indicator.reserve(out.n);
      std::vector<std::size_t> marked_by_template(n_templates, 0);
      for (std::size_t i = 0; i < table.rows; ++i) {
        if (grouping.group_of_row[i] != g) continue;
        double neutral = 0.0, group = 0.0;
        for (std::size_t t : templates) {
          const double cn = cos.row(manifest.neutral_of_template[t])[i];
          const double cg = cos.row(group_row[t])[i];
          neutral += cn;
          group += cg;
          if (cn > cg) ++marked_by_template[t];
        }
        // Wolfe and Caliskan (2022): marked when the neutral prompt scores strictly higher.
        const bool marked = neutral > group;
        out.marked += marked ? 1 : 0;
        indicator.push_back(marked ? 100.0 : 0.0);
      }
      const double n = static_cast<double>(out.n);
      out.percent = 100.0 * static_cast<double>(out.marked) / n;
      for (std::size_t t : templates) {
        out.percent_by_template[t] = 100.0 * static_cast<double>(marked_by_template[t]) / n;
      }
      if (options.bootstrap > 0) {
        out.ci = stats::bootstrap_mean_ci(indicator, options.bootstrap, options.ci_level,
                                          derive_seed(options.seed, task));
      }
      report.groups.push_back(std::move(out));
    }
  }
  return report;
}

// ------------------------------------------------------------ trait confidence

ConfidenceScale parse_confidence_scale(std::string_view name) {
  if (name == "raw") return ConfidenceScale::Raw;
  if (name == "logit") return ConfidenceScale::Logit;
  VLBIAS_FAIL(UsageError, "unknown confidence scale '{}'; expected raw or logit", name);
}

const char* to_string(ConfidenceScale scale) {
  return scale == ConfidenceScale::Raw ? "raw" : "logit";
}

TraitConfidence trait_confidence(MatrixView cos, const PromptManifest& manifest,
                                 ConfidenceScale scale, double logit_scale) {
  VLBIAS_CHECK(cos.rows == manifest.rows, InternalError,
               "trait_confidence: {} cosine rows for {} manifest rows", cos.rows, manifest.rows);
  VLBIAS_CHECK(std::isfinite(logit_scale) && logit_scale > 0, UsageError,
               "the logit scale must be a finite number > 0, not {}", logit_scale);
  const double factor = scale == ConfidenceScale::Logit ? logit_scale : 1.0;
  // Pair each "+" pole with the "-" pole of the same dimension name.
  std::vector<std::pair<std::size_t, std::size_t>> poles;
  TraitConfidence out;
  out.images = cos.cols;
  for (std::size_t d = 0; d < manifest.dimensions.size(); ++d) {
    const auto& pos = manifest.dimensions[d];
    if (pos.valence != "+") continue;
    for (std::size_t e = 0; e < manifest.dimensions.size(); ++e) {
      const auto& neg = manifest.dimensions[e];
      if (neg.valence != "-" || neg.dimension != pos.dimension) continue;
      poles.emplace_back(d, e);
      out.pairs.push_back(pos.dimension);
      auto words = [&](const PromptManifest::Dimension& dim) {
        std::vector<std::string> w;
        for (std::size_t r : dim.rows) {
          if (std::find(w.begin(), w.end(), manifest.words[r]) == w.end()) {
            w.push_back(manifest.words[r]);
          }
        }
        return fmt::format("{}", fmt::join(w, "|"));
      };
      out.first.push_back(words(pos));
      out.second.push_back(words(neg));
    }
  }
  VLBIAS_CHECK(!poles.empty(), InputError,
               "the prompt manifest has no trait pair (a dimension with both a '+' and a '-' "
               "valence); write one with `vlbias prompts trait-pairs`");
  const std::size_t n_pairs = poles.size();
  out.confidence.assign(out.images * n_pairs, 0.0);
  std::vector<double> s0(out.images), s1(out.images);
  for (std::size_t p = 0; p < n_pairs; ++p) {
    const auto& pos = manifest.dimensions[poles[p].first];
    const auto& neg = manifest.dimensions[poles[p].second];
    std::fill(s0.begin(), s0.end(), 0.0);
    std::fill(s1.begin(), s1.end(), 0.0);
    add_rows(cos, pos.rows, s0);
    add_rows(cos, neg.rows, s1);
    const double k0 = static_cast<double>(pos.rows.size());
    const double k1 = static_cast<double>(neg.rows.size());
    for (std::size_t i = 0; i < out.images; ++i) {
      // Baherwani and Vincent: softmax over the two captions' scores,
      // exp(s0) / (exp(s0) + exp(s1)) = 1 / (1 + exp(s1 - s0)) (no overflow).
      const double diff = factor * (s1[i] / k1 - s0[i] / k0);
      out.confidence[i * n_pairs + p] = 1.0 / (1.0 + std::exp(diff));
    }
  }
  return out;
}

}  // namespace vlbias
