#include "vlbias/core/build_type.h"

namespace vlbias {

bool release_build() {
#ifdef NDEBUG
  return true;
#else
  return false;
#endif
}

}  // namespace vlbias
