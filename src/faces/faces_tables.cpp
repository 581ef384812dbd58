// The faces job's records: one image's faces as checkpoint JSON and back, chip names, and the
// tables faces.csv, images.csv and no_faces.csv (include/vlbias/faces/faces_job.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "faces_job_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/run/atomic_file.h"

namespace vlbias::faces_internal {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad_record(const std::string& where, const std::string& what) {
  VLBIAS_FAIL(UsageError, "{}: {} is missing or malformed; delete the folder to start over.", where,
              what);
}

const Json& record_field(const Json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) bad_record(where, fmt::format("'{}'", key));
  return j[key];
}

std::size_t record_count(const Json& j, const char* key, const std::string& where) {
  const Json& v = record_field(j, key, where);
  if (!v.is_number_unsigned()) bad_record(where, fmt::format("'{}'", key));
  return v.get<std::size_t>();
}

long record_long(const Json& v, const char* what, const std::string& where) {
  if (!v.is_number_integer()) bad_record(where, what);
  return v.get<long>();
}

FaceRecord face_from_json(const Json& f, const std::string& where) {
  FaceRecord r;
  const Json& box = record_field(f, "box", where);
  if (!box.is_array() || box.size() != 4) bad_record(where, "a face's 'box'");
  r.box = FaceBox{record_long(box[0], "a box's x", where), record_long(box[1], "a box's y", where),
                  record_long(box[2], "a box's w", where), record_long(box[3], "a box's h", where)};
  const Json& score = record_field(f, "score", where);
  if (!score.is_null() && !score.is_number()) bad_record(where, "a face's 'score'");
  if (score.is_number()) r.score = score.get<double>();
  const Json& points = record_field(f, "landmarks", where);
  if (!points.is_array() || points.size() % 2 != 0) bad_record(where, "a face's 'landmarks'");
  for (std::size_t i = 0; i < points.size(); i += 2) {
    r.landmarks.push_back(FacePoint{record_long(points[i], "a landmark", where),
                                    record_long(points[i + 1], "a landmark", where)});
  }
  const Json& chip = record_field(f, "chip", where);
  if (!chip.is_string()) bad_record(where, "a face's 'chip'");
  r.chip = chip.get<std::string>();
  const Json& columns = record_field(f, "columns", where);
  if (!columns.is_object()) bad_record(where, "a face's 'columns'");
  r.columns = columns;
  return r;
}

std::string landmarks_text(const std::vector<FacePoint>& points) {
  std::string out;
  for (const FacePoint& p : points) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{} {}", p.x, p.y);
  }
  return out;
}

double as_number(std::size_t v) {
  return static_cast<double>(v);
}

// The hook's columns in order of first appearance (rows in input order), each numeric when
// every value given is a number, else text.
void add_hook_columns(Table& t, const std::vector<const FaceRecord*>& faces) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const FaceRecord* f : faces) {
    for (const auto& [key, value] : f->columns.items()) {
      if (seen.insert(key).second) names.push_back(key);
    }
  }
  for (const std::string& name : names) {
    bool numeric = true;
    for (const FaceRecord* f : faces) {
      const Json* v = f->columns.contains(name) ? &f->columns[name] : nullptr;
      if (v != nullptr && !v->is_null() && !v->is_number()) numeric = false;
    }
    if (numeric) {
      std::vector<double> values;
      for (const FaceRecord* f : faces) {
        const bool has = f->columns.contains(name) && f->columns[name].is_number();
        values.push_back(has ? f->columns[name].get<double>()
                             : std::numeric_limits<double>::quiet_NaN());
      }
      add_numeric_column(t, name, std::move(values));
      continue;
    }
    std::vector<std::string> texts;
    for (const FaceRecord* f : faces) {
      const Json* v = f->columns.contains(name) ? &f->columns[name] : nullptr;
      texts.push_back(v == nullptr || v->is_null() ? ""
                      : v->is_string()             ? v->get<std::string>()
                                                   : v->dump());
    }
    add_string_column(t, name, texts);
  }
}

Table faces_table(const std::vector<ImageFaces>& images, const std::vector<std::string>& shown) {
  std::vector<const FaceRecord*> faces;
  std::vector<double> input_row, index, x, y, w, h, score;
  std::vector<std::string> image, landmarks, chip;
  for (const ImageFaces& im : images) {
    for (std::size_t k = 0; k < im.faces.size(); ++k) {
      const FaceRecord& f = im.faces[k];
      faces.push_back(&f);
      input_row.push_back(as_number(im.row));
      image.push_back(shown[im.row]);
      index.push_back(as_number(k));
      x.push_back(static_cast<double>(f.box.x));
      y.push_back(static_cast<double>(f.box.y));
      w.push_back(static_cast<double>(f.box.w));
      h.push_back(static_cast<double>(f.box.h));
      score.push_back(f.score ? *f.score : std::numeric_limits<double>::quiet_NaN());
      landmarks.push_back(landmarks_text(f.landmarks));
      chip.push_back(f.chip);
    }
  }
  Table t;
  t.source = kFacesCsv;
  t.rows = faces.size();
  add_numeric_column(t, "input_row", std::move(input_row));
  add_string_column(t, "image", image);
  add_numeric_column(t, "face", std::move(index));
  add_numeric_column(t, "x", std::move(x));
  add_numeric_column(t, "y", std::move(y));
  add_numeric_column(t, "w", std::move(w));
  add_numeric_column(t, "h", std::move(h));
  add_numeric_column(t, "score", std::move(score));
  add_string_column(t, "landmarks", landmarks);
  add_string_column(t, "chip", chip);
  add_hook_columns(t, faces);
  return t;
}

}  // namespace

Json image_faces_json(const ImageFaces& image) {
  Json faces = Json::array();
  for (const FaceRecord& f : image.faces) {
    Json points = Json::array();
    for (const FacePoint& p : f.landmarks) {
      points.push_back(p.x);
      points.push_back(p.y);
    }
    faces.push_back(Json{{"box", Json::array({f.box.x, f.box.y, f.box.w, f.box.h})},
                         {"score", f.score ? Json(*f.score) : Json(nullptr)},
                         {"landmarks", std::move(points)},
                         {"chip", f.chip},
                         {"columns", f.columns}});
  }
  return Json{{"input_row", image.row}, {"sha256", image.sha256}, {"width", image.width},
              {"height", image.height}, {"error", image.error},   {"faces", std::move(faces)}};
}

ImageFaces image_faces_from_json(const Json& j, const std::string& where) {
  ImageFaces im;
  im.row = record_count(j, "input_row", where);
  im.width = record_count(j, "width", where);
  im.height = record_count(j, "height", where);
  const Json& sha = record_field(j, "sha256", where);
  const Json& error = record_field(j, "error", where);
  const Json& faces = record_field(j, "faces", where);
  if (!sha.is_string() || !error.is_string() || !faces.is_array()) {
    bad_record(where, fmt::format("the record of input row {}", im.row));
  }
  im.sha256 = sha.get<std::string>();
  im.error = error.get<std::string>();
  for (const Json& f : faces) im.faces.push_back(face_from_json(f, where));
  return im;
}

std::string chip_name(std::size_t row, const std::string& shown, std::size_t face) {
  std::string stem = fs::path(shown).stem().string();
  for (char& c : stem) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!keep) c = '_';
  }
  if (stem.size() > 40) stem.resize(40);
  if (stem.empty()) stem = "image";
  return fmt::format("{}/{:06d}_{}_{}.png", kChipsFolder, row, stem, face);
}

FacesTables faces_tables(const std::vector<ImageFaces>& images,
                         const std::vector<std::string>& shown) {
  FacesTables t;
  t.faces = faces_table(images, shown);
  std::vector<double> row, count, width, height, none_row;
  std::vector<std::string> image, status, error, none_image;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const ImageFaces& im : images) {
    const bool ok = im.error.empty();
    row.push_back(as_number(im.row));
    image.push_back(shown[im.row]);
    status.push_back(ok ? "ok" : "failed");
    count.push_back(ok ? as_number(im.faces.size()) : nan);
    width.push_back(ok ? as_number(im.width) : nan);
    height.push_back(ok ? as_number(im.height) : nan);
    error.push_back(im.error);
    if (ok && im.faces.empty()) {
      none_row.push_back(as_number(im.row));
      none_image.push_back(shown[im.row]);
    }
  }
  t.images.source = kImagesCsv;
  t.images.rows = images.size();
  add_numeric_column(t.images, "input_row", std::move(row));
  add_string_column(t.images, "image", image);
  add_string_column(t.images, "status", status);
  add_numeric_column(t.images, "faces", std::move(count));
  add_numeric_column(t.images, "width", std::move(width));
  add_numeric_column(t.images, "height", std::move(height));
  add_string_column(t.images, "error", error);
  t.no_faces.source = kNoFacesCsv;
  t.no_faces.rows = none_row.size();
  add_numeric_column(t.no_faces, "input_row", std::move(none_row));
  add_string_column(t.no_faces, "image", none_image);
  return t;
}

Json write_faces_tables(const fs::path& dir, const FacesTables& tables,
                        const std::vector<ImageFaces>& images) {
  Json sha = Json::object();
  for (const auto& [name, table] : {std::pair<const char*, const Table*>{kFacesCsv, &tables.faces},
                                    {kImagesCsv, &tables.images},
                                    {kNoFacesCsv, &tables.no_faces}}) {
    write_csv(*table, (dir / name).string());
    sha[name] = sha256_file((dir / name).string());
  }
  std::set<std::string> named;
  for (const ImageFaces& im : images) {
    for (const FaceRecord& f : im.faces) {
      if (!f.chip.empty()) named.insert(fs::path(f.chip).filename().string());
    }
  }
  const fs::path chips = dir / kChipsFolder;
  if (fs::is_directory(fs::symlink_status(chips))) {
    std::vector<fs::path> stale;
    for (const fs::directory_entry& e : fs::directory_iterator(chips)) {
      if (!named.count(e.path().filename().string())) stale.push_back(e.path());
    }
    for (const fs::path& p : stale) fs::remove(p);
  }
  return sha;
}

void write_shard_records(const fs::path& path, const std::vector<ImageFaces>& images,
                         const std::vector<std::string>& shown) {
  std::string text;
  for (const ImageFaces& im : images) {
    Json line{{"image", shown[im.row]}};
    line.update(image_faces_json(im));
    text += line.dump();
    text += '\n';
  }
  write_file_atomically(path, text);
}

}  // namespace vlbias::faces_internal
