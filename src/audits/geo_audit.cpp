// `vlbias audit` for kind: geo-diversity (paper 002, DIG-In): the Region, Object-Region and
// Object-Consistency indicators per prompt form, with bootstrap intervals and region gaps,
// plus FID/KID/Vendi per region. How sets are composed: include/vlbias/audits/geo_diversity.h.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "run_output.h"
#include "table_builder.h"
#include "vlbias/audits/audit.h"
#include "vlbias/audits/audit_analyses.h"
#include "vlbias/core/blas.h"
#include "vlbias/metrics/clipscore.h"
#include "vlbias/metrics/distribution_metrics.h"
#include "vlbias/io/embeddings.h"
#include "vlbias/core/error.h"
#include "vlbias/audits/geo_diversity.h"
#include "vlbias/report/json_output.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/metrics/prdc.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table.h"

namespace vlbias {

namespace {

using audits_internal::TableBuilder;
using Spec = AuditSpec::Geo;

enum class Form : int { Object = 0, ObjectRegion = 1, ObjectCountry = 2 };
constexpr Form kForms[] = {Form::Object, Form::ObjectRegion, Form::ObjectCountry};

const char* form_name(Form f) {
  switch (f) {
    case Form::Object:
      return "object";
    case Form::ObjectRegion:
      return "object-region";
    case Form::ObjectCountry:
      return "object-country";
  }
  return "object";
}

const char* form_template(Form f) {
  switch (f) {
    case Form::Object:
      return "{object}";
    case Form::ObjectRegion:
      return "{object} in {region}";
    case Form::ObjectCountry:
      return "{object} in {country}";
  }
  return "{object}";
}

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
};

std::uint64_t cell_seed(std::uint64_t seed, GeoSeed stream, std::uint64_t cell) {
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

std::string first_few(const std::set<std::string>& s) {
  std::string out;
  std::size_t n = 0;
  for (const std::string& v : s) {
    if (n == 8) {
      out += fmt::format(", ... ({} in all)", s.size());
      break;
    }
    out += (n++ ? ", '" : "'") + v + "'";
  }
  return out;
}

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

// Groups of identical feature rows among `rows` (each of size >= 2), in order of first row.
std::vector<std::vector<std::uint32_t>> duplicate_groups(MatrixView x,
                                                         const std::vector<std::uint32_t>& rows) {
  const std::size_t bytes = x.cols * sizeof(float);
  std::unordered_map<std::string_view, std::vector<std::uint32_t>> by_bytes;
  std::vector<std::string_view> order;
  for (const std::uint32_t r : rows) {
    const std::string_view key(reinterpret_cast<const char*>(x.row(r)), bytes);
    auto [it, inserted] = by_bytes.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(r);
  }
  std::vector<std::vector<std::uint32_t>> out;
  for (const std::string_view key : order) {
    if (by_bytes[key].size() > 1) out.push_back(by_bytes[key]);
  }
  return out;
}

RealData load_real(const AuditSpec& spec, std::vector<std::string>& notes) {
  const Spec& g = spec.geo;
  RealData d;
  const Table table = read_table(g.real_table.string());
  const Matrix x = read_embeddings(g.real_features.path, g.real_features.tensor);
  VLBIAS_CHECK(table.rows == x.rows, InputError,
               "{} has {} rows but {} has {} feature rows; expected one row per real image.",
               table.source, table.rows, g.real_features.path.string(), x.rows);
  const Column& rc = table.column(g.real_region_column);
  const Column& oc = table.column(g.real_object_column);
  d.rows_read = table.rows;
  std::vector<std::uint32_t> rows;
  std::vector<std::string> region(table.rows), object(table.rows);
  for (std::size_t i = 0; i < table.rows; ++i) {
    region[i] = rc.text(i);
    object[i] = oc.text(i);
    if (region[i].empty() || object[i].empty()) {
      ++d.missing_labels;
      continue;
    }
    rows.push_back(static_cast<std::uint32_t>(i));
  }
  if (d.missing_labels > 0) {
    notes.push_back(fmt::format("{} real rows without a region or object label were left out",
                                d.missing_labels));
  }
  const auto groups = duplicate_groups(x, rows);
  d.duplicate_groups = groups.size();
  std::vector<bool> removed(table.rows, false);
  for (const auto& grp : groups) {
    d.duplicate_rows += grp.size();
    for (std::size_t i = g.duplicates == "keep-one" ? 1 : 0; i < grp.size(); ++i) {
      if (g.duplicates != "keep") removed[grp[i]] = true;
    }
  }
  std::vector<std::uint32_t> kept;
  for (const std::uint32_t r : rows) {
    if (!removed[r]) kept.push_back(r);
  }
  d.duplicates_removed = rows.size() - kept.size();
  if (d.duplicate_groups > 0) {
    notes.push_back(fmt::format(
        "real features: {} groups of identical rows ({} rows); duplicates: {} ({} rows removed)",
        d.duplicate_groups, d.duplicate_rows, g.duplicates, d.duplicates_removed));
  }
  if (g.real_per_cell > 0) {
    // Balanced: real_per_cell rows per (region, object) cell, cells in label order.
    std::map<std::pair<std::string, std::string>, std::vector<std::uint32_t>> cells;
    for (const std::uint32_t r : kept) cells[{region[r], object[r]}].push_back(r);
    std::vector<std::uint32_t> balanced;
    std::size_t cell = 0, short_cells = 0;
    for (const auto& [key, members] : cells) {
      const auto drawn = sample_rows(members, g.real_per_cell,
                                          cell_seed(spec.seed, kSeedRealSampling, cell++));
      short_cells += members.size() < g.real_per_cell ? 1 : 0;
      balanced.insert(balanced.end(), drawn.begin(), drawn.end());
    }
    std::sort(balanced.begin(), balanced.end());
    d.balanced_out = kept.size() - balanced.size();
    if (short_cells > 0) {
      notes.push_back(fmt::format(
          "sampling.real_per_cell: {} of {} real (object, region) cells have fewer than {} "
          "images and keep all of them",
          short_cells, cells.size(), g.real_per_cell));
    }
    kept = std::move(balanced);
  }
  VLBIAS_CHECK(!kept.empty(), InputError, "{}: no real image is left to compare with.",
               table.source);
  d.features = select_rows(x, kept);
  std::vector<std::string> kept_regions, kept_objects;
  for (const std::uint32_t r : kept) {
    kept_regions.push_back(region[r]);
    kept_objects.push_back(object[r]);
  }
  d.regions = std::make_unique<Labels>(kept_regions);
  d.objects = std::make_unique<Labels>(kept_objects);
  d.rows_of_region.resize(d.regions->names.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    d.region_id.push_back(d.regions->find(kept_regions[i]));
    d.object_id.push_back(d.objects->find(kept_objects[i]));
    d.rows_of_region[d.region_id.back()].push_back(static_cast<std::uint32_t>(i));
  }
  return d;
}

struct GeneratedData {
  Matrix features;
  Matrix clip;  // rows = features.rows when any source has clip, else empty
  std::vector<std::uint8_t> has_clip;
  std::vector<Form> form;
  std::vector<std::string> region;      // aliased ("" = none)
  std::vector<std::string> object;      // aliased
  std::vector<std::string> raw_object;  // as in the table (the prompt's text)
  std::vector<std::string> country;
  std::size_t rows_read = 0, missing_object = 0, missing_region = 0;
  std::vector<std::size_t> per_form = std::vector<std::size_t>(3, 0);
};

Form parse_form_cell(const std::string& v, const Table& t, std::size_t row,
                     const std::string& column) {
  if (v == "object" || v == "{object}") return Form::Object;
  if (v == "object-region" || v == "{object} in {region}") return Form::ObjectRegion;
  if (v == "object-country" || v == "{object} in {country}") return Form::ObjectCountry;
  VLBIAS_FAIL(InputError,
              "{} line {}: column '{}' holds '{}'; expected object, object-region or "
              "object-country (or their templates).",
              t.source, t.line_of_row[row], column, v);
}

std::string aliased(const std::vector<std::pair<std::string, std::string>>& aliases,
                    const std::string& v) {
  for (const auto& [from, to] : aliases) {
    if (from == v) return to;
  }
  return v;
}

GeneratedData load_generated(const AuditSpec& spec, std::size_t dim,
                             std::vector<std::string>& notes) {
  const Spec& g = spec.geo;
  GeneratedData d;
  std::vector<Matrix> parts, clip_parts;
  std::size_t clip_dim = 0;
  const bool any_clip = std::any_of(g.generated.begin(), g.generated.end(),
                                    [](const GeoSource& s) { return !s.clip.path.empty(); });
  for (const GeoSource& src : g.generated) {
    const Table t = read_table(src.table.string());
    Matrix f = read_embeddings(src.features.path, src.features.tensor);
    VLBIAS_CHECK(t.rows == f.rows, InputError,
                 "{} has {} rows but {} has {} feature rows; expected one row per generated "
                 "image.",
                 t.source, t.rows, src.features.path.string(), f.rows);
    VLBIAS_CHECK(f.cols == dim, InputError,
                 "{} has {} columns but the real features have {}; both must come from the same "
                 "feature extractor.",
                 src.features.path.string(), f.cols, dim);
    Matrix c;
    if (!src.clip.path.empty()) {
      c = read_embeddings(src.clip.path, src.clip.tensor);
      VLBIAS_CHECK(c.rows == t.rows, InputError,
                   "{} has {} rows but {} has {}; expected one CLIP embedding per generated "
                   "image.",
                   src.clip.path.string(), c.rows, t.source, t.rows);
      VLBIAS_CHECK(clip_dim == 0 || c.cols == clip_dim, InputError,
                   "{} has {} columns but an earlier CLIP file has {}.", src.clip.path.string(),
                   c.cols, clip_dim);
      clip_dim = c.cols;
    }
    const Column& oc = t.column(src.object_column);
    const auto optional_text = [&](const std::string& name) {
      std::vector<std::string> v(t.rows);
      if (const auto idx = t.find(name)) {
        for (std::size_t i = 0; i < t.rows; ++i) v[i] = t.columns[*idx].text(i);
      }
      return v;
    };
    const std::vector<std::string> region = optional_text(src.region_column);
    const std::vector<std::string> country = optional_text(src.country_column);
    const bool form_column = src.form.empty() && t.find(src.form_column).has_value();
    const std::vector<std::string> form_text =
        form_column ? optional_text(src.form_column) : std::vector<std::string>(t.rows);
    std::vector<std::uint32_t> kept;
    for (std::size_t i = 0; i < t.rows; ++i) {
      ++d.rows_read;
      const std::string object = oc.text(i);
      if (object.empty()) {
        ++d.missing_object;
        continue;
      }
      Form form;
      if (!src.form.empty()) {
        form = parse_form_cell(src.form, t, i, "form");
      } else if (!form_text[i].empty()) {
        form = parse_form_cell(form_text[i], t, i, src.form_column);
      } else {
        form = !country[i].empty()  ? Form::ObjectCountry
               : !region[i].empty() ? Form::ObjectRegion
                                    : Form::Object;
      }
      if (form != Form::Object && region[i].empty()) {
        ++d.missing_region;
        continue;
      }
      kept.push_back(static_cast<std::uint32_t>(i));
      d.form.push_back(form);
      ++d.per_form[static_cast<int>(form)];
      d.region.push_back(form == Form::Object ? "" : aliased(g.region_aliases, region[i]));
      d.raw_object.push_back(object);
      d.object.push_back(aliased(g.object_aliases, object));
      d.country.push_back(country[i]);
      d.has_clip.push_back(c.rows > 0 ? 1 : 0);
    }
    // Every row kept (the usual case): take the matrices as read instead of copying them.
    const bool all = kept.size() == f.rows;
    parts.push_back(all ? std::move(f) : select_rows(f, kept));
    clip_parts.push_back(c.rows == 0 ? Matrix(kept.size(), 0)
                         : all       ? std::move(c)
                                     : select_rows(c, kept));
  }
  std::size_t total = 0;
  for (const Matrix& p : parts) total += p.rows;
  VLBIAS_CHECK(total > 0, InputError,
               "the generated tables hold no usable row (each needs an "
               "object, and a region unless its form is object).");
  if (parts.size() == 1) {  // one source: no concatenation
    d.features = std::move(parts[0]);
    if (clip_dim > 0) d.clip = std::move(clip_parts[0]);
  } else {
    d.features = Matrix(total, dim);
    if (any_clip && clip_dim > 0) d.clip = Matrix(total, clip_dim);
    std::size_t at = 0;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      std::memcpy(d.features.row(at), parts[p].data.data(), parts[p].data.size() * 4);
      if (clip_parts[p].cols > 0) {
        std::memcpy(d.clip.row(at), clip_parts[p].data.data(), clip_parts[p].data.size() * 4);
      }
      at += parts[p].rows;
      parts[p] = Matrix();  // release each source once copied
      clip_parts[p] = Matrix();
    }
  }
  if (d.missing_object > 0) {
    notes.push_back(
        fmt::format("{} generated rows without an object label were left out", d.missing_object));
  }
  if (d.missing_region > 0) {
    notes.push_back(fmt::format(
        "{} generated rows of the region or country form had no region label and were left out "
        "(country prompts are merged by the region column)",
        d.missing_region));
  }
  return d;
}

// ------------------------------------------------------------------- generated sets

// The generated rows of each (form, region) and (form, object, region) cell, as the header
// describes.
struct GeneratedSets {
  // [form][region]: rows of the region indicator's generated set
  std::vector<std::vector<std::vector<std::uint32_t>>> region;
  // [form][object][region]
  std::vector<std::vector<std::vector<std::vector<std::uint32_t>>>> cell;
  std::vector<bool> form_present = std::vector<bool>(3, false);
  std::vector<std::string> sampled = std::vector<std::string>(3);  // how, per form
};

GeneratedSets compose_sets(const AuditSpec& spec, const RealData& real, const GeneratedData& gen,
                           std::vector<std::string>& notes, Json& matching) {
  const Spec& g = spec.geo;
  const std::size_t nr = real.regions->names.size(), no = real.objects->names.size();
  // Real counts per (object, region).
  std::vector<std::vector<std::size_t>> real_count(no, std::vector<std::size_t>(nr, 0));
  for (std::size_t i = 0; i < real.features.rows; ++i)
    ++real_count[real.object_id[i]][real.region_id[i]];

  // Matching generated rows to the real labels.
  std::set<std::string> unknown_objects, unknown_regions;
  std::vector<std::uint32_t> obj(gen.features.rows, Labels::kNone),
      reg(gen.features.rows, Labels::kNone);
  std::size_t unmatched = 0;
  // [form][object][region] candidate rows (region index unused for the object form: 0)
  std::vector<std::vector<std::vector<std::vector<std::uint32_t>>>> groups(
      3, std::vector<std::vector<std::vector<std::uint32_t>>>(
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

  // Balanced sampling of the generated candidates.
  if (g.generated_per_cell > 0) {
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
  // Object form: object-mix matched samples.
  const int fo = static_cast<int>(Form::Object);
  std::vector<std::vector<std::uint32_t>> pools(no);
  for (std::size_t o = 0; o < no; ++o) {
    pools[o] = groups[fo][o][0];
    if (!pools[o].empty()) sets.form_present[fo] = true;
  }
  if (sets.form_present[fo]) {
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
        sets.cell[fo][o][r] = sample_rows(
            pools[o], real_count[o][r], cell_seed(spec.seed, kSeedObjectMix, nr + r * no + o));
      }
    }
    sets.sampled[fo] = g.generated_per_cell > 0
                           ? "object-mix matched, from the balanced per-object pool"
                           : "object-mix matched sample of the {object} generations";
    if (scaled > 0) {
      notes.push_back(fmt::format(
          "object form: in {} region(s) some object has fewer {{object}} generations than real "
          "images; the matched samples were scaled down to keep the real object mix",
          scaled));
    }
  }
  return sets;
}

// ------------------------------------------------------------------------ analyses

struct RegionCell {
  Form form = Form::Object;
  std::size_t region = 0;
  std::size_t n_real = 0, n_generated = 0;
  bool computed = false;
  PrdcResult prdc;
  PrdcIntervals intervals;
  std::string note;
};

Json interval_json(const stats::Interval& ci) {
  return Json{{"lower", json_number(ci.lower)}, {"upper", json_number(ci.upper)}};
}

// PRDC of one cell against precomputed real radii, with bootstrap intervals.
void measure_cell(RegionCell& c, const Matrix& real, const std::vector<double>& radii,
                  const Matrix& gen_features, const std::vector<std::uint32_t>& rows,
                  const Spec::Manifold& m, std::uint64_t seed) {
  c.n_generated = rows.size();
  if (rows.empty()) {
    c.note = "no generated images";
    return;
  }
  PrdcOptions o;
  o.k = m.k;
  o.rule = m.inclusive ? BallRule::Inclusive : BallRule::Strict;
  o.per_sample = true;
  o.ball_members = true;
  const Matrix fake = select_rows(gen_features, rows);
  c.prdc = prdc_with_real_radii(real, radii, fake, o);
  c.note = c.prdc.note;
  if (m.bootstrap > 0) c.intervals = prdc_bootstrap(c.prdc, m.bootstrap, m.ci, seed);
  c.computed = true;
  // The per-sample vectors are only needed for the bootstrap.
  c.prdc.members.clear();
  c.prdc.members.shrink_to_fit();
  c.prdc.members_offsets.clear();
  c.prdc.fake_ball_count.clear();
}

void put_cell(TableBuilder& t, const RegionCell& c, std::size_t min_size) {
  t.put("n_real", static_cast<double>(c.n_real));
  t.put("n_generated", static_cast<double>(c.n_generated));
  const auto v = [&](double x) { return c.computed ? x : stats::kNaN; };
  t.put("precision", v(c.prdc.precision));
  t.put("precision_lower", v(c.intervals.precision.lower));
  t.put("precision_upper", v(c.intervals.precision.upper));
  t.put("coverage", v(c.prdc.coverage));
  t.put("coverage_lower", v(c.intervals.coverage.lower));
  t.put("coverage_upper", v(c.intervals.coverage.upper));
  t.put("recall", v(c.prdc.recall));
  t.put("density", v(c.prdc.density));
  t.put("density_lower", v(c.intervals.density.lower));
  t.put("density_upper", v(c.intervals.density.upper));
  t.put("small", c.n_real < min_size || c.n_generated < min_size ? "true" : "false");
  t.put("note", c.note);
}

Json cell_json(const RegionCell& c, std::size_t min_size) {
  Json j{{"n_real", c.n_real}, {"n_generated", c.n_generated}};
  if (c.computed) {
    j["precision"] = json_number(c.prdc.precision);
    j["precision_ci"] = interval_json(c.intervals.precision);
    j["coverage"] = json_number(c.prdc.coverage);
    j["coverage_ci"] = interval_json(c.intervals.coverage);
    j["recall"] = json_number(c.prdc.recall);
    j["density"] = json_number(c.prdc.density);
    j["density_ci"] = interval_json(c.intervals.density);
  } else {
    for (const char* k : {"precision", "coverage", "recall", "density"}) j[k] = nullptr;
  }
  if (c.n_real < min_size || c.n_generated < min_size) j["small"] = true;
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

using Section = AnalysisOutput;

// Gaps between every pair of regions, per form and metric; Holm and BH over the table.
struct GapRow {
  std::string form, metric, a, b;
  double value_a = 0.0, value_b = 0.0;
  Gap gap;
};

Section gap_section(std::vector<GapRow> rows, const std::string& table_name) {
  std::vector<double> p;
  for (const GapRow& r : rows) p.push_back(r.gap.p_value);
  const std::vector<double> holm = stats::holm(p), bh = stats::benjamini_hochberg(p);
  Section s;
  TableBuilder t(table_name);
  Json arr = Json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const GapRow& r = rows[i];
    t.row();
    t.put("form", r.form);
    t.put("metric", r.metric);
    t.put("region_a", r.a);
    t.put("region_b", r.b);
    t.put("value_a", r.value_a);
    t.put("value_b", r.value_b);
    t.put("difference", r.gap.difference);
    t.put("ci_lower", r.gap.ci.lower);
    t.put("ci_upper", r.gap.ci.upper);
    t.put("se", r.gap.se);
    t.put("p_value", r.gap.p_value);
    t.put("p_holm", holm[i]);
    t.put("p_bh", bh[i]);
    arr.push_back(Json{{"form", r.form},
                       {"metric", r.metric},
                       {"region_a", r.a},
                       {"region_b", r.b},
                       {"difference", json_number(r.gap.difference)},
                       {"ci", interval_json(r.gap.ci)},
                       {"se", json_number(r.gap.se)},
                       {"p_value", json_number(r.gap.p_value)},
                       {"p_holm", json_number(holm[i])},
                       {"p_bh", json_number(bh[i])}});
  }
  s.json = arr;
  s.tables.emplace_back(table_name, t.build());
  return s;
}

struct RegionOutputs {
  Section section, gaps;
};

RegionOutputs region_analysis(const AuditSpec& spec, const RealData& real, const GeneratedData& gen,
                              const GeneratedSets& sets, std::vector<std::string>& notes) {
  const Spec::Manifold& m = spec.geo.region;
  const std::size_t nr = real.regions->names.size();
  const std::vector<std::vector<std::uint32_t>>& real_rows = real.rows_of_region;
  std::vector<RegionCell> cells;
  Progress progress("region indicator", nr);
  for (std::size_t r = 0; r < nr; ++r) {
    const Matrix real_r = select_rows(real.features, real_rows[r]);
    std::vector<double> radii;
    const bool enough = real_r.rows > m.k;
    if (enough) radii = knn_radii_squared(real_r, m.k, "real features");
    for (const Form f : kForms) {
      const int fi = static_cast<int>(f);
      if (!sets.form_present[fi]) continue;
      RegionCell c;
      c.form = f;
      c.region = r;
      c.n_real = real_r.rows;
      if (!enough) {
        c.n_generated = sets.region[fi][r].size();
        c.note = fmt::format("{} real images: the k-th neighbour (k = {}) needs at least {}",
                             real_r.rows, m.k, m.k + 1);
      } else {
        measure_cell(c, real_r, radii, gen.features, sets.region[fi][r], m,
                     cell_seed(spec.seed, kSeedRegionBootstrap, fi * nr + r));
      }
      cells.push_back(std::move(c));
    }
    progress.advance();
  }
  progress.finish();

  RegionOutputs out;
  TableBuilder t("geo_region");
  Json forms = Json::array();
  for (const Form f : kForms) {
    const int fi = static_cast<int>(f);
    if (!sets.form_present[fi]) continue;
    Json regions = Json::array();
    for (const RegionCell& c : cells) {
      if (c.form != f) continue;
      t.row();
      t.put("form", form_name(f));
      t.put("region", real.regions->names[c.region]);
      put_cell(t, c, spec.min_group_size);
      Json j{{"region", real.regions->names[c.region]}};
      j.update(cell_json(c, spec.min_group_size));
      regions.push_back(j);
    }
    forms.push_back(Json{{"form", form_name(f)},
                         {"prompt", form_template(f)},
                         {"generated_sets", sets.sampled[fi]},
                         {"regions", regions}});
  }
  out.section.json = Json{{"k", m.k},
                          {"ball", m.inclusive ? "inclusive (d <= r)" : "strict (d < r)"},
                          {"bootstrap", m.bootstrap},
                          {"ci", m.ci},
                          {"resampled", "generated images of each cell (real manifold fixed)"},
                          {"forms", forms}};
  out.section.tables.emplace_back("geo_region", t.build());

  std::vector<GapRow> gaps;
  if (m.bootstrap > 0) {
    for (const Form f : kForms) {
      for (const char* metric : {"precision", "coverage"}) {
        const bool precision = std::string(metric) == "precision";
        for (std::size_t a = 0; a < cells.size(); ++a) {
          for (std::size_t b = a + 1; b < cells.size(); ++b) {
            const RegionCell& ca = cells[a];
            const RegionCell& cb = cells[b];
            if (ca.form != f || cb.form != f || !ca.computed || !cb.computed) continue;
            GapRow g;
            g.form = form_name(f);
            g.metric = metric;
            g.a = real.regions->names[ca.region];
            g.b = real.regions->names[cb.region];
            g.value_a = precision ? ca.prdc.precision : ca.prdc.coverage;
            g.value_b = precision ? cb.prdc.precision : cb.prdc.coverage;
            g.gap = bootstrap_gap(
                g.value_a,
                precision ? ca.intervals.precision_replicates : ca.intervals.coverage_replicates,
                g.value_b,
                precision ? cb.intervals.precision_replicates : cb.intervals.coverage_replicates,
                m.ci);
            gaps.push_back(std::move(g));
          }
        }
      }
    }
  } else {
    notes.push_back("region gaps skipped: analyses.region.bootstrap is 0");
  }
  out.gaps = gap_section(std::move(gaps), "geo_region_gaps");
  return out;
}

Section object_region_analysis(const AuditSpec& spec, const RealData& real,
                               const GeneratedData& gen, const GeneratedSets& sets,
                               std::vector<std::string>& notes) {
  const Spec::Manifold& m = spec.geo.object_region;
  const std::size_t nr = real.regions->names.size(), no = real.objects->names.size();
  std::vector<std::vector<std::uint32_t>> real_rows(no * nr);
  for (std::size_t i = 0; i < real.features.rows; ++i) {
    real_rows[real.object_id[i] * nr + real.region_id[i]].push_back(static_cast<std::uint32_t>(i));
  }
  struct Task {
    std::size_t object, region;
    Form form;
  };
  std::vector<Task> tasks;
  std::size_t too_few = 0;
  for (std::size_t o = 0; o < no; ++o) {
    for (std::size_t r = 0; r < nr; ++r) {
      if (real_rows[o * nr + r].empty()) continue;
      if (real_rows[o * nr + r].size() <= m.k) ++too_few;
      for (const Form f : kForms) {
        if (sets.form_present[static_cast<int>(f)]) tasks.push_back({o, r, f});
      }
    }
  }
  std::vector<RegionCell> cells(tasks.size());
  Progress progress("object-region indicator", tasks.size());
  // One task per real cell and form; PRDC inside runs serially (nested parallel region).
  parallel_for(tasks.size(), [&](std::size_t t) {
    const Task& task = tasks[t];
    RegionCell& c = cells[t];
    c.form = task.form;
    c.region = task.region;
    const auto& rrows = real_rows[task.object * nr + task.region];
    const auto& grows = sets.cell[static_cast<int>(task.form)][task.object][task.region];
    c.n_real = rrows.size();
    c.n_generated = grows.size();
    if (rrows.size() <= m.k) {
      c.note = fmt::format("{} real images: the k-th neighbour (k = {}) needs at least {}",
                           rrows.size(), m.k, m.k + 1);
    } else {
      const Matrix real_c = select_rows(real.features, rrows);
      const std::vector<double> radii = knn_radii_squared(real_c, m.k, "real features");
      measure_cell(
          c, real_c, radii, gen.features, grows, m,
          cell_seed(spec.seed, kSeedObjectRegionBootstrap,
                    (static_cast<std::size_t>(task.form) * no + task.object) * nr + task.region));
    }
    progress.advance();
  });
  progress.finish();
  if (too_few > 0) {
    notes.push_back(fmt::format(
        "object-region: {} real (object, region) cells have k = {} or fewer images and get no "
        "indicator",
        too_few, m.k));
  }
  Section s;
  TableBuilder t("geo_object_region");
  Json rows = Json::array();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const Task& task = tasks[i];
    t.row();
    t.put("form", form_name(task.form));
    t.put("object", real.objects->names[task.object]);
    t.put("region", real.regions->names[task.region]);
    put_cell(t, cells[i], spec.min_group_size);
    Json j{{"form", form_name(task.form)},
           {"object", real.objects->names[task.object]},
           {"region", real.regions->names[task.region]}};
    j.update(cell_json(cells[i], spec.min_group_size));
    rows.push_back(j);
  }
  s.json = Json{{"k", m.k},
                {"ball", m.inclusive ? "inclusive (d <= r)" : "strict (d < r)"},
                {"bootstrap", m.bootstrap},
                {"ci", m.ci},
                {"cells", rows}};
  s.tables.emplace_back("geo_object_region", t.build());
  return s;
}

// Object text embedding row per generated row (Labels::kNone when the object has none).
std::vector<std::uint32_t> object_text_rows(const AuditSpec& spec, const GeneratedData& gen,
                                            const Table& objects, std::set<std::string>& missing) {
  const Column& col = objects.column(spec.geo.objects_column);
  std::map<std::string, std::uint32_t> row_of;
  for (std::size_t i = 0; i < objects.rows; ++i) {
    const std::string v = col.text(i);
    VLBIAS_CHECK(!v.empty(), InputError, "{} line {}: the object column '{}' is empty.",
                 objects.source, objects.line_of_row[i], spec.geo.objects_column);
    VLBIAS_CHECK(row_of.emplace(v, static_cast<std::uint32_t>(i)).second, InputError,
                 "{} line {}: object '{}' appears twice; each object text needs one row.",
                 objects.source, objects.line_of_row[i], v);
  }
  std::vector<std::uint32_t> out(gen.features.rows, Labels::kNone);
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto it = row_of.find(gen.raw_object[i]);
    if (it == row_of.end()) it = row_of.find(gen.object[i]);
    if (it != row_of.end()) {
      out[i] = it->second;
    } else if (gen.has_clip[i]) {
      missing.insert(gen.raw_object[i]);
    }
  }
  return out;
}

struct ConsistencyOutputs {
  Section section, gaps;
};

ConsistencyOutputs consistency_analysis(const AuditSpec& spec, const GeneratedData& gen,
                                        const GeneratedSets& sets,
                                        std::vector<std::string>& notes) {
  const Spec::Consistency& c = spec.geo.consistency;
  const Table objects = read_table(spec.geo.objects_table.string());
  const Matrix texts =
      read_embeddings(spec.geo.objects_embeddings.path, spec.geo.objects_embeddings.tensor);
  VLBIAS_CHECK(objects.rows == texts.rows, InputError,
               "{} has {} rows but {} has {}; expected one text embedding per object.",
               objects.source, objects.rows, spec.geo.objects_embeddings.path.string(), texts.rows);
  VLBIAS_CHECK(texts.cols == gen.clip.cols, InputError,
               "{} has {} columns but the generated CLIP embeddings have {}; both must come from "
               "the same CLIP model.",
               spec.geo.objects_embeddings.path.string(), texts.cols, gen.clip.cols);
  std::set<std::string> missing;
  const std::vector<std::uint32_t> text_row = object_text_rows(spec, gen, objects, missing);
  if (!missing.empty()) {
    notes.push_back(fmt::format(
        "consistency: generated objects without a text embedding in {} (not scored): {}",
        objects.source, first_few(missing)));
  }
  // Which rows enter: all scored rows, or the balanced selection when balancing is on.
  std::vector<bool> selected(gen.features.rows, spec.geo.generated_per_cell == 0);
  if (spec.geo.generated_per_cell > 0) {
    for (const auto& per_form : sets.cell)
      for (const auto& per_object : per_form)
        for (const auto& rows : per_object)
          for (const std::uint32_t r : rows) selected[r] = true;
  }
  const auto without_clip = static_cast<std::size_t>(
      std::count(gen.has_clip.begin(), gen.has_clip.end(), std::uint8_t{0}));
  if (without_clip > 0) {
    notes.push_back(fmt::format(
        "consistency: {} generated rows come from sources without clip embeddings and are not "
        "scored",
        without_clip));
  }
  std::vector<std::uint32_t> rows, trow;
  for (std::size_t i = 0; i < gen.features.rows; ++i) {
    if (selected[i] && gen.has_clip[i] && text_row[i] != Labels::kNone) {
      rows.push_back(static_cast<std::uint32_t>(i));
      trow.push_back(text_row[i]);
    }
  }
  const ClipScoreVariant variant = parse_clipscore_variant(c.variant);
  const Matrix images = select_rows(gen.clip, rows);
  std::vector<std::size_t> trow_size(trow.begin(), trow.end());
  const ClipScores scores = clipscores(images, texts, trow_size, variant);

  ConsistencyOutputs out;
  TableBuilder summary("geo_consistency"), per_object("geo_consistency_objects");
  Json forms = Json::array();
  std::vector<GapRow> gaps;
  for (const Form f : kForms) {
    // strata: object -> scores, and (region, object) -> scores
    std::map<std::string, std::vector<double>> by_object;
    std::map<std::string, std::map<std::string, std::vector<double>>> by_region;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::uint32_t i = rows[k];
      if (gen.form[i] != f) continue;
      by_object[gen.object[i]].push_back(scores.score[k]);
      if (f != Form::Object) by_region[gen.region[i]][gen.object[i]].push_back(scores.score[k]);
    }
    if (by_object.empty()) continue;
    const int fi = static_cast<int>(f);
    const auto indicator = [&](const std::map<std::string, std::vector<double>>& strata,
                               std::uint64_t cell, const std::string& region) {
      std::vector<std::vector<double>> v;
      std::size_t n = 0;
      for (const auto& [o, s] : strata) {
        v.push_back(s);
        n += s.size();
      }
      PercentileMean pm =
          percentile_mean(v, c.percentile, c.bootstrap, c.ci,
                               cell_seed(spec.seed, kSeedConsistencyBootstrap, cell));
      summary.row();
      summary.put("form", form_name(f));
      summary.put("region", region);
      summary.put("objects", static_cast<double>(v.size()));
      summary.put("n", static_cast<double>(n));
      summary.put("indicator", pm.value);
      summary.put("ci_lower", pm.ci.lower);
      summary.put("ci_upper", pm.ci.upper);
      std::size_t i = 0;
      for (const auto& [o, s] : strata) {
        per_object.row();
        per_object.put("form", form_name(f));
        per_object.put("region", region);
        per_object.put("object", o);
        per_object.put("n", static_cast<double>(s.size()));
        per_object.put("percentile", pm.per_stratum[i++]);
      }
      return std::make_pair(pm, n);
    };
    const auto [overall, n_all] = indicator(by_object, fi * 100000, "all");
    Json regions = Json::array();
    std::vector<std::tuple<std::string, double, std::vector<double>>> region_values;
    std::size_t ri = 0;
    for (const auto& [region, strata] : by_region) {
      const auto [pm, n] = indicator(strata, fi * 100000 + 1 + ri++, region);
      regions.push_back(Json{{"region", region},
                             {"objects", strata.size()},
                             {"n", n},
                             {"indicator", json_number(pm.value)},
                             {"ci", interval_json(pm.ci)}});
      region_values.emplace_back(region, pm.value, pm.replicates);
    }
    for (std::size_t a = 0; a < region_values.size() && c.bootstrap > 0; ++a) {
      for (std::size_t b = a + 1; b < region_values.size(); ++b) {
        GapRow g;
        g.form = form_name(f);
        g.metric = "consistency";
        g.a = std::get<0>(region_values[a]);
        g.b = std::get<0>(region_values[b]);
        g.value_a = std::get<1>(region_values[a]);
        g.value_b = std::get<1>(region_values[b]);
        g.gap = bootstrap_gap(g.value_a, std::get<2>(region_values[a]), g.value_b,
                                   std::get<2>(region_values[b]), c.ci);
        gaps.push_back(std::move(g));
      }
    }
    Json fj{{"form", form_name(f)},
            {"prompt", form_template(f)},
            {"objects", by_object.size()},
            {"n", n_all},
            {"indicator", json_number(overall.value)},
            {"ci", interval_json(overall.ci)}};
    if (!regions.empty()) fj["regions"] = regions;
    forms.push_back(fj);
  }
  out.section.json = Json{{"variant", to_string(variant)},
                          {"text", "\"{object}\" (one CLIP text embedding per object)"},
                          {"percentile", c.percentile},
                          {"aggregate", "mean over objects of the per-object percentile"},
                          {"bootstrap", c.bootstrap},
                          {"ci", c.ci},
                          {"resampled", "generated images within each object (and region)"},
                          {"scored", rows.size()},
                          {"forms", forms}};
  out.section.tables.emplace_back("geo_consistency", summary.build());
  out.section.tables.emplace_back("geo_consistency_objects", per_object.build());
  out.gaps = gap_section(std::move(gaps), "geo_consistency_gaps");
  return out;
}

Section distribution_analysis(const AuditSpec& spec, const RealData& real, const GeneratedData& gen,
                              const GeneratedSets& sets) {
  const Spec::Distribution& d = spec.geo.distribution;
  const std::size_t nr = real.regions->names.size();
  const std::vector<std::vector<std::uint32_t>>& real_rows = real.rows_of_region;
  struct Task {
    Form form;
    std::size_t region;
  };
  std::vector<Task> tasks;
  for (const Form f : kForms) {
    if (!sets.form_present[static_cast<int>(f)]) continue;
    for (std::size_t r = 0; r < nr; ++r) tasks.push_back({f, r});
  }
  struct Result {
    std::size_t n_real = 0, n_gen = 0;
    double fid = stats::kNaN, kid = stats::kNaN, kid_sd = stats::kNaN;
    double vendi_gen = stats::kNaN;
    std::string note;
  };
  std::vector<Result> results(tasks.size());
  std::vector<double> vendi_real(nr, stats::kNaN);
  std::vector<GaussianFit> real_fit(nr);
  Progress progress("distribution metrics", tasks.size() + nr);
  // First every region's real set (its Vendi score and Gaussian fit, shared by the forms).
  parallel_for(nr, [&](std::size_t r) {
    if (real_rows[r].size() >= 2) {
      const Matrix re = select_rows(real.features, real_rows[r]);
      if (d.vendi) vendi_real[r] = vendi(re).score;
      if (d.fid) real_fit[r] = fit_gaussian(re);
    }
    progress.advance();
  });
  parallel_for(tasks.size(), [&](std::size_t t) {
    const Task& task = tasks[t];
    Result& res = results[t];
    const auto& grows = sets.region[static_cast<int>(task.form)][task.region];
    res.n_real = real_rows[task.region].size();
    res.n_gen = grows.size();
    if (res.n_gen < 2 || res.n_real < 2) {
      res.note = "fewer than 2 images on a side";
    } else {
      const Matrix fake = select_rows(gen.features, grows);
      if (d.fid) res.fid = fid(real_fit[task.region], fit_gaussian(fake)).fid;
      if (d.vendi) res.vendi_gen = vendi(fake).score;
      if (d.kid) {
        KidOptions o;
        o.subsets = d.kid_subsets;
        o.subset_size = d.kid_subset_size;
        o.seed =
            cell_seed(spec.seed, kSeedKid, static_cast<std::size_t>(task.form) * nr + task.region);
        const KidResult k =
            kid(select_rows(real.features, real_rows[task.region]), fake, o);
        res.kid = k.kid;
        res.kid_sd = k.sd;
        if (!k.note.empty()) res.note = k.note;
      }
    }
    progress.advance();
  });
  progress.finish();
  Section s;
  TableBuilder t("geo_distribution");
  Json rows = Json::array();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const Result& r = results[i];
    const std::string region = real.regions->names[tasks[i].region];
    t.row();
    t.put("form", form_name(tasks[i].form));
    t.put("region", region);
    t.put("n_real", static_cast<double>(r.n_real));
    t.put("n_generated", static_cast<double>(r.n_gen));
    t.put("fid", r.fid);
    t.put("kid", r.kid);
    t.put("kid_sd", r.kid_sd);
    t.put("vendi_generated", r.vendi_gen);
    t.put("vendi_real", vendi_real[tasks[i].region]);
    t.put("note", r.note);
    Json j{{"form", form_name(tasks[i].form)},
           {"region", region},
           {"n_real", r.n_real},
           {"n_generated", r.n_gen}};
    if (d.fid) j["fid"] = json_number(r.fid);
    if (d.kid) {
      j["kid"] = json_number(r.kid);
      j["kid_sd"] = json_number(r.kid_sd);
    }
    if (d.vendi) {
      j["vendi_generated"] = json_number(r.vendi_gen);
      j["vendi_real"] = json_number(vendi_real[tasks[i].region]);
    }
    if (!r.note.empty()) j["note"] = r.note;
    rows.push_back(j);
  }
  s.json = Json{{"fid", d.fid}, {"kid", d.kid}, {"vendi", d.vendi}, {"cells", rows}};
  if (d.kid) {
    s.json["kid_subsets"] = d.kid_subsets;
    s.json["kid_subset_size"] = d.kid_subset_size;
  }
  if (d.vendi) s.json["vendi_kernel"] = "cosine";
  s.tables.emplace_back("geo_distribution", t.build());
  return s;
}

Json geo_spec_json(const AuditSpec& s) {
  const Spec& g = s.geo;
  Json aliases{{"region", Json::object()}, {"object", Json::object()}};
  for (const auto& [a, b] : g.region_aliases) aliases["region"][a] = b;
  for (const auto& [a, b] : g.object_aliases) aliases["object"][a] = b;
  const auto manifold = [](const Spec::Manifold& m) {
    return Json{{"enabled", m.toggle.enabled},
                {"k", m.k},
                {"inclusive", m.inclusive},
                {"bootstrap", m.bootstrap},
                {"ci", m.ci}};
  };
  return Json{{"kind", to_string(s.kind)},
              {"seed", s.seed},
              {"min_group_size", s.min_group_size},
              {"duplicates", g.duplicates},
              {"real_per_cell", g.real_per_cell},
              {"generated_per_cell", g.generated_per_cell},
              {"aliases", aliases},
              {"region", manifold(g.region)},
              {"object_region", manifold(g.object_region)},
              {"consistency", Json{{"enabled", g.consistency.toggle.enabled},
                                   {"variant", g.consistency.variant},
                                   {"percentile", g.consistency.percentile},
                                   {"bootstrap", g.consistency.bootstrap},
                                   {"ci", g.consistency.ci}}},
              {"distribution", Json{{"enabled", g.distribution.toggle.enabled},
                                    {"fid", g.distribution.fid},
                                    {"vendi", g.distribution.vendi},
                                    {"kid", g.distribution.kid}}}};
}

}  // namespace

void run_geo_diversity_audit(const AuditSpec& spec, const std::filesystem::path& run_dir) {
  const Spec& g = spec.geo;
  audits_internal::RunOutput output(run_dir);  // locks the folder before any input is read
  Provenance provenance;
  provenance.command = "audit";
  if (!spec.spec_path.empty()) provenance.inputs.push_back(spec.spec_path.string());
  provenance.inputs.push_back(g.real_table.string());
  provenance.inputs.push_back(g.real_features.path.string());
  for (const GeoSource& s : g.generated) {
    provenance.inputs.push_back(s.table.string());
    provenance.inputs.push_back(s.features.path.string());
    if (!s.clip.path.empty()) provenance.inputs.push_back(s.clip.path.string());
  }
  const bool any_clip = std::any_of(g.generated.begin(), g.generated.end(),
                                    [](const GeoSource& s) { return !s.clip.path.empty(); });
  const bool can_score = any_clip && !g.objects_table.empty();
  // An explicitly requested consistency indicator needs both inputs; checked before reading.
  VLBIAS_CHECK(!(g.consistency.toggle.explicit_ && g.consistency.toggle.enabled && !can_score),
               UsageError,
               "analysis 'consistency' was requested but cannot run: it needs generated.clip "
               "(CLIP image embeddings) and objects (the object text embeddings)");
  if (can_score) {
    provenance.inputs.push_back(g.objects_table.string());
    provenance.inputs.push_back(g.objects_embeddings.path.string());
  }
  start_hashing_inputs(provenance);

  std::vector<std::string> notes;
  const RealData real = load_real(spec, notes);
  const GeneratedData gen = load_generated(spec, real.features.cols, notes);
  Json matching;
  const GeneratedSets sets = compose_sets(spec, real, gen, notes, matching);

  std::vector<std::pair<std::string, Section>> sections;
  if (g.region.toggle.enabled) {
    RegionOutputs r = region_analysis(spec, real, gen, sets, notes);
    sections.emplace_back("region", std::move(r.section));
    sections.emplace_back("region_gaps", std::move(r.gaps));
  }
  if (g.object_region.toggle.enabled) {
    sections.emplace_back("object_region", object_region_analysis(spec, real, gen, sets, notes));
  }
  if (g.consistency.toggle.enabled) {
    if (can_score) {
      ConsistencyOutputs c = consistency_analysis(spec, gen, sets, notes);
      sections.emplace_back("consistency", std::move(c.section));
      sections.emplace_back("consistency_gaps", std::move(c.gaps));
    } else {
      notes.push_back(
          "consistency skipped: it needs generated.clip (CLIP image embeddings) and objects "
          "(the object text embeddings)");
    }
  }
  if (g.distribution.toggle.enabled &&
      (g.distribution.fid || g.distribution.kid || g.distribution.vendi)) {
    sections.emplace_back("distribution", distribution_analysis(spec, real, gen, sets));
  }

  Json tables;
  Json analyses = output.add_sections(sections, tables, notes);
  Json forms = Json::object();
  for (const Form f : kForms) forms[form_name(f)] = gen.per_form[static_cast<int>(f)];
  Json real_json{{"images", real.features.rows},
                 {"rows_read", real.rows_read},
                 {"dim", real.features.cols},
                 {"regions", real.regions->names},
                 {"objects", real.objects->names.size()},
                 {"duplicate_groups", real.duplicate_groups},
                 {"duplicates_removed", real.duplicates_removed}};
  if (g.real_per_cell > 0) real_json["left_out_by_balancing"] = real.balanced_out;
  Json results{{"kind", to_string(spec.kind)},
               {"real", real_json},
               {"generated", Json{{"images", gen.features.rows},
                                  {"rows_read", gen.rows_read},
                                  {"by_form", forms},
                                  {"clip_dim", gen.clip.cols},
                                  {"matching", matching}}},
               {"spec", geo_spec_json(spec)},
               {"analyses", analyses},
               {"tables", tables},
               {"notes", notes}};
  output.write(std::move(results), provenance, geo_spec_json(spec), spec);
}

}  // namespace vlbias
