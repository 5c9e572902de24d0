// The `shapeflow` executable: the command line of app.cpp.
#include "app.h"

int main(int argc, char **argv) { return sf::cli::runCommandLine(argc, argv); }
