// Caption salience (ViSAGe 3.2), stereotypical pull (ViSAGe 5) and the study's prompt
// manifest (visual_stereotypes.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/metrics/visual_stereotypes.h"
#include "vlbias/score/text_measures.h"

namespace vlbias {

// ------------------------------------------------------------------ salience

SalienceReport caption_salience(const Table& captions, const VisualAttributes& visual,
                                const VisualStereotypes& stereotypes, const CaptionOptions& o) {
  VLBIAS_CHECK(o.smoothing >= 0 && std::isfinite(o.smoothing), UsageError,
               "the salience smoothing must be a finite number >= 0, got {}", o.smoothing);
  VLBIAS_CHECK(!visual.attributes.empty(), InputError, "there are no visual attributes to find");
  VLBIAS_CHECK(captions.rows > 0, InputError, "'{}' has no captions", captions.source);
  const Column& image = captions.column(o.image_column);
  const Column& caption = captions.column(o.caption_column);
  const Column* identity =
      o.identity_column.empty() ? nullptr : &captions.column(o.identity_column);

  // Attributes as token sequences, indexed by their first token.
  const std::size_t V = visual.attributes.size();
  std::vector<std::vector<std::string>> tokens(V);
  std::unordered_map<std::string, std::vector<std::size_t>> by_first;
  for (std::size_t a = 0; a < V; ++a) {
    tokens[a] = tokenize(visual.attributes[a]);
    if (!tokens[a].empty()) by_first[tokens[a][0]].push_back(a);
  }

  // identity -> (count per attribute, captions containing it, captions)
  struct PerIdentity {
    std::vector<std::size_t> count, captions;
    std::size_t n_captions = 0;
  };
  std::map<std::string, PerIdentity> ids;
  std::vector<std::size_t> seen_in(V);
  for (std::size_t r = 0; r < captions.rows; ++r) {
    const std::string img = image.text(r);
    VLBIAS_CHECK(!img.empty(), InputError, "'{}' line {}: the {} cell is empty", captions.source,
                 captions.line_of_row[r], o.image_column);
    const std::string id = identity != nullptr ? identity->text(r) : identity_from_image_name(img);
    VLBIAS_CHECK(!id.empty(), InputError, "'{}' line {}: the {} cell is empty", captions.source,
                 captions.line_of_row[r], o.identity_column);
    PerIdentity& p = ids[id];
    if (p.count.empty()) {
      p.count.assign(V, 0);
      p.captions.assign(V, 0);
    }
    ++p.n_captions;
    const std::vector<std::string> words = tokenize(caption.text(r));
    std::fill(seen_in.begin(), seen_in.end(), 0);
    for (std::size_t i = 0; i < words.size(); ++i) {
      const auto it = by_first.find(words[i]);
      if (it == by_first.end()) continue;
      for (const std::size_t a : it->second) {
        const std::vector<std::string>& t = tokens[a];
        if (i + t.size() > words.size()) continue;
        if (!std::equal(t.begin() + 1, t.end(), words.begin() + static_cast<std::ptrdiff_t>(i) + 1))
          continue;
        ++p.count[a];
        seen_in[a] = 1;
      }
    }
    for (std::size_t a = 0; a < V; ++a) p.captions[a] += seen_in[a];
  }

  SalienceReport out;
  out.captions = captions.rows;
  out.vocabulary = V;
  const double N = static_cast<double>(ids.size());
  std::vector<double> idf(V);
  for (std::size_t a = 0; a < V; ++a) {
    std::size_t df = 0;
    for (const auto& [id, p] : ids) df += p.count[a] > 0 ? 1 : 0;
    idf[a] = std::log((1 + N) / (1 + static_cast<double>(df))) + 1;
  }
  for (const auto& [id, p] : ids) {
    out.identities.push_back(id);
    out.captions_per_identity.push_back(p.n_captions);
    double total = 0;
    for (std::size_t a = 0; a < V; ++a) total += static_cast<double>(p.count[a]);
    const double denominator = total + o.smoothing * static_cast<double>(V);
    std::vector<SalienceEntry> entries;
    for (std::size_t a = 0; a < V; ++a) {
      if (p.count[a] == 0) continue;
      SalienceEntry e;
      e.identity = id;
      e.attribute = visual.attributes[a];
      e.count = p.count[a];
      e.captions = p.captions[a];
      e.tf = (static_cast<double>(p.count[a]) + o.smoothing) / denominator;
      e.idf = idf[a];
      e.salience = e.tf * e.idf;
      e.stereotype = stereotypes.find(id, e.attribute) != nullptr;
      entries.push_back(std::move(e));
    }
    std::sort(entries.begin(), entries.end(), [](const SalienceEntry& x, const SalienceEntry& y) {
      return x.salience != y.salience ? x.salience > y.salience : x.attribute < y.attribute;
    });
    for (std::size_t i = 0; i < entries.size(); ++i) entries[i].rank = i + 1;
    for (SalienceEntry& e : entries) out.entries.push_back(std::move(e));
  }
  return out;
}

// ---------------------------------------------------------------- stereotypical pull

namespace {

enum class PromptSet { Default = 0, Stereo = 1, NonStereo = 2 };

PromptSet parse_set(const std::string& v, const Table& t, std::size_t row,
                    const std::string& column) {
  std::string s = v;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "default" || s == "d") return PromptSet::Default;
  if (s == "stereotypical" || s == "stereotype" || s == "s") return PromptSet::Stereo;
  if (s == "non-stereotypical" || s == "nonstereotypical" || s == "ns") return PromptSet::NonStereo;
  VLBIAS_FAIL(InputError,
              "'{}' line {}: column '{}' holds '{}'; expected default, stereotypical or "
              "non-stereotypical (or d, s, ns)",
              t.source, t.line_of_row[row], column, v);
}

// Mean of the unit rows `rows` (dim doubles).
std::vector<double> mean_row(const std::vector<double>& unit, std::size_t dim,
                             const std::vector<std::size_t>& rows) {
  std::vector<double> m(dim, 0.0);
  for (const std::size_t r : rows) {
    for (std::size_t j = 0; j < dim; ++j) m[j] += unit[r * dim + j];
  }
  for (double& x : m) x /= static_cast<double>(rows.size());
  return m;
}

double dot(const double* a, const double* b, std::size_t dim) {
  double s = 0;
  for (std::size_t j = 0; j < dim; ++j) s += a[j] * b[j];
  return s;
}

// S(X, X): mean cosine over pairs i != j, from |sum x|^2 - sum |x_i|^2.
double self_similarity(const std::vector<double>& unit, std::size_t dim,
                       const std::vector<std::size_t>& rows) {
  const std::size_t n = rows.size();
  if (n < 2) return stats::kNaN;
  std::vector<double> sum(dim, 0.0);
  double diagonal = 0;
  for (const std::size_t r : rows) {
    for (std::size_t j = 0; j < dim; ++j) sum[j] += unit[r * dim + j];
    diagonal += dot(&unit[r * dim], &unit[r * dim], dim);
  }
  return (dot(sum.data(), sum.data(), dim) - diagonal) / static_cast<double>(n * (n - 1));
}

}  // namespace

void check_pull_inputs(const Table& table, MatrixView embeddings, const PullOptions& o) {
  VLBIAS_CHECK(table.rows == embeddings.rows, InputError,
               "'{}' has {} rows but the embeddings have {}; row i of the table must be "
               "embedding row i",
               table.source, table.rows, embeddings.rows);
  VLBIAS_CHECK(table.rows > 0 && embeddings.cols > 0, InputError, "'{}': no images to compare",
               table.source);
  table.column(o.identity_column);
  table.column(o.set_column);
}

PullReport stereotypical_pull(const Table& table, MatrixView embeddings, const PullOptions& o) {
  check_pull_inputs(table, embeddings, o);
  VLBIAS_CHECK(o.permutations > 0, UsageError, "permutations must be at least 1");
  const Column& identity = table.column(o.identity_column);
  const Column& set = table.column(o.set_column);
  const std::size_t dim = embeddings.cols;

  // L2-normalised rows, in double.
  std::vector<double> unit(table.rows * dim);
  for (std::size_t r = 0; r < table.rows; ++r) {
    const float* x = embeddings.row(r);
    double norm = 0;
    for (std::size_t j = 0; j < dim; ++j) {
      VLBIAS_CHECK(std::isfinite(x[j]), InputError,
                   "embedding row {} (table '{}' line {}) holds a non-finite value at column {}", r,
                   table.source, table.line_of_row[r], j);
      norm += static_cast<double>(x[j]) * x[j];
    }
    VLBIAS_CHECK(norm > 0, InputError,
                 "embedding row {} (table '{}' line {}) is all zeros: its cosine is undefined", r,
                 table.source, table.line_of_row[r]);
    norm = std::sqrt(norm);
    for (std::size_t j = 0; j < dim; ++j) unit[r * dim + j] = x[j] / norm;
  }

  // identity -> rows of each set, in table order.
  std::map<std::string, std::array<std::vector<std::size_t>, 3>> rows_of;
  for (std::size_t r = 0; r < table.rows; ++r) {
    const std::string id = identity.text(r);
    VLBIAS_CHECK(!id.empty(), InputError, "'{}' line {}: the {} cell is empty", table.source,
                 table.line_of_row[r], o.identity_column);
    const PromptSet s = parse_set(set.text(r), table, r, o.set_column);
    rows_of[id][static_cast<std::size_t>(s)].push_back(r);
  }

  PullReport out;
  std::vector<double> p_values;
  std::size_t index = 0;
  for (const auto& [id, sets] : rows_of) {
    IdentityPull x;
    x.identity = id;
    const auto& d = sets[0];
    const auto& s = sets[1];
    const auto& ns = sets[2];
    x.n_default = d.size();
    x.n_stereo = s.size();
    x.n_nonstereo = ns.size();
    x.s_d_d = self_similarity(unit, dim, d);
    x.s_s_s = self_similarity(unit, dim, s);
    x.s_ns_ns = self_similarity(unit, dim, ns);
    for (std::size_t k = 0; k < 3; ++k) x.set_rows[k] = sets[k];
    if (!d.empty() && !s.empty() && !ns.empty()) {
      const std::vector<double> md = mean_row(unit, dim, d), ms = mean_row(unit, dim, s),
                                mns = mean_row(unit, dim, ns);
      x.s_d_s = dot(md.data(), ms.data(), dim);
      x.s_d_ns = dot(md.data(), mns.data(), dim);
      x.s_s_ns = dot(ms.data(), mns.data(), dim);
      x.mean_similarity = (x.s_d_s + x.s_d_ns + x.s_s_ns) / 3;
      x.pull = x.s_d_s - x.s_d_ns;
      for (const std::size_t r : d) {
        x.default_pull.push_back(dot(&unit[r * dim], ms.data(), dim) -
                                 dot(&unit[r * dim], mns.data(), dim));
      }
      // m_j: each stereotypical / non-stereotypical image's mean cosine to the defaults.
      std::vector<double> m;
      std::vector<std::uint32_t> labels;
      std::vector<std::size_t> both(s);
      both.insert(both.end(), ns.begin(), ns.end());
      std::sort(both.begin(), both.end());
      for (const std::size_t r : both) {
        m.push_back(dot(md.data(), &unit[r * dim], dim));
        labels.push_back(std::binary_search(s.begin(), s.end(), r) ? 0u : 1u);
      }
      x.test = stats::permutation_mean_difference(
          m, labels, o.permutations, derive_seed(derive_seed(o.seed, 2), index), o.alternative);
      x.rows = std::move(both);
      x.m = std::move(m);
      x.labels = std::move(labels);
      ++out.tested;
      out.positive += x.pull > 0 ? 1 : 0;
    }
    p_values.push_back(x.test.p_value);
    out.identities.push_back(std::move(x));
    ++index;
  }
  const std::vector<double> holm = stats::holm(p_values);
  const std::vector<double> bh = stats::benjamini_hochberg(p_values);
  for (std::size_t i = 0; i < out.identities.size(); ++i) {
    out.identities[i].p_holm = holm[i];
    out.identities[i].p_bh = bh[i];
  }
  return out;
}

// ------------------------------------------------------------------ prompts

namespace {

std::string replace_all(std::string text, std::string_view key, std::string_view value) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, from)) {
    out.append(text, from, at - from);
    out.append(value);
    from = at + key.size();
  }
  out.append(text, from, std::string::npos);
  return out;
}

// "{a}" -> the indefinite article of the word after it.
std::string fill_articles(std::string text) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = text.find("{a}"); at != std::string::npos; at = text.find("{a}", from)) {
    out.append(text, from, at - from);
    std::size_t w = at + 3;
    while (w < text.size() && text[w] == ' ') ++w;
    out.append(indefinite_article(std::string_view(text).substr(w)));
    from = at + 3;
  }
  out.append(text, from, std::string::npos);
  return out;
}

std::string fill(const std::string& tmpl, const std::string& id, const std::string& attr) {
  return fill_articles(replace_all(replace_all(tmpl, "{id}", id), "{attr}", attr));
}

}  // namespace

Table visual_stereotype_prompts(const VisualStereotypes& stereotypes,
                                const VisualAttributes& visual, const VisualPromptOptions& o) {
  for (const std::string& t : o.detection_templates) {
    VLBIAS_CHECK(t.find("{id}") != std::string::npos, UsageError,
                 "detection template '{}' has no {{id}}", t);
  }
  VLBIAS_CHECK(o.default_template.find("{id}") != std::string::npos, UsageError,
               "default template '{}' has no {{id}}", o.default_template);
  VLBIAS_CHECK(o.attribute_template.find("{id}") != std::string::npos &&
                   o.attribute_template.find("{attr}") != std::string::npos,
               UsageError, "attribute template '{}' needs both {{id}} and {{attr}}",
               o.attribute_template);
  VLBIAS_CHECK(o.images_per_prompt > 0, UsageError, "images per prompt must be at least 1");
  std::vector<std::string> text, identity, attribute, set, tmpl;
  const auto add = [&](const std::string& t, const std::string& id, const std::string& a,
                       const char* s, const std::string& tp) {
    text.push_back(fill(t, id, a));
    identity.push_back(id);
    attribute.push_back(a);
    set.push_back(s);
    tmpl.push_back(tp);
  };
  std::size_t index = 0;
  for (const auto& [id, list] : stereotypes.by_identity) {
    if (list.size() < o.min_stereotypes) continue;
    if (o.detection) {
      for (const std::string& t : o.detection_templates) add(t, id, "", "detection", t);
    }
    if (o.pull) {
      add(o.default_template, id, "", "default", o.default_template);
      for (const Stereotype& s : list) {
        add(o.attribute_template, id, s.attribute, "stereotypical", o.attribute_template);
      }
      std::vector<std::string> others;
      for (const std::string& a : visual.attributes) {
        if (stereotypes.find(id, a) == nullptr) others.push_back(a);
      }
      const std::size_t take = std::min(list.size(), others.size());
      Rng rng(derive_seed(o.seed, index), 0);
      for (std::size_t t = 0; t < take; ++t) {
        const std::size_t j = t + static_cast<std::size_t>(rng.uniform_index(others.size() - t));
        std::swap(others[t], others[j]);
        add(o.attribute_template, id, others[t], "non-stereotypical", o.attribute_template);
      }
    }
    ++index;
  }
  Table out;
  out.source = "<visual-stereotype prompts>";
  out.rows = text.size();
  out.line_of_row.resize(out.rows);
  for (std::size_t r = 0; r < out.rows; ++r) out.line_of_row[r] = r + 2;
  add_string_column(out, "text", text);
  add_string_column(out, "identity", identity);
  add_string_column(out, "attribute", attribute);
  add_string_column(out, "set", set);
  add_string_column(out, "template", tmpl);
  add_numeric_column(out, "images",
                     std::vector<double>(out.rows, static_cast<double>(o.images_per_prompt)));
  return out;
}

}  // namespace vlbias
