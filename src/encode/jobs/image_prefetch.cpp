// ImagePrefetcher: the encode job's image decoding on worker threads.
#include "image_prefetch.h"

#include <algorithm>
#include <new>
#include <optional>
#include <string_view>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/io/mapped_file.h"

namespace vlbias::encode_internal {

namespace {

std::string_view as_chars(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

std::size_t ImagePrefetcher::budget_bytes(std::size_t max_image_pixels) {
  return 3 * 2 * max_image_pixels;
}

ImagePrefetcher::ImagePrefetcher(const ImageFeatureModel& model,
                                 const std::vector<ImageItem>& items,
                                 std::vector<std::size_t> order, std::size_t window,
                                 unsigned threads, std::size_t max_image_pixels,
                                 bool exif_transpose)
    : model_(model),
      items_(items),
      order_(std::move(order)),
      window_(window),
      per_(model.pixels_per_image()),
      max_image_pixels_(max_image_pixels),
      exif_transpose_(exif_transpose),
      budget_(budget_bytes(max_image_pixels)),
      slots_(window) {
  for (Slot& s : slots_) s.pixels.resize(per_);
  // Never more workers than images; fewer when the system refuses a thread.
  const std::size_t wanted = std::min<std::size_t>(threads, order_.size());
  const std::size_t started = start_threads(workers_, wanted, [this](std::size_t) { work(); });
  VLBIAS_CHECK(started > 0 || wanted == 0, InternalError,
               "could not start an image decoding thread (the system refused it: process or "
               "memory limits); lower --threads or --decode-threads");
}

ImagePrefetcher::~ImagePrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

PrefetchedImage ImagePrefetcher::take(std::size_t k, float* out) {
  std::unique_lock<std::mutex> lock(mutex_);
  Slot& s = slots_[k % window_];
  cv_.wait(lock, [&] { return s.ready && s.position == k; });
  PrefetchedImage result = std::move(s.result);
  if (result.error.empty()) std::copy(s.pixels.begin(), s.pixels.end(), out);
  s.ready = false;
  consumed_ = k + 1;
  lock.unlock();
  cv_.notify_all();
  return result;
}

// Hashes the bytes it decodes (the checkpoint's identity of the image is that of exactly these
// bytes), and holds a lease on the budget from the header until the pixels are written.
PrefetchedImage ImagePrefetcher::prepare(const ImageItem& item, float* out) {
  PrefetchedImage result;
  if (item.path.empty()) {
    result.error = "the path cell is empty";
    return result;
  }
  try {
    const ImageBytes file = read_job_image(*item.source, item.row);
    result.sha256 = sha256_hex(as_chars(file.bytes()));
    MemoryBudget::Lease lease;  // declared before the image: released after it is freed
    const auto reserve = [&](std::size_t width, std::size_t height, std::size_t decoder_bytes) {
      if (width * height > max_image_pixels_) {
        warn(
            "{} has {} x {} pixels, more than --max-image-pixels {}; decoded anyway, as Pillow "
            "does up to twice that",
            item.display, width, height, max_image_pixels_);
      }
      // What the decoder and the resize hold at once; more than the budget runs alone.
      lease = budget_.acquire(decoder_bytes + model_.pixels_bytes(width, height));
    };
    const RgbImage image = decode_image(
        file.bytes(), item.path, DecodeOptions{2 * max_image_pixels_, exif_transpose_}, reserve);
    model_.pixels(image, out);
  } catch (const Error& e) {
    result.error = e.what();
  } catch (const std::bad_alloc&) {
    result.error = "out of memory while decoding the image";
  }
  return result;
}

void ImagePrefetcher::work() {
  std::vector<float> local(per_);
  for (;;) {
    std::size_t k;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock,
               [&] { return stop_ || (next_ < order_.size() && next_ < consumed_ + window_); });
      if (stop_) return;
      k = next_++;
    }
    PrefetchedImage result = prepare(items_[order_[k]], local.data());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Slot& s = slots_[k % window_];
      s.pixels.swap(local);
      s.result = std::move(result);
      s.position = k;
      s.ready = true;
    }
    cv_.notify_all();
    if (local.size() != per_) local.resize(per_);
  }
}

}  // namespace vlbias::encode_internal
