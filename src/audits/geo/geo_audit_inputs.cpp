// The inputs of the geo-diversity audit (geo_audit_internal.h): the real images with their
// region and object labels (duplicates removed and cells balanced as the spec says), and every
// generated source's usable rows with their prompt form and aliased labels.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "geo_audit_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/jobs/feature_cache.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"

namespace vlbias::audits_internal {

std::string aliased(const std::vector<std::pair<std::string, std::string>>& aliases,
                    const std::string& v) {
  for (const auto& [from, to] : aliases) {
    if (from == v) return to;
  }
  return v;
}

namespace {

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

// The features file of a set, or (features_model) its table's images' features, one row per
// table row: every image must encode (the rows are the table's).
Matrix set_features(const GeoAuditSpec& g, const EmbeddingSource& given,
                    const std::filesystem::path& table) {
  if (!given.path.empty()) return read_embeddings(given.path, given.tensor);
  FeatureRequest r;
  r.images = table;
  r.column = g.features_model.column;
  r.model = g.features_model.model;
  set_image_preprocess(r.options, detect_image_model(r.model), g.features_model.preprocess);
  r.options.image_size = g.features_model.image_size;
  r.require_all = true;
  return image_features(r).features;
}

// How messages name a set's features: the file, or those features_model computed.
std::string features_name(const EmbeddingSource& given, const std::filesystem::path& table) {
  return given.path.empty() ? "the features_model features of " + table.string()
                            : given.path.string();
}

// Reads one generated source's table, features and (when given) CLIP embeddings, checking
// that they agree with each other and with the real features' width `dim`. `clip_dim` is the
// CLIP width of the sources read so far (0: none yet).
struct SourceData {
  Table table;
  Matrix features, clip;  // clip: 0 rows when the source has none
};

SourceData read_source(const GeoAuditSpec& g, const GeoSource& src, std::size_t dim,
                       std::size_t& clip_dim) {
  SourceData s{read_table(src.table.string()), set_features(g, src.features, src.table), Matrix()};
  const Table& t = s.table;
  const Matrix& f = s.features;
  VLBIAS_CHECK(t.rows == f.rows, InputError,
               "{} has {} rows but {} has {} feature rows; expected one row per generated "
               "image.",
               t.source, t.rows, features_name(src.features, src.table), f.rows);
  VLBIAS_CHECK(f.cols == dim, InputError,
               "{} has {} columns but the real features have {}; both must come from the same "
               "feature extractor.",
               features_name(src.features, src.table), f.cols, dim);
  if (!src.clip.path.empty()) {
    Matrix& c = s.clip;
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
  return s;
}

// The rows of source `s` that have an object (and a region unless of the object form): their
// form and aliased labels are appended to `d`; returns their indices.
std::vector<std::uint32_t> keep_labelled_rows(const GeoAuditSpec& g, const GeoSource& src,
                                              const SourceData& s, GeneratedData& d) {
  const Table& t = s.table;
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
  const std::vector<std::string> image_path = optional_text(g.features_model.column);
  const std::filesystem::path table_dir = src.table.parent_path();
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
    d.image_path.push_back(image_path[i]);
    d.image_file.push_back(image_path[i].empty() ? std::filesystem::path()
                                                 : table_dir / image_path[i]);
    d.has_clip.push_back(s.clip.rows > 0 ? 1 : 0);
  }
  return kept;
}

// Stacks the sources' kept rows into d.features and d.clip (one source: taken as is).
void stack_sources(std::vector<Matrix>& parts, std::vector<Matrix>& clip_parts, std::size_t dim,
                   std::size_t clip_dim, bool any_clip, std::size_t total, GeneratedData& d) {
  if (parts.size() == 1) {  // one source: no concatenation
    d.features = std::move(parts[0]);
    if (clip_dim > 0) d.clip = std::move(clip_parts[0]);
    return;
  }
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

}  // namespace

RealData load_real(const AuditCommonSpec& spec, const GeoAuditSpec& g,
                   std::vector<std::string>& notes) {
  RealData d;
  const Table table = read_table(g.real_table.string());
  const Matrix x = set_features(g, g.real_features, g.real_table);
  VLBIAS_CHECK(table.rows == x.rows, InputError,
               "{} has {} rows but {} has {} feature rows; expected one row per real image.",
               table.source, table.rows, features_name(g.real_features, g.real_table), x.rows);
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
      const auto drawn =
          sample_rows(members, g.real_per_cell, cell_seed(spec.seed, kSeedRealSampling, cell++));
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

GeneratedData load_generated(const GeoAuditSpec& g, std::size_t dim,
                             std::vector<std::string>& notes) {
  GeneratedData d;
  std::vector<Matrix> parts, clip_parts;
  std::size_t clip_dim = 0;
  const bool any_clip = std::any_of(g.generated.begin(), g.generated.end(),
                                    [](const GeoSource& s) { return !s.clip.path.empty(); });
  for (const GeoSource& src : g.generated) {
    SourceData s = read_source(g, src, dim, clip_dim);
    const std::vector<std::uint32_t> kept = keep_labelled_rows(g, src, s, d);
    Matrix& f = s.features;
    Matrix& c = s.clip;
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
  stack_sources(parts, clip_parts, dim, clip_dim, any_clip, total, d);
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

}  // namespace vlbias::audits_internal
