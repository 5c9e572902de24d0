// The `shapeflow` command line as a function, shared by the executable and `python -m shapeflow`.
#pragma once

namespace sf::cli {

/// The version of the command, the library and the Python package (the file VERSION).
const char *version();

/// Parses `argv` (argv[0] is ignored: the usage names the command `shapeflow`), runs the
/// subcommand and returns the exit status: 0 clean, 1 the model has errors or a check failed
/// (results are still printed), 2 a usage or I/O error. Writes to std::cout and std::cerr, and
/// flushes both before it returns.
int runCommandLine(int argc, const char *const *argv);

} // namespace sf::cli
