// `vlbias label --labeller fairface` (include/vlbias/labels/fairface_labels.h).
#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "label_items.h"
#include "label_job_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/labels/fairface_labels.h"

namespace vlbias {

namespace {

// The heads to write, in the classifier's order, and their LABELS.csv schema.
struct FairFaceLabelHeads {
  std::vector<std::size_t> heads;  // indices into FairFaceClassifier::heads()
  LabelsSchema schema;
};

FairFaceLabelHeads choose_fairface_heads(const FairFaceClassifier& classifier,
                                         const std::vector<std::string>& wanted) {
  std::vector<std::string> names;
  for (const FairFaceHead& h : classifier.heads()) {
    names.push_back(fairface_label_attribute(classifier.variant(), h));
  }
  for (const std::string& w : wanted) {
    VLBIAS_CHECK(std::find(names.begin(), names.end(), w) != names.end(), UsageError,
                 "--attributes {}: not a head of the FairFace {} model; its heads are {}.", w,
                 fairface_variant_name(classifier.variant()), fmt::join(names, ", "));
  }
  FairFaceLabelHeads out;
  for (std::size_t h = 0; h < names.size(); ++h) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), names[h]) == wanted.end()) {
      continue;
    }
    out.heads.push_back(h);
    out.schema.attributes.push_back(names[h]);
    out.schema.classes.push_back(classifier.heads()[h].classes);
  }
  return out;
}

LabelsProvenance fairface_provenance(const FairFaceLabelOptions& o,
                                     const FairFaceClassifier& classifier) {
  LabelsProvenance p;
  p.labeller = "fairface";
  p.model = o.model.string();
  p.weights_sha256 = classifier.weights_sha256();
  p.options["margin"] = fmt::format("{}", o.margin);
  p.options["variant"] = fairface_variant_name(o.variant);
  if (!o.classes.empty()) p.options["classes"] = o.classes.string();
  if (o.exif_transpose) p.options["exif_transpose"] = "true";
  return p;
}

// Items [begin, end): decoded in parallel, classified in one forward, their rows appended.
void label_fairface_batch(const FairFaceClassifier& classifier, const FairFaceLabelHeads& chosen,
                          const FairFaceLabelOptions& o, const labels_internal::LabelItems& items,
                          std::size_t begin, std::size_t end, std::vector<LabelRow>& rows,
                          LabelRunCounts& counts) {
  const labels_internal::DecodedLabelItems good = labels_internal::decode_label_items(
      items, begin, end, o.max_image_pixels, o.exif_transpose, counts);
  if (good.images.empty()) return;
  const FairFaceResult r = classifier.classify(good.images);
  for (std::size_t g = 0; g < good.images.size(); ++g) {
    std::vector<std::vector<double>> p;
    for (std::size_t h : chosen.heads) {
      const Matrix& m = r.probabilities[h];
      p.emplace_back(m.row(g), m.row(g) + m.cols);
    }
    labels_internal::append_label_rows(items, good.items[g], chosen.schema, p, o.margin, rows);
    ++counts.labelled;
  }
}

}  // namespace

std::string fairface_label_attribute(FairFaceVariant variant, const FairFaceHead& head) {
  return variant == FairFaceVariant::Race4 && head.attribute == "race" ? "race4" : head.attribute;
}

LabelRunCounts run_fairface_labels(const FairFaceLabelOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  VLBIAS_CHECK(std::isfinite(o.margin) && o.margin >= 0.0 && o.margin <= 1.0, UsageError,
               "--margin {}: expected a probability gap in [0, 1] (0: never abstain).", o.margin);
  VLBIAS_CHECK(o.batch >= 1, UsageError, "--batch 0: expected at least one image per forward.");
  labels_internal::check_label_out(o.out);
  FairFaceOptions fo;
  fo.variant = o.variant;
  fo.classes = o.classes;
  fo.batch = o.batch;
  const FairFaceClassifier classifier(o.model, fo);
  const FairFaceLabelHeads chosen = choose_fairface_heads(classifier, o.attributes);
  const labels_internal::LabelItems items =
      labels_internal::read_label_items(o.input, o.column, o.image_root);

  const LabelsProvenance provenance = fairface_provenance(o, classifier);
  const labels_internal::LabelJobSpec spec{items, chosen.schema, provenance, o.input,
                                           o.out, o.job,         o.batch};
  LabelRunCounts result = labels_internal::run_label_job(
      spec, [&](std::size_t begin, std::size_t chunk_end, std::vector<LabelRow>& rows,
                LabelRunCounts& counts) {
        for (std::size_t b = begin; b < chunk_end; b += o.batch) {
          label_fairface_batch(classifier, chosen, o, items, b, std::min(chunk_end, b + o.batch),
                               rows, counts);
        }
      });
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace vlbias
