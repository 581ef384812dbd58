// Loading a dual-encoder study: image labels, image and prompt embeddings, the
// prompt manifest, and the prompt x image cosine matrix.
#include <cstring>

#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/io/tensor/embeddings.h"

namespace vlbias {

namespace {

// A table of row numbers for images without labels.
Table row_number_table(std::size_t rows) {
  Table t;
  t.source = "<image rows>";
  t.rows = rows;
  std::vector<double> index(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    index[r] = static_cast<double>(r);
    t.line_of_row.push_back(r + 1);
  }
  add_numeric_column(t, "image", std::move(index));
  return t;
}

}  // namespace

Study load_study(const StudyFiles& files) {
  Study s;
  const std::string images_name = files.image_embeddings.string();
  const std::string prompts_name = files.prompt_embeddings.string();
  s.inputs.push_back(images_name);
  if (!files.image_table.empty()) s.inputs.push_back(files.image_table.string());
  if (!files.image_index.empty()) s.inputs.push_back(files.image_index.string());
  s.inputs.push_back(files.prompt_manifest.string());
  s.inputs.push_back(prompts_name);

  Matrix images = read_embeddings(files.image_embeddings, files.image_tensor);
  if (files.image_table.empty()) {
    VLBIAS_CHECK(files.image_id_column.empty(), UsageError,
                 "an image id column needs an image table to join");
    s.images = row_number_table(images.rows);
  } else {
    s.images = read_table(files.image_table.string());
    VLBIAS_CHECK(s.images.rows > 0, InputError, "image table {} has no rows",
                 files.image_table.string());
    Table index;
    if (!files.image_index.empty()) index = read_table(files.image_index.string());
    const std::vector<std::size_t> row_of = join_rows(s.images, images.rows, files.image_id_column,
                                                      files.image_index.empty() ? nullptr : &index);
    // Reorder (or repeat) embedding rows so that column i of the cosines is table row i.
    bool identity = row_of.size() == images.rows;
    for (std::size_t i = 0; identity && i < row_of.size(); ++i) identity = row_of[i] == i;
    if (!identity) {
      Matrix joined(row_of.size(), images.cols);
      for (std::size_t i = 0; i < row_of.size(); ++i) {
        std::memcpy(joined.row(i), images.row(row_of[i]), images.cols * sizeof(float));
      }
      images = std::move(joined);
    }
  }
  s.manifest_table = read_table(files.prompt_manifest.string());
  s.manifest = parse_prompt_manifest(s.manifest_table);
  s.prompts = read_embeddings(files.prompt_embeddings, files.prompt_tensor);
  s.cos = prompt_image_cosines(s.prompts, images, s.manifest, prompts_name, images_name);
  s.embedding_dim = images.cols;
  return s;
}

}  // namespace vlbias
