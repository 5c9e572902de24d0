// The `shapeflow` executable: the command line of app.cpp.
#include "app.h"
#include "huge_heap.h"

int main(int argc, char **argv) {
  sf::cli::useHugePageHeap();
  return sf::cli::runCommandLine(argc, argv);
}
