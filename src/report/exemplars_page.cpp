// The exemplar image grids of a report (report_page.h's exemplars_section; the block is written
// by src/audits/exemplars.cpp): per cell, its thumbnails as embedded JPEG data URIs, and the
// table of every picked image's path.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report_page.h"

namespace vlbias::report_internal {

namespace {

// A data URI the audit wrote: JPEG, base64 only. Anything else in a (possibly edited)
// results.json is not embedded.
bool is_jpeg_data_uri(const std::string& uri) {
  static const std::string kPrefix = "data:image/jpeg;base64,";
  if (uri.size() <= kPrefix.size() || uri.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  return std::all_of(uri.begin() + kPrefix.size(), uri.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/' || c == '=';
  });
}

// The cells' label names: the block's "labels" (region and object in a geo run written before
// the block named them).
std::vector<std::string> label_names(const Node& x) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < x["labels"].size(); ++i) names.push_back(x["labels"][i].str());
  if (names.empty()) names = {"region", "object"};
  return names;
}

// One cell's grid: its thumbnails, and a line naming the images not shown.
std::string exemplar_grid_html(const Node& c, const std::vector<std::string>& labels,
                               const std::string& score_key, DataTable& paths) {
  std::string imgs, absent, title;
  std::vector<Cell> label_cells;
  for (const std::string& name : labels) {
    title += (title.empty() ? "" : " &middot; ") + xml_escape(c[name].str());
    label_cells.push_back(cell(c[name].str()));
  }
  for (std::size_t i = 0; i < c["images"].size(); ++i) {
    const Node im = c["images"][i];
    const std::string path = im["path"].str(), status = im["status"].str();
    const std::string uri = im["thumbnail"].str();
    const bool shown = status == "shown" && is_jpeg_data_uri(uri);
    std::vector<Cell> row = label_cells;
    row.push_back(cell(path));
    row.push_back(cell(im["why"].str()));
    if (!score_key.empty()) row.push_back(cell(im[score_key]));
    row.push_back(cell(shown ? "shown" : status));
    paths.add(std::move(row));
    if (shown) {
      imgs += fmt::format(
          "<img class=\"exemplar\" src=\"{}\" alt=\"{}\" title=\"{}\" "
          "style=\"margin:2px;border:1px solid #ccc\">",
          uri, xml_escape(path), xml_escape(path));
    } else {
      absent += fmt::format("{}{} ({})", absent.empty() ? "" : "; ", xml_escape(path),
                            xml_escape(status));
    }
  }
  // Spans, not divs: Page::paragraph_html wraps the grids in one <p>.
  std::string html = fmt::format(
      "<span class=\"exemplar-cell\" style=\"display:block;margin:8px 0\"><b>{}</b><br>\n{}", title,
      imgs);
  if (!absent.empty()) {
    html += "<br><span class=\"exemplar-absent\">Not shown: " + absent + "</span>";
  }
  return html + "</span>\n";
}

// "region and object", "race and gender", "identity, set and prompt".
std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return s;
}

}  // namespace

void exemplars_section(Page& page, const Node& x, const std::string& what, const std::string& id,
                       const std::string& title) {
  if (x.null()) return;
  const std::vector<std::string> labels = label_names(x);
  const Node score = x["score"];
  // A geo run written before the block named its labels and score: CLIPScore, when its images
  // carry one.
  const std::string score_key = !score.null()        ? score["key"].str()
                                : x["labels"].null() ? "clipscore"
                                                     : "";
  const std::string picks =
      score.null() ? ""
                   : fmt::format(", then the cell's {}-{} images ({})", score["pick"].str(),
                                 score["label"].str(), score["about"].str());
  // Only the extreme-scored images (the explain overlays), or a seeded sample first.
  const std::string chosen = score["only"].boolean()
                                 ? fmt::format("the cell's {}-{} images ({})", score["pick"].str(),
                                               score["label"].str(), score["about"].str())
                                 : "a random sample drawn with the audit's seed" + picks;
  page.section(
      id, title.empty() ? "Exemplar images per " + joined(labels) : title,
      fmt::format("Up to {} {} per cell, {}; "
                  "thumbnails {} px on the long side (JPEG quality {}), {} bytes of a {}-byte "
                  "budget.",
                  format_number(x["per_cell"].number(), Fmt::integer), what, chosen,
                  format_number(x["thumbnail_px"].number(), Fmt::integer),
                  format_number(x["quality"].number(), Fmt::integer),
                  format_number(x["bytes"].number(), Fmt::integer),
                  format_number(x["budget_bytes"].number(), Fmt::integer)));
  const double dropped = x["left_out_for_budget"].number();
  if (dropped > 0) {
    page.paragraph_html(fmt::format(
        "<span class=\"exemplar-budget\">{} thumbnails were left out to stay within the size "
        "budget (report.image_budget).</span>",
        format_number(dropped, Fmt::integer)));
  }
  DataTable paths;
  paths.name = id;
  paths.columns = labels;
  paths.columns.insert(paths.columns.end(), {"path", "why"});
  if (!score_key.empty()) paths.columns.push_back(score_key);
  paths.columns.push_back("status");
  std::string html;
  for (std::size_t i = 0; i < x["cells"].size(); ++i) {
    html += exemplar_grid_html(x["cells"][i], labels, score_key, paths);
  }
  page.paragraph_html(html);
  page.table("The exemplar images' paths (as in the input table).", std::move(paths));
}

}  // namespace vlbias::report_internal
