// libFuzzer target for the row filter language (row_filter.h): parse the input as an
// expression and evaluate it on a small table and on the same rows streamed as records.
// Only vlbias::Error may escape; the two evaluations must agree.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/table/record_stream.h"
#include "vlbias/io/table/row_filter.h"
#include "vlbias/io/table/table.h"

namespace {

const vlbias::Table& table() {
  static const vlbias::Table t = vlbias::parse_csv(
      "a,b,age,x y,c\n1,female,25,p,\n2,male,,q q,20-29\n3,,61.5,,30\n-4,F\xc3\xa9,0,r,1e3\n",
      "fuzz.csv");
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vlbias::set_quiet(true);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const vlbias::RowFilter f = vlbias::RowFilter::parse(text, "fuzz");
    const std::vector<bool> pass = f.evaluate(table());
    if (pass.size() != table().rows) std::abort();
    std::vector<std::size_t> slots(f.columns().size());
    for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = i;
    std::size_t row = 0;
    vlbias::for_each_record(table(), f.columns(), [&](const vlbias::Record& r) {
      if (f.matches(r, slots) != pass[row++]) std::abort();
    });
  } catch (const vlbias::Error&) {
  }
  return 0;
}
