// The two steps of the CAM mass inside face boxes (include/vlbias/explain/face_mass.h), worked
// by hand: a box moved into the model's input crop as the shortest-side resize and the centre
// crop move it (HF's and torchvision's roundings), and the share of a map's mass inside the union
// of boxes, each pixel counted once by its centre, with and without a skin mask.
#include "vlbias/explain/face_mass.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "vlbias/encode/image/image.h"

namespace {

TEST(FaceMass, TheShareOfAHandMadeMapInsideFaceBoxesCountsEachPixelOnce) {
  using vlbias::cam_mass_in_boxes;
  using vlbias::ExplainFaceBox;
  std::vector<float> map(16);
  for (std::size_t i = 0; i < 16; ++i) map[i] = static_cast<float>(i + 1);  // sum 136
  // Pixel centres (1.5, 1.5) to (2.5, 2.5): values 6, 7, 10, 11.
  EXPECT_DOUBLE_EQ(cam_mass_in_boxes(map.data(), 4, 4, {ExplainFaceBox{1, 1, 2, 2}}), 34.0 / 136);
  // Two overlapping boxes: their union, 1 + 2 + 5 + 6 + 7 + 10 + 11.
  EXPECT_DOUBLE_EQ(
      cam_mass_in_boxes(map.data(), 4, 4, {ExplainFaceBox{0, 0, 2, 2}, ExplainFaceBox{1, 1, 2, 2}}),
      42.0 / 136);
  // A box ending on a centre leaves that pixel out; one covering everything takes it all.
  EXPECT_DOUBLE_EQ(cam_mass_in_boxes(map.data(), 4, 4, {ExplainFaceBox{0, 0, 1.5, 1}}), 1.0 / 136);
  EXPECT_DOUBLE_EQ(cam_mass_in_boxes(map.data(), 4, 4, {ExplainFaceBox{-5, -5, 50, 50}}), 1.0);
  const std::vector<float> zero(16, 0.0f);
  EXPECT_TRUE(std::isnan(cam_mass_in_boxes(zero.data(), 4, 4, {ExplainFaceBox{0, 0, 4, 4}})));
  // With a skin mask, only the boxes' skin pixels: of 6, 7, 10, 11 the skin ones 7 and 10.
  std::vector<std::uint8_t> skin(16, 0);
  skin[6] = skin[9] = skin[0] = 1;  // pixel 0 is skin but outside the box
  EXPECT_DOUBLE_EQ(cam_mass_in_boxes(map.data(), 4, 4, {ExplainFaceBox{1, 1, 2, 2}}, skin.data()),
                   17.0 / 136);
}

TEST(FaceMass, FaceBoxesMoveIntoTheCropAsTheResizeAndCentreCropDo) {
  using vlbias::ExplainFaceBox;
  using vlbias::face_box_in_crop;
  vlbias::ImagePreprocess hf;  // shortest edge 224, crop 224, floor (CLIPImageProcessor)
  // 448 x 300 -> 334 x 224 (int(224 * 448 / 300)), crop from x = (334 - 224) / 2 = 55.
  ExplainFaceBox b = face_box_in_crop({100, 30, 60, 90}, 448, 300, hf);
  EXPECT_NEAR(b.x, 100 * 334.0 / 448 - 55, 1e-12);
  EXPECT_NEAR(b.w, 60 * 334.0 / 448, 1e-12);
  EXPECT_NEAR(b.y, 22.4, 1e-12);
  EXPECT_NEAR(b.h, 67.2, 1e-12);
  // 300 x 455 -> 224 x 339: 115 rows over, HF floor(57.5) = 57, torchvision round(57.5) = 58.
  vlbias::ImagePreprocess tv = hf;
  tv.crop_rounding = vlbias::CropRounding::Round;
  EXPECT_NEAR(face_box_in_crop({0, 100, 300, 10}, 300, 455, hf).y, 100 * 339.0 / 455 - 57, 1e-12);
  EXPECT_NEAR(face_box_in_crop({0, 100, 300, 10}, 300, 455, tv).y, 100 * 339.0 / 455 - 58, 1e-12);
  EXPECT_NEAR(face_box_in_crop({0, 100, 300, 10}, 300, 455, tv).w, 224.0, 1e-12);
  // No resize, a 101-pixel image padded into 224: placed at ceil(61.5) = 62 (HF), 61 (torchvision).
  hf.do_resize = tv.do_resize = false;
  EXPECT_DOUBLE_EQ(face_box_in_crop({0, 0, 10, 10}, 101, 101, hf).x, 62.0);
  EXPECT_DOUBLE_EQ(face_box_in_crop({0, 0, 10, 10}, 101, 101, tv).x, 61.0);
}

}  // namespace
