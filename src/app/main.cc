#include <cstdio>

#include "base/version.h"

int main() {
  std::printf("sluice %s\n", sluice::base::kVersion);
  return 0;
}
