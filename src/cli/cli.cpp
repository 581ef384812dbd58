#include "cli/cli.h"

#include <cstdio>

namespace vlbias::cli {
int run(int, char**) {
  std::puts("vlbias");
  return 0;
}
}  // namespace vlbias::cli
