// The `vlbias faces` job: images -> checkpointed chunks of faces -> tables, chips and a manifest
// (include/vlbias/faces/faces_job.h). Each image of a chunk is read, decoded, searched and its
// chips written by one task of the pool; the chunk's records are kept when all are done.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <new>
#include <optional>

#include "faces_job_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/memory_budget.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/encode/encode.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/version.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

using faces_internal::FaceRecord;
using faces_internal::FacesCheckpoint;
using faces_internal::GivenBoxes;
using faces_internal::ImageFaces;

constexpr std::size_t kDefaultFacesChunk = 64;

}  // namespace

void faces_internal::check_faces_out(const fs::path& out) {
  VLBIAS_CHECK(!out.empty(), UsageError, "--out is empty; expected a folder for the faces.");
  const fs::file_status st = fs::symlink_status(out);
  if (!fs::exists(st)) return;
  VLBIAS_CHECK(fs::is_directory(st), UsageError,
               "--out {}: is {}; expected a folder (new or empty) for the faces.", out.string(),
               fs::is_symlink(st) ? "a symbolic link" : "a file");
  VLBIAS_CHECK(!fs::exists(fs::symlink_status(out / faces_internal::kFacesManifest)), UsageError,
               "--out {}: holds a finished faces run ({}); choose another folder or delete it.",
               out.string(), faces_internal::kFacesManifest);
  if (fs::exists(fs::symlink_status(out / faces_internal::kFacesPartial))) return;
  for (const fs::directory_entry& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    VLBIAS_CHECK(name == ".lock", UsageError,
                 "--out {}: is not empty ({}); expected a new or empty folder for the faces.",
                 out.string(), name);
  }
}

namespace {

// What every task of the job shares.
struct FacesContext {
  const FacesJobOptions& o;
  const FaceDetector* detector;  // null: no detection (whole_image)
  const JobItems& items;
  const GivenBoxes* boxes;  // null: the HOG detector (or the whole image)
  MemoryBudget& budget;
};

// Decodes and searches one image; failures are the image's (its error), never the job's.
RgbImage decode_for_faces(const FacesContext& ctx, std::span<const std::uint8_t> bytes,
                          const std::string& path, const std::string& shown,
                          MemoryBudget::Lease& lease) {
  const std::size_t max = ctx.o.max_image_pixels;
  const auto reserve = [&](std::size_t width, std::size_t height, std::size_t decoder_bytes) {
    if (width * height > max) {
      warn(
          "{} has {} x {} pixels, more than --max-image-pixels {}; decoded anyway, as Pillow "
          "does up to twice that",
          shown, width, height, max);
    }
    const bool searching = ctx.boxes == nullptr && ctx.detector != nullptr;
    const std::size_t searched =
        searching ? ctx.detector->detection_pixels(width, height) : width * height;
    VLBIAS_CHECK(!searching || searched <= 2 * max, InputError,
                 "{}: {} x {} pixels upsampled {} time{} are {} pixels, more than twice "
                 "--max-image-pixels {}; lower --upsample or raise the limit.",
                 path, width, height, ctx.o.detector.upsample,
                 ctx.o.detector.upsample == 1 ? "" : "s", searched, max);
    const std::size_t work = searching ? ctx.detector->detection_bytes(width, height) : 0;
    lease = ctx.budget.acquire(decoder_bytes + width * height * 3 + work);
  };
  return decode_image(bytes, path, DecodeOptions{2 * max, ctx.o.exif_transpose}, reserve);
}

std::vector<DetectedFace> find_faces(const FacesContext& ctx, const RgbImage& image,
                                     std::size_t row) {
  if (ctx.detector == nullptr) {
    DetectedFace whole;
    whole.box = FaceBox{0, 0, static_cast<long>(image.width), static_cast<long>(image.height)};
    return {whole};
  }
  if (ctx.boxes == nullptr) return ctx.detector->detect(image);
  const auto found = ctx.boxes->boxes.find(row);
  if (found == ctx.boxes->boxes.end()) return {};
  const std::vector<std::size_t>& lines = ctx.boxes->lines.at(row);
  const std::string source = fmt::format("{} (line{} {})", ctx.boxes->path.string(),
                                         lines.size() == 1 ? "" : "s", fmt::join(lines, ", "));
  return ctx.detector->locate(image, found->second, ctx.boxes->scores.at(row), source);
}

// The skin tone of one face: on its chip, else on its box clipped to the image (measured in
// place when that is the whole image, as with --no-detect; a copy of the box otherwise).
SkinTone face_skin_tone(const RgbImage& image, const DetectedFace& face, SkinToneMode mode,
                        const std::string& source) {
  const SkinToneOptions options{mode, {}};
  if (!face.chip.pixels.empty()) return measure_skin_tone(face.chip, source, options);
  const auto clip = [](long v, std::size_t n) {
    return static_cast<std::size_t>(std::clamp<long>(v, 0, static_cast<long>(n)));
  };
  const std::size_t x0 = clip(face.box.x, image.width),
                    x1 = clip(face.box.x + face.box.w, image.width);
  const std::size_t y0 = clip(face.box.y, image.height),
                    y1 = clip(face.box.y + face.box.h, image.height);
  if (x0 == x1 || y0 == y1) {
    // A box outside the image (given boxes may be) leaves no pixel: unknown, 0 examined.
    SkinTone unknown;
    unknown.mode = mode;
    return unknown;
  }
  if (x1 - x0 == image.width && y1 - y0 == image.height) {
    return measure_skin_tone(image, source, options);
  }
  RgbImage box;
  box.width = x1 - x0;
  box.height = y1 - y0;
  box.pixels.reserve(box.width * box.height * 3);
  for (std::size_t y = y0; y < y1; ++y) {
    const std::uint8_t* line = image.pixels.data() + (y * image.width + x0) * 3;
    box.pixels.insert(box.pixels.end(), line, line + box.width * 3);
  }
  return measure_skin_tone(box, source, options);
}

// The skin-tone columns of one face (include/vlbias/faces/faces_job.h), null when unknown.
void add_skin_tone_columns(const RgbImage& image, const DetectedFace& face, SkinToneMode mode,
                           const std::string& source, Json& columns) {
  const SkinTone tone = face_skin_tone(image, face, mode, source);
  const auto maybe = [](const auto& v) { return v ? Json(*v) : Json(nullptr); };
  columns["skin_examined"] = tone.examined_pixels;
  columns["skin_pixels"] = tone.skin_pixels;
  for (int c = 0; c < 3; ++c) {
    columns[std::string("skin_") + "rgb"[c]] =
        tone.mean_rgb ? Json((*tone.mean_rgb)[c]) : Json(nullptr);
  }
  columns["monk"] = maybe(tone.monk);
  columns["monk_l1"] = maybe(tone.monk_l1);
  columns["ita"] = maybe(tone.ita_degrees);
  columns["ita_category"] = tone.ita_category ? Json(to_string(*tone.ita_category)) : Json(nullptr);
}

// One image: its record, and its chips written into FACES_DIR/chips/.
ImageFaces process_image(const FacesContext& ctx, std::size_t row) {
  ImageFaces r;
  r.row = row;
  const std::string& shown = ctx.items.display[row];
  if (ctx.items.missing[row]) {
    r.error = "the path cell is empty";
    return r;
  }
  RgbImage image;
  std::vector<DetectedFace> faces;
  {
    MemoryBudget::Lease lease;  // released once the image is searched
    try {
      const ImageBytes file = read_job_image(ctx.items, row);
      r.sha256 = sha256_hex(std::string_view(reinterpret_cast<const char*>(file.bytes().data()),
                                             file.bytes().size()));
      image = decode_for_faces(ctx, file.bytes(), ctx.items.values[row], shown, lease);
      r.width = image.width;
      r.height = image.height;
      faces = find_faces(ctx, image, row);
    } catch (const Error& e) {
      r.error = e.what();
    } catch (const std::bad_alloc&) {
      r.error = "out of memory while reading or searching the image";
    }
  }
  if (!r.error.empty()) {
    r.width = r.height = 0;
    warn("image {} ({}) skipped: {}", row, shown, r.error);
    return r;
  }
  for (std::size_t k = 0; k < faces.size(); ++k) {
    FaceRecord f{faces[k].box, faces[k].score, faces[k].landmarks, "", Json::object()};
    if (!faces[k].chip.pixels.empty()) {
      f.chip = faces_internal::chip_name(row, shown, k);
      const std::vector<std::uint8_t> png = encode_png(faces[k].chip);
      write_file_atomically(
          ctx.o.out / f.chip,
          std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
    }
    if (ctx.o.skin_tone) {
      add_skin_tone_columns(image, faces[k], *ctx.o.skin_tone,
                            fmt::format("'{}', face {}", shown, k), f.columns);
    }
    if (ctx.o.face_columns) ctx.o.face_columns(image, faces[k], f.columns);
    r.faces.push_back(std::move(f));
  }
  return r;
}

// The detector, predictor and chips as FaceDetector::describe gives them, or no detection.
Json detection_json(const FaceDetector* detector) {
  if (detector != nullptr) return detector->describe();
  return Json{{"detector", Json{{"name",
                                 "none (--no-detect): each image is one face, the whole "
                                 "image its box"}}},
              {"predictor", nullptr},
              {"chips", nullptr}};
}

// What the skin-tone columns are and where they were measured (null without them).
Json skin_tone_spec(const FacesJobOptions& o) {
  if (!o.skin_tone) return nullptr;
  return Json{{"mode", to_string(*o.skin_tone)},
              {"region", o.detector.chip_size > 0 ? "chip"
                         : o.whole_image          ? "image"
                                                  : "box"},
              {"scale", "Monk Skin Tone, 10 tones (skintone.google)"},
              {"ita", "mean of the skin pixels' ITAs, degrees; Del Bino et al. 2006 categories"}};
}

Json faces_job_key(const FacesJobOptions& o, const FaceDetector* detector, const JobItems& items,
                   const GivenBoxes* boxes, std::size_t chunk) {
  Json key{{"kind", "faces"},
           {"input", o.input.string()},
           {"input_sha256", items.input_sha256},
           {"column", o.column},
           {"image_root", o.image_root.string()},
           {"items", items.values.size()},
           {"chunk", chunk},
           {"detection", detection_json(detector)},
           {"skin_tone", skin_tone_spec(o)},
           {"boxes_sha256", boxes ? Json(boxes->sha256) : Json(nullptr)},
           {"max_image_pixels", o.max_image_pixels},
           {"exif_transpose", o.exif_transpose},
           {"face_columns", o.face_columns_spec}};
  if (!o.shard.whole()) key["shard"] = Json{{"index", o.shard.index}, {"count", o.shard.count}};
  return key;
}

void process_chunks(const FacesContext& ctx, const FacesCheckpoint& cp,
                    const std::vector<bool>& done, std::size_t resumed) {
  Progress progress("faces", cp.owned_items());
  progress.advance(resumed);
  for (std::size_t c = 0; c < cp.chunks; ++c) {
    if (!cp.owns(c) || done[c]) continue;
    const std::size_t begin = c * cp.chunk, end = cp.chunk_end(c);
    std::vector<ImageFaces> records(end - begin);
    parallel_for(end - begin, [&](std::size_t i) {
      records[i] = process_image(ctx, begin + i);
      progress.advance();
    });
    faces_internal::write_faces_chunk(cp, c, records);
  }
  progress.finish();
}

Json faces_manifest(const FacesJobOptions& o, const FaceDetector* detector, const JobItems& items,
                    const GivenBoxes* boxes, const FacesCheckpoint& cp, const FacesJobResult& r) {
  Json detection = detection_json(detector);
  if (boxes != nullptr) {
    detection["detector"] = Json{{"name", "boxes given (--boxes)"},
                                 {"path", boxes->path.string()},
                                 {"sha256", boxes->sha256},
                                 {"rows", boxes->rows}};
  }
  Json m{{"vlbias_version", VLBIAS_VERSION},
         {"created_utc", utc_now()},
         {"complete", true},
         {"kind", "faces"},
         {"input",
          Json{{"path", o.input.string()},
               {"sha256", items.input_sha256},
               {"column", fs::is_directory(o.input) ? Json(nullptr)
                                                    : Json(o.column.empty() ? "path" : o.column)},
               {"items", items.values.size()},
               {"row_order", items.row_order}}},
         {"detector", detection["detector"]},
         {"predictor", detection["predictor"]},
         {"chips", detection["chips"]},
         {"landmarks_format",
          "one cell of 2 N whole numbers 'x0 y0 x1 y1 ...' (pixels), the "
          "predictor's N points in its order"},
         {"max_image_pixels", o.max_image_pixels},
         {"exif_transpose", o.exif_transpose},
         {"skin_tone", skin_tone_spec(o)},
         {"face_columns", o.face_columns_spec},
         {"chunk", cp.chunk}};
  if (!o.shard.whole()) {
    m["shard"] = shard_json(o.shard, kChunkScheme);
    m["shard"]["items"] = cp.owned_items();
  }
  m["files"] = Json{
      {"faces", faces_internal::kFacesCsv},
      {"images", faces_internal::kImagesCsv},
      {"no_faces", faces_internal::kNoFacesCsv},
      {"chips", detection["chips"].is_null() ? Json(nullptr) : Json(faces_internal::kChipsFolder)}};
  m["counts"] = Json{{"images", r.images},
                     {"ok", r.ok},
                     {"failed", r.failed},
                     {"no_face", r.no_face},
                     {"faces", r.faces}};
  m["resumed_images"] = r.resumed;
  m["seconds"] = r.seconds;
  return m;
}

}  // namespace

FacesJobResult run_faces_job(const FacesJobOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  faces_internal::check_faces_out(o.out);
  VLBIAS_CHECK(o.max_image_pixels >= 1 && o.max_image_pixels <= kMaxImagePixelsOption, UsageError,
               "--max-image-pixels {}: expected 1 to {} (default {}, Pillow's MAX_IMAGE_PIXELS).",
               o.max_image_pixels, kMaxImagePixelsOption, kPillowMaxImagePixels);
  VLBIAS_CHECK(!o.whole_image || (o.boxes.empty() && o.detector.chip_size == 0), UsageError,
               "--no-detect takes each whole image as one face: it makes no chips (add "
               "--no-chips) and takes no --boxes.");
  std::optional<FaceDetector> detector;
  const FaceDetector* searcher = nullptr;  // none with whole_image
  if (o.loaded_detector != nullptr) {
    const FaceDetectorOptions& a = o.loaded_detector->options();
    const FaceDetectorOptions& b = o.detector;
    VLBIAS_CHECK(a.predictor == b.predictor && a.upsample == b.upsample &&
                     a.threshold == b.threshold && a.chip_size == b.chip_size &&
                     a.chip_padding == b.chip_padding,
                 UsageError, "The loaded face detector's options differ from the job's.");
    if (!o.whole_image) searcher = o.loaded_detector.get();
  } else if (!o.whole_image) {
    searcher = &detector.emplace(o.detector);
  }
  const JobItems items = load_job_items(o.input, o.column, o.image_root, true);
  std::optional<GivenBoxes> boxes;
  if (!o.boxes.empty()) boxes = faces_internal::read_given_boxes(o.boxes, items);
  const RunLock lock(o.out);

  FacesCheckpoint cp;
  cp.partial = o.out / faces_internal::kFacesPartial;
  cp.n = items.values.size();
  cp.chunk = o.chunk ? o.chunk : kDefaultFacesChunk;
  cp.chunks = (cp.n + cp.chunk - 1) / cp.chunk;
  cp.shard = o.shard;
  const GivenBoxes* given = boxes ? &*boxes : nullptr;
  faces_internal::open_faces_checkpoint(cp, faces_job_key(o, searcher, items, given, cp.chunk),
                                        o.resume);
  if (o.detector.chip_size > 0) make_output_folders(o.out, faces_internal::kChipsFolder);
  const std::vector<bool> done = faces_internal::finished_faces_chunks(cp, items);
  FacesJobResult result;
  for (std::size_t c = 0; c < cp.chunks; ++c) {
    if (done[c]) result.resumed += cp.chunk_end(c) - c * cp.chunk;
  }
  MemoryBudget budget(3 * 2 * o.max_image_pixels);
  const FacesContext ctx{o, searcher, items, given, budget};
  process_chunks(ctx, cp, done, result.resumed);

  const std::vector<ImageFaces> images = faces_internal::read_faces_chunks(cp);
  const faces_internal::FacesTables tables = faces_internal::faces_tables(images, items.display);
  const Json table_sha = faces_internal::write_faces_tables(o.out, tables, images);
  result.images = images.size();
  for (const ImageFaces& im : images) {
    result.ok += im.error.empty();
    result.failed += !im.error.empty();
    result.no_face += im.error.empty() && im.faces.empty();
    result.faces += im.faces.size();
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.manifest = o.out / faces_internal::kFacesManifest;
  Json manifest = faces_manifest(o, searcher, items, given, cp, result);
  manifest["tables_sha256"] = table_sha;
  if (!o.shard.whole()) {
    // What a merge reads and checks a shard by (faces_merge.cpp): the job's items and the
    // shard's records.
    const fs::path records = o.out / faces_internal::kShardRecords;
    faces_internal::write_shard_records(records, images, items.display);
    manifest["shard"]["items_sha256"] = job_items_sha256(items.display);
    manifest["shard"]["records_sha256"] = sha256_file(records.string());
  }
  write_file_atomically(result.manifest, manifest.dump(2) + "\n");
  fs::remove_all(cp.partial);
  if (result.failed > 0) {
    warn("{} of {} images could not be read and are listed in {} with the reason.", result.failed,
         result.images, (o.out / faces_internal::kImagesCsv).string());
  }
  return result;
}

}  // namespace vlbias
