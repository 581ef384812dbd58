#pragma once
// Internal to the encode job (encode_job.cpp): images decoded and preprocessed on worker threads
// ahead of inference, under one memory budget, each with the SHA-256 of the bytes decoded.
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vlbias/core/memory_budget.h"
#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/encode/models/image_model.h"

namespace vlbias::encode_internal {

// One image of the job: the path (or Parquet row) to read and what messages call it.
struct ImageItem {
  std::string path;     // "" for a missing table cell; "T.parquet#row" for a table's cell
  std::string display;  // the path as given
  const JobItems* source = nullptr;  // the job's items, read by read_job_image
  std::size_t row = 0;               // this item's index in `source`
};

// What became of one image.
struct PrefetchedImage {
  std::string error;   // "" when its pixels were produced
  std::string sha256;  // of the image's bytes as read ("" when it could not be read)
};

// Decodes and preprocesses images on `threads` workers, at most `window` items ahead of the
// consumer, so decoding overlaps inference. Decoding follows Pillow's pixel rule for
// `max_image_pixels` (N = PIL.Image.MAX_IMAGE_PIXELS): more than 2 N pixels is refused, more
// than N warns. The decode and preprocessing buffers of all workers together are held to
// budget_bytes(N) (a MemoryBudget; an image needing more runs alone), so the thread count does
// not multiply the worst case.
class ImagePrefetcher {
 public:
  ImagePrefetcher(const ImageFeatureModel& model, const std::vector<ImageItem>& items,
                  std::vector<std::size_t> order, std::size_t window, unsigned threads,
                  std::size_t max_image_pixels, bool exif_transpose);
  ~ImagePrefetcher();
  ImagePrefetcher(const ImagePrefetcher&) = delete;
  ImagePrefetcher& operator=(const ImagePrefetcher&) = delete;

  // Waits for position k of the order (taken in sequence) and copies its pixels to `out`
  // (3 x S x S floats) unless it failed.
  PrefetchedImage take(std::size_t k, float* out);

  // The budget: the RGB bytes of the largest image allowed, 3 x 2 N.
  static std::size_t budget_bytes(std::size_t max_image_pixels);

 private:
  struct Slot {
    std::vector<float> pixels;
    PrefetchedImage result;
    std::size_t position = 0;
    bool ready = false;
  };

  void work();
  PrefetchedImage prepare(const ImageItem& item, float* out);

  const ImageFeatureModel& model_;
  const std::vector<ImageItem>& items_;
  std::vector<std::size_t> order_;
  std::size_t window_, per_, max_image_pixels_;
  bool exif_transpose_;
  MemoryBudget budget_;
  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t next_ = 0, consumed_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace vlbias::encode_internal
