#include "cli/cli.h"

int main(int argc, char** argv) {
  return vlbias::cli::run(argc, argv);
}
