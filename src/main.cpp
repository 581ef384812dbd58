#include "cli.h"

int main(int argc, char** argv) {
  return vlbias::cli_internal::run(argc, argv);
}
